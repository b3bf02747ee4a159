package temporal

import (
	"context"

	"go.temporal.io/sdk/client"

	"github.com/tokenscope/tokenscope/workflows"
)

// StartRefreshLoop starts the market refresh loop with in, or hands in to the running loop
// (one signal-with-start: RefreshConfigSignal), so the configuration of the process that
// started last is the one in force. Every process that starts the loops (dev, worker) calls it
// once at start; during a rolling deploy the processes started last (the new version) win, and
// a process of the old version that restarts after them puts its own configuration back until
// the next start of a new one.
func StartRefreshLoop(ctx context.Context, c client.Client, in workflows.RefreshInput) error {
	_, err := c.SignalWithStartWorkflow(ctx, workflows.MarketRefreshWorkflowID, workflows.RefreshConfigSignal, in,
		client.StartWorkflowOptions{ID: workflows.MarketRefreshWorkflowID, TaskQueue: workflows.TaskQueue},
		workflows.MarketRefreshWorkflowName, in)
	return err
}
