package workflows_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/internal/fakeclock"
	"github.com/tokenscope/tokenscope/ports"
	"github.com/tokenscope/tokenscope/workflows"
)

// aheadSource is a chain of blocks 0..head whose block n has hash h(n) and parent h(n−1), read
// ahead up to ahead ranges. With a fork, the reads after the first fork.after see blocks from
// fork.at on with other hashes (a reorg between two reads). It records the ranges read and fails
// the reads from failAt.
type aheadSource struct {
	mu      sync.Mutex
	head    int64
	ahead   int
	fork    *struct{ at, after int64 }
	failAt  int64
	reads   [][2]int64
	store   *aheadStore
	maxLead int // the most ranges read beyond those written, seen at a read
}

func (s *aheadSource) hash(n int64) string {
	if s.fork != nil && n >= s.fork.at && int64(len(s.reads)) >= s.fork.after {
		return fmt.Sprintf("0xfork%d", n)
	}
	return fmt.Sprintf("0xblock%d", n)
}

func (s *aheadSource) Head(context.Context) (int64, error) { return s.head, nil }
func (s *aheadSource) ReadAhead() int                      { return s.ahead }

func (s *aheadSource) Read(_ context.Context, from, to int64) (ports.ChainSegment, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failAt > 0 && from >= s.failAt {
		return ports.ChainSegment{}, errors.New("node unreachable")
	}
	s.store.mu.Lock()
	written := len(s.store.writes)
	s.store.mu.Unlock()
	s.maxLead = max(s.maxLead, len(s.reads)+1-written)
	ev := chainevent.Trade{}
	ev.Trade.TransactionSignature = fmt.Sprintf("tx%d", from)
	seg := ports.ChainSegment{From: from, To: to, Events: []chainevent.Event{ev},
		First: ports.BlockRef{Number: from, Hash: s.hash(from), Parent: s.hash(from - 1)},
		Last:  ports.BlockRef{Number: to, Hash: s.hash(to), Parent: s.hash(to - 1)}}
	s.reads = append(s.reads, [2]int64{from, to})
	return seg, nil
}

// aheadStore is the checkpoint store and the ingest path: it keeps the checkpoint the writes
// moved, and fails the write of the range ending at failTo.
type aheadStore struct {
	mu     sync.Mutex
	cp     *ports.ChainCheckpoint
	halt   *ports.ChainHalt
	writes []chainevent.Checkpoint
	events []string
	failTo int64
	// flushes holds, for each Flush, how many ranges had been written.
	flushes []int
}

func (s *aheadStore) Flush(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flushes = append(s.flushes, len(s.writes))
	return nil
}

func (s *aheadStore) Checkpoint(context.Context, chain.Chain) (ports.ChainCheckpoint, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cp == nil {
		return ports.ChainCheckpoint{}, false, nil
	}
	cp := *s.cp
	cp.Halted = s.halt
	return cp, true, nil
}

func (s *aheadStore) Halt(_ context.Context, h ports.ChainHalt) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.halt = &h
	return nil
}

func (s *aheadStore) Halted(context.Context) ([]ports.ChainHalt, error) { return nil, nil }

func (s *aheadStore) IngestThrough(_ context.Context, evs []chainevent.Event, cp chainevent.Checkpoint) (chainevent.Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cp.Block == s.failTo {
		return chainevent.Result{}, errors.New("database down")
	}
	prev := int64(-1)
	if s.cp != nil {
		prev = s.cp.Block
	}
	if cp.Previous != prev {
		return chainevent.Result{}, fmt.Errorf("checkpoint moved from %d, not %d", cp.Previous, prev)
	}
	s.writes = append(s.writes, cp)
	for _, e := range evs {
		s.events = append(s.events, e.(chainevent.Trade).Trade.TransactionSignature)
	}
	s.cp = &ports.ChainCheckpoint{Block: cp.Block, Hash: cp.Hash}
	return chainevent.Result{Trades: len(evs)}, nil
}

func aheadFollower(src *aheadSource, st *aheadStore) *workflows.ChainActivities {
	src.store = st
	return &workflows.ChainActivities{Sources: map[chain.Chain]ports.ChainSource{chain.Eth: src},
		Checkpoints: st, Ingest: st, Clock: fakeclock.At(now)}
}

// Over a source that can be read ahead, a step reads the ranges in order, never more than its
// read-ahead beyond the range being written, and writes each one with the checkpoint of its
// last block, moved from the block written before it, up to the confirmed head.
func TestFollowChainReadsAheadAndWritesRangesInOrder(t *testing.T) {
	src := &aheadSource{head: 100, ahead: 2}
	st := &aheadStore{}
	r, err := aheadFollower(src, st).FollowChain(context.Background(),
		workflows.FollowStepInput{Chain: chain.Eth, Confirmations: 10, StartBlock: 5, MaxRange: 10})
	require.NoError(t, err)
	assert.True(t, r.CaughtUp)
	assert.Equal(t, int64(90), r.Block)
	assert.Equal(t, int64(86), r.Blocks)
	assert.Equal(t, int64(9), r.Trades)

	var want [][2]int64
	var wantCps []chainevent.Checkpoint
	var wantEvents []string
	prev := int64(-1)
	for from := int64(5); from <= 90; from += 10 {
		to := min(from+9, 90)
		want = append(want, [2]int64{from, to})
		wantCps = append(wantCps, chainevent.Checkpoint{Chain: chain.Eth, Block: to, Hash: src.hash(to), Previous: prev})
		wantEvents = append(wantEvents, fmt.Sprintf("tx%d", from))
		prev = to
	}
	assert.Equal(t, want, src.reads, "each range read once, in order")
	assert.Equal(t, wantCps, st.writes)
	assert.Equal(t, wantEvents, st.events)
	// Read ranges are at most: the one being written, the ones handed over (ahead − 1
	// buffered), and the one being read.
	assert.LessOrEqual(t, src.maxLead, src.ahead+1)
	// The ingest path leaves derivations to a flush (ports.IngestFlusher): the step flushes once,
	// after its last write.
	assert.Equal(t, []int{len(want)}, st.flushes)

	// Caught up: the next step reads nothing (and flushes what may be left).
	r, err = aheadFollower(src, st).FollowChain(context.Background(), workflows.FollowStepInput{Chain: chain.Eth, Confirmations: 10, MaxRange: 10})
	require.NoError(t, err)
	assert.True(t, r.CaughtUp)
	assert.Len(t, src.reads, len(want))
	assert.Equal(t, []int{len(want), len(want)}, st.flushes)
}

// A range whose first block's parent is not the block written before it (a reorg deeper than
// the confirmations between two reads) halts the follower: the ranges before it are written,
// it and whatever was read after it are not, the halt names the last block written.
func TestFollowChainReadAheadHaltsOnADeepReorgBetweenRanges(t *testing.T) {
	src := &aheadSource{head: 100, ahead: 1}
	st := &aheadStore{cp: &ports.ChainCheckpoint{Block: 9, Hash: "0xblock9"}}
	// Ranges 10–19 and 20–29 are read from the old chain, 30–39 from a new one that forked at
	// block 25.
	src.fork = &struct{ at, after int64 }{at: 25, after: 2}
	_, err := aheadFollower(src, st).FollowChain(context.Background(), workflows.FollowStepInput{Chain: chain.Eth, MaxRange: 10})
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, err, &appErr)
	assert.Equal(t, workflows.ChainHaltedError, appErr.Type())
	require.NotNil(t, st.halt)
	assert.Equal(t, int64(29), st.halt.Block, "the halt names the last block written")
	assert.Contains(t, st.halt.Reason, "0xfork29")
	assert.Equal(t, int64(29), st.cp.Block, "the range of the new chain is not written")
	assert.Equal(t, []string{"tx10", "tx20"}, st.events)

	// A restarted follower stays stopped and reads nothing.
	n := len(src.reads)
	_, err = aheadFollower(src, st).FollowChain(context.Background(), workflows.FollowStepInput{Chain: chain.Eth, MaxRange: 10})
	require.ErrorAs(t, err, &appErr)
	assert.Equal(t, workflows.ChainHaltedError, appErr.Type())
	assert.Len(t, src.reads, n)
}

// A failed write ends the step with the ranges before it written and nothing after it; the next
// step reads again from the block after the checkpoint and writes every range once.
func TestFollowChainReadAheadStopsAtAFailedWrite(t *testing.T) {
	src := &aheadSource{head: 60, ahead: 1}
	st := &aheadStore{failTo: 29}
	_, err := aheadFollower(src, st).FollowChain(context.Background(), workflows.FollowStepInput{Chain: chain.Eth, StartBlock: 0, MaxRange: 10})
	require.ErrorContains(t, err, "database down")
	assert.Equal(t, []string{"tx0", "tx10"}, st.events)
	assert.Equal(t, int64(19), st.cp.Block)

	st.failTo = 0
	r, err := aheadFollower(src, st).FollowChain(context.Background(), workflows.FollowStepInput{Chain: chain.Eth, MaxRange: 10})
	require.NoError(t, err)
	assert.True(t, r.CaughtUp)
	assert.Equal(t, []string{"tx0", "tx10", "tx20", "tx30", "tx40", "tx50", "tx60"}, st.events, "every range once")
}

// A failed read ends the step after writing the ranges read before it.
func TestFollowChainReadAheadStopsAtAFailedRead(t *testing.T) {
	src := &aheadSource{head: 60, ahead: 3, failAt: 30}
	st := &aheadStore{}
	_, err := aheadFollower(src, st).FollowChain(context.Background(), workflows.FollowStepInput{Chain: chain.Eth, StartBlock: 0, MaxRange: 10})
	require.ErrorContains(t, err, "node unreachable")
	assert.Equal(t, []string{"tx0", "tx10", "tx20"}, st.events)
	assert.Equal(t, int64(29), st.cp.Block)
}
