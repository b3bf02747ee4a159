package ports

import (
	"context"
	"time"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/ingest"
)

// IngestStore applies a batch of chain events and every number derived from them (positions,
// market data, window statistics of the touched tokens, pool state, red packet state, outbox
// rows) in one transaction: a batch is all or nothing. Replayed events change nothing.
type IngestStore interface {
	Apply(ctx context.Context, b ingest.Batch, now time.Time) (ingest.Result, error)
}

// Ingester is what the simulator, the importer and the HTTP endpoint feed events into: the ingest
// use case, which validates and batches before calling an IngestStore.
type Ingester interface {
	Ingest(ctx context.Context, events []ingest.Event) (ingest.Result, error)
}

// TokenRef names a token on a chain.
type TokenRef struct {
	Chain   chain.Chain
	Address string
}
