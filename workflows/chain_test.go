package workflows_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
	"go.uber.org/mock/gomock"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/internal/fakeclock"
	"github.com/tokenscope/tokenscope/ports"
	"github.com/tokenscope/tokenscope/ports/portsmock"
	"github.com/tokenscope/tokenscope/workflows"
)

type chainMocks struct {
	src     *portsmock.MockChainSource
	cps     *portsmock.MockChainCheckpointStore
	ing     *portsmock.MockCheckpointedIngester
	monitor *portsmock.MockChainMonitor
}

// followEnv runs ChainFollowWorkflow in the SDK's test environment over the real FollowChain
// activity and gomock'ed ports.
func followEnv(t *testing.T) (*testsuite.TestWorkflowEnvironment, chainMocks) {
	ctrl := gomock.NewController(t)
	m := chainMocks{src: portsmock.NewMockChainSource(ctrl), cps: portsmock.NewMockChainCheckpointStore(ctrl),
		ing: portsmock.NewMockCheckpointedIngester(ctrl), monitor: portsmock.NewMockChainMonitor(ctrl)}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(workflows.ChainFollowWorkflow, workflow.RegisterOptions{Name: workflows.ChainFollowWorkflowName})
	env.RegisterActivity(&workflows.ChainActivities{Sources: map[chain.Chain]ports.ChainSource{chain.Eth: m.src},
		Checkpoints: m.cps, Ingest: m.ing, Monitor: m.monitor, Clock: fakeclock.At(now)})
	return env, m
}

func segment(from, to int64, parent string, events ...chainevent.Event) ports.ChainSegment {
	return ports.ChainSegment{From: from, To: to, Events: events,
		First: ports.BlockRef{Number: from, Parent: parent}, Last: ports.BlockRef{Number: to, Hash: hash(to)}}
}

func hash(n int64) string {
	return "0xh" + string(rune('0'+n%10)) + string(rune('0'+n/10%10)) + string(rune('0'+n/100%10))
}

// One step writes two segments of at most 5 blocks up to head − 10, each with the checkpoint
// of its last block and the checkpoint it read as the one to move; a node error on the way is
// retried; then the loop sleeps, continues as new, and the query reports block, head and lag.
func TestChainFollowWorkflowWritesSegmentsUpToTheConfirmedHead(t *testing.T) {
	env, m := followEnv(t)
	trade := chainevent.Trade{}
	gomock.InOrder(
		m.cps.EXPECT().Checkpoint(gomock.Any(), chain.Eth).Return(ports.ChainCheckpoint{Block: 100, Hash: hash(100)}, true, nil),
		m.src.EXPECT().Head(gomock.Any()).Return(int64(0), errors.New("node unreachable")),
		m.cps.EXPECT().Checkpoint(gomock.Any(), chain.Eth).Return(ports.ChainCheckpoint{Block: 100, Hash: hash(100)}, true, nil),
		m.src.EXPECT().Head(gomock.Any()).Return(int64(120), nil),
		m.src.EXPECT().Read(gomock.Any(), int64(101), int64(105)).Return(segment(101, 105, hash(100), trade), nil),
		m.ing.EXPECT().IngestThrough(gomock.Any(), []chainevent.Event{trade},
			chainevent.Checkpoint{Chain: chain.Eth, Block: 105, Hash: hash(105), Previous: 100}).Return(chainevent.Result{Trades: 1}, nil),
		m.cps.EXPECT().Checkpoint(gomock.Any(), chain.Eth).Return(ports.ChainCheckpoint{Block: 105, Hash: hash(105)}, true, nil),
		m.src.EXPECT().Head(gomock.Any()).Return(int64(120), nil),
		m.src.EXPECT().Read(gomock.Any(), int64(106), int64(110)).Return(segment(106, 110, hash(105), trade, trade), nil),
		m.ing.EXPECT().IngestThrough(gomock.Any(), []chainevent.Event{trade, trade},
			chainevent.Checkpoint{Chain: chain.Eth, Block: 110, Hash: hash(110), Previous: 105}).Return(chainevent.Result{Trades: 2}, nil),
		m.cps.EXPECT().Checkpoint(gomock.Any(), chain.Eth).Return(ports.ChainCheckpoint{Block: 110, Hash: hash(110)}, true, nil),
		m.src.EXPECT().Head(gomock.Any()).Return(int64(120), nil),
	)
	m.monitor.EXPECT().Progress(chain.Eth, int64(110), int64(120), 2).MinTimes(1)
	m.monitor.EXPECT().Progress(chain.Eth, gomock.Any(), int64(120), gomock.Any()).AnyTimes()

	env.ExecuteWorkflow(workflows.ChainFollowWorkflowName, workflows.FollowInput{Chain: chain.Eth, Confirmations: 10,
		MaxRange: 5, StepsPerRun: 1})
	require.True(t, env.IsWorkflowCompleted())
	var can *workflow.ContinueAsNewError
	require.ErrorAs(t, env.GetWorkflowError(), &can)
	assert.Equal(t, workflows.ChainFollowWorkflowName, can.WorkflowType.Name)

	v, err := env.QueryWorkflow(workflows.ChainFollowQuery)
	require.NoError(t, err)
	var st workflows.FollowStatus
	require.NoError(t, v.Get(&st))
	assert.Equal(t, int64(110), st.Block)
	assert.Equal(t, int64(120), st.Head)
	assert.Equal(t, int64(10), st.Lag)
	assert.Equal(t, int64(3), st.Trades)
	assert.True(t, st.CaughtUp)
	assert.Nil(t, st.Halted)
}

// A segment whose first block's parent is not the checkpointed hash halts the chain: the halt
// is stored and reported, nothing is ingested, the workflow ends with ChainHalted (not
// retried), and the query names the block.
func TestChainFollowWorkflowStopsOnADeepReorg(t *testing.T) {
	env, m := followEnv(t)
	m.cps.EXPECT().Checkpoint(gomock.Any(), chain.Eth).Return(ports.ChainCheckpoint{Block: 100, Hash: hash(100)}, true, nil)
	m.src.EXPECT().Head(gomock.Any()).Return(int64(200), nil)
	m.src.EXPECT().Read(gomock.Any(), int64(101), int64(188)).Return(segment(101, 188, "0xother"), nil)
	m.cps.EXPECT().Halt(gomock.Any(), gomock.Any()).DoAndReturn(func(_ context.Context, h ports.ChainHalt) error {
		assert.Equal(t, chain.Eth, h.Chain)
		assert.Equal(t, int64(100), h.Block)
		assert.Contains(t, h.Reason, "0xother")
		return nil
	})
	m.monitor.EXPECT().Halted(chain.Eth, int64(100))

	env.ExecuteWorkflow(workflows.ChainFollowWorkflowName, workflows.FollowInput{Chain: chain.Eth, Confirmations: 12})
	require.True(t, env.IsWorkflowCompleted())
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, env.GetWorkflowError(), &appErr)
	assert.Equal(t, workflows.ChainHaltedError, appErr.Type())

	v, err := env.QueryWorkflow(workflows.ChainFollowQuery)
	require.NoError(t, err)
	var st workflows.FollowStatus
	require.NoError(t, v.Get(&st))
	require.NotNil(t, st.Halted)
	assert.Equal(t, int64(100), st.Halted.Block)
}

// A follower without a checkpoint starts at StartBlock and names no previous checkpoint.
func TestChainFollowWorkflowBackfillsFromTheStartBlock(t *testing.T) {
	env, m := followEnv(t)
	gomock.InOrder(
		m.cps.EXPECT().Checkpoint(gomock.Any(), chain.Eth).Return(ports.ChainCheckpoint{}, false, nil),
		m.src.EXPECT().Head(gomock.Any()).Return(int64(50), nil),
		m.src.EXPECT().Read(gomock.Any(), int64(7), int64(48)).Return(segment(7, 48, "0xanything"), nil),
		m.ing.EXPECT().IngestThrough(gomock.Any(), gomock.Len(0),
			chainevent.Checkpoint{Chain: chain.Eth, Block: 48, Hash: hash(48), Previous: -1}).Return(chainevent.Result{}, nil),
		m.cps.EXPECT().Checkpoint(gomock.Any(), chain.Eth).Return(ports.ChainCheckpoint{Block: 48, Hash: hash(48)}, true, nil),
		m.src.EXPECT().Head(gomock.Any()).Return(int64(50), nil),
	)
	m.monitor.EXPECT().Progress(chain.Eth, gomock.Any(), gomock.Any(), gomock.Any()).AnyTimes()
	env.ExecuteWorkflow(workflows.ChainFollowWorkflowName, workflows.FollowInput{Chain: chain.Eth, Confirmations: 2,
		StartBlock: 7, StepsPerRun: 1})
	var can *workflow.ContinueAsNewError
	require.ErrorAs(t, env.GetWorkflowError(), &can)
}
