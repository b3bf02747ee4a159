package ingest_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/app/ingest"
	"github.com/tokenscope/tokenscope/domain/chainevent"
)

// gatedStore stores batches at once and holds every flush until release is closed; each batch
// reports trades trades.
type gatedStore struct {
	trades  int
	started chan struct{} // one value per flush that began
	release chan struct{}

	mu      sync.Mutex
	batches int
	flushes int
}

func newGatedStore(trades int) *gatedStore {
	return &gatedStore{trades: trades, started: make(chan struct{}, 16), release: make(chan struct{})}
}

func (s *gatedStore) Apply(ctx context.Context, b chainevent.Batch, now time.Time) (chainevent.Result, error) {
	return s.ApplyPending(ctx, b, now)
}

func (s *gatedStore) ApplyPending(_ context.Context, b chainevent.Batch, _ time.Time) (chainevent.Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.batches++
	return chainevent.Result{Events: b.Len(), Inserted: b.Len(), Trades: s.trades}, nil
}

func (s *gatedStore) Flush(context.Context, time.Time) (int, error) {
	s.started <- struct{}{}
	<-s.release
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flushes++
	return 0, nil
}

func (s *gatedStore) counts() (batches, flushes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.batches, s.flushes
}

func within[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not happen", what)
		var zero T
		return zero
	}
}

// TestStreamCommittedAnswersBeforeTheFlush: StreamCommitted returns once its batches are stored,
// while the flush that derives them is still running in the background; Stream waits for it.
func TestStreamCommittedAnswersBeforeTheFlush(t *testing.T) {
	store := newGatedStore(10)
	svc := ingest.New(store, clock(), 2).WithFlushInterval(time.Millisecond)
	res, err := svc.StreamCommitted(context.Background(), &source{events: labels("a", "b", "c")}, nil)
	require.NoError(t, err)
	assert.Equal(t, 3, res.Inserted)
	batches, flushes := store.counts()
	assert.Equal(t, 2, batches, "both batches stored before the answer")
	assert.Zero(t, flushes, "no flush finished before the answer")
	within(t, store.started, "the background flush")

	// Stream (wait=derived) answers only after a flush that began after its batches.
	answered := make(chan error, 1)
	go func() {
		_, err := svc.Stream(context.Background(), &source{events: labels("d")}, nil)
		answered <- err
	}()
	select {
	case <-answered:
		t.Fatal("Stream answered while the flush was held")
	case <-time.After(100 * time.Millisecond):
	}
	close(store.release)
	require.NoError(t, within(t, answered, "Stream's answer once the flushes ran"))
	_, flushes = store.counts()
	assert.GreaterOrEqual(t, flushes, 2, "the background flush, then Stream's own")
}

// TestStreamCommittedWaitsBehindABacklog: when more than MaxUnderived trades were committed since
// the running flush began, StreamCommitted waits for the next flush before it answers, as Stream
// does.
func TestStreamCommittedWaitsBehindABacklog(t *testing.T) {
	store := newGatedStore(1)
	svc := ingest.New(store, clock(), 2).WithFlushInterval(time.Millisecond)
	_, err := svc.StreamCommitted(context.Background(), &source{events: labels("a")}, nil)
	require.NoError(t, err)
	within(t, store.started, "the background flush") // held: the trades below come after its start

	store.mu.Lock()
	store.trades = ingest.MaxUnderived + 1
	store.mu.Unlock()
	answered := make(chan error, 1)
	go func() {
		_, err := svc.StreamCommitted(context.Background(), &source{events: labels("b")}, nil)
		answered <- err
	}()
	select {
	case <-answered:
		t.Fatal("StreamCommitted answered with a backlog and no flush after it")
	case <-time.After(200 * time.Millisecond):
	}
	close(store.release)
	require.NoError(t, within(t, answered, "StreamCommitted's answer once the next flush ran"))
	_, flushes := store.counts()
	assert.GreaterOrEqual(t, flushes, 2)
}

// failingFlushStore stores batches and fails every flush.
type failingFlushStore struct{ *gatedStore }

func (s *failingFlushStore) Flush(context.Context, time.Time) (int, error) {
	return 0, errors.New("database down")
}

// TestBackgroundFlushFailuresAreReported: a background flush that fails is counted and told to
// the service's error hook; the POST had already been answered.
func TestBackgroundFlushFailuresAreReported(t *testing.T) {
	store := &failingFlushStore{gatedStore: newGatedStore(1)}
	heard := make(chan error, 4)
	svc := ingest.New(store, clock(), 2).WithFlushInterval(time.Millisecond).WithBackgroundErrors(func(err error) { heard <- err })
	_, err := svc.StreamCommitted(context.Background(), &source{events: labels("a")}, nil)
	require.NoError(t, err, "the stream is answered at commit, before the flush fails")
	assert.EqualError(t, within(t, heard, "the failure"), "database down")
	assert.GreaterOrEqual(t, svc.BackgroundFlushFailures(), int64(1))
}
