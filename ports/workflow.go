package ports

import (
	"context"
	"encoding/json"
	"time"

	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/job"
	"github.com/tokenscope/tokenscope/domain/kyt"
	"github.com/tokenscope/tokenscope/domain/webhook"
)

// KYTScreening is what a KYT provider concluded about one registration.
type KYTScreening struct {
	Rating kyt.Rating
	Alerts []kyt.Alert
	// USDAmount is the provider's valuation; nil when it gave none.
	USDAmount *decimal.Decimal
}

// KYTProvider registers a transfer or withdrawal attempt with a KYT service and returns its
// screening. A refusal that no retry can fix is a fault of kind Invalid, Unauthorized,
// Forbidden or NotFound; any other error is transient (a fault.Unavailable may carry a
// Retry-After hint) and the caller retries. Calls must be idempotent per externalId.
type KYTProvider interface {
	Screen(ctx context.Context, reg kyt.Registration) (KYTScreening, error)
}

// KYTStore keeps registrations.
type KYTStore interface {
	// Insert stores reg unless its externalId is already stored. A new row is committed only
	// when started (called inside the writing transaction) succeeds, so no registration is ever
	// stored without its workflow; concurrent inserts of one externalId serialise on it. It
	// returns what is stored and whether this call created it.
	Insert(ctx context.Context, reg kyt.Registration, started func(context.Context) error) (kyt.Registration, bool, error)
	// Get returns the account's registration of that kind; another account's is NotFound.
	Get(ctx context.Context, accountID string, kind kyt.Kind, externalID string) (kyt.Registration, error)
	// Update changes a registration under a row lock.
	Update(ctx context.Context, externalID string, fn func(*kyt.Registration) error) (kyt.Registration, error)
}

// KYTStarter starts (or finds) the durable workflow of a registration.
type KYTStarter interface {
	StartRegistration(ctx context.Context, reg kyt.Registration) error
}

// AssetPricer prices an asset from our own market data.
type AssetPricer interface {
	// PriceUSD is the asset's current USD price; ok is false when the market data has none.
	PriceUSD(ctx context.Context, network kyt.Network, asset string) (price decimal.Decimal, ok bool, err error)
}

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

// JobStore keeps jobs; the row outlives the workflow.
type JobStore interface {
	// Insert stores j under key, committing only when started succeeds (see KYTStore.Insert),
	// and returns it. Inserts of one account are serialised, so that: while one of the account's
	// unfinished jobs has the same key, Insert returns that job and stores and starts nothing;
	// while the account has maxRunning unfinished jobs, it returns job.TooManyRunning's error.
	// An empty key matches nothing; maxRunning ≤ 0 caps nothing.
	Insert(ctx context.Context, j job.Job, key string, maxRunning int, started func(context.Context) error) (job.Job, error)
	// Get returns the account's job; another account's is NotFound.
	Get(ctx context.Context, accountID, id string) (job.Job, error)
	// Save writes j's status, progress and result.
	Save(ctx context.Context, j job.Job) error
}

// PnLJob says which wallet a calculate-pnl job re-derives.
type PnLJob struct {
	Chain  chain.Chain
	Wallet string
	// Tokens limits the job to these tokens; empty means every token the wallet traded.
	Tokens []string
}

// JobRunner runs jobs as workflows and reads their live state.
type JobRunner interface {
	StartCalculatePnL(ctx context.Context, j job.Job, in PnLJob) error
	// Progress asks the running (or recently closed) workflow for the job's state.
	Progress(ctx context.Context, jobID string) (job.Job, error)
}

// WalletRederiver rebuilds one wallet's positions from its stored trades.
type WalletRederiver interface {
	// WalletTokens lists the tokens the wallet traded on c, in address order.
	WalletTokens(ctx context.Context, c chain.Chain, wallet string) ([]string, error)
	// RederivePosition replaces the (c, wallet, token) position with the one replayed from
	// every stored trade; it returns the number of trades replayed.
	RederivePosition(ctx context.Context, c chain.Chain, wallet, token string, now time.Time) (int, error)
}
