package workflows_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/tokenscope/tokenscope/workflows"
)

// TestWebhookDispatchConfigSignal: the dispatcher runs the pump run after run; a configuration
// signalled while a run is under way (as StartDispatcher's signal-with-start does when a process
// starts with another WEBHOOK_DISPATCH_POLL) ends that run by cancellation, the next run takes
// it, and continue-as-new carries it. The same configuration again changes nothing (the first
// signal repeats the one the run started with).
func TestWebhookDispatchConfigSignal(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(workflows.WebhookDispatchWorkflow, workflow.RegisterOptions{Name: workflows.WebhookDispatchWorkflowName})
	var (
		mu       sync.Mutex
		runs     []workflows.PumpInput
		canceled = make(chan struct{})
	)
	a := &workflows.PumpActivities{}
	env.RegisterActivity(a)
	old := workflows.DispatchInput{PollInterval: time.Second, RunFor: time.Hour, RoundsPerRun: 3}
	next := workflows.DispatchInput{PollInterval: 50 * time.Millisecond, RunFor: time.Hour, RoundsPerRun: 3}
	env.OnActivity(a.RunPump, mock.Anything, mock.Anything).Return(func(ctx context.Context, in workflows.PumpInput) error {
		mu.Lock()
		runs = append(runs, in)
		n := len(runs)
		mu.Unlock()
		if n == 1 {
			// The first run lasts until the new configuration cancels it (seen, as in the real
			// pump, through its heartbeats).
			for ctx.Err() == nil {
				activity.RecordHeartbeat(ctx)
				time.Sleep(10 * time.Millisecond)
			}
			close(canceled)
			return ctx.Err()
		}
		return nil
	})
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(workflows.DispatchConfigSignal, old) }, time.Second)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(workflows.DispatchConfigSignal, next) }, 2*time.Second)
	env.SetTestTimeout(30 * time.Second)
	env.ExecuteWorkflow(workflows.WebhookDispatchWorkflowName, old)
	require.True(t, env.IsWorkflowCompleted())

	var can *workflow.ContinueAsNewError
	require.True(t, errors.As(env.GetWorkflowError(), &can), "the loop continues as new: %v", env.GetWorkflowError())
	var carried workflows.DispatchInput
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &carried))
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, runs, 3)
	select {
	case <-canceled:
	case <-time.After(10 * time.Second):
		t.Error("the run under way was not cancelled")
	}
	assert.Equal(t, time.Second, runs[0].PollInterval)
	assert.Equal(t, 50*time.Millisecond, runs[1].PollInterval, "the next run takes the signalled configuration")
	assert.Equal(t, 50*time.Millisecond, runs[2].PollInterval)
	assert.Equal(t, next, carried, "continue-as-new carries it")
}
