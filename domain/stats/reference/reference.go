// Package reference holds the straightforward recomputations of the engine's figures from raw
// events: a window over a token's trades and the holder fields over every balance, by the
// formulas of domain/stats. The engine computes the same figures from what it keeps (time
// buckets, holder totals: stats.WindowSum, stats.HoldingsOf); the tests check the two
// agree (domain/stats, the engine property test). Nothing in the binaries calls it.
package reference

import (
	"slices"
	"time"

	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/domain/stats"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/domain/trade"
)

func div(a, b decimal.Decimal) decimal.Decimal {
	if b.IsZero() {
		return decimal.Zero
	}
	return a.DivRound(b, stats.Scale)
}

// Window computes the statistics of one token over the window w at now: its successful trades
// with a block time at or after WindowStart(now, w). A trade stamped after now (a chain clock
// ahead of ours) is in every window: it happened no earlier than the window's start. trades must
// all be of that token; their order does not matter. Buyers, sellers and traders count distinct
// wallets. Open and close are the USD prices of the first and last trade in trade.Compare order,
// high and low the extremes; with no trade all prices are 0. liquidityUSD is copied into
// CurrentLiquidityInUSD.
func Window(trades []trade.Trade, now time.Time, w token.Window, liquidityUSD decimal.Decimal) token.PeriodStats {
	start := stats.WindowStart(now, w)
	var in []trade.Trade
	for _, t := range trades {
		if t.Succeeded() && t.BlockTimestamp >= start {
			in = append(in, t)
		}
	}
	in = trade.Sorted(in)

	s := token.PeriodStats{CurrentLiquidityInUSD: liquidityUSD}
	buyers, sellers, traders := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for i, t := range in {
		price := t.TokenPriceInUSD
		if i == 0 {
			s.OpenInUSD, s.HighInUSD, s.LowInUSD = price, price, price
		}
		s.CloseInUSD = price
		s.HighInUSD = decimal.Max(s.HighInUSD, price)
		s.LowInUSD = decimal.Min(s.LowInUSD, price)
		traders[t.Wallet] = true
		switch t.Side {
		case trade.Buy:
			s.Buys++
			buyers[t.Wallet] = true
			s.BuyVolume = s.BuyVolume.Add(t.TokenAmount)
			s.BuyVolumeInUSD = s.BuyVolumeInUSD.Add(t.TokenAmountInUSD)
		case trade.Sell:
			s.Sells++
			sellers[t.Wallet] = true
			s.SellVolume = s.SellVolume.Add(t.TokenAmount)
			s.SellVolumeInUSD = s.SellVolumeInUSD.Add(t.TokenAmountInUSD)
		}
	}
	s.Trades = s.Buys + s.Sells
	s.Buyers, s.Sellers, s.Traders = int64(len(buyers)), int64(len(sellers)), int64(len(traders))
	s.TotalVolume = s.BuyVolume.Add(s.SellVolume)
	s.TotalVolumeInUSD = s.BuyVolumeInUSD.Add(s.SellVolumeInUSD)
	s.PriceChangeRatioInUSD = div(s.CloseInUSD.Sub(s.OpenInUSD), s.OpenInUSD)
	return s
}

// Holdings computes the holder fields of marketData from every wallet's balance of one token:
// holders (wallets with a positive balance), the top 10/50/100 holdings and their share of
// totalSupply, and for each holder group its holders, holdings and share. labels gives each
// wallet's groups; creator is always in the dev group. Every group is present in the result,
// with zeros when nobody holds. Only TotalSupply and the holder fields are set. It is
// stats.HoldingsOf over the totals those balances sum to.
func Holdings(balances map[string]decimal.Decimal, totalSupply decimal.Decimal, labels map[string][]token.HolderGroup, creator string) token.MarketData {
	var top []decimal.Decimal
	groups := map[token.HolderGroup]stats.GroupTotal{}
	for w, b := range balances {
		if !b.IsPositive() {
			continue
		}
		top = append(top, b)
		for _, g := range stats.HolderGroupsOf(w, labels[w], creator, false) {
			t := groups[g]
			groups[g] = stats.GroupTotal{Holders: t.Holders + 1, Holdings: t.Holdings.Add(b)}
		}
	}
	return stats.HoldingsOf(topHoldings(top), int64(len(top)), groups, totalSupply)
}

// topHoldings sums the largest of balances, given in any order (ties do not change a sum).
func topHoldings(balances []decimal.Decimal) stats.TopHoldings {
	top := slices.Clone(balances)
	slices.SortFunc(top, func(a, b decimal.Decimal) int { return b.Cmp(a) })
	sum := func(n int) decimal.Decimal {
		s := decimal.Zero
		for _, b := range top[:min(n, len(top))] {
			s = s.Add(b)
		}
		return s
	}
	return stats.TopHoldings{Top10: sum(10), Top50: sum(50), Top100: sum(100)}
}
