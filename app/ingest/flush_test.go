package ingest

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSharedFlushServesWaitersWithOneRound: callers that arrive while a flush runs all wait for
// the next one, which runs once for them; each caller's round starts after its call.
func TestSharedFlushServesWaitersWithOneRound(t *testing.T) {
	f := &sharedFlush{}
	release := make(chan struct{})
	started := make(chan struct{}, 10)
	var rounds atomic.Int32
	run := func(context.Context) error {
		rounds.Add(1)
		started <- struct{}{}
		<-release
		return nil
	}
	first := make(chan error, 1)
	go func() { first <- f.do(context.Background(), run) }()
	<-started // round 1 runs; the callers below arrive during it
	var wg sync.WaitGroup
	for range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.NoError(t, f.do(context.Background(), run))
		}()
	}
	// Wait until all five joined the next round, then let round 1 end.
	for {
		f.mu.Lock()
		joined := f.next != nil && f.next.waiters == 5
		f.mu.Unlock()
		if joined {
			break
		}
		runtime.Gosched()
	}
	close(release)
	require.NoError(t, <-first)
	wg.Wait()
	assert.Equal(t, int32(2), rounds.Load(), "the five callers that came during round 1 shared round 2")
}

// TestSharedFlushCancelledCallerLeavesTheRoundRunning: a caller whose context ends stops
// waiting; the round still completes for the others.
func TestSharedFlushCancelledCallerLeavesTheRoundRunning(t *testing.T) {
	f := &sharedFlush{}
	release := make(chan struct{})
	var finished atomic.Bool
	run := func(ctx context.Context) error {
		<-release
		finished.Store(ctx.Err() == nil)
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.do(ctx, run) }()
	other := make(chan error, 1)
	go func() { other <- f.do(context.Background(), run) }()
	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)
	close(release)
	require.NoError(t, <-other)
	assert.True(t, finished.Load(), "the flush ran to its end without the cancelled caller's context")
}
