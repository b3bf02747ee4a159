package jobrunner_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/mock/gomock"

	"github.com/tokenscope/tokenscope/app/jobrunner"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/job"
	"github.com/tokenscope/tokenscope/ports/portsmock"
)

// The hub polls on a real ticker (it takes no clock). The tests use a 1 ms interval and run
// the poller in lock step with the store's calls: every Get announces itself on polled and
// waits for release, so when poll i+1 has started, poll i has been fully handled. No sleeps.

const waitFor = 5 * time.Second

type step struct {
	j   job.Job
	err error
}

type lockStep struct {
	polled  chan int
	release chan struct{}
}

// script makes the store answer the hub's polls of acc's job_1 with steps, in order, exactly
// once each: a further poll is an unexpected call and fails the test.
func script(store *portsmock.MockJobStore, runner *portsmock.MockJobRunner, steps ...step) lockStep {
	ls := lockStep{polled: make(chan int), release: make(chan struct{})}
	calls := make([]any, len(steps))
	for i, s := range steps {
		calls[i] = store.EXPECT().Get(gomock.Any(), "acc", "job_1").DoAndReturn(func(context.Context, string, string) (job.Job, error) {
			ls.polled <- i
			<-ls.release
			return s.j, s.err
		}).Call
	}
	gomock.InOrder(calls...)
	// Running states come from the store: the workflow has no answer.
	runner.EXPECT().Progress(gomock.Any(), "job_1").Return(job.Job{}, fault.Unavailable("no worker", time.Second, nil)).AnyTimes()
	return ls
}

func (ls lockStep) awaitPoll(t *testing.T, i int) {
	t.Helper()
	select {
	case got := <-ls.polled:
		require.Equal(t, i, got)
	case <-time.After(waitFor):
		t.Fatalf("poll %d never came", i)
	}
}

func (ls lockStep) answer() { ls.release <- struct{}{} }

func newHub(t *testing.T) (*jobrunner.Hub, *portsmock.MockJobStore, *portsmock.MockJobRunner) {
	svc, store, runner := newService(t)
	return jobrunner.NewHub(svc, time.Millisecond, 0), store, runner
}

func completed(id string) job.Job {
	j := running(id, 10)
	j.Status = job.Completed
	j.Result = &job.Result{Success: true, Message: job.DefaultSuccessMessage}
	return j
}

func receive(t *testing.T, ch <-chan job.Job) job.Job {
	t.Helper()
	select {
	case j := <-ch:
		return j
	case <-time.After(waitFor):
		t.Fatal("no update")
		return job.Job{}
	}
}

func waitIdle(t *testing.T, h *jobrunner.Hub) {
	t.Helper()
	require.Eventually(t, func() bool { return h.Watching() == 0 }, waitFor, time.Millisecond)
}

func TestHubSendsEachChangeAndStopsPollingAtTheEnd(t *testing.T) {
	h, store, runner := newHub(t)
	cur := running("job_1", 0)
	touched := cur
	touched.UpdatedAt = cur.UpdatedAt.Add(time.Second) // a heartbeat: no visible change
	ls := script(store, runner, step{j: touched}, step{j: running("job_1", 5)}, step{j: completed("job_1")})

	updates, cancel := h.Subscribe("acc", cur)
	defer cancel()
	assert.Equal(t, 1, h.Watching())

	ls.awaitPoll(t, 0)
	ls.answer()
	ls.awaitPoll(t, 1)
	assert.Empty(t, updates, "an unchanged state is not sent")
	ls.answer()
	ls.awaitPoll(t, 2)
	require.Len(t, updates, 1)
	assert.Equal(t, running("job_1", 5), <-updates)
	ls.answer()
	assert.Equal(t, completed("job_1"), receive(t, updates))
	waitIdle(t, h) // the terminal state ended the poller; a further Get would fail the test
}

func TestHubPollsOnceForEveryFollower(t *testing.T) {
	h, store, runner := newHub(t)
	ls := script(store, runner, step{j: running("job_1", 5)}, step{j: completed("job_1")})

	a, cancelA := h.Subscribe("acc", running("job_1", 0))
	defer cancelA()
	b, cancelB := h.Subscribe("acc", running("job_1", 1))
	defer cancelB()
	assert.Equal(t, 1, h.Watching(), "one poller per job")

	ls.awaitPoll(t, 0)
	ls.answer()
	ls.awaitPoll(t, 1) // one Get per tick however many follow
	assert.Equal(t, running("job_1", 5), receive(t, a))
	assert.Equal(t, running("job_1", 5), receive(t, b))
	ls.answer()
	assert.Equal(t, completed("job_1"), receive(t, a))
	assert.Equal(t, completed("job_1"), receive(t, b))
	waitIdle(t, h)
}

func TestHubKeepsOnlyTheNewestStateForASlowReader(t *testing.T) {
	h, store, runner := newHub(t)
	ls := script(store, runner, step{j: running("job_1", 3)}, step{j: running("job_1", 6)}, step{j: completed("job_1")})

	updates, cancel := h.Subscribe("acc", running("job_1", 0))
	defer cancel()
	ls.awaitPoll(t, 0)
	ls.answer()
	ls.awaitPoll(t, 1)
	ls.answer()
	ls.awaitPoll(t, 2) // both running states were handed over; the reader read neither
	require.Len(t, updates, 1)
	assert.Equal(t, running("job_1", 6), <-updates)
	ls.answer()
	assert.Equal(t, completed("job_1"), receive(t, updates))
	waitIdle(t, h)
}

func TestHubSkipsAFailedPollAndKeepsWatching(t *testing.T) {
	h, store, runner := newHub(t)
	ls := script(store, runner, step{err: fault.Unavailable("db down", time.Second, nil)}, step{j: completed("job_1")})

	updates, cancel := h.Subscribe("acc", running("job_1", 0))
	defer cancel()
	ls.awaitPoll(t, 0)
	ls.answer()
	ls.awaitPoll(t, 1)
	assert.Empty(t, updates, "a failed read sends nothing")
	assert.Equal(t, 1, h.Watching())
	ls.answer()
	assert.Equal(t, completed("job_1"), receive(t, updates))
	waitIdle(t, h)
}

func TestHubKeepsPollingForTheFollowersWhoStay(t *testing.T) {
	h, store, runner := newHub(t)
	ls := script(store, runner, step{j: running("job_1", 5)}, step{j: completed("job_1")})

	a, cancelA := h.Subscribe("acc", running("job_1", 0))
	b, cancelB := h.Subscribe("acc", running("job_1", 0))
	defer cancelB()
	cancelA()

	ls.awaitPoll(t, 0)
	ls.answer()
	ls.awaitPoll(t, 1)
	assert.Equal(t, running("job_1", 5), receive(t, b))
	assert.Empty(t, a, "a follower who left gets nothing")
	ls.answer()
	assert.Equal(t, completed("job_1"), receive(t, b))
	waitIdle(t, h)
}

func TestHubStopsPollingWhenTheLastFollowerLeaves(t *testing.T) {
	h, store, runner := newHub(t)
	// A tick may in principle come before cancel; whatever it reads changes nothing.
	store.EXPECT().Get(gomock.Any(), "acc", "job_1").Return(running("job_1", 0), nil).AnyTimes()
	runner.EXPECT().Progress(gomock.Any(), "job_1").Return(job.Job{}, fault.Unavailable("no worker", time.Second, nil)).AnyTimes()

	_, cancel := h.Subscribe("acc", running("job_1", 0))
	assert.Equal(t, 1, h.Watching())
	cancel()
	waitIdle(t, h)

	// Following the job again starts a new poller.
	_, cancel = h.Subscribe("acc", running("job_1", 0))
	assert.Equal(t, 1, h.Watching())
	cancel()
	waitIdle(t, h)
}

// TestNewHubDefaults: a hub built without a heartbeat uses the production 15 s, which the SSE
// stream reads through Heartbeat; a configured one is kept.
func TestNewHubDefaults(t *testing.T) {
	svc, _, _ := newService(t)
	assert.Equal(t, 15*time.Second, jobrunner.NewHub(svc, 0, 0).Heartbeat())
	assert.Equal(t, 3*time.Second, jobrunner.NewHub(svc, time.Second, 3*time.Second).Heartbeat())
}
