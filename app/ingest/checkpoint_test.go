package ingest_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/app/ingest"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
)

// checkpointStore is recordingStore with the follower's write: "through" (ApplyThrough).
type checkpointStore struct{ recordingStore }

func (s *checkpointStore) ApplyThrough(ctx context.Context, b chainevent.Batch, _ chainevent.Checkpoint, now time.Time) (chainevent.Result, error) {
	s.calls = append(s.calls, "through")
	return s.record(ctx, b, now)
}

// A follower's batches leave their derivations to a flush, as a stream's do: IngestThrough
// flushes once its flush interval (FollowFlushInterval) has passed since the last flush, and Flush (the end
// of a follower step) derives what is left at once.
func TestCheckpointedFlushesAtItsInterval(t *testing.T) {
	ctx := context.Background()
	store := &checkpointStore{}
	cp := func(block int64) chainevent.Checkpoint {
		return chainevent.Checkpoint{Chain: chain.Eth, Block: block, Hash: "h", Previous: block - 1}
	}
	// An interval no test run reaches: IngestThrough never flushes by itself.
	slow := ingest.FlushingEvery(ingest.New(store, clock(), 0).Checkpointed(store), time.Hour)
	for b := int64(1); b <= 3; b++ {
		_, err := slow.IngestThrough(ctx, labels("w"), cp(b))
		require.NoError(t, err)
	}
	assert.Equal(t, []string{"through", "through", "through"}, store.calls)
	require.NoError(t, slow.Flush(ctx))
	assert.Equal(t, []string{"through", "through", "through", "flush"}, store.calls)

	// An interval that has always passed: every write is followed by a flush.
	store.calls = nil
	eager := ingest.FlushingEvery(ingest.New(store, clock(), 0).Checkpointed(store), time.Nanosecond)
	time.Sleep(time.Millisecond)
	_, err := eager.IngestThrough(ctx, labels("w"), cp(4))
	require.NoError(t, err)
	time.Sleep(time.Millisecond)
	_, err = eager.IngestThrough(ctx, labels("v"), cp(5))
	require.NoError(t, err)
	assert.Equal(t, []string{"through", "flush", "through", "flush"}, store.calls)
}
