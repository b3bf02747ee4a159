package workflows_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"
	"go.uber.org/mock/gomock"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/job"
	"github.com/tokenscope/tokenscope/internal/fakeclock"
	"github.com/tokenscope/tokenscope/ports"
	"github.com/tokenscope/tokenscope/ports/portsmock"
	"github.com/tokenscope/tokenscope/workflows"
)

func TestCalculatePnLJobWorkflow(t *testing.T) {
	tokens := []string{"t01", "t02", "t03", "t04", "t05", "t06", "t07", "t08", "t09", "t10", "t11", "t12"}
	ctrl := gomock.NewController(t)
	jobs := portsmock.NewMockJobStore(ctrl)
	positions := portsmock.NewMockWalletRederiver(ctrl)
	positions.EXPECT().WalletTokens(gomock.Any(), chain.Sol, "W").Return(tokens, nil)
	// 12 tokens in batches of 10 and 2; each token has 3 trades.
	positions.EXPECT().RederivePosition(gomock.Any(), chain.Sol, "W", gomock.Any(), kytNow).Times(12).Return(3, nil)
	var saved []job.Job
	jobs.EXPECT().Save(gomock.Any(), gomock.Any()).MinTimes(2).
		DoAndReturn(func(_ context.Context, j job.Job) error { saved = append(saved, j); return nil })

	j, err := job.New("job_1", "acct", job.KindCalculatePnL, kytNow)
	require.NoError(t, err)
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterActivity(&workflows.JobActivities{Jobs: jobs, Positions: positions, Clock: fakeclock.At(kytNow)})
	env.ExecuteWorkflow(workflows.CalculatePnLJobWorkflow, workflows.PnLJobInput{Job: j, Params: ports.PnLJob{Chain: chain.Sol, Wallet: "W"}})
	require.NoError(t, env.GetWorkflowError())
	var got job.Job
	require.NoError(t, env.GetWorkflowResult(&got))
	assert.Equal(t, job.Completed, got.Status)
	assert.Equal(t, job.Progress{Done: 12, Total: 12, Message: "re-deriving positions"}, got.Progress)
	assert.Equal(t, "re-derived 12 positions from 36 trades", got.Result.Message)
	assert.JSONEq(t, `{"tokens":12,"positions":12,"trades":36}`, string(got.Result.Data))
	v, err := env.QueryWorkflow(workflows.JobProgressQuery)
	require.NoError(t, err)
	var queried job.Job
	require.NoError(t, v.Get(&queried))
	assert.Equal(t, got, queried, "the query answers with the job's state")
	require.NotEmpty(t, saved)
	assert.Equal(t, job.Running, saved[0].Status)
	assert.Equal(t, job.Completed, saved[len(saved)-1].Status)
}

func TestCalculatePnLJobFailsOnInvalidInput(t *testing.T) {
	ctrl := gomock.NewController(t)
	jobs := portsmock.NewMockJobStore(ctrl)
	positions := portsmock.NewMockWalletRederiver(ctrl)
	positions.EXPECT().RederivePosition(gomock.Any(), chain.Sol, "W", "t1", kytNow).Times(1).
		Return(0, fault.Invalid("trade", "x", "belongs to another wallet"))
	var last job.Job
	jobs.EXPECT().Save(gomock.Any(), gomock.Any()).AnyTimes().DoAndReturn(func(_ context.Context, j job.Job) error { last = j; return nil })
	j, _ := job.New("job_2", "acct", job.KindCalculatePnL, kytNow)
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterActivity(&workflows.JobActivities{Jobs: jobs, Positions: positions, Clock: fakeclock.At(kytNow)})
	env.ExecuteWorkflow(workflows.CalculatePnLJobWorkflow, workflows.PnLJobInput{Job: j,
		Params: ports.PnLJob{Chain: chain.Sol, Wallet: "W", Tokens: []string{"t1"}}})
	require.NoError(t, env.GetWorkflowError())
	assert.Equal(t, job.Failed, last.Status, "an invalid input fails the job once, without retries")
	assert.Contains(t, last.Result.Message, "belongs to another wallet")
}

// A job with an explicit token list counts distinct positions and their trades: a repeated
// address is re-derived once, and an address the wallet never traded is no position ("re-derived
// 7 positions from 6 trades" was the message for 5 positions and 5 trades).
func TestCalculatePnLJobCountsDistinctPositions(t *testing.T) {
	ctrl := gomock.NewController(t)
	jobs := portsmock.NewMockJobStore(ctrl)
	positions := portsmock.NewMockWalletRederiver(ctrl)
	for tok, n := range map[string]int{"a": 1, "b": 1, "c": 1, "d": 1, "e": 1} {
		positions.EXPECT().RederivePosition(gomock.Any(), chain.Sol, "W", tok, kytNow).Times(1).Return(n, nil)
	}
	positions.EXPECT().RederivePosition(gomock.Any(), chain.Sol, "W", "never", kytNow).Times(1).Return(0, nil)
	jobs.EXPECT().Save(gomock.Any(), gomock.Any()).AnyTimes().Return(nil)
	j, err := job.New("job_3", "acct", job.KindCalculatePnL, kytNow)
	require.NoError(t, err)
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterActivity(&workflows.JobActivities{Jobs: jobs, Positions: positions, Clock: fakeclock.At(kytNow)})
	env.ExecuteWorkflow(workflows.CalculatePnLJobWorkflow, workflows.PnLJobInput{Job: j, Params: ports.PnLJob{Chain: chain.Sol, Wallet: "W",
		Tokens: []string{"a", "b", "a", "c", "d", "never", "e", "c"}}})
	require.NoError(t, env.GetWorkflowError())
	var got job.Job
	require.NoError(t, env.GetWorkflowResult(&got))
	assert.Equal(t, job.Completed, got.Status)
	assert.Equal(t, "re-derived 5 positions from 5 trades", got.Result.Message)
	assert.JSONEq(t, `{"tokens":6,"positions":5,"trades":5}`, string(got.Result.Data))
	assert.Equal(t, job.Progress{Done: 6, Total: 6, Message: "re-deriving positions"}, got.Progress)
}
