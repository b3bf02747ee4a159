package ingest

import (
	"context"

	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/ports"
)

// Checkpointed is the ingest path of a chain follower: Ingest's validation and batch, applied
// together with the follower's checkpoint in the batch's transaction (ports.CheckpointedStore),
// so a crash leaves either both or neither.
type Checkpointed struct {
	svc   *Service
	store ports.CheckpointedStore
}

var _ ports.CheckpointedIngester = (*Checkpointed)(nil)

// Checkpointed returns s's follower ingest path over store (the same database as s's store).
func (s *Service) Checkpointed(store ports.CheckpointedStore) *Checkpointed {
	return &Checkpointed{svc: s, store: store}
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
		c.svc.derived()
	}
	return res, nil
}
