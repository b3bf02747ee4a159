package ingest

import (
	"context"
	"errors"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/tokenscope/tokenscope/domain/chainevent"
)

// stream is one Stream call: its lanes and what they committed.
type stream struct {
	svc      *Service
	progress Progress
	cancel   context.CancelFunc

	lanes map[string]chan chainevent.Batch
	wg    sync.WaitGroup

	mu      sync.Mutex
	total   chainevent.Result
	err     error     // the first failure of a lane
	flushed time.Time // the last flush, or the stream's start
	// committedOnly: the stream leaves its derivations to the background flushes
	// (Service.StreamCommitted) instead of flushing itself.
	committedOnly bool
}

// split reads src to its end, cutting each lane's events into batches and handing every full
// batch to its lane; at the end it hands over each lane's last batch. A decoding error is
// returned after the full batches before it; the partial batches it interrupted are dropped.
// It stops early, without error, when ctx ends (a lane failed).
func (st *stream) split(ctx context.Context, src Source) error {
	size := st.svc.batchSize
	pending := map[string][]chainevent.Event{}
	packets := map[string]string{} // red packet id → the lane of its first event in the stream
	for ctx.Err() == nil {
		e, err := src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		key := laneKey(e, packets)
		pending[key] = append(pending[key], e)
		if len(pending[key]) >= size {
			st.send(ctx, key, pending[key])
			pending[key] = make([]chainevent.Event, 0, size)
		}
	}
	keys := make([]string, 0, len(pending))
	for k := range pending {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if len(pending[k]) > 0 {
			st.send(ctx, k, pending[k])
		}
	}
	return nil
}

// laneKey is the lane of e: its chain; for a red packet's claims and expiry, the lane of the
// packet's first event in the stream (its creation, usually), so one packet's events keep their
// order. An expiry, which names no chain, of a packet the stream has not shown goes to the lane
// without a chain.
func laneKey(e chainevent.Event, packets map[string]string) string {
	switch v := e.(type) {
	case chainevent.TokenCreated:
		return string(v.Token.Chain)
	case chainevent.TokenMigrated:
		return string(v.Chain)
	case chainevent.PoolCreated:
		return string(v.Pool.Chain)
	case chainevent.Trade:
		return string(v.Chain)
	case chainevent.PoolSnapshot:
		return string(v.Chain)
	case chainevent.WalletLabel:
		return string(v.Chain)
	case chainevent.RedPacketCreated:
		return packetLane(packets, v.Packet.ID, string(v.Packet.Chain))
	case chainevent.RedPacketClaimed:
		return packetLane(packets, v.Claim.PacketID, string(v.Claim.Chain))
	case chainevent.RedPacketExpired:
		return packetLane(packets, v.PacketID, "")
	}
	return ""
}

func packetLane(packets map[string]string, id, lane string) string {
	if l, ok := packets[id]; ok {
		return l
	}
	packets[id] = lane
	return lane
}

// send hands events to lane key as one batch, starting the lane on its first batch; it gives up
// when ctx ends.
func (st *stream) send(ctx context.Context, key string, events []chainevent.Event) {
	ch, ok := st.lanes[key]
	if !ok {
		if st.lanes == nil {
			st.lanes = map[string]chan chainevent.Batch{}
		}
		ch = make(chan chainevent.Batch, 1)
		st.lanes[key] = ch
		st.wg.Add(1)
		go st.run(ctx, ch)
	}
	select {
	case ch <- chainevent.NewBatch(events):
	case <-ctx.Done():
	}
}

// wait closes the lanes and waits until each has applied what it was handed (or given up).
func (st *stream) wait() {
	for _, ch := range st.lanes {
		close(ch)
	}
	st.wg.Wait()
}

// run applies a lane's batches in order until the lane is closed; after a failure anywhere in
// the stream it only drains.
func (st *stream) run(ctx context.Context, batches <-chan chainevent.Batch) {
	defer st.wg.Done()
	for b := range batches {
		if ctx.Err() != nil {
			continue
		}
		if err := st.apply(ctx, b); err != nil {
			st.fail(err)
		}
	}
}

// apply commits one batch, counts it, and flushes when the flush interval has passed since the
// stream's last flush (one lane flushes for all).
func (st *stream) apply(ctx context.Context, b chainevent.Batch) error {
	s := st.svc
	res, err := s.store.ApplyPending(ctx, b, s.clock.Now())
	if err != nil {
		return err
	}
	s.committed(b)
	st.mu.Lock()
	st.total = st.total.Add(res)
	if st.progress != nil {
		st.progress(st.total)
	}
	due := time.Since(st.flushed) >= s.flushEvery
	if due {
		st.flushed = time.Now()
	}
	st.mu.Unlock()
	if st.committedOnly {
		s.underived.Add(int64(res.Trades))
		s.derivations.kick(s)
		return nil
	}
	if !due {
		return nil
	}
	return s.flush(ctx)
}

// fail records the stream's first failure and stops the stream.
func (st *stream) fail(err error) {
	st.mu.Lock()
	if st.err == nil {
		st.err = err
	}
	st.mu.Unlock()
	st.cancel()
}
