// Package ingest is the use case that takes chain events in (from the simulator, the NDJSON
// importer and POST /v2/ingest): it validates each event, drops repeats inside a batch, cuts
// streams into batches, and hands each batch to the store, which applies it with every
// derivation in one transaction. It imports domain and ports only.
package ingest

import (
	"context"
	"errors"
	"io"

	domain "github.com/tokenscope/tokenscope/domain/ingest"
	"github.com/tokenscope/tokenscope/ports"
)

// DefaultBatchSize bounds one transaction of a stream: large enough that COPY pays off, small
// enough that a failed batch is cheap to redo and locks are short.
const DefaultBatchSize = 5000

// Service implements ports.Ingester.
type Service struct {
	store     ports.IngestStore
	clock     ports.Clock
	batchSize int
}

var _ ports.Ingester = (*Service)(nil)

// New builds the use case; batchSize ≤ 0 means DefaultBatchSize.
func New(store ports.IngestStore, clock ports.Clock, batchSize int) *Service {
	if batchSize <= 0 {
		batchSize = DefaultBatchSize
	}
	return &Service{store: store, clock: clock, batchSize: batchSize}
}

// Ingest validates events and applies them as one batch (all or nothing). An invalid event fails
// the call before anything is written; the error names its position (1-based) as the line.
func (s *Service) Ingest(ctx context.Context, events []domain.Event) (domain.Result, error) {
	for i, e := range events {
		if err := e.Validate(); err != nil {
			return domain.Result{}, domain.LineError(i+1, "", err)
		}
	}
	if len(events) == 0 {
		return domain.Result{}, nil
	}
	return s.store.Apply(ctx, domain.NewBatch(events), s.clock.Now())
}

// Progress is called after each committed batch of a stream with the running totals.
type Progress func(total domain.Result)

// Stream decodes NDJSON from r and applies it in batches of the service's batch size. Each batch
// commits on its own: a malformed line stops the stream with an error naming the line and field,
// and the batches before it stay committed (re-sending the whole stream is safe, since every
// event is idempotent). The returned result counts the committed batches.
func (s *Service) Stream(ctx context.Context, r io.Reader, progress Progress) (domain.Result, error) {
	dec := domain.NewDecoder(r)
	var total domain.Result
	batch := make([]domain.Event, 0, s.batchSize)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		res, err := s.store.Apply(ctx, domain.NewBatch(batch), s.clock.Now())
		if err != nil {
			return err
		}
		total = total.Add(res)
		batch = batch[:0]
		if progress != nil {
			progress(total)
		}
		return nil
	}
	for {
		e, err := dec.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return total, err
		}
		batch = append(batch, e)
		if len(batch) >= s.batchSize {
			if err := flush(); err != nil {
				return total, err
			}
		}
		if err := ctx.Err(); err != nil {
			return total, err
		}
	}
	return total, flush()
}
