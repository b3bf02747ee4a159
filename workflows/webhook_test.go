package workflows_test

import (
	"context"
	"errors"
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

func testEndpoint(t *testing.T) *webhook.Endpoint {
	t.Helper()
	key := make([]byte, 24)
	e, err := webhook.NewEndpoint("ep_1", "acct", "https://receiver.example/hook",
		webhook.WithSecret(webhook.NewSecret(key)), webhook.CreatedAt(kytNow))
	require.NoError(t, err)
	return e
}

func TestWebhookDeliveryWorkflow(t *testing.T) {
	schedule := webhook.RetrySchedule{Delays: []time.Duration{5 * time.Second, time.Minute, 10 * time.Minute}}
	for _, tc := range []struct {
		name         string
		statuses     []int // receiver answers in order
		wantAttempts int
		wantMinWait  time.Duration // workflow time the retries must take
		exhausted    bool
	}{
		{"500 three times then 200", []int{500, 500, 500, 200}, 4, 5*time.Second + time.Minute + 10*time.Minute, false},
		{"success at once", []int{204}, 1, 0, false},
		{"410 stops at once", []int{410}, 1, 0, false},
		{"always failing exhausts the schedule", []int{500, 502, 500, 503}, 4, 5*time.Second + time.Minute + 10*time.Minute, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctrl := gomock.NewController(t)
			endpoints := portsmock.NewMockEndpointStore(ctrl)
			attempts := portsmock.NewMockAttemptStore(ctrl)
			sender := portsmock.NewMockWebhookSender(ctrl)
			ep := testEndpoint(t)
			endpoints.EXPECT().Get(gomock.Any(), "", "ep_1").Return(ep, nil).Times(tc.wantAttempts)
			var recorded []webhook.Attempt
			attempts.EXPECT().RecordAttempt(gomock.Any(), gomock.Any()).Times(tc.wantAttempts).
				DoAndReturn(func(_ context.Context, a webhook.Attempt) error { recorded = append(recorded, a); return nil })
			n := 0
			sender.EXPECT().Send(gomock.Any(), "https://receiver.example/hook", gomock.Any(), gomock.Any()).Times(tc.wantAttempts).
				DoAndReturn(func(_ context.Context, _ string, h map[string]string, body []byte) (ports.SendResult, error) {
					assert.Equal(t, "msg_1", h["webhook-id"])
					assert.Equal(t, `{"channel":"sol.token.created","timestamp":1000,"data":{"a":1}}`, string(body))
					s := tc.statuses[n]
					n++
					return ports.SendResult{StatusCode: s}, nil
				})
			if tc.statuses[len(tc.statuses)-1] == 410 {
				endpoints.EXPECT().Update(gomock.Any(), "", "ep_1", gomock.Any()).
					DoAndReturn(func(_ context.Context, _, _ string, fn func(*webhook.Endpoint) error) (*webhook.Endpoint, error) {
						return ep, fn(ep)
					})
			}
			if tc.exhausted {
				endpoints.EXPECT().Update(gomock.Any(), "", "ep_1", gomock.Any()).
					DoAndReturn(func(_ context.Context, _, _ string, fn func(*webhook.Endpoint) error) (*webhook.Endpoint, error) {
						return ep, fn(ep)
					})
			}

			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			env.RegisterActivity(&workflows.DeliveryActivities{Endpoints: endpoints, Attempts: attempts, Sender: sender,
				Clock: fakeclock.At(kytNow), Disable: webhook.AutoDisable{After: time.Hour}})
			ev, err := webhook.NewEvent("msg_1", webhook.TokenCreated, 1000, []byte(`{"a": 1}`))
			require.NoError(t, err)
			start := env.Now()
			env.ExecuteWorkflow(workflows.WebhookDeliveryWorkflow, workflows.DeliveryInput{EndpointID: "ep_1", Event: ev, Schedule: schedule})
			require.True(t, env.IsWorkflowCompleted())
			require.NoError(t, env.GetWorkflowError())
			var got int
			require.NoError(t, env.GetWorkflowResult(&got))
			assert.Equal(t, tc.wantAttempts, got)
			assert.GreaterOrEqual(t, env.Now().Sub(start), tc.wantMinWait)
			for i, a := range recorded {
				assert.Equal(t, i+1, a.Number)
			}
			assert.Equal(t, tc.statuses[len(tc.statuses)-1] == 410, ep.Disabled(), "410 disables the endpoint")
			if tc.exhausted {
				assert.Equal(t, kytNow, ep.FirstFailureAt(), "exhaustion starts the auto-disable clock")
			}
		})
	}
}

func TestDispatchBatch(t *testing.T) {
	ctrl := gomock.NewController(t)
	source := portsmock.NewMockEventSource(ctrl)
	endpoints := portsmock.NewMockEndpointStore(ctrl)
	filter := portsmock.NewMockFilterCompiler(ctrl)
	feeder := portsmock.NewMockDeliveryFeeder(ctrl)
	match, _ := webhook.NewEndpoint("ep_a", "acct", "https://a.example", webhook.CreatedAt(kytNow))
	expr := `data.symbol == "B"`
	filtered, _ := webhook.NewEndpoint("ep_b", "acct", "https://b.example", webhook.CreatedAt(kytNow),
		webhook.WithPatch(webhook.Patch{Filter: webhook.Value(expr)}))
	source.EXPECT().Pending(gomock.Any(), 10).Return([]ports.OutboxEvent{
		{Seq: 7, EventID: "sol.token.created:A", Channel: "sol.token.created", Payload: []byte(`{"symbol":"A"}`), CreatedAtMs: kytNow.UnixMilli() + 5},
		{Seq: 8, EventID: "bad:1", Channel: "sol.token.burned", Payload: []byte(`{}`), CreatedAtMs: kytNow.UnixMilli() + 6},
	}, nil)
	endpoints.EXPECT().Subscribers(gomock.Any(), webhook.TokenCreated).Return([]*webhook.Endpoint{match, filtered}, nil)
	filter.EXPECT().Match(expr, gomock.Any()).Return(false)
	feeder.EXPECT().Enqueue(gomock.Any(), "ep_a", gomock.Any()).
		DoAndReturn(func(_ context.Context, _ string, evs []webhook.Event) error {
			require.Len(t, evs, 1, "one hand-over per endpoint")
			assert.Equal(t, workflows.MessageID("sol.token.created:A"), evs[0].ID)
			assert.Equal(t, kytNow.UnixMilli()+5, evs[0].Timestamp)
			return nil
		})
	source.EXPECT().MarkDispatched(gomock.Any(), []int64{7, 8}, kytNow).Return(nil)

	a := &workflows.DispatchActivities{Source: source, Endpoints: endpoints, Filter: filter, Feeder: feeder, Clock: fakeclock.At(kytNow)}
	n, err := a.DispatchBatch(context.Background(), 10)
	require.NoError(t, err)
	assert.Equal(t, 2, n)

	t.Run("a failed start leaves the rows undispatched", func(t *testing.T) {
		source.EXPECT().Pending(gomock.Any(), 10).Return([]ports.OutboxEvent{
			{Seq: 9, EventID: "sol.token.created:C", Channel: "sol.token.created", Payload: []byte(`{}`), CreatedAtMs: kytNow.UnixMilli()}}, nil)
		endpoints.EXPECT().Subscribers(gomock.Any(), webhook.TokenCreated).Return([]*webhook.Endpoint{match}, nil)
		feeder.EXPECT().Enqueue(gomock.Any(), "ep_a", gomock.Any()).Return(errors.New("temporal down"))
		_, err := a.DispatchBatch(context.Background(), 10)
		assert.Error(t, err)
	})

	t.Run("an event committed before the endpoint existed is not handed to it", func(t *testing.T) {
		source.EXPECT().Pending(gomock.Any(), 10).Return([]ports.OutboxEvent{
			{Seq: 10, EventID: "sol.token.created:D", Channel: "sol.token.created", Payload: []byte(`{}`), CreatedAtMs: kytNow.UnixMilli() - 1}}, nil)
		endpoints.EXPECT().Subscribers(gomock.Any(), webhook.TokenCreated).Return([]*webhook.Endpoint{match}, nil)
		// No Enqueue: the gomock controller fails the test on an unexpected hand-over.
		source.EXPECT().MarkDispatched(gomock.Any(), []int64{10}, kytNow).Return(nil)
		n, err := a.DispatchBatch(context.Background(), 10)
		require.NoError(t, err)
		assert.Equal(t, 1, n)
	})
}
