package workflows_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
	"go.uber.org/mock/gomock"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/ranking"
	"github.com/tokenscope/tokenscope/internal/fakeclock"
	"github.com/tokenscope/tokenscope/ports"
	"github.com/tokenscope/tokenscope/ports/portsmock"
	"github.com/tokenscope/tokenscope/workflows"
)

// freshRankings is a market double on which every round succeeds and recomputes no ranking
// (all of them computed at now, with entries); roundAt records the test clock at each round.
func freshRankings(t *testing.T, env *testsuite.TestWorkflowEnvironment, roundAt *[]time.Duration, start time.Time) *workflows.RefreshActivities {
	ctrl := gomock.NewController(t)
	clock := portsmock.NewMockClock(ctrl)
	market := portsmock.NewMockMarketRefresher(ctrl)
	clock.EXPECT().Now().Return(now).AnyTimes()
	var stamps []ports.HotRankingTime
	for _, c := range chain.V2 {
		for _, d := range ranking.AllDurations {
			stamps = append(stamps, ports.HotRankingTime{Chain: c, Duration: d, ComputedAt: now, Entries: 1})
		}
	}
	market.EXPECT().RefreshWindows(gomock.Any(), now).DoAndReturn(func(context.Context, time.Time) (ports.WindowRefresh, error) {
		*roundAt = append(*roundAt, env.Now().Sub(start).Round(time.Second))
		return ports.WindowRefresh{}, nil
	}).AnyTimes()
	market.EXPECT().HotRankingTimes(gomock.Any()).Return(stamps, nil).AnyTimes()
	return &workflows.RefreshActivities{Clock: clock, Market: market}
}

func continuedWith(t *testing.T, err error) workflows.RefreshInput {
	t.Helper()
	var can *workflow.ContinueAsNewError
	require.True(t, errors.As(err, &can), "the loop continues as new: %v", err)
	var in workflows.RefreshInput
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &in))
	return in
}

// TestMarketRefreshConfigSignal: the loop runs on a 1-minute interval; 10 s in, a restarted
// process sends its configuration (interval 2 s), as startMarketRefresh's signal-with-start
// does. The sleep under way is cut to the new interval (already past: the next round starts at
// once), later rounds follow 2 s apart, the query reports it, and continue-as-new carries it.
func TestMarketRefreshConfigSignal(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	start := env.Now()
	var rounds []time.Duration
	env.RegisterWorkflowWithOptions(workflows.MarketRefreshWorkflow, workflow.RegisterOptions{Name: workflows.MarketRefreshWorkflowName})
	env.RegisterActivity(freshRankings(t, env, &rounds, start))
	var queried workflows.RefreshInput
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(workflows.RefreshConfigSignal, workflows.RefreshInput{Interval: 2 * time.Second, RunsPerHistory: 4})
	}, 10*time.Second)
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(workflows.RefreshConfigQuery)
		require.NoError(t, err)
		require.NoError(t, v.Get(&queried))
	}, 11*time.Second)
	env.ExecuteWorkflow(workflows.MarketRefreshWorkflowName, workflows.RefreshInput{Interval: time.Minute, RunsPerHistory: 4})
	require.True(t, env.IsWorkflowCompleted())
	assert.Equal(t, []time.Duration{0, 10 * time.Second, 12 * time.Second, 14 * time.Second}, rounds,
		"rounds at the old interval until the signal, then at the new one")
	assert.Equal(t, 2*time.Second, queried.Interval, "the query reports the configuration in force")
	assert.Equal(t, workflows.RefreshInput{Interval: 2 * time.Second, RunsPerHistory: 4}, continuedWith(t, env.GetWorkflowError()),
		"continue-as-new carries the signalled configuration")
}

// TestMarketRefreshConfigSignalSameInterval: a configuration equal to the one in force (every
// restart without a change sends one) leaves the sleep under way alone.
func TestMarketRefreshConfigSignalSameInterval(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	start := env.Now()
	var rounds []time.Duration
	env.RegisterWorkflowWithOptions(workflows.MarketRefreshWorkflow, workflow.RegisterOptions{Name: workflows.MarketRefreshWorkflowName})
	env.RegisterActivity(freshRankings(t, env, &rounds, start))
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(workflows.RefreshConfigSignal, workflows.RefreshInput{Interval: 20 * time.Second, RunsPerHistory: 3})
	}, 5*time.Second)
	env.ExecuteWorkflow(workflows.MarketRefreshWorkflowName, workflows.RefreshInput{Interval: 20 * time.Second, RunsPerHistory: 3})
	require.True(t, env.IsWorkflowCompleted())
	assert.Equal(t, []time.Duration{0, 20 * time.Second, 40 * time.Second}, rounds)
	assert.Equal(t, workflows.RefreshInput{Interval: 20 * time.Second, RunsPerHistory: 3}, continuedWith(t, env.GetWorkflowError()))
}

// TestMarketRefreshOldRunsTakeConfigAtContinueAsNew: a run started before the change (its
// history has no version marker: GetVersion answers DefaultVersion) keeps its old commands, but
// a configuration signalled meanwhile is what it continues as new with.
func TestMarketRefreshOldRunsTakeConfigAtContinueAsNew(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	start := env.Now()
	var rounds []time.Duration
	env.RegisterWorkflowWithOptions(workflows.MarketRefreshWorkflow, workflow.RegisterOptions{Name: workflows.MarketRefreshWorkflowName})
	env.RegisterActivity(freshRankings(t, env, &rounds, start))
	env.OnGetVersion("refresh-config-signal", workflow.DefaultVersion, 1).Return(workflow.DefaultVersion)
	var heartbeatTimeouts []time.Duration
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		heartbeatTimeouts = append(heartbeatTimeouts, info.HeartbeatTimeout)
	})
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(workflows.RefreshConfigSignal, workflows.RefreshInput{Interval: 2 * time.Second})
	}, 10*time.Second)
	env.ExecuteWorkflow(workflows.MarketRefreshWorkflowName, workflows.RefreshInput{Interval: time.Minute, RunsPerHistory: 2})
	require.True(t, env.IsWorkflowCompleted())
	assert.Equal(t, []time.Duration{0, time.Minute}, rounds, "the old run's sleeps are untouched")
	assert.Equal(t, []time.Duration{0, 0}, heartbeatTimeouts, "the old run's activity options are untouched")
	assert.Equal(t, 2*time.Second, continuedWith(t, env.GetWorkflowError()).Interval)
}

// TestMarketRefreshRoundHeartbeatTimeout: a round is scheduled with a heartbeat timeout of a
// few seconds (and the minute as its start-to-close bound), so a round lost with its worker is
// retried once RefreshHeartbeatTimeout has passed without a heartbeat, not a minute later.
func TestMarketRefreshRoundHeartbeatTimeout(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	var rounds []time.Duration
	env.RegisterWorkflowWithOptions(workflows.MarketRefreshWorkflow, workflow.RegisterOptions{Name: workflows.MarketRefreshWorkflowName})
	env.RegisterActivity(freshRankings(t, env, &rounds, env.Now()))
	var infos []activity.Info
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		infos = append(infos, *info)
	})
	env.ExecuteWorkflow(workflows.MarketRefreshWorkflowName, workflows.RefreshInput{Interval: time.Second, RunsPerHistory: 2})
	require.True(t, env.IsWorkflowCompleted())
	require.Len(t, infos, 2)
	for _, info := range infos {
		assert.Equal(t, workflows.RefreshMarketActivityName, info.ActivityType.Name)
		assert.Equal(t, workflows.RefreshHeartbeatTimeout, info.HeartbeatTimeout)
		assert.LessOrEqual(t, info.HeartbeatTimeout, 10*time.Second, "a lost round is retried within seconds")
		assert.Less(t, workflows.RefreshHeartbeatInterval, info.HeartbeatTimeout, "the activity heartbeats well within it")
	}
}

// TestRefreshMarketHeartbeatsDuringALongQuery: the activity heartbeats while a port call is still
// running (the windows query at scale can take a while), so a live round never hits the short
// heartbeat timeout; here the query returns only once a heartbeat has been recorded.
func TestRefreshMarketHeartbeatsDuringALongQuery(t *testing.T) {
	ctrl := gomock.NewController(t)
	market := portsmock.NewMockMarketRefresher(ctrl)
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	beat := make(chan struct{}, 1)
	env.SetOnActivityHeartbeatListener(func(*activity.Info, converter.EncodedValues) {
		select {
		case beat <- struct{}{}:
		default:
		}
	})
	market.EXPECT().RefreshWindows(gomock.Any(), now).DoAndReturn(func(context.Context, time.Time) (ports.WindowRefresh, error) {
		select {
		case <-beat:
			return ports.WindowRefresh{Tokens: 1}, nil
		case <-time.After(30 * time.Second):
			return ports.WindowRefresh{}, errors.New("no heartbeat while the query ran")
		}
	})
	market.EXPECT().HotRankingTimes(gomock.Any()).Return(nil, errors.New("stop here"))
	env.RegisterActivity(&workflows.RefreshActivities{Clock: fakeclock.At(now), Market: market})
	_, err := env.ExecuteActivity(workflows.RefreshMarketActivityName)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "stop here", "the windows query returned normally, after a heartbeat")
}
