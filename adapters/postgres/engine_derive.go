package postgres

import (
	"sort"
	"time"

	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/domain/stats"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/domain/trade"
	"github.com/tokenscope/tokenscope/ports"
)

// The engine's pure steps: what it computes from the rows it read, with the formulas of
// domain/stats, before it writes. Nothing here talks to the database.

// appendWindows appends the windows of set of one token as of now, computed by stats.Window over
// trades (the token's trades, in any order) with liquidity as the current liquidity. Each window
// is handed only the trades that can lie in it (a suffix of the trades in time order); stats.Window
// applies the exact bounds itself, so the result is the same as handing it all of them.
func appendWindows(out []windowStats, ref ports.TokenRef, trades []trade.Trade, set windowSet, now time.Time,
	liquidity decimal.Decimal) []windowStats {
	ts := trade.Sorted(trades)
	end := now.UnixMilli()
	for i, w := range token.AllWindows {
		if set&(1<<i) == 0 {
			continue
		}
		from := end - w.Duration().Milliseconds()
		j := sort.Search(len(ts), func(j int) bool { return ts[j].BlockTimestamp > from })
		out = append(out, windowStats{ref: ref, window: w, stats: stats.Window(ts[j:], now, w, liquidity)})
	}
	return out
}
