package workflows_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/mock/gomock"

	"github.com/tokenscope/tokenscope/domain/webhook"
	"github.com/tokenscope/tokenscope/internal/fakeclock"
	"github.com/tokenscope/tokenscope/ports"
	"github.com/tokenscope/tokenscope/ports/portsmock"
	"github.com/tokenscope/tokenscope/workflows"
)

// laneResult is what one lane did with one first attempt.
type laneResult struct {
	headers  map[string]string
	body     string
	recorded []webhook.Attempt // Latency zeroed: it is measured
	disabled bool
	clock    time.Time // the endpoint's failure clock afterwards
	failed   bool      // the activity returned an error
}

// TestBothLanesSendAlike: the per-message lane (DeliveryActivities.Attempt) and the endpoint
// lane (EndpointActivities.SendBatch) send and record through one path, so the same receiver
// answer gives the same signed request, the same recorded attempt and the same change to the
// endpoint.
func TestBothLanesSendAlike(t *testing.T) {
	for _, tc := range []struct {
		name    string
		status  int
		cancel  bool // the worker stops while the request is in flight
		failing bool // the endpoint's failure clock is running
		want    func(t *testing.T, r laneResult)
	}{
		{name: "a 2xx clears the failure clock", status: 200, failing: true, want: func(t *testing.T, r laneResult) {
			require.Len(t, r.recorded, 1)
			assert.True(t, r.recorded[0].Result.Success)
			assert.True(t, r.clock.IsZero())
		}},
		{name: "a 410 disables the endpoint", status: 410, want: func(t *testing.T, r laneResult) {
			require.Len(t, r.recorded, 1)
			assert.True(t, r.recorded[0].Result.Gone)
			assert.True(t, r.disabled)
		}},
		{name: "a 500 is recorded as a failure", status: 500, failing: true, want: func(t *testing.T, r laneResult) {
			require.Len(t, r.recorded, 1)
			assert.Equal(t, "http 500", r.recorded[0].Error)
			assert.False(t, r.disabled)
			assert.Equal(t, kytNow.Add(-time.Minute), r.clock)
		}},
		{name: "a stopping worker records nothing", cancel: true, want: func(t *testing.T, r laneResult) {
			assert.Empty(t, r.recorded)
			assert.True(t, r.failed)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := func(batch bool) laneResult {
				ctrl := gomock.NewController(t)
				endpoints := portsmock.NewMockEndpointStore(ctrl)
				attempts := portsmock.NewMockAttemptStore(ctrl)
				sender := portsmock.NewMockWebhookSender(ctrl)
				lookup := portsmock.NewMockAttemptLookup(ctrl)
				retries := portsmock.NewMockRetryStarter(ctrl)
				ep := testEndpoint(t)
				if tc.failing {
					ep.RecordFailure(kytNow.Add(-time.Minute), webhook.AutoDisable{After: time.Hour})
				}
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				var r laneResult
				endpoints.EXPECT().Get(gomock.Any(), "", "ep_1").Return(ep, nil)
				endpoints.EXPECT().Update(gomock.Any(), "", "ep_1", gomock.Any()).AnyTimes().
					DoAndReturn(func(_ context.Context, _, _ string, fn func(*webhook.Endpoint) error) (*webhook.Endpoint, error) {
						return ep, fn(ep)
					})
				attempts.EXPECT().RecordAttempt(gomock.Any(), gomock.Any()).AnyTimes().
					DoAndReturn(func(_ context.Context, a webhook.Attempt) error {
						a.Latency = 0
						r.recorded = append(r.recorded, a)
						return nil
					})
				sender.EXPECT().Send(gomock.Any(), "https://receiver.example/hook", gomock.Any(), gomock.Any()).
					DoAndReturn(func(ctx context.Context, _ string, h map[string]string, body []byte) (ports.SendResult, error) {
						r.headers, r.body = h, string(body)
						if tc.cancel {
							cancel()
							return ports.SendResult{}, ctx.Err()
						}
						return ports.SendResult{StatusCode: tc.status}, nil
					})
				lookup.EXPECT().RecordedAttempts(gomock.Any(), "ep_1", []string{"msg_1"}, 1).AnyTimes().Return(nil, nil)
				retries.EXPECT().StartRetry(gomock.Any(), "ep_1", gomock.Any(), 1, gomock.Any()).AnyTimes().Return(nil)

				d := &workflows.DeliveryActivities{Endpoints: endpoints, Attempts: attempts, Sender: sender,
					Clock: fakeclock.At(kytNow), Disable: webhook.AutoDisable{After: time.Hour}}
				ev := endpointEvent(t, "msg_1")
				var err error
				if batch {
					a := &workflows.EndpointActivities{Delivery: d, Lookup: lookup, Retries: retries}
					_, err = a.SendBatch(ctx, workflows.SendBatchInput{EndpointID: "ep_1", Events: []webhook.Event{ev},
						Schedule: webhook.RetrySchedule{Delays: []time.Duration{time.Second}}})
				} else {
					_, err = d.Attempt(ctx, workflows.AttemptInput{EndpointID: "ep_1", Event: ev, Number: 1})
				}
				r.failed = err != nil
				if tc.cancel {
					assert.True(t, errors.Is(err, context.Canceled), "%v", err)
				} else {
					assert.NoError(t, err)
				}
				r.disabled, r.clock = ep.Disabled(), ep.FirstFailureAt()
				return r
			}
			single, batch := run(false), run(true)
			assert.Equal(t, single, batch, "Attempt and SendBatch")
			assert.Equal(t, "msg_1", single.headers["webhook-id"])
			tc.want(t, single)
		})
	}
}
