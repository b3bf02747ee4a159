package ranking

import (
	"sort"

	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/domain/token"
)

// Functions only the tests use: nothing reachable from the binaries calls them (make deadcode).

// ActivityOf takes the score's inputs from a window's statistics.
func ActivityOf(s token.PeriodStats) Activity {
	return Activity{Buyers: s.Buyers, VolumeUSD: s.TotalVolumeInUSD, Trades: s.Trades}
}

// SortByScore orders ds by scores[address], highest first; a missing score counts as 0 and
// equal scores go by address so the order is stable between requests.
func SortByScore(ds []token.Detail, scores map[string]decimal.Decimal) {
	sort.SliceStable(ds, func(i, j int) bool {
		if c := scores[ds[i].Address].Cmp(scores[ds[j].Address]); c != 0 {
			return c > 0
		}
		return ds[i].Address < ds[j].Address
	})
}
