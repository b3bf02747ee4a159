package workflows_test

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/tokenscope/tokenscope/workflows"
)

// replayed is every workflow a worker runs, by the name it is registered under (the same list
// as wire.RegisterWorkflows (cmd/internal/wire); TestEveryWorkflowHasAHistory there checks that each of
// those has a history here).
var replayed = map[string]any{
	workflows.KYTRegistrationWorkflowName: workflows.KYTRegistrationWorkflow,
	workflows.WebhookDeliveryWorkflowName: workflows.WebhookDeliveryWorkflow,
	workflows.WebhookEndpointWorkflowName: workflows.WebhookEndpointWorkflow,
	workflows.WebhookDispatchWorkflowName: workflows.WebhookDispatchWorkflow,
	workflows.CalculatePnLJobWorkflowName: workflows.CalculatePnLJobWorkflow,
	workflows.NoopWorkflowName:            workflows.NoopWorkflow,
	workflows.MarketRefreshWorkflowName:   workflows.MarketRefreshWorkflow,
	workflows.ChainFollowWorkflowName:     workflows.ChainFollowWorkflow,
}

// TestReplayHistories replays every committed history (testdata/*.json, recorded from a real
// Temporal server by cmd/tokenscope's TestRecordHistories; testdata/README.md says what each
// one covers) with the current workflow code. A change to a workflow's commands that running
// workflows would meet (an activity, timer or side effect added, removed or reordered) fails
// here unless it is guarded by workflow.GetVersion. A history is never re-recorded to make this
// pass: it stands for the runs of the build that recorded it.
func TestReplayHistories(t *testing.T) {
	files, err := filepath.Glob("testdata/*.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	covered := map[string]bool{}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			h, err := client.HistoryFromJSON(mustOpen(t, file), client.HistoryJSONOptions{})
			require.NoError(t, err)
			require.NotEmpty(t, h.GetEvents())
			name := h.GetEvents()[0].GetWorkflowExecutionStartedEventAttributes().GetWorkflowType().GetName()
			require.Contains(t, replayed, name, "a history of a workflow type no worker registers")
			covered[name] = true
			r := worker.NewWorkflowReplayer()
			for _, n := range slices.Sorted(maps.Keys(replayed)) {
				r.RegisterWorkflowWithOptions(replayed[n], workflow.RegisterOptions{Name: n})
			}
			require.NoError(t, r.ReplayWorkflowHistory(nil, h))
		})
	}
	for _, name := range slices.Sorted(maps.Keys(replayed)) {
		assert.True(t, covered[name], "no history of %s in testdata (README: How to add a workflow)", name)
	}
}

func mustOpen(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.Close() })
	return f
}
