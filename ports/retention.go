package ports

import (
	"context"
	"time"
)

// TradeRetainer removes trades older than a time without changing any derived value (positions,
// holder totals, windows, candle buckets, market data stay as they are): the refresh loop calls it
// each round when TRADES_RETENTION is set. It works in short transactions, for at most budget,
// and reports whether it reached the time.
type TradeRetainer interface {
	RetainTrades(ctx context.Context, before time.Time, budget time.Duration) (RetainResult, error)
}

// RetainResult is what one RetainTrades call did: trades removed, trades folded into the kept
// positions' bases but kept (each token's newest successful trade), and whether every chain's
// trades before the time are folded.
type RetainResult struct {
	Removed, Kept int
	Done          bool
}
