package temporal

import (
	"context"
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

var _ ports.DeliveryStarter = DeliveryStarter{}

// StartDelivery starts one delivery workflow; its ID makes a repeated start a no-op.
func (s DeliveryStarter) StartDelivery(ctx context.Context, endpointID string, ev webhook.Event) error {
	return startIdempotent(ctx, s.Client, workflows.DeliveryWorkflowID(endpointID, ev.ID),
		workflows.WebhookDeliveryWorkflowName, workflows.DeliveryInput{EndpointID: endpointID, Event: ev, Schedule: s.Schedule, AttemptTimeout: s.AttemptTimeout})
}

// StartDispatcher starts the outbox dispatcher loop unless it runs already.
func StartDispatcher(ctx context.Context, c client.Client, in workflows.DispatchInput) error {
	_, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                       workflows.WebhookDispatchWorkflowID,
		TaskQueue:                workflows.TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
	}, workflows.WebhookDispatchWorkflowName, in)
	return err
}
