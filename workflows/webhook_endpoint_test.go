package workflows_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"
	"go.uber.org/mock/gomock"

	"github.com/tokenscope/tokenscope/domain/webhook"
	"github.com/tokenscope/tokenscope/internal/fakeclock"
	"github.com/tokenscope/tokenscope/ports"
	"github.com/tokenscope/tokenscope/ports/portsmock"
	"github.com/tokenscope/tokenscope/workflows"
)

func endpointEvent(t *testing.T, id string) webhook.Event {
	t.Helper()
	ev, err := webhook.NewEvent(id, webhook.TokenCreated, 1000, []byte(`{"a":1}`))
	require.NoError(t, err)
	return ev
}

func TestWebhookEndpointWorkflow(t *testing.T) {
	schedule := webhook.RetrySchedule{Delays: []time.Duration{5 * time.Second, time.Minute}}
	ctrl := gomock.NewController(t)
	endpoints := portsmock.NewMockEndpointStore(ctrl)
	attempts := portsmock.NewMockAttemptStore(ctrl)
	sender := portsmock.NewMockWebhookSender(ctrl)
	lookup := portsmock.NewMockAttemptLookup(ctrl)
	retries := portsmock.NewMockRetryStarter(ctrl)
	ep := testEndpoint(t)

	// msg_done was attempted before (a batch retried after a lost worker): not resent.
	answers := map[string]int{"msg_ok": 200, "msg_fail": 500, "msg_ok2": 204}
	endpoints.EXPECT().Get(gomock.Any(), "", "ep_1").Return(ep, nil).Times(2)
	lookup.EXPECT().RecordedAttempts(gomock.Any(), "ep_1", gomock.Any(), 1).Times(2).
		DoAndReturn(func(_ context.Context, _ string, ids []string, _ int) (map[string]webhook.Attempt, error) {
			out := map[string]webhook.Attempt{}
			for _, id := range ids {
				if id == "msg_done" {
					out[id] = webhook.NewAttempt("ep_1", id, 1, 200, nil, time.Millisecond, kytNow)
				}
			}
			return out, nil
		})
	// SendBatch sends and records concurrently: the doubles' state is guarded.
	var mu sync.Mutex
	sent := map[string]int{}
	sender.EXPECT().Send(gomock.Any(), "https://receiver.example/hook", gomock.Any(), gomock.Any()).Times(3).
		DoAndReturn(func(_ context.Context, _ string, h map[string]string, _ []byte) (ports.SendResult, error) {
			mu.Lock()
			sent[h["webhook-id"]]++
			mu.Unlock()
			return ports.SendResult{StatusCode: answers[h["webhook-id"]]}, nil
		})
	var recorded []webhook.Attempt
	attempts.EXPECT().RecordAttempt(gomock.Any(), gomock.Any()).Times(3).
		DoAndReturn(func(_ context.Context, a webhook.Attempt) error {
			mu.Lock()
			defer mu.Unlock()
			recorded = append(recorded, a)
			return nil
		})
	retries.EXPECT().StartRetry(gomock.Any(), "ep_1", gomock.Any(), 1, gomock.Any()).
		DoAndReturn(func(_ context.Context, _ string, ev webhook.Event, _ int, delay time.Duration) error {
			assert.Equal(t, "msg_fail", ev.ID)
			assert.Equal(t, 5*time.Second, delay, "the schedule's first delay (no jitter configured)")
			return nil
		})

	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	delivery := &workflows.DeliveryActivities{Endpoints: endpoints, Attempts: attempts, Sender: sender,
		Clock: fakeclock.At(kytNow), Disable: webhook.AutoDisable{After: time.Hour}}
	env.RegisterActivity(&workflows.EndpointActivities{Delivery: delivery, Lookup: lookup, Retries: retries})
	first := workflows.DeliverBatch{Events: []webhook.Event{endpointEvent(t, "msg_ok"), endpointEvent(t, "msg_fail"), endpointEvent(t, "msg_done")}}
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(workflows.DeliverSignal, first) }, time.Millisecond)
	// The same hand-over again while queued, then a new event: msg_ok2 only is new.
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(workflows.DeliverSignal, workflows.DeliverBatch{Events: []webhook.Event{endpointEvent(t, "msg_ok2")}})
	}, 10*time.Second)
	start := env.Now()
	env.ExecuteWorkflow(workflows.WebhookEndpointWorkflow, workflows.EndpointInput{EndpointID: "ep_1", Schedule: schedule})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError(), "completes once idle")
	assert.GreaterOrEqual(t, env.Now().Sub(start), time.Minute, "waits its idle time for more")
	assert.Equal(t, map[string]int{"msg_ok": 1, "msg_fail": 1, "msg_ok2": 1}, sent, "each new message once; msg_done not resent")
	for _, a := range recorded {
		assert.Equal(t, 1, a.Number)
	}
	assert.False(t, ep.Disabled())
}

func TestWebhookEndpointWorkflowGoneAndDeleted(t *testing.T) {
	ctrl := gomock.NewController(t)
	endpoints := portsmock.NewMockEndpointStore(ctrl)
	attempts := portsmock.NewMockAttemptStore(ctrl)
	sender := portsmock.NewMockWebhookSender(ctrl)
	lookup := portsmock.NewMockAttemptLookup(ctrl)
	ep := testEndpoint(t)
	endpoints.EXPECT().Get(gomock.Any(), "", "ep_1").Return(ep, nil)
	lookup.EXPECT().RecordedAttempts(gomock.Any(), "ep_1", gomock.Any(), 1).Return(nil, nil)
	sender.EXPECT().Send(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Return(ports.SendResult{StatusCode: 410}, nil)
	attempts.EXPECT().RecordAttempt(gomock.Any(), gomock.Any()).Return(nil)
	endpoints.EXPECT().Update(gomock.Any(), "", "ep_1", gomock.Any()).
		DoAndReturn(func(_ context.Context, _, _ string, fn func(*webhook.Endpoint) error) (*webhook.Endpoint, error) {
			return ep, fn(ep)
		})

	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterActivity(&workflows.EndpointActivities{Delivery: &workflows.DeliveryActivities{Endpoints: endpoints,
		Attempts: attempts, Sender: sender, Clock: fakeclock.At(kytNow)}, Lookup: lookup})
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(workflows.DeliverSignal, workflows.DeliverBatch{Events: []webhook.Event{endpointEvent(t, "msg_1")}})
	}, time.Millisecond)
	env.ExecuteWorkflow(workflows.WebhookEndpointWorkflow, workflows.EndpointInput{EndpointID: "ep_1",
		Schedule: webhook.RetrySchedule{Delays: []time.Duration{time.Second}}})
	require.NoError(t, env.GetWorkflowError())
	assert.True(t, ep.Disabled(), "410 disables the endpoint at once")
}

func TestChunks(t *testing.T) {
	evs := []webhook.Event{endpointEvent(t, "a"), endpointEvent(t, "b"), endpointEvent(t, "c")}
	assert.Len(t, workflows.Chunks(evs, 2, 1<<20), 2)
	assert.Len(t, workflows.Chunks(evs, 10, 1), 3, "a byte cap smaller than one event gives one event per chunk")
	assert.Equal(t, [][]webhook.Event{nil}, workflows.Chunks(nil, 2, 10))
}
