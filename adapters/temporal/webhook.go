package temporal

import (
	"context"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/tokenscope/tokenscope/domain/webhook"
	"github.com/tokenscope/tokenscope/ports"
	"github.com/tokenscope/tokenscope/workflows"
)

// DeliveryStarter implements ports.DeliveryStarter with the configured retry schedule.
type DeliveryStarter struct {
	Client         client.Client
	Schedule       webhook.RetrySchedule
	AttemptTimeout time.Duration
}

var (
	_ ports.DeliveryStarter = DeliveryStarter{}
	_ ports.RetryStarter    = DeliveryStarter{}
	_ ports.DeliveryFeeder  = DeliveryStarter{}
)

// StartDelivery starts one delivery workflow; its ID makes a repeated start a no-op.
func (s DeliveryStarter) StartDelivery(ctx context.Context, endpointID string, ev webhook.Event) error {
	return startIdempotent(ctx, s.Client, workflows.DeliveryWorkflowID(endpointID, ev.ID),
		workflows.WebhookDeliveryWorkflowName, workflows.DeliveryInput{EndpointID: endpointID, Event: ev, Schedule: s.Schedule, AttemptTimeout: s.AttemptTimeout})
}

// StartRetry starts the per-message delivery workflow of a message whose first attempts
// failed; its ID is the one a whole delivery would have, so a repeat starts nothing.
func (s DeliveryStarter) StartRetry(ctx context.Context, endpointID string, ev webhook.Event, attempt int, delay time.Duration) error {
	return startIdempotent(ctx, s.Client, workflows.DeliveryWorkflowID(endpointID, ev.ID),
		workflows.WebhookDeliveryWorkflowName, workflows.DeliveryInput{EndpointID: endpointID, Event: ev, Schedule: s.Schedule,
			AttemptTimeout: s.AttemptTimeout, Failed: attempt, FirstDelay: delay})
}

// Enqueue signals the endpoint's delivery workflow with the events, starting it if it is not
// running (a completed run is followed by a new one). Large hand-overs go as several signals.
func (s DeliveryStarter) Enqueue(ctx context.Context, endpointID string, evs []webhook.Event) error {
	for _, part := range workflows.SignalChunks(evs) {
		if len(part) == 0 {
			continue
		}
		_, err := s.Client.SignalWithStartWorkflow(ctx, workflows.EndpointWorkflowID(endpointID), workflows.DeliverSignal,
			workflows.DeliverBatch{Events: part}, client.StartWorkflowOptions{
				TaskQueue:                workflows.TaskQueue,
				WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
				WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
			}, workflows.WebhookEndpointWorkflowName,
			workflows.EndpointInput{EndpointID: endpointID, Schedule: s.Schedule, AttemptTimeout: s.AttemptTimeout})
		if err != nil {
			return fmt.Errorf("hand events to endpoint %s: %w", endpointID, err)
		}
	}
	return nil
}

// StartDispatcher starts the outbox dispatcher loop with in, or hands in to the running loop
// (one signal-with-start: DispatchConfigSignal), so the configuration of the process that
// started last is the one in force, as with StartRefreshLoop.
func StartDispatcher(ctx context.Context, c client.Client, in workflows.DispatchInput) error {
	_, err := c.SignalWithStartWorkflow(ctx, workflows.WebhookDispatchWorkflowID, workflows.DispatchConfigSignal, in,
		client.StartWorkflowOptions{ID: workflows.WebhookDispatchWorkflowID, TaskQueue: workflows.TaskQueue},
		workflows.WebhookDispatchWorkflowName, in)
	return err
}
