package postgres_test

import (
	"context"
	"encoding/json"
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

var jobT0 = time.Date(2026, 3, 3, 11, 0, 0, 500000000, time.UTC)

// insertJob inserts j under a work key of its own and no practical cap, so these cases exercise
// the row and its start callback alone (the key and cap rules have job_test.go).
func insertJob(ctx context.Context, s *postgres.JobStore, j job.Job, started func(context.Context) error) error {
	_, err := s.Insert(ctx, j, fmt.Sprintf("suite-key-%d", jobKeys.Add(1)), 1<<20, started)
	return err
}

var jobKeys atomic.Int64

func newJobStore(t *testing.T) *postgres.JobStore {
	return postgres.NewJobStore(pgtest.Pool(t), func(id string) string { return "wf-" + id })
}

func newTestJob(t *testing.T, accountID, id string) job.Job {
	t.Helper()
	j, err := job.New(id, accountID, job.KindCalculatePnL, jobT0)
	require.NoError(t, err)
	return j
}

func jobRows(t *testing.T, id string) int {
	t.Helper()
	var n int
	require.NoError(t, pgtest.Pool(t).QueryRow(context.Background(), `SELECT count(*) FROM jobs WHERE id = $1`, id).Scan(&n))
	return n
}

func storedJob(t *testing.T, s *postgres.JobStore, accountID, id string) job.Job {
	t.Helper()
	j, err := s.Get(context.Background(), accountID, id)
	require.NoError(t, err)
	return j
}

func TestJobStoreInsert(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	ctx := context.Background()
	s := newJobStore(t)
	freshAccounts(t, "job-ins", "job-ins-other")
	j := newTestJob(t, "job-ins", "job_ins_1")

	var sc startCounter
	require.NoError(t, insertJob(ctx, s, j, sc.start))
	assert.Equal(t, int32(1), sc.calls.Load())
	assert.Equal(t, j, storedJob(t, s, "job-ins", j.ID))
	var wf string
	require.NoError(t, pgtest.Pool(t).QueryRow(ctx, `SELECT workflow_id FROM jobs WHERE id = $1`, j.ID).Scan(&wf))
	assert.Equal(t, "wf-"+j.ID, wf)

	t.Run("a second insert of the id is a conflict and starts nothing", func(t *testing.T) {
		var sc startCounter
		other := newTestJob(t, "job-ins", j.ID)
		other.CreatedAt = jobT0.Add(time.Hour)
		err := insertJob(ctx, s, other, sc.start)
		assert.Equal(t, fault.KindConflict, fault.KindOf(err), "%v", err)
		assert.Zero(t, sc.calls.Load())
		assert.Equal(t, j, storedJob(t, s, "job-ins", j.ID))
	})

	for _, tc := range []struct{ name, account, id string }{
		{"unknown job", "job-ins", "job_nothere"},
		{"another account's job", "job-ins-other", j.ID},
		{"an id no row can have", "job-ins", "job_\x00"},
	} {
		t.Run(tc.name+" is not found", func(t *testing.T) {
			_, err := s.Get(ctx, tc.account, tc.id)
			assert.Equal(t, fault.KindNotFound, fault.KindOf(err), "%v", err)
		})
	}
}

// TestJobStoreInsertRollsBack: a job row is committed only when its workflow started.
func TestJobStoreInsertRollsBack(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	s := newJobStore(t)
	freshAccounts(t, "job-rb")
	errPlain := errors.New("temporal unreachable")

	for _, tc := range []struct {
		name      string
		id        string
		cancelled bool
		start     func(cancel context.CancelFunc) func(context.Context) error
		startRuns bool
		check     func(t *testing.T, err error)
	}{
		{
			name: "start returns a fault: the same fault",
			id:   "job_rb_fault",
			start: func(context.CancelFunc) func(context.Context) error {
				return func(context.Context) error { return fault.Unavailable("no worker", time.Second, nil) }
			},
			startRuns: true,
			check: func(t *testing.T, err error) {
				fe, ok := fault.As(err)
				require.True(t, ok, "%v", err)
				assert.Equal(t, "no worker", fe.Message)
			},
		},
		{
			name: "start returns a plain error: wrapped, still matchable",
			id:   "job_rb_plain",
			start: func(context.CancelFunc) func(context.Context) error {
				return func(context.Context) error { return errPlain }
			},
			startRuns: true,
			check:     func(t *testing.T, err error) { assert.ErrorIs(t, err, errPlain) },
		},
		{
			name: "context cancelled after a successful start: unavailable",
			id:   "job_rb_cancel_in",
			start: func(cancel context.CancelFunc) func(context.Context) error {
				return func(context.Context) error { cancel(); return nil }
			},
			startRuns: true,
			check:     func(t *testing.T, err error) { assert.Equal(t, fault.KindUnavailable, fault.KindOf(err), "%v", err) },
		},
		{
			name:      "context cancelled before: unavailable, nothing started",
			id:        "job_rb_cancel_before",
			cancelled: true,
			start: func(context.CancelFunc) func(context.Context) error {
				return func(context.Context) error { return nil }
			},
			check: func(t *testing.T, err error) { assert.Equal(t, fault.KindUnavailable, fault.KindOf(err), "%v", err) },
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := newTestJob(t, "job-rb", tc.id)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancelled {
				cancel()
			}
			started, start := false, tc.start(cancel)
			err := insertJob(ctx, s, j, func(ctx context.Context) error { started = true; return start(ctx) })
			require.Error(t, err)
			tc.check(t, err)
			assert.Equal(t, tc.startRuns, started, "start called")
			assert.Zero(t, jobRows(t, j.ID), "no job row without its workflow")

			var sc startCounter
			require.NoError(t, insertJob(context.Background(), s, j, sc.start))
			assert.Equal(t, int32(1), sc.calls.Load())
			assert.Equal(t, j, storedJob(t, s, "job-rb", j.ID))
		})
	}
}

// raceJobInserts runs callers concurrent inserts of j; the first start waits until every other
// caller is queued behind its uncommitted row and then answers with first.
func raceJobInserts(t *testing.T, s *postgres.JobStore, j job.Job, callers int, first error) (*startCounter, []error) {
	t.Helper()
	dbURL := pgtest.URL(t)
	sc := &startCounter{result: func(call int32, ctx context.Context) error {
		if call != 1 {
			return nil
		}
		if err := waitForLockWaiters(ctx, dbURL, callers-1); err != nil {
			return err
		}
		return first
	}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	errs := make([]error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = insertJob(ctx, s, j, sc.start)
		}()
	}
	wg.Wait()
	return sc, errs
}

func TestJobStoreConcurrentInsertsOfOneID(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	s := newJobStore(t)
	freshAccounts(t, "job-race")
	const callers = 6
	errStart := errors.New("start refused")

	for _, tc := range []struct {
		name                                 string
		first                                error
		succeeded, conflicts, failed, starts int
	}{
		// The winner commits; every queued caller then finds the id taken.
		{name: "the first start succeeds", succeeded: 1, conflicts: callers - 1, starts: 1},
		// The winner rolls back; one queued caller inserts and starts, the rest find it taken.
		{name: "the first start fails", first: errStart, succeeded: 1, conflicts: callers - 2, failed: 1, starts: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := newTestJob(t, "job-race", "job_race_"+map[bool]string{true: "fail", false: "ok"}[tc.first != nil])
			sc, errs := raceJobInserts(t, s, j, callers, tc.first)
			succeeded, conflicts, failed := 0, 0, 0
			for i, err := range errs {
				switch {
				case err == nil:
					succeeded++
				case fault.KindOf(err) == fault.KindConflict:
					conflicts++
				case errors.Is(err, errStart):
					failed++
				default:
					t.Errorf("caller %d: unexpected error %v", i, err)
				}
			}
			assert.Equal(t, tc.succeeded, succeeded, "succeeded")
			assert.Equal(t, tc.conflicts, conflicts, "conflicts")
			assert.Equal(t, tc.failed, failed, "failed")
			assert.Equal(t, int32(tc.starts), sc.calls.Load(), "starts")
			assert.Equal(t, 1, jobRows(t, j.ID))
		})
	}
}

func TestJobStoreSave(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	ctx := context.Background()
	s := newJobStore(t)
	freshAccounts(t, "job-save")
	j := newTestJob(t, "job-save", "job_save")
	require.NoError(t, insertJob(ctx, s, j, func(context.Context) error { return nil }))

	running := j
	require.NoError(t, running.Advance(3, 10, "3 of 10 tokens", jobT0.Add(time.Second)))
	require.NoError(t, s.Save(ctx, running))
	assert.Equal(t, running, storedJob(t, s, "job-save", j.ID))

	done := running
	require.NoError(t, done.Complete("", json.RawMessage(`{"tokens":10,"trades":42}`), jobT0.Add(2*time.Second)))
	require.NoError(t, s.Save(ctx, done))
	got := storedJob(t, s, "job-save", j.ID)
	require.NotNil(t, got.Result)
	assert.JSONEq(t, `{"tokens":10,"trades":42}`, string(got.Result.Data))
	got.Result.Data = done.Result.Data // JSONB normalises the spacing
	assert.Equal(t, done, got)

	t.Run("a replayed older state never moves a finished job back", func(t *testing.T) {
		failed := running
		require.NoError(t, failed.Fail("late failure", jobT0.Add(3*time.Second)))
		for _, stale := range []job.Job{j, running, failed} {
			require.NoError(t, s.Save(ctx, stale))
			got := storedJob(t, s, "job-save", j.ID)
			assert.Equal(t, job.Completed, got.Status)
			assert.Equal(t, done.UpdatedAt, got.UpdatedAt)
		}
	})
}

// TestJobStoreConcurrentSavesKeepTheTerminalState: progress saves racing the completion, all
// queued behind the test's lock on the row, end completed whatever order they commit in.
func TestJobStoreConcurrentSavesKeepTheTerminalState(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	ctx := context.Background()
	s := newJobStore(t)
	freshAccounts(t, "job-csave")
	j := newTestJob(t, "job-csave", "job_csave")
	require.NoError(t, insertJob(ctx, s, j, func(context.Context) error { return nil }))

	const progressSaves = 8
	states := make([]job.Job, 0, progressSaves+1)
	for i := range progressSaves {
		p := j
		require.NoError(t, p.Advance(int64(i), progressSaves, "", jobT0.Add(time.Duration(i+1)*time.Second)))
		states = append(states, p)
	}
	done := j
	require.NoError(t, done.Complete("finished", nil, jobT0.Add(time.Minute)))
	states = append(states, done)

	release := holdRowLock(t, `SELECT id FROM jobs WHERE id = $1 FOR UPDATE`, j.ID)
	errs := make([]error, len(states))
	var wg sync.WaitGroup
	for i, st := range states {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.Save(ctx, st)
		}()
	}
	awaitLockWaiters(t, len(states))
	release()
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, "save %d", i)
	}
	assert.Equal(t, done, storedJob(t, s, "job-csave", j.ID))
}
