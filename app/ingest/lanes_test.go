package ingest_test

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/app/ingest"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/domain/redpacket"
	"github.com/tokenscope/tokenscope/domain/token"
)

// laneStore records each batch as the list of its events' names (label wallets, packet ids
// with what happened to them), and can hold a batch back until another one arrives. It is safe
// for concurrent use, as the store of a stream with several lanes must be.
type laneStore struct {
	mu      sync.Mutex
	batches [][]string
	flushes int
	// fail makes the batch holding this name fail.
	fail string
	// hold makes the batch holding this name wait (up to a minute) until a batch holding
	// release has started.
	hold, release string
	released      chan struct{}
	// cancelled makes the batch holding this name wait (up to a minute) until the stream's
	// context ends and fail with its error, as a real store's statement would.
	cancelled string
	// waiting, when set, is closed once the cancelled batch is in flight, and the failing batch
	// waits for it: what the other lane applied before is then settled, not a race.
	waiting chan struct{}
}

func (s *laneStore) Apply(context.Context, chainevent.Batch, time.Time) (chainevent.Result, error) {
	return chainevent.Result{}, errors.New("a stream applies pending batches only")
}

func (s *laneStore) ApplyPending(ctx context.Context, b chainevent.Batch, _ time.Time) (chainevent.Result, error) {
	names := batchNames(b)
	if s.release != "" && slices.Contains(names, s.release) {
		close(s.released)
	}
	if s.hold != "" && slices.Contains(names, s.hold) {
		select {
		case <-s.released:
		case <-time.After(time.Minute):
			return chainevent.Result{}, errors.New("the other lane never started while this batch was held: lanes ran one after the other")
		}
	}
	if s.fail != "" && slices.Contains(names, s.fail) {
		if s.waiting != nil {
			select {
			case <-s.waiting:
			case <-time.After(time.Minute):
				return chainevent.Result{}, errors.New("the other lane's batch never got in flight")
			}
		}
		return chainevent.Result{}, errors.New("store down")
	}
	if s.cancelled != "" && slices.Contains(names, s.cancelled) {
		if s.waiting != nil {
			close(s.waiting)
		}
		select {
		case <-ctx.Done():
			return chainevent.Result{}, ctx.Err()
		case <-time.After(time.Minute):
			return chainevent.Result{}, errors.New("the stream was not cancelled after the failed batch")
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.batches = append(s.batches, names)
	return chainevent.Result{Events: b.Len(), Inserted: b.Len()}, nil
}

func (s *laneStore) Flush(context.Context, time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flushes++
	return 0, nil
}

func batchNames(b chainevent.Batch) []string {
	var out []string
	for _, l := range b.Labels {
		out = append(out, string(l.Chain)+":"+l.Wallet)
	}
	for _, p := range b.RedPacketsCreated {
		out = append(out, "create "+p.Packet.ID)
	}
	for _, c := range b.Claims {
		out = append(out, "claim "+c.Claim.PacketID)
	}
	for _, e := range b.Expiries {
		out = append(out, "expire "+e.PacketID)
	}
	return out
}

func label(c chain.Chain, w string) chainevent.Event {
	return chainevent.WalletLabel{Chain: c, Wallet: w, Label: token.Kol}
}

// sorted returns the batches in a fixed order (lanes commit in any order between them).
func (s *laneStore) sorted() [][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := append([][]string(nil), s.batches...)
	sort.Slice(out, func(i, j int) bool { return strings.Join(out[i], ",") < strings.Join(out[j], ",") })
	return out
}

// TestStreamSplitsIntoLanesByChain: each chain's events are cut into their own batches, in
// stream order; a red packet's claim and expiry go with the packet's creation (the claim names
// the same chain, the expiry none), an expiry of a packet the stream never showed goes to the
// lane without a chain; the progress totals add up over every lane.
func TestStreamSplitsIntoLanesByChain(t *testing.T) {
	store := &laneStore{}
	events := []chainevent.Event{
		label(chain.Sol, "s1"), label(chain.Eth, "e1"), label(chain.Sol, "s2"),
		chainevent.RedPacketCreated{Packet: redpacket.RedPacket{ID: "p1", Chain: chain.Bsc}},
		label(chain.Eth, "e2"), label(chain.Sol, "s3"),
		chainevent.RedPacketClaimed{Claim: redpacket.Claim{PacketID: "p1", Chain: chain.Bsc}},
		chainevent.RedPacketExpired{PacketID: "p1"},
		chainevent.RedPacketExpired{PacketID: "old"},
		label(chain.Sol, "s4"), label(chain.Eth, "e3"),
	}
	var mu sync.Mutex
	var last int
	res, err := ingest.New(store, clock(), 2).Stream(context.Background(), &source{events: events},
		func(total chainevent.Result) {
			mu.Lock()
			defer mu.Unlock()
			assert.Greater(t, total.Inserted, last, "running totals grow")
			last = total.Inserted
		})
	require.NoError(t, err)
	assert.Equal(t, len(events), res.Inserted)
	assert.Equal(t, len(events), last)
	assert.Equal(t, [][]string{
		{"create p1", "claim p1"},
		{"eth:e1", "eth:e2"},
		{"eth:e3"},
		{"expire old"},
		{"expire p1"},
		{"sol:s1", "sol:s2"},
		{"sol:s3", "sol:s4"},
	}, store.sorted())
	assert.Equal(t, 1, store.flushes, "one flush at the end of the stream")
}

// TestStreamLanesRunSideBySide: a sol batch held in the store does not keep the eth lane from
// applying its batch meanwhile.
func TestStreamLanesRunSideBySide(t *testing.T) {
	store := &laneStore{hold: "sol:s1", release: "eth:e1", released: make(chan struct{})}
	events := []chainevent.Event{label(chain.Sol, "s1"), label(chain.Sol, "s2"), label(chain.Eth, "e1"), label(chain.Eth, "e2")}
	res, err := ingest.New(store, clock(), 2).Stream(context.Background(), &source{events: events}, nil)
	require.NoError(t, err)
	assert.Equal(t, 4, res.Inserted)
}

// TestStreamStopsAllLanesAtAFailedBatch: a failed batch in one lane ends the stream with its
// error: the batch in flight in the other lane sees the stream's context end, and that lane
// applies nothing it was handed after it.
func TestStreamStopsAllLanesAtAFailedBatch(t *testing.T) {
	store := &laneStore{fail: "eth:e1", cancelled: "sol:s2", waiting: make(chan struct{})}
	events := []chainevent.Event{label(chain.Sol, "s1"), label(chain.Sol, "s2"), label(chain.Eth, "e1"), label(chain.Sol, "s3"),
		label(chain.Sol, "s4"), label(chain.Eth, "e2")}
	res, err := ingest.New(store, clock(), 1).Stream(context.Background(), &source{events: events}, nil)
	require.EqualError(t, err, "store down", "the first failure, not the cancellation it caused")
	assert.Equal(t, [][]string{{"sol:s1"}}, store.sorted())
	assert.Equal(t, 1, res.Inserted)
}
