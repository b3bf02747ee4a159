package workflows

import (
	"context"
	"time"

	"go.temporal.io/sdk/activity"
)

// heartbeatEvery records an activity heartbeat at once and then every d until stop is called.
func heartbeatEvery(ctx context.Context, d time.Duration) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			activity.RecordHeartbeat(ctx)
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); <-finished }
}
