// Package ingest is the use case that takes chain events in (from the simulator, the NDJSON
// importer and POST /v2/ingest): it validates each event, drops repeats inside a batch, cuts
// streams into batches, and hands each batch to the store, which applies it with every
// derivation in one transaction. It imports domain and ports only.
package ingest

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/tokenscope/tokenscope/domain/chainevent"
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
	// flushes are the service's flushes, shared by its concurrent streams.
	flushes *sharedFlush
	// derivations runs the flushes StreamCommitted's streams leave to the background, and
	// underived counts their trades committed since the last flush began.
	derivations background
	underived   atomic.Int64
	// backgroundFailures counts the background flushes that failed; onBackgroundError, when set,
	// hears each failure (WithBackgroundErrors).
	backgroundFailures atomic.Int64
	onBackgroundError  func(error)
}

var _ ports.Ingester = (*Service)(nil)

// New builds the use case; batchSize ≤ 0 means DefaultBatchSize.
func New(store ports.IngestStore, clock ports.Clock, batchSize int) *Service {
	if batchSize <= 0 {
		batchSize = DefaultBatchSize
	}
	return &Service{store: store, clock: clock, batchSize: batchSize, flushEvery: FlushInterval, flushes: &sharedFlush{}}
}

// WithListener makes the service tell l about every batch it commits and every flush, after
// the commit (the realtime streams publish from it).
func (s *Service) WithListener(l ports.CommitListener) *Service {
	s.listener = l
	return s
}

func (s *Service) committed(b chainevent.Batch) {
	if s.listener != nil {
		s.listener.Committed(b)
	}
}

func (s *Service) derived() {
	if s.listener != nil {
		s.listener.Derived()
	}
}

// WithBackgroundErrors makes the service tell fn about every background flush that fails (its
// lists stay for the next flush); nobody is told by default.
func (s *Service) WithBackgroundErrors(fn func(error)) *Service {
	s.onBackgroundError = fn
	return s
}

// BackgroundFlushFailures is how many background flushes (StreamCommitted's) have failed.
func (s *Service) BackgroundFlushFailures() int64 { return s.backgroundFailures.Load() }

// Ingest validates events and applies them as one batch (all or nothing). An invalid event fails
// the call before anything is written; the error names its position (1-based) as the line.
func (s *Service) Ingest(ctx context.Context, events []chainevent.Event) (chainevent.Result, error) {
	for i, e := range events {
		if err := e.Validate(); err != nil {
			return chainevent.Result{}, chainevent.LineError(i+1, "", err)
		}
	}
	if len(events) == 0 {
		return chainevent.Result{}, nil
	}
	b := chainevent.NewBatch(events)
	res, err := s.store.Apply(ctx, b, s.clock.Now())
	if err != nil {
		return res, err
	}
	s.committed(b)
	s.derived()
	return res, nil
}

// Progress is called after each committed batch of a stream with the running totals.
type Progress func(total chainevent.Result)

// Source yields a stream's events in order: the NDJSON decoder (adapters/ndjson) of an import
// file or an ingest request body. Next returns io.EOF after the last event; a malformed or
// invalid event is an error naming its line and field (chainevent.LineError).
type Source interface {
	Next() (chainevent.Event, error)
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
// at most the flush interval later and at the end of the stream): a malformed line stops the
// stream with the source's error naming the line and field, and the batches completed before it
// stay committed (re-sending the whole stream is safe, since every event is idempotent). The
// returned result counts the committed batches.
//
// The stream is split into lanes, one per chain (laneKey): each lane cuts its own events into
// batches and applies them one at a time, in stream order, on its own goroutine, while the
// caller's goroutine reads and decodes ahead. Lanes of different chains commit side by side (the
// store locks derived state per chain), so decoding, each chain's batches and the database's
// work on them overlap; the order between events of one chain, and between the events of one red
// packet, is kept.
func (s *Service) Stream(ctx context.Context, src Source, progress Progress) (chainevent.Result, error) {
	return s.stream(ctx, src, progress, false)
}

// MaxUnderived is how many trades StreamCommitted's streams may leave underived (committed since
// the last flush began) before such a stream, at its end, waits for a flush as Stream does: it
// bounds how far the derived market data falls behind the committed trades under a load the
// flushes cannot keep up with, at about ten seconds of a busy chain.
const MaxUnderived = 50_000

// StreamCommitted is Stream that answers once its batches are committed, without waiting for
// their trades' derivations (positions, buckets, windows, holder totals, market rows): those are
// left to the service's background flushes (Service.derivations), at most the flush interval apart
// while streams leave work, each deriving every trade listed before it starts. Its trades are
// durable and listed when it returns (a crash loses nothing: any process's next flush derives
// them) and served by operation 3 at once; their tokens' details follow at the next flush. While
// more than MaxUnderived trades wait for a flush, the stream waits for one before it answers.
func (s *Service) StreamCommitted(ctx context.Context, src Source, progress Progress) (chainevent.Result, error) {
	return s.stream(ctx, src, progress, true)
}

func (s *Service) stream(ctx context.Context, src Source, progress Progress, committedOnly bool) (chainevent.Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st := &stream{svc: s, progress: progress, flushed: time.Now(), cancel: cancel, committedOnly: committedOnly}
	decodeErr := st.split(ctx, src)
	st.wait()
	if st.err != nil {
		return st.total, st.err
	}
	if committedOnly {
		// The background flushes derive what the batches committed (each batch asked for one).
		if decodeErr == nil && s.underived.Load() > MaxUnderived {
			return st.total, s.flush(ctx)
		}
		if decodeErr != nil {
			return st.total, decodeErr
		}
		return st.total, ctx.Err()
	}
	if decodeErr != nil {
		return st.total, s.flushAfter(ctx, decodeErr)
	}
	if err := ctx.Err(); err != nil {
		return st.total, err
	}
	if err := s.flush(ctx); err != nil {
		return st.total, err
	}
	return st.total, nil
}

// flush derives what the streams' committed batches left pending (a flush shared with the
// service's other streams: sharedFlush) and tells the listener.
func (s *Service) flush(ctx context.Context) error {
	return s.flushes.do(ctx, func(ctx context.Context) error {
		s.underived.Store(0) // this flush derives every trade committed before it
		if _, err := s.store.Flush(ctx, s.clock.Now()); err != nil {
			return err
		}
		s.derived()
		return nil
	})
}

// flushAfter derives what the committed batches left pending before returning the error that
// stopped the stream (a failed flush is left to the next one; the stream's error is returned).
func (s *Service) flushAfter(ctx context.Context, cause error) error {
	_ = s.flush(ctx)
	return cause
}
