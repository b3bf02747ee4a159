package ports

import (
	"context"
	"time"

	"github.com/tokenscope/tokenscope/domain/webhook"
)

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
