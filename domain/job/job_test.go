package job_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/job"
)

var t0 = time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)

func newJob(t *testing.T) job.Job {
	t.Helper()
	j, err := job.New("job-1", "acct-1", job.KindCalculatePnL, t0)
	require.NoError(t, err)
	return j
}

func TestNew(t *testing.T) {
	for _, tc := range []struct {
		name, id, acct string
		kind           job.Kind
		param          string
	}{
		{"ok", "job-1", "a", job.KindIngest, ""},
		{"missing id", "", "a", job.KindIngest, "id"},
		{"id with space", "job 1", "a", job.KindIngest, "id"},
		{"missing account", "j", "", job.KindIngest, "accountId"},
		{"unknown kind", "j", "a", "rebuild", "kind"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j, err := job.New(tc.id, tc.acct, tc.kind, t0)
			if tc.param == "" {
				require.NoError(t, err)
				assert.Equal(t, job.Pending, j.Status)
				assert.Nil(t, j.Result)
				return
			}
			fe, ok := fault.As(err)
			require.True(t, ok)
			assert.Equal(t, tc.param, fe.Param)
		})
	}
}

type step func(j *job.Job) error

func start(j *job.Job) error    { return j.Start(t0) }
func advance(d, n int64) step   { return func(j *job.Job) error { return j.Advance(d, n, "", t0) } }
func complete(j *job.Job) error { return j.Complete("", nil, t0) }
func fail(j *job.Job) error     { return j.Fail("boom", t0) }

func TestTransitions(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []step
		kind  fault.Kind // of the last step's error; 0 = no error
		want  job.Status
	}{
		{"pending → running", []step{start}, 0, job.Running},
		{"running → running is a no-op", []step{start, start}, 0, job.Running},
		{"pending → completed", []step{complete}, 0, job.Completed},
		{"running → completed", []step{start, complete}, 0, job.Completed},
		{"pending → failed", []step{fail}, 0, job.Failed},
		{"running → failed", []step{start, fail}, 0, job.Failed},
		{"advance starts a pending job", []step{advance(1, 10)}, 0, job.Running},
		{"completed → running refused", []step{complete, start}, fault.KindConflict, job.Completed},
		{"completed → completed refused", []step{complete, complete}, fault.KindConflict, job.Completed},
		{"completed → failed refused", []step{complete, fail}, fault.KindConflict, job.Completed},
		{"failed → completed refused", []step{fail, complete}, fault.KindConflict, job.Failed},
		{"failed → progress refused", []step{fail, advance(1, 2)}, fault.KindConflict, job.Failed},
		{"progress may not decrease", []step{advance(5, 10), advance(4, 10)}, fault.KindInvalid, job.Running},
		{"done may not exceed total", []step{advance(11, 10)}, fault.KindInvalid, job.Pending},
		{"negative done", []step{advance(-1, 0)}, fault.KindInvalid, job.Pending},
		{"negative total", []step{advance(0, -1)}, fault.KindInvalid, job.Pending},
		{"unknown total allows any done", []step{advance(500, 0)}, 0, job.Running},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := newJob(t)
			var err error
			for _, s := range tc.steps {
				err = s(&j)
			}
			if tc.kind == 0 {
				assert.NoError(t, err)
			} else {
				assert.Equal(t, tc.kind, fault.KindOf(err), "err: %v", err)
			}
			assert.Equal(t, tc.want, j.Status)
		})
	}
}

func TestCompleteAndFailResults(t *testing.T) {
	t.Run("complete fills progress and default message", func(t *testing.T) {
		j := newJob(t)
		require.NoError(t, j.Advance(90, 100, "step 90", t0))
		require.NoError(t, j.Complete("", json.RawMessage(`{"tokens":3}`), t0.Add(time.Second)))
		assert.Equal(t, job.Progress{Done: 100, Total: 100, Message: "step 90"}, j.Progress)
		assert.Equal(t, &job.Result{Success: true, Message: "Job completed successfully", Data: json.RawMessage(`{"tokens":3}`)}, j.Result)
		assert.True(t, j.UpdatedAt.Equal(t0.Add(time.Second)))
	})
	t.Run("complete refuses invalid data", func(t *testing.T) {
		j := newJob(t)
		err := j.Complete("x", json.RawMessage(`{`), t0)
		assert.Equal(t, fault.KindInvalid, fault.KindOf(err))
		assert.Equal(t, job.Pending, j.Status)
	})
	t.Run("fail with blank reason", func(t *testing.T) {
		j := newJob(t)
		require.NoError(t, j.Fail(" ", t0))
		assert.Equal(t, &job.Result{Success: false, Message: "job failed"}, j.Result)
	})
}

func TestStreamMessage(t *testing.T) {
	pending := newJob(t)

	running := newJob(t)
	require.NoError(t, running.Advance(3, 10, "fetching trades", t0))

	done := newJob(t)
	require.NoError(t, done.Complete("", nil, t0))

	withData := newJob(t)
	require.NoError(t, withData.Complete("ok", json.RawMessage(`{"n": 1}`), t0))

	failed := newJob(t)
	require.NoError(t, failed.Fail("upstream 503", t0))

	for _, tc := range []struct {
		name string
		j    job.Job
		want string
	}{
		{"pending", pending, `{"id":"job-1","status":"pending","progress":{"done":0,"total":0}}`},
		{"running", running, `{"id":"job-1","status":"running","progress":{"done":3,"total":10,"message":"fetching trades"}}`},
		{"completed", done, `{"id":"job-1","status":"completed","result":{"success":true,"data":{"message":"Job completed successfully"}},"progress":{"done":0,"total":0}}`},
		{"completed with data", withData, `{"id":"job-1","status":"completed","result":{"success":true,"data":{"message":"ok","detail":{"n":1}}},"progress":{"done":0,"total":0}}`},
		{"failed", failed, `{"id":"job-1","status":"failed","result":{"success":false,"data":{"message":"upstream 503"}},"progress":{"done":0,"total":0},"error":"upstream 503"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(job.StreamMessage(tc.j))
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(b))
		})
	}
}

func TestChanged(t *testing.T) {
	base := newJob(t)
	require.NoError(t, base.Advance(1, 10, "a", t0))
	for _, tc := range []struct {
		name string
		edit func(j *job.Job) error
		want bool
	}{
		{"nothing", func(*job.Job) error { return nil }, false},
		{"only updatedAt", func(j *job.Job) error { j.UpdatedAt = t0.Add(time.Hour); return nil }, false},
		{"same progress re-reported", func(j *job.Job) error { return j.Advance(1, 10, "a", t0.Add(time.Minute)) }, false},
		{"done", func(j *job.Job) error { return j.Advance(2, 10, "a", t0) }, true},
		{"total", func(j *job.Job) error { return j.Advance(1, 11, "a", t0) }, true},
		{"message", func(j *job.Job) error { return j.Advance(1, 10, "b", t0) }, true},
		{"status", func(j *job.Job) error { return j.Complete("", nil, t0) }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := base
			require.NoError(t, tc.edit(&b))
			assert.Equal(t, tc.want, job.Changed(base, b))
		})
	}
}
