package ports

import (
	"context"
	"time"

	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/ingest"
	"github.com/tokenscope/tokenscope/domain/ranking"
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

// HotCandidate is a token's activity in the current window of a ranking duration and in the
// window of the same length before it.
type HotCandidate struct {
	Address string
	Current ranking.Activity
	Prev    ranking.Activity
}

// HotEntry is one row of the precomputed ranking.
type HotEntry struct {
	Address string
	Rank    int32
	Score   decimal.Decimal
}

// MarketRefresher keeps the derived state that changes with time alone: rolling window
// statistics decay even when no trade arrives, and the hot-token ranking is recomputed from
// them. The refresh workflow's activity drives it.
type MarketRefresher interface {
	// ActiveTokens lists the tokens with a trade at or after since (Unix ms).
	ActiveTokens(ctx context.Context, since int64) ([]TokenRef, error)
	// RefreshWindows recomputes every window of the given tokens as of now.
	RefreshWindows(ctx context.Context, tokens []TokenRef, now time.Time) error
	// HotCandidates reads, for every token of c traded within 2 × d before now, its activity in
	// (now − d, now] and in (now − 2d, now − d].
	HotCandidates(ctx context.Context, c chain.Chain, d ranking.Duration, now time.Time) ([]HotCandidate, error)
	// ReplaceHotTokens swaps the ranking of (c, d) for entries atomically.
	ReplaceHotTokens(ctx context.Context, c chain.Chain, d ranking.Duration, entries []HotEntry, now time.Time) error
}
