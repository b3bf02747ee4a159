package ports

import (
	"context"
	"time"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
)

// IngestStore applies a batch of chain events and every number derived from them (positions,
// time buckets, holder totals, pool state, red packet state, outbox rows, and the market data and
// window statistics of the touched tokens) in one transaction: a batch is all or nothing.
// Replayed events change nothing.
//
// ApplyPending is Apply without the derivations: it stores the events and lists the new trades
// (and marks the tokens the other events touched) durably, in the batch's transaction, and Flush
// derives every listed trade (positions, buckets, windows, holder totals) and the market data of
// every touched token from the committed state as of now. A stream applies its batches pending
// and flushes every so often and at its end, so a token touched by many batches is derived once
// per flush; a crash between the two leaves the lists and marks, which the next Flush (of any
// process, or the refresh loop) derives.
type IngestStore interface {
	Apply(ctx context.Context, b chainevent.Batch, now time.Time) (chainevent.Result, error)
	ApplyPending(ctx context.Context, b chainevent.Batch, now time.Time) (chainevent.Result, error)
	Flush(ctx context.Context, now time.Time) (int, error)
}

// Ingester is what the simulator, the importer and the HTTP endpoint feed events into: the ingest
// use case, which validates and batches before calling an IngestStore.
type Ingester interface {
	Ingest(ctx context.Context, events []chainevent.Event) (chainevent.Result, error)
}

// TokenRef names a token on a chain.
type TokenRef struct {
	Chain   chain.Chain
	Address string
}
