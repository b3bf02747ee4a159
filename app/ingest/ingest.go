// Package ingest is the use case that takes chain events in (from the simulator, the NDJSON
// importer and POST /v2/ingest): it validates each event, drops repeats inside a batch, cuts
// streams into batches, and hands each batch to the store, which applies it with every
// derivation in one transaction. It imports domain and ports only.
package ingest

import (
	"context"
	"errors"
	"io"
	"time"

	domain "github.com/tokenscope/tokenscope/domain/ingest"
	"github.com/tokenscope/tokenscope/ports"
)

// DefaultBatchSize bounds one transaction of a stream: large enough that COPY pays off, small
// enough that a failed batch is cheap to redo and locks are short.
const DefaultBatchSize = 5000

// Service implements ports.Ingester.
type Service struct {
	store      ports.IngestStore
	clock      ports.Clock
	batchSize  int
	flushEvery time.Duration
	// listener hears each commit (nil: nobody listens).
	listener ports.CommitListener
}

var _ ports.Ingester = (*Service)(nil)

// New builds the use case; batchSize ≤ 0 means DefaultBatchSize.
func New(store ports.IngestStore, clock ports.Clock, batchSize int) *Service {
	if batchSize <= 0 {
		batchSize = DefaultBatchSize
	}
	return &Service{store: store, clock: clock, batchSize: batchSize, flushEvery: FlushInterval}
}

// WithListener makes the service tell l about every batch it commits and every flush, after
// the commit (the realtime streams publish from it).
func (s *Service) WithListener(l ports.CommitListener) *Service {
	s.listener = l
	return s
}

func (s *Service) committed(b domain.Batch) {
	if s.listener != nil {
		s.listener.Committed(b)
	}
}

func (s *Service) derived() {
	if s.listener != nil {
		s.listener.Derived()
	}
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
	b := domain.NewBatch(events)
	res, err := s.store.Apply(ctx, b, s.clock.Now())
	if err != nil {
		return res, err
	}
	s.committed(b)
	s.derived()
	return res, nil
}

// Progress is called after each committed batch of a stream with the running totals.
type Progress func(total domain.Result)

// Source yields a stream's events in order: the NDJSON decoder (adapters/ndjson) of an import
// file or an ingest request body. Next returns io.EOF after the last event; a malformed or
// invalid event is an error naming its line and field (domain.LineError).
type Source interface {
	Next() (domain.Event, error)
}

// FlushInterval is how often a stream derives the market data its batches left pending
// (ports.IngestStore.Flush), besides at its end, unless set otherwise (WithFlushInterval): the
// most a token's market data and windows lag behind the stream's committed batches.
const FlushInterval = time.Second

// WithFlushInterval sets how often the service's streams flush (FlushInterval when d ≤ 0): a
// bulk import derives each token once per interval however many batches touch it.
func (s *Service) WithFlushInterval(d time.Duration) *Service {
	if d <= 0 {
		d = FlushInterval
	}
	s.flushEvery = d
	return s
}

// Stream reads events from src and applies them in batches of the service's batch size. Each
// batch commits on its own (pending: the market data of its tokens is derived at the next flush,
// at most the flush interval later and at the end of the stream): a malformed line stops the stream with the source's error naming the
// line and field, and the batches before it stay committed (re-sending the whole stream is safe,
// since every event is idempotent). The returned result counts the committed batches.
//
// Reading runs one batch ahead of applying, in its own goroutine: decoding is CPU work in this
// process while applying waits on Postgres, so overlapping them keeps both busy. Batches are
// still applied one at a time and in stream order.
func (s *Service) Stream(ctx context.Context, src Source, progress Progress) (domain.Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan decoded, 1)
	go s.decode(ctx, src, batches)
	var total domain.Result
	flushed := time.Now()
	for d := range batches {
		if d.err != nil {
			return total, s.flushAfter(ctx, d.err)
		}
		res, err := s.store.ApplyPending(ctx, d.batch, s.clock.Now())
		if err != nil {
			cancel()
			for range batches {
				// Let the decoder see the cancellation and close the channel.
			}
			return total, err
		}
		total = total.Add(res)
		s.committed(d.batch)
		if time.Since(flushed) >= s.flushEvery {
			if _, err := s.store.Flush(ctx, s.clock.Now()); err != nil {
				return total, err
			}
			s.derived()
			flushed = time.Now()
		}
		if progress != nil {
			progress(total)
		}
	}
	if err := ctx.Err(); err != nil {
		return total, err
	}
	if _, err := s.store.Flush(ctx, s.clock.Now()); err != nil {
		return total, err
	}
	s.derived()
	return total, nil
}

// flushAfter derives what the committed batches left pending before returning the error that
// stopped the stream (a failed flush is left to the next one; the stream's error is returned).
func (s *Service) flushAfter(ctx context.Context, cause error) error {
	if _, err := s.store.Flush(ctx, s.clock.Now()); err == nil {
		s.derived()
	}
	return cause
}

// decoded is one full batch of a stream, or the error that ended it.
type decoded struct {
	batch domain.Batch
	err   error
}

// decode cuts the stream into batches and sends them in order; a decoding error is sent after
// every complete batch before it, and the partial batch it interrupted is dropped. It closes out
// when done or when ctx ends.
func (s *Service) decode(ctx context.Context, src Source, out chan<- decoded) {
	defer close(out)
	send := func(d decoded) bool {
		select {
		case out <- d:
			return true
		case <-ctx.Done():
			return false
		}
	}
	batch := make([]domain.Event, 0, s.batchSize)
	for {
		e, err := src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			send(decoded{err: err})
			return
		}
		batch = append(batch, e)
		if len(batch) >= s.batchSize {
			if !send(decoded{batch: domain.NewBatch(batch)}) {
				return
			}
			batch = make([]domain.Event, 0, s.batchSize)
		}
		if err := ctx.Err(); err != nil {
			return
		}
	}
	if len(batch) > 0 {
		send(decoded{batch: domain.NewBatch(batch)})
	}
}
