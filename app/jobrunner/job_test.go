package jobrunner_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/mock/gomock"

	"github.com/tokenscope/tokenscope/app/jobrunner"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/job"
	"github.com/tokenscope/tokenscope/internal/fakeclock"
	"github.com/tokenscope/tokenscope/ports"
	"github.com/tokenscope/tokenscope/ports/portsmock"
)

var t0 = time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)

// newService has no expectations: any port call a test does not expect fails it. limits, when
// given, bounds the service (the zero Limits otherwise).
func newService(t *testing.T, limits ...jobrunner.Limits) (*jobrunner.Service, *portsmock.MockJobStore, *portsmock.MockJobRunner) {
	ctrl := gomock.NewController(t)
	store := portsmock.NewMockJobStore(ctrl)
	runner := portsmock.NewMockJobRunner(ctrl)
	// The clock is in another zone: the job's times must come out in UTC.
	clock := fakeclock.At(t0.In(time.FixedZone("X", 3600)))
	var l jobrunner.Limits
	if len(limits) > 0 {
		l = limits[0]
	}
	return jobrunner.New(store, runner, clock, l), store, runner
}

// storeThatStarts behaves like the real store: it calls started inside the write and fails
// the write when started fails.
func storeThatStarts(ctx context.Context, j job.Job, _ string, _ int, started func(context.Context) error) (job.Job, error) {
	return j, started(ctx)
}

var jobID = regexp.MustCompile(`^job_[0-9a-f]{32}$`)

func TestCalculatePnLStartsTheWorkflowInsideTheWrite(t *testing.T) {
	svc, store, runner := newService(t)
	ctx := context.Background()
	var inserted job.Job
	gomock.InOrder(
		store.EXPECT().Insert(ctx, gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).DoAndReturn(
			func(ctx context.Context, j job.Job, _ string, _ int, started func(context.Context) error) (job.Job, error) {
				inserted = j
				return j, started(ctx)
			}),
		runner.EXPECT().StartCalculatePnL(ctx, gomock.Any(), ports.PnLJob{Chain: chain.Sol, Wallet: "Wallet1", Tokens: []string{"TokA", "TokB"}}).
			DoAndReturn(func(_ context.Context, j job.Job, _ ports.PnLJob) error {
				assert.Equal(t, inserted, j, "the workflow starts the job that is stored")
				return nil
			}),
	)

	j, err := svc.CalculatePnL(ctx, "acc", chain.Sol, "  Wallet1\t", []string{"TokA", "TokB"})
	require.NoError(t, err)
	assert.Equal(t, inserted, j)
	assert.Regexp(t, jobID, j.ID)
	assert.Equal(t, "acc", j.AccountID)
	assert.Equal(t, job.KindCalculatePnL, j.Kind)
	assert.Equal(t, job.Pending, j.Status)
	assert.Nil(t, j.Result)
	assert.Equal(t, t0, j.CreatedAt)
	assert.Equal(t, time.UTC, j.CreatedAt.Location())
	assert.Equal(t, t0, j.UpdatedAt)
}

func TestCalculatePnLWithoutTokensDerivesEveryToken(t *testing.T) {
	svc, store, runner := newService(t)
	store.EXPECT().Insert(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).DoAndReturn(storeThatStarts).Times(2)
	runner.EXPECT().StartCalculatePnL(gomock.Any(), gomock.Any(), ports.PnLJob{Chain: chain.Eth, Wallet: "0xabc"}).Return(nil)
	runner.EXPECT().StartCalculatePnL(gomock.Any(), gomock.Any(), ports.PnLJob{Chain: chain.Eth, Wallet: "0xabc", Tokens: []string{}}).Return(nil)

	a, err := svc.CalculatePnL(context.Background(), "acc", chain.Eth, "0xabc", nil)
	require.NoError(t, err)
	b, err := svc.CalculatePnL(context.Background(), "acc", chain.Eth, "0xabc", []string{})
	require.NoError(t, err)
	assert.NotEqual(t, a.ID, b.ID, "every job gets a fresh random id")
}

func TestCalculatePnLAcceptsTheLimits(t *testing.T) {
	svc, store, runner := newService(t)
	wallet := strings.Repeat("w", 128)
	tokens := make([]string, jobrunner.MaxTokens)
	for i := range tokens {
		tokens[i] = strings.Repeat("t", 128)
	}
	store.EXPECT().Insert(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).DoAndReturn(storeThatStarts)
	runner.EXPECT().StartCalculatePnL(gomock.Any(), gomock.Any(), ports.PnLJob{Chain: chain.Sol, Wallet: wallet, Tokens: tokens}).Return(nil)
	_, err := svc.CalculatePnL(context.Background(), "acc", chain.Sol, wallet, tokens)
	require.NoError(t, err)
}

func TestCalculatePnLRejectsInvalidInputBeforeAnyPort(t *testing.T) {
	tooMany := make([]string, jobrunner.MaxTokens+1)
	for i := range tooMany {
		tooMany[i] = "tok"
	}
	for name, tc := range map[string]struct {
		account, wallet string
		tokens          []string
		param           string
		code            int
	}{
		"empty wallet":        {"acc", "", nil, "walletAddress", fault.CodeMissingParameter},
		"blank wallet":        {"acc", " \t\n", nil, "walletAddress", fault.CodeMissingParameter},
		"long wallet":         {"acc", strings.Repeat("w", 129), nil, "walletAddress", fault.CodeInvalidParameter},
		"wallet with space":   {"acc", "ab cd", nil, "walletAddress", fault.CodeInvalidParameter},
		"wallet with slash":   {"acc", "ab/cd", nil, "walletAddress", fault.CodeInvalidParameter},
		"wallet not utf8":     {"acc", "ab\xffcd", nil, "walletAddress", fault.CodeInvalidParameter},
		"too many tokens":     {"acc", "w", tooMany, "tokenAddresses", fault.CodeAddressesExceeded},
		"empty token":         {"acc", "w", []string{"a", ""}, "tokenAddresses", fault.CodeInvalidParameter},
		"long token":          {"acc", "w", []string{strings.Repeat("t", 129)}, "tokenAddresses", fault.CodeInvalidParameter},
		"token with newline":  {"acc", "w", []string{"a\nb"}, "tokenAddresses", fault.CodeInvalidParameter},
		"missing the account": {"", "w", nil, "accountId", fault.CodeMissingParameter},
	} {
		t.Run(name, func(t *testing.T) {
			svc, _, _ := newService(t) // no expectations: any port call fails the test
			j, err := svc.CalculatePnL(context.Background(), tc.account, chain.Sol, tc.wallet, tc.tokens)
			require.Error(t, err)
			fe, ok := fault.As(err)
			require.True(t, ok)
			assert.Equal(t, fault.KindInvalid, fe.Kind)
			assert.Equal(t, tc.param, fe.Param)
			assert.Equal(t, tc.code, fe.Code)
			assert.Equal(t, job.Job{}, j)
		})
	}
}

func TestCalculatePnLFailedWriteStartsNothing(t *testing.T) {
	svc, store, _ := newService(t) // no StartCalculatePnL expectation
	conflict := fault.Conflict("duplicate job id")
	store.EXPECT().Insert(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Return(job.Job{}, conflict)
	_, err := svc.CalculatePnL(context.Background(), "acc", chain.Sol, "w", nil)
	assert.Same(t, conflict, err, "an error with the context still alive is passed as is")
}

func TestCalculatePnLWorkflowStartFailureFailsTheStart(t *testing.T) {
	svc, store, runner := newService(t)
	down := fault.Unavailable("temporal is unreachable", 2*time.Second, errors.New("dial"))
	store.EXPECT().Insert(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).DoAndReturn(storeThatStarts)
	runner.EXPECT().StartCalculatePnL(gomock.Any(), gomock.Any(), gomock.Any()).Return(down)
	_, err := svc.CalculatePnL(context.Background(), "acc", chain.Sol, "w", nil)
	assert.Same(t, down, err)
}

func TestCalculatePnLIsBoundedByTheStartDeadline(t *testing.T) {
	svc, store, runner := newService(t, jobrunner.Limits{StartDeadline: time.Hour})
	before := time.Now()
	store.EXPECT().Insert(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).DoAndReturn(
		func(ctx context.Context, j job.Job, _ string, _ int, started func(context.Context) error) (job.Job, error) {
			dl, ok := ctx.Deadline()
			require.True(t, ok, "the write runs under the start deadline")
			assert.False(t, dl.Before(before.Add(time.Hour)))
			assert.False(t, dl.After(time.Now().Add(time.Hour)))
			return j, started(ctx)
		})
	runner.EXPECT().StartCalculatePnL(gomock.Any(), gomock.Any(), gomock.Any()).DoAndReturn(
		func(ctx context.Context, _ job.Job, _ ports.PnLJob) error {
			_, ok := ctx.Deadline()
			assert.True(t, ok, "the workflow start runs under the start deadline")
			return nil
		})
	_, err := svc.CalculatePnL(context.Background(), "acc", chain.Sol, "w", nil)
	require.NoError(t, err)

	// Without a StartDeadline the caller's context is used as is.
	svc, store, runner = newService(t)
	store.EXPECT().Insert(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).DoAndReturn(
		func(ctx context.Context, j job.Job, _ string, _ int, started func(context.Context) error) (job.Job, error) {
			_, ok := ctx.Deadline()
			assert.False(t, ok)
			return j, started(ctx)
		})
	runner.EXPECT().StartCalculatePnL(gomock.Any(), gomock.Any(), gomock.Any()).Return(nil)
	_, err = svc.CalculatePnL(context.Background(), "acc", chain.Sol, "w", nil)
	require.NoError(t, err)
}

func TestCalculatePnLOutOfTimeIsUnavailable(t *testing.T) {
	t.Run("deadline passes during the write", func(t *testing.T) {
		svc, store, _ := newService(t, jobrunner.Limits{StartDeadline: time.Millisecond})
		store.EXPECT().Insert(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).DoAndReturn(
			func(ctx context.Context, _ job.Job, _ string, _ int, _ func(context.Context) error) (job.Job, error) {
				<-ctx.Done() // the write hangs until the deadline
				return job.Job{}, ctx.Err()
			})
		_, err := svc.CalculatePnL(context.Background(), "acc", chain.Sol, "w", nil)
		fe, ok := fault.As(err)
		require.True(t, ok, "%v", err)
		assert.Equal(t, fault.KindUnavailable, fe.Kind)
		assert.Equal(t, 2*time.Second, fe.RetryAfter)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
	})
	t.Run("internal error once the context is done", func(t *testing.T) {
		svc, store, _ := newService(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		internal := errors.New("conn closed")
		store.EXPECT().Insert(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).DoAndReturn(
			func(context.Context, job.Job, string, int, func(context.Context) error) (job.Job, error) {
				cancel()
				return job.Job{}, internal
			})
		_, err := svc.CalculatePnL(ctx, "acc", chain.Sol, "w", nil)
		assert.Equal(t, fault.KindUnavailable, fault.KindOf(err))
		assert.ErrorIs(t, err, internal)
	})
	t.Run("an unavailable error is kept", func(t *testing.T) {
		svc, store, _ := newService(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		down := fault.Unavailable("temporal is unreachable", 9*time.Second, nil)
		store.EXPECT().Insert(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).DoAndReturn(
			func(context.Context, job.Job, string, int, func(context.Context) error) (job.Job, error) {
				cancel()
				return job.Job{}, down
			})
		_, err := svc.CalculatePnL(ctx, "acc", chain.Sol, "w", nil)
		assert.Same(t, down, err)
	})
}

func TestCalculatePnLStoresTheWorkKeyUnderTheAccountLimit(t *testing.T) {
	svc, store, runner := newService(t, jobrunner.Limits{MaxRunning: 3})
	tokens := []string{"TokB", "TokA"}
	store.EXPECT().Insert(gomock.Any(), gomock.Any(), job.PnLKey(chain.Sol, "Wallet1", tokens), 3, gomock.Any()).DoAndReturn(storeThatStarts)
	runner.EXPECT().StartCalculatePnL(gomock.Any(), gomock.Any(), ports.PnLJob{Chain: chain.Sol, Wallet: "Wallet1", Tokens: tokens}).Return(nil)
	_, err := svc.CalculatePnL(context.Background(), "acc", chain.Sol, " Wallet1 ", tokens)
	require.NoError(t, err)

	// Without a configured limit the default applies: never "no limit".
	svc, store, runner = newService(t)
	store.EXPECT().Insert(gomock.Any(), gomock.Any(), gomock.Any(), jobrunner.DefaultMaxRunning, gomock.Any()).DoAndReturn(storeThatStarts)
	runner.EXPECT().StartCalculatePnL(gomock.Any(), gomock.Any(), gomock.Any()).Return(nil)
	_, err = svc.CalculatePnL(context.Background(), "acc", chain.Sol, "Wallet1", nil)
	require.NoError(t, err)
}

func TestCalculatePnLAnswersWithTheRunningIdenticalJob(t *testing.T) {
	svc, store, _ := newService(t) // no StartCalculatePnL expectation: nothing new starts
	existing := running("job_running", 4)
	store.EXPECT().Insert(gomock.Any(), gomock.Any(), job.PnLKey(chain.Sol, "w", nil), gomock.Any(), gomock.Any()).Return(existing, nil)
	got, err := svc.CalculatePnL(context.Background(), "acc", chain.Sol, "w", nil)
	require.NoError(t, err)
	assert.Equal(t, existing, got)
}

func TestCalculatePnLOverTheLimitIsRateLimited(t *testing.T) {
	svc, store, _ := newService(t, jobrunner.Limits{StartDeadline: time.Hour}) // no StartCalculatePnL expectation
	busy := job.TooManyRunning(jobrunner.DefaultMaxRunning)
	store.EXPECT().Insert(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Return(job.Job{}, busy)
	got, err := svc.CalculatePnL(context.Background(), "acc", chain.Sol, "w", nil)
	assert.Same(t, busy, err)
	assert.Equal(t, fault.KindRateLimited, fault.KindOf(err))
	assert.Equal(t, job.Job{}, got)
}

func running(id string, done int64) job.Job {
	return job.Job{ID: id, AccountID: "acc", Kind: job.KindCalculatePnL, Status: job.Running,
		Progress: job.Progress{Done: done, Total: 10}, CreatedAt: t0, UpdatedAt: t0}
}

func TestGetAnswersARunningJobFromTheWorkflow(t *testing.T) {
	svc, store, runner := newService(t)
	ctx := context.Background()
	stored, live := running("job_1", 2), running("job_1", 7)
	gomock.InOrder(
		store.EXPECT().Get(ctx, "acc", "job_1").Return(stored, nil),
		runner.EXPECT().Progress(ctx, "job_1").Return(live, nil),
	)
	got, err := svc.Get(ctx, "acc", "job_1")
	require.NoError(t, err)
	assert.Equal(t, live, got)
}

func TestGetAnswersAPendingJobFromTheWorkflow(t *testing.T) {
	svc, store, runner := newService(t)
	stored := running("job_1", 0)
	stored.Status = job.Pending
	live := running("job_1", 1)
	store.EXPECT().Get(gomock.Any(), "acc", "job_1").Return(stored, nil)
	runner.EXPECT().Progress(gomock.Any(), "job_1").Return(live, nil)
	got, err := svc.Get(context.Background(), "acc", "job_1")
	require.NoError(t, err)
	assert.Equal(t, live, got)
}

func TestGetAnswersAFinishedJobFromTheStore(t *testing.T) {
	for _, status := range []job.Status{job.Completed, job.Failed} {
		t.Run(string(status), func(t *testing.T) {
			svc, store, _ := newService(t) // no Progress expectation
			stored := running("job_1", 10)
			stored.Status = status
			stored.Result = &job.Result{Success: status == job.Completed, Message: "done"}
			store.EXPECT().Get(gomock.Any(), "acc", "job_1").Return(stored, nil)
			got, err := svc.Get(context.Background(), "acc", "job_1")
			require.NoError(t, err)
			assert.Equal(t, stored, got)
		})
	}
}

func TestGetFallsBackToTheStoredStateWhenTheWorkflowCannotAnswer(t *testing.T) {
	for name, tc := range map[string]struct {
		live job.Job
		err  error
	}{
		"worker down":         {job.Job{}, fault.Unavailable("no worker", time.Second, nil)},
		"workflow gone":       {job.Job{}, fault.NotFound("workflow", "job_1")},
		"another job's state": {running("job_2", 9), nil},
		"empty answer":        {job.Job{}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			svc, store, runner := newService(t)
			stored := running("job_1", 2)
			store.EXPECT().Get(gomock.Any(), "acc", "job_1").Return(stored, nil)
			runner.EXPECT().Progress(gomock.Any(), "job_1").Return(tc.live, tc.err)
			got, err := svc.Get(context.Background(), "acc", "job_1")
			require.NoError(t, err, "the stored row answers")
			assert.Equal(t, stored, got)
		})
	}
}

func TestGetBoundsTheProgressQueryByQueryTimeout(t *testing.T) {
	svc, store, runner := newService(t, jobrunner.Limits{QueryTimeout: time.Millisecond})
	stored := running("job_1", 2)
	store.EXPECT().Get(gomock.Any(), "acc", "job_1").Return(stored, nil)
	runner.EXPECT().Progress(gomock.Any(), "job_1").DoAndReturn(func(ctx context.Context, _ string) (job.Job, error) {
		<-ctx.Done() // a query that hangs until the timeout
		return running("job_1", 9), ctx.Err()
	})
	got, err := svc.Get(context.Background(), "acc", "job_1")
	require.NoError(t, err)
	assert.Equal(t, stored, got)
}

func TestGetPassesStoreErrorsThroughAndAsksNoWorkflow(t *testing.T) {
	for name, storeErr := range map[string]error{
		"another account's job": fault.NotFound("job", "job_1"),
		"store down":            fault.Unavailable("db down", time.Second, errors.New("dial")),
	} {
		t.Run(name, func(t *testing.T) {
			svc, store, _ := newService(t) // no Progress expectation
			store.EXPECT().Get(gomock.Any(), "other", "job_1").Return(job.Job{}, storeErr)
			got, err := svc.Get(context.Background(), "other", "job_1")
			assert.Same(t, storeErr, err)
			assert.Equal(t, fault.KindOf(storeErr), fault.KindOf(err))
			assert.Equal(t, job.Job{}, got)
		})
	}
}
