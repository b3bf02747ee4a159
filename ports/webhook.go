package ports

import (
	"context"
	"encoding/json"
	"time"

	"github.com/tokenscope/tokenscope/domain/webhook"
)

// EndpointPage is one page of an account's webhook endpoints.
type EndpointPage struct {
	Endpoints []*webhook.Endpoint
	More      bool
}

// EndpointStore keeps webhook endpoints. accountID scopes every call made for a caller: an
// endpoint of another account is NotFound.
type EndpointStore interface {
	// Create inserts e, refusing it (webhook.CheckEndpointLimit) when its account is full.
	Create(ctx context.Context, e *webhook.Endpoint) error
	Get(ctx context.Context, accountID, id string) (*webhook.Endpoint, error)
	// List pages by creation order after (or, descending, before) the endpoint id cursor.
	List(ctx context.Context, accountID, cursor string, limit int, descending bool) (EndpointPage, error)
	// Update changes an endpoint under a row lock; accountID "" is the delivery worker's
	// unscoped access.
	Update(ctx context.Context, accountID, id string, fn func(*webhook.Endpoint) error) (*webhook.Endpoint, error)
	Delete(ctx context.Context, accountID, id string) error
	// Subscribers are the enabled endpoints that want ch (channel and filterTypes).
	Subscribers(ctx context.Context, ch webhook.Channel) ([]*webhook.Endpoint, error)
}

// AttemptStore records delivery attempts.
type AttemptStore interface {
	// RecordAttempt stores a; recording the same (endpoint, event, number) twice keeps the first.
	RecordAttempt(ctx context.Context, a webhook.Attempt) error
	// ListAttempts returns an endpoint's attempts, newest first, older than the cursor seq
	// (0: from the newest); next is the cursor of the following page, 0 when there is none.
	ListAttempts(ctx context.Context, endpointID string, cursor int64, limit int) (attempts []webhook.Attempt, next int64, err error)
}

// SendResult is a receiver's answer to one delivery.
type SendResult struct {
	StatusCode int
	// RetryAfter is the receiver's Retry-After hint, 0 when absent.
	RetryAfter time.Duration
	// Abort is set when the receiver asked for no more retries (webhook-delivery: abort-message).
	Abort bool
}

// WebhookSender posts one signed delivery. A transport failure (refused, timed out, blocked
// by the address guard) is the error; any HTTP answer is a SendResult.
type WebhookSender interface {
	Send(ctx context.Context, url string, headers map[string]string, body []byte) (SendResult, error)
}

// URLGuard decides at write time whether a destination may be stored: scheme, and the
// addresses its host resolves to. The sender checks again at connect time.
type URLGuard interface {
	CheckURL(ctx context.Context, raw string) error
}

// FilterCompiler checks and evaluates an endpoint's CEL filter.
type FilterCompiler interface {
	// Compile reports fault.Invalid("filter", …) for an expression that does not compile to a bool.
	Compile(expr string) error
	// Match evaluates expr over the event; an evaluation error (a missing field) is no match.
	Match(expr string, ev webhook.Event) bool
}

// OutboxEvent is one undispatched row of the engine's outbox.
type OutboxEvent struct {
	Seq         int64
	EventID     string
	Channel     string
	Payload     json.RawMessage
	CreatedAtMs int64
}

// EventSource reads the outbox.
type EventSource interface {
	// Pending returns up to limit undispatched events, oldest first.
	Pending(ctx context.Context, limit int) ([]OutboxEvent, error)
	// MarkDispatched records that every delivery of these events has durably started.
	MarkDispatched(ctx context.Context, seqs []int64, at time.Time) error
}

// DeliveryStarter starts the durable delivery of one event to one endpoint; starting one that
// already exists (running or finished) is a success and starts nothing.
type DeliveryStarter interface {
	StartDelivery(ctx context.Context, endpointID string, ev webhook.Event) error
}

// AttemptLookup reads attempts already recorded, so a batch retried after a lost worker (or
// an event handed over twice) does not send what was already sent.
type AttemptLookup interface {
	// RecordedAttempts returns, by event id, the recorded attempt number of each of eventIDs
	// to the endpoint; events without one are absent.
	RecordedAttempts(ctx context.Context, endpointID string, eventIDs []string, number int) (map[string]webhook.Attempt, error)
}

// DeliveryFeeder hands events to an endpoint's long-lived delivery workflow, starting it when
// it is not running. Once it returns, the events are durable in that workflow's history.
type DeliveryFeeder interface {
	Enqueue(ctx context.Context, endpointID string, evs []webhook.Event) error
}

// RetryStarter starts the durable retries of one message whose attempt number `attempt`
// failed: the next attempt waits delay. Starting it twice starts nothing the second time.
type RetryStarter interface {
	StartRetry(ctx context.Context, endpointID string, ev webhook.Event, attempt int, delay time.Duration) error
}

// QueuedDelivery is one event to send to one endpoint: the outbox row and the endpoint.
type QueuedDelivery struct {
	EndpointID string
	Seq        int64
}

// DeliveryQueue is the durable queue of first attempts (the delivery pump's): outbox events
// fanned out to their endpoints, each kept until its first attempt is recorded or handed to a
// retry workflow.
type DeliveryQueue interface {
	// Watch takes the single-pump lock (waiting while another pump holds it), calls held once
	// it has it, then calls wake each time the outbox gains rows, until ctx ends (nil) or the
	// connection holding the lock fails (an error): on return the lock is no longer held.
	Watch(ctx context.Context, held func(), wake func()) error
	// Fanout queues the deliveries and stamps the outbox rows seqs dispatched, in one
	// transaction; a delivery already queued, or to an endpoint deleted meanwhile, is skipped.
	Fanout(ctx context.Context, deliveries []QueuedDelivery, seqs []int64, at time.Time) error
	// QueuedEndpoints are the endpoints with queued deliveries.
	QueuedEndpoints(ctx context.Context) ([]string, error)
	// Queued returns up to limit of the endpoint's queued events, oldest first.
	Queued(ctx context.Context, endpointID string, limit int) ([]OutboxEvent, error)
	// Complete records attempts (a repeat of an (endpoint, event, number) is ignored) and
	// removes the endpoint's deliveries done, in one transaction. An endpoint deleted meanwhile
	// needs neither: that is no error.
	Complete(ctx context.Context, endpointID string, attempts []webhook.Attempt, done []int64) error
}
