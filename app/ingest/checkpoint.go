package ingest

import (
	"context"
	"sync"
	"time"

	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/ports"
)

// Checkpointed is the ingest path of a chain follower: Ingest's validation and batch, applied
// together with the follower's checkpoint in the batch's transaction (ports.CheckpointedStore),
// so a crash leaves either both or neither.
type Checkpointed struct {
	svc   *Service
	store ports.CheckpointedStore

	every   time.Duration // how often IngestThrough flushes
	mu      sync.Mutex
	flushed time.Time // when this path last flushed
}

// FollowFlushInterval is how often a follower's writes flush in the middle of a step (a backfill's
// long steps): as a bulk import's, a token many ranges touch gets its market row once per
// interval. A follower that has caught up flushes at the end of every step (Flush), so its
// market rows follow the chain within a step.
const FollowFlushInterval = 10 * time.Second

var (
	_ ports.CheckpointedIngester = (*Checkpointed)(nil)
	_ ports.IngestFlusher        = (*Checkpointed)(nil)
)

// Checkpointed returns s's follower ingest path over store (the same database as s's store).
func (s *Service) Checkpointed(store ports.CheckpointedStore) *Checkpointed {
	return &Checkpointed{svc: s, store: store, every: FollowFlushInterval, flushed: time.Now()}
}

// IngestThrough validates events and applies them, with cp, as one batch; no events move the
// checkpoint alone. An invalid event fails the call before anything is written.
func (c *Checkpointed) IngestThrough(ctx context.Context, events []chainevent.Event, cp chainevent.Checkpoint) (chainevent.Result, error) {
	for i, e := range events {
		if err := e.Validate(); err != nil {
			return chainevent.Result{}, chainevent.LineError(i+1, "", err)
		}
	}
	b := chainevent.NewBatch(events)
	res, err := c.store.ApplyThrough(ctx, b, cp, c.svc.clock.Now())
	if err != nil {
		return res, err
	}
	if b.Len() > 0 {
		c.svc.committed(b)
	}
	c.mu.Lock()
	due := time.Since(c.flushed) >= c.every
	c.mu.Unlock()
	if due {
		// The batch is committed with its checkpoint whatever the flush does: a failed flush is
		// left to the next one (this path's, or any process's refresh round).
		_ = c.Flush(ctx)
	}
	return res, nil
}

// Flush derives what the follower's committed batches left pending (the market rows of their
// tokens, and the trades of a batch under the store's deferral size), as a stream's flush does.
// IngestThrough flushes once its flush interval has passed since the last flush; the follower
// also flushes at the end of each step.
func (c *Checkpointed) Flush(ctx context.Context) error {
	c.mu.Lock()
	c.flushed = time.Now()
	c.mu.Unlock()
	return c.svc.flush(ctx)
}
