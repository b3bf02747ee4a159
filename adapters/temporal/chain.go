package temporal

import (
	"context"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/tokenscope/tokenscope/workflows"
)

// StartChainFollower starts the chain's follower (ChainFollowWorkflowID) unless it is running:
// a running follower keeps its configuration until it continues as new, and a follower that
// ended (halted by a deep reorg) is started again, which stops at once while the halt is
// stored (README, "Following a chain in production").
func StartChainFollower(ctx context.Context, c client.Client, in workflows.FollowInput) error {
	id := workflows.ChainFollowWorkflowID(in.Chain)
	_, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: workflows.TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE},
		workflows.ChainFollowWorkflowName, in)
	if err != nil {
		return fmt.Errorf("start %s follower: %w", in.Chain, err)
	}
	return nil
}
