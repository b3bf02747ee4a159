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

// WindowRefresh reports one round of MarketRefresher.RefreshWindows.
type WindowRefresh struct {
	// Full is set when there was no completed round to start from: every token traded in the
	// last 24 hours (or still showing 24h activity) was recomputed.
	Full bool
	// Since is the time of the completed round this one continued from (zero when Full).
	Since time.Time
	// Resumed is set when the round continued one an earlier attempt left unfinished (it had
	// outlived its activity timeout, say); Tokens then counts only this attempt's tokens.
	Resumed bool
	// Tokens is the number of tokens whose windows were recomputed.
	Tokens int
}

// HotRankingTime is when the ranking of (Chain, Duration) was last computed.
type HotRankingTime struct {
	Chain      chain.Chain
	Duration   ranking.Duration
	ComputedAt time.Time
	// Entries is how many tokens the stored ranking holds.
	Entries int
}

// MarketRefresher keeps the derived state that changes with time alone: rolling window
// statistics decay even when no trade arrives, and the hot-token ranking is recomputed from
// the trades. The refresh workflow's activity drives it.
type MarketRefresher interface {
	// RefreshWindows brings every token's rolling windows up to date as of now. New trades are
	// applied by the ingest transaction itself, so between two rounds a token's window w only
	// changes when one of its successful trades leaves it (its block time passes now − w) or a
	// trade stamped after the last round's time enters: a round recomputes exactly those windows
	// of those tokens since the last completed round, and once all of them committed records the
	// round's time (durable and shared between workers). A failed round does not count as
	// completed: the next one continues it after the last token it committed and, when done,
	// records the failed round's time, so the round after covers its span again. Without a
	// completed round it recomputes every token traded in the last 24 hours. Rounds are serialised.
	RefreshWindows(ctx context.Context, now time.Time) (WindowRefresh, error)
	// HotRankingTimes lists when each (chain, duration) ranking was last computed and how many
	// tokens it holds; a ranking never computed is absent.
	HotRankingTimes(ctx context.Context) ([]HotRankingTime, error)
	// HotCandidates reads, for every token of c traded within 2 × d before now, its activity in
	// (now − d, now] and in (now − 2d, now − d].
	HotCandidates(ctx context.Context, c chain.Chain, d ranking.Duration, now time.Time) ([]HotCandidate, error)
	// ReplaceHotTokens swaps the ranking of (c, d) for entries atomically and records now as its
	// computation time.
	ReplaceHotTokens(ctx context.Context, c chain.Chain, d ranking.Duration, entries []HotEntry, now time.Time) error
}
