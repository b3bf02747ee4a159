package ingest_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/app/ingest"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/internal/fakeclock"
)

func clock() *fakeclock.Clock { return fakeclock.At(time.UnixMilli(1_700_000_000_000)) }

// recordingStore remembers the labelled wallets of every batch it is handed, in order, and fails
// the call numbered failAt (1-based; 0 never). calls lists what was called: "apply", "pending"
// (ApplyPending) or "flush".
type recordingStore struct {
	batches [][]string
	failAt  int
	calls   []string
}

func (s *recordingStore) Apply(ctx context.Context, b chainevent.Batch, now time.Time) (chainevent.Result, error) {
	s.calls = append(s.calls, "apply")
	return s.record(ctx, b, now)
}

func (s *recordingStore) ApplyPending(ctx context.Context, b chainevent.Batch, now time.Time) (chainevent.Result, error) {
	s.calls = append(s.calls, "pending")
	return s.record(ctx, b, now)
}

func (s *recordingStore) Flush(context.Context, time.Time) (int, error) {
	s.calls = append(s.calls, "flush")
	return 0, nil
}

func (s *recordingStore) record(_ context.Context, b chainevent.Batch, _ time.Time) (chainevent.Result, error) {
	if len(s.batches)+1 == s.failAt {
		return chainevent.Result{}, errors.New("store down")
	}
	var wallets []string
	for _, l := range b.Labels {
		wallets = append(wallets, l.Wallet)
	}
	s.batches = append(s.batches, wallets)
	return chainevent.Result{Events: b.Len(), Inserted: b.Len()}, nil
}

// source hands out events in order, then failAt's error (when set) or io.EOF: what the NDJSON
// decoder does with a stream whose line failAt is malformed.
type source struct {
	events []chainevent.Event
	failAt int // 1-based; 0 never
	next   int
}

func (s *source) Next() (chainevent.Event, error) {
	s.next++
	if s.next == s.failAt {
		return nil, chainevent.LineError(s.next, "extra", errors.New("unknown field"))
	}
	if s.next > len(s.events) {
		return nil, io.EOF
	}
	return s.events[s.next-1], nil
}

func labels(wallets ...string) []chainevent.Event {
	out := make([]chainevent.Event, 0, len(wallets))
	for _, w := range wallets {
		out = append(out, chainevent.WalletLabel{Chain: chain.Sol, Wallet: w, Label: token.Kol})
	}
	return out
}

func TestStreamAppliesBatchesInOrder(t *testing.T) {
	store := &recordingStore{}
	var seen []int
	res, err := ingest.New(store, clock(), 2).Stream(context.Background(), &source{events: labels("a", "b", "c", "d", "e")},
		func(total chainevent.Result) { seen = append(seen, total.Inserted) })
	require.NoError(t, err)
	// Five events in batches of two: [a b] [c d] [e], progress after each with running totals 2, 4, 5.
	assert.Equal(t, [][]string{{"a", "b"}, {"c", "d"}, {"e"}}, store.batches)
	assert.Equal(t, []int{2, 4, 5}, seen)
	assert.Equal(t, 5, res.Inserted)
	// Streamed batches leave their market data pending; the stream flushes it at its end.
	assert.Equal(t, []string{"pending", "pending", "pending", "flush"}, store.calls)
}

func TestStreamStopsAtAMalformedLineAfterTheBatchesBeforeIt(t *testing.T) {
	store := &recordingStore{}
	src := &source{events: labels("a", "b", "c", "d", "e"), failAt: 4}
	res, err := ingest.New(store, clock(), 2).Stream(context.Background(), src, nil)
	require.Error(t, err)
	fe, ok := fault.As(err)
	require.True(t, ok)
	assert.Equal(t, 4, fe.Details["line"])
	// Line 4 is in the second batch ([c, bad]): only the first batch was applied; c was not.
	assert.Equal(t, [][]string{{"a", "b"}}, store.batches)
	assert.Equal(t, 2, res.Inserted)
	assert.Equal(t, []string{"pending", "flush"}, store.calls, "what was committed before the bad line is flushed")
}

func TestStreamStopsAtAFailedBatch(t *testing.T) {
	store := &recordingStore{failAt: 2}
	res, err := ingest.New(store, clock(), 2).Stream(context.Background(), &source{events: labels("a", "b", "c", "d", "e", "f", "g")}, nil)
	require.EqualError(t, err, "store down")
	// The second batch failed: the first stays counted, nothing after the failure is applied.
	assert.Equal(t, [][]string{{"a", "b"}}, store.batches)
	assert.Equal(t, 2, res.Inserted)
}

// listener records what the service told it, into the store's call list so the order against
// the store's calls shows.
type listener struct{ store *recordingStore }

func (l listener) Committed(b chainevent.Batch) {
	l.store.calls = append(l.store.calls, "committed "+b.Labels[0].Wallet)
}
func (l listener) Derived() { l.store.calls = append(l.store.calls, "derived") }

// TestListenerHearsOnlyCommittedBatches: the listener hears each batch after its commit and
// each flush after it, and never a batch whose commit failed.
func TestListenerHearsOnlyCommittedBatches(t *testing.T) {
	store := &recordingStore{failAt: 2}
	svc := ingest.New(store, clock(), 2).WithListener(listener{store})
	_, err := svc.Stream(context.Background(), &source{events: labels("a", "b", "c", "d")}, nil)
	require.Error(t, err)
	assert.Equal(t, []string{"pending", "committed a", "pending"}, store.calls, "the failed second batch is not heard")

	store = &recordingStore{failAt: 1}
	svc = ingest.New(store, clock(), 0).WithListener(listener{store})
	_, err = svc.Ingest(context.Background(), labels("x"))
	require.Error(t, err)
	assert.Equal(t, []string{"apply"}, store.calls, "a failed apply is not heard")
	store.failAt = 0
	_, err = svc.Ingest(context.Background(), labels("y"))
	require.NoError(t, err)
	assert.Equal(t, []string{"apply", "apply", "committed y", "derived"}, store.calls)
}
