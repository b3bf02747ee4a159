package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/adapters/postgres/pgtest"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/job"
)

var capT0 = time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)

// jobStore is a JobStore over a fresh account.
func jobStore(t *testing.T, accounts ...string) *postgres.JobStore {
	t.Helper()
	pool := pgtest.Pool(t)
	for _, a := range accounts {
		require.NoError(t, postgres.NewAccountStore(pool).EnsureAccount(context.Background(), a, a))
	}
	return postgres.NewJobStore(pool, func(id string) string { return "job/" + id })
}

func newPnLJob(t *testing.T, id, account string) job.Job {
	t.Helper()
	j, err := job.New(id, account, job.KindCalculatePnL, capT0)
	require.NoError(t, err)
	return j
}

// counting is a started callback that counts its calls.
type counting struct{ n atomic.Int32 }

func (c *counting) start(context.Context) error { c.n.Add(1); return nil }

func unfinishedJobs(t *testing.T, account string) int {
	t.Helper()
	var n int
	require.NoError(t, pgtest.Pool(t).QueryRow(context.Background(),
		`SELECT count(*) FROM jobs WHERE account_id = $1 AND status NOT IN ('completed', 'failed')`, account).Scan(&n))
	return n
}

func TestJobStoreInsertSharesUnfinishedWorkAndCapsTheAccount(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	ctx := context.Background()
	s := jobStore(t, "jb-a", "jb-b")
	var started counting

	j1 := newPnLJob(t, "job_a1", "jb-a")
	got, err := s.Insert(ctx, j1, "k1", 2, started.start)
	require.NoError(t, err)
	assert.Equal(t, j1, got)

	got, err = s.Insert(ctx, newPnLJob(t, "job_a2", "jb-a"), "k1", 2, started.start)
	require.NoError(t, err)
	assert.Equal(t, "job_a1", got.ID, "the unfinished job with the same key answers")
	assert.Equal(t, job.Pending, got.Status)
	assert.Equal(t, int32(1), started.n.Load(), "nothing new started")

	_, err = s.Insert(ctx, newPnLJob(t, "job_a3", "jb-a"), "k2", 2, started.start)
	require.NoError(t, err)
	_, err = s.Insert(ctx, newPnLJob(t, "job_a4", "jb-a"), "k3", 2, started.start)
	require.Error(t, err)
	fe, ok := fault.As(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, fault.KindRateLimited, fe.Kind)
	assert.Equal(t, job.BusyRetryAfter, fe.RetryAfter)
	assert.Equal(t, int32(2), started.n.Load())
	_, err = s.Get(ctx, "jb-a", "job_a4")
	assert.Equal(t, fault.KindNotFound, fault.KindOf(err), "a refused job is not stored")

	got, err = s.Insert(ctx, newPnLJob(t, "job_a5", "jb-a"), "k2", 2, started.start)
	require.NoError(t, err)
	assert.Equal(t, "job_a3", got.ID, "at the cap, identical work still gets its job")

	_, err = s.Insert(ctx, newPnLJob(t, "job_b1", "jb-b"), "k1", 2, started.start)
	require.NoError(t, err, "another account has its own keys and cap")

	// A finished job neither answers for its key nor counts.
	done := j1
	require.NoError(t, done.Complete("", nil, capT0.Add(time.Minute)))
	require.NoError(t, s.Save(ctx, done))
	got, err = s.Insert(ctx, newPnLJob(t, "job_a6", "jb-a"), "k1", 2, started.start)
	require.NoError(t, err)
	assert.Equal(t, "job_a6", got.ID)
	assert.Equal(t, 2, unfinishedJobs(t, "jb-a"))

	// A failed start stores nothing, so it holds neither the key nor a place.
	boom := errors.New("temporal down")
	failed := got
	require.NoError(t, failed.Fail("x", capT0))
	require.NoError(t, s.Save(ctx, failed))
	_, err = s.Insert(ctx, newPnLJob(t, "job_a7", "jb-a"), "k9", 2, func(context.Context) error { return boom })
	assert.ErrorIs(t, err, boom)
	got, err = s.Insert(ctx, newPnLJob(t, "job_a8", "jb-a"), "k9", 2, started.start)
	require.NoError(t, err)
	assert.Equal(t, "job_a8", got.ID)

	// No key, no cap: nothing is shared or refused.
	for i := range 3 {
		_, err = s.Insert(ctx, newPnLJob(t, fmt.Sprintf("job_b%d", i+2), "jb-b"), "", 0, started.start)
		require.NoError(t, err)
	}
	assert.Equal(t, 4, unfinishedJobs(t, "jb-b"))
}

func TestJobStoreInsertHoldsUnderConcurrency(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	ctx := context.Background()
	s := jobStore(t, "jc-same", "jc-cap")

	t.Run("identical work inserted at once makes one job", func(t *testing.T) {
		const n = 12
		var started counting
		ids := make([]string, n)
		errs := make([]error, n)
		jobs := make([]job.Job, n)
		for i := range jobs {
			jobs[i] = newPnLJob(t, fmt.Sprintf("job_same_%d", i), "jc-same")
		}
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				j, err := s.Insert(ctx, jobs[i], "same", 100, func(ctx context.Context) error {
					time.Sleep(20 * time.Millisecond) // a workflow start takes a while: widen the window
					return started.start(ctx)
				})
				ids[i], errs[i] = j.ID, err
			}()
		}
		wg.Wait()
		for i := range n {
			require.NoError(t, errs[i])
			assert.Equal(t, ids[0], ids[i])
		}
		assert.Equal(t, int32(1), started.n.Load())
		assert.Equal(t, 1, unfinishedJobs(t, "jc-same"))
	})

	t.Run("distinct work inserted at once stops at the cap", func(t *testing.T) {
		const n, limit = 12, 3
		var started counting
		var ok, limited atomic.Int32
		jobs := make([]job.Job, n)
		for i := range jobs {
			jobs[i] = newPnLJob(t, fmt.Sprintf("job_cap_%d", i), "jc-cap")
		}
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := s.Insert(ctx, jobs[i], fmt.Sprintf("k%d", i), limit, started.start)
				switch {
				case err == nil:
					ok.Add(1)
				case fault.Is(err, fault.KindRateLimited):
					limited.Add(1)
				default:
					t.Errorf("insert %d: %v", i, err)
				}
			}()
		}
		wg.Wait()
		assert.Equal(t, int32(limit), ok.Load())
		assert.Equal(t, int32(n-limit), limited.Load())
		assert.Equal(t, int32(limit), started.n.Load())
		assert.Equal(t, limit, unfinishedJobs(t, "jc-cap"))
	})
}

func TestJobStoreUniqueIndexForbidsTwoUnfinishedJobsWithOneKey(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	ctx := context.Background()
	s := jobStore(t, "jd")
	_, err := s.Insert(ctx, newPnLJob(t, "job_d1", "jd"), "dup", 0, func(context.Context) error { return nil })
	require.NoError(t, err)
	_, err = pgtest.Pool(t).Exec(ctx, `INSERT INTO jobs (id, account_id, kind, workflow_id, work_key) VALUES ('job_d2', 'jd', 'calculate-pnl', 'job/job_d2', 'dup')`)
	require.Error(t, err, "the schema refuses what the lock prevents")
}
