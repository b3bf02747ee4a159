// Package stats holds the pure derivations the ingest engine runs over trades and balances:
// per-window trade statistics, holder concentration and holder groups, market cap and FDV,
// bonding-curve completion, and the sniper and fresh-wallet rules. It may import only the
// standard library, github.com/shopspring/decimal and other domain packages.
package stats

import (
	"slices"
	"time"

	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/token"
)

// Scale is the number of decimal places kept by divisions (half-up rounding).
const Scale = 18

func div(a, b decimal.Decimal) decimal.Decimal {
	if b.IsZero() {
		return decimal.Zero
	}
	return a.DivRound(b, Scale)
}

// WindowStart is the first block time (Unix ms) window w holds at now: the first whole second
// after now − w for windows up to an hour, the first whole minute after it for longer ones. A
// window is whole buckets, so that time buckets (Bucket) sum to it exactly; it is at most a
// second (a minute for 4h and 24h) shorter than w.
func WindowStart(now time.Time, w token.Window) int64 {
	step := int64(windowStep(w))
	return floorTo(now.UnixMilli()-w.Duration().Milliseconds(), step) + step
}

// windowStep is what window w's start is a whole multiple of: a second for windows up to an hour,
// a minute for longer ones.
func windowStep(w token.Window) Resolution {
	if w.Duration() > time.Hour {
		return Minute
	}
	return Second
}

// SecondsKept is how far back from now per-second buckets are written and read: windows up to an
// hour start at a whole second, longer ones at a whole minute, so no window reads a second bucket
// older than an hour and a minute.
const SecondsKept = 2 * time.Hour

// floorTo rounds ms down to a multiple of step (step > 0), also for negative ms.
func floorTo(ms, step int64) int64 {
	q := ms / step
	if ms%step != 0 && ms < 0 {
		q--
	}
	return q * step
}

// HolderGroupsOf lists, once each, the groups of a holder: its labels, dev when it is the
// token's creator, sniper when sniped (IsSniper, decided by the caller).
func HolderGroupsOf(wallet string, labels []token.HolderGroup, creator string, sniped bool) []token.HolderGroup {
	out := make([]token.HolderGroup, 0, len(labels)+2)
	add := func(g token.HolderGroup) {
		if !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	for _, g := range labels {
		add(g)
	}
	if creator != "" && wallet == creator {
		add(token.Dev)
	}
	if sniped {
		add(token.Sniper)
	}
	return out
}

// GroupTotal is how many holders a group of a token has and what they hold together.
type GroupTotal struct {
	Holders  int64
	Holdings decimal.Decimal
}

// TopHoldings are the sums of a token's 10, 50 and 100 largest positive balances (of all of
// them when it has fewer holders).
type TopHoldings struct {
	Top10, Top50, Top100 decimal.Decimal
}

// HoldingsOf computes the holder fields of marketData from totals kept as balances change:
// top has the sums of the largest balances (the engine has Postgres sum them over the ordered
// holders index; reference.Holdings sums every balance in Go); holders is the number of holders; groups has each group's totals (a
// missing group has none). Every share is over totalSupply.
func HoldingsOf(top TopHoldings, holders int64, groups map[token.HolderGroup]GroupTotal, totalSupply decimal.Decimal) token.MarketData {
	topN := func(sum decimal.Decimal) token.TopHolding {
		return token.TopHolding{TotalHoldings: sum, HoldingsRatio: div(sum, totalSupply)}
	}
	out := make(map[token.HolderGroup]token.GroupHolding, len(token.AllHolderGroups))
	for _, g := range token.AllHolderGroups {
		t := groups[g]
		out[g] = token.GroupHolding{
			TotalHolders:  decimal.NewFromInt(t.Holders),
			TotalHoldings: t.Holdings,
			HoldingsRatio: div(t.Holdings, totalSupply),
		}
	}
	return token.MarketData{
		Groups:      out,
		Top10:       topN(top.Top10),
		Top50:       topN(top.Top50),
		Top100:      topN(top.Top100),
		Holders:     decimal.NewFromInt(holders),
		TotalSupply: totalSupply,
	}
}

// Values are the valuation fields of marketData.
type Values struct {
	MarketCapInUSD decimal.Decimal
	MarketCapInSol decimal.Decimal
	FDVInUSD       decimal.Decimal
	FDVInSol       decimal.Decimal
}

// MarketValues prices the supply: market cap = price × circulating supply, fully diluted value
// = price × total supply, each in USD and in SOL.
func MarketValues(priceInUSD, priceInSol, totalSupply, circulatingSupply decimal.Decimal) Values {
	return Values{
		MarketCapInUSD: priceInUSD.Mul(circulatingSupply),
		MarketCapInSol: priceInSol.Mul(circulatingSupply),
		FDVInUSD:       priceInUSD.Mul(totalSupply),
		FDVInSol:       priceInSol.Mul(totalSupply),
	}
}

// PriceInSol is a token's price in SOL: on Solana the native price of its trade, which is in SOL;
// on other chains its USD price over SOL's USD price (0 without one).
func PriceInSol(c chain.Chain, priceInNative, priceInUSD, solPriceInUSD decimal.Decimal) decimal.Decimal {
	if c == chain.Sol {
		return priceInNative
	}
	return div(priceInUSD, solPriceInUSD)
}

// CompletionRatio is how far a bonding curve is towards migration: reserve / target, capped at
// 1; 0 for a non-positive target or reserve.
func CompletionRatio(curveReserve, target decimal.Decimal) decimal.Decimal {
	if !target.IsPositive() || !curveReserve.IsPositive() {
		return decimal.Zero
	}
	return decimal.Min(div(curveReserve, target), decimal.NewFromInt(1))
}

// SniperBlocks is how many blocks after a token's creation block a first buy still counts as
// sniping.
const SniperBlocks = 3

// IsSniper reports whether a wallet whose first buy of a token landed at firstBuyHeight sniped a
// token created at createdHeight: the buy is in the creation block or one of the SniperBlocks
// blocks after it.
func IsSniper(createdHeight, firstBuyHeight int64) bool {
	d := firstBuyHeight - createdHeight
	return d >= 0 && d <= SniperBlocks
}

// FreshPeriod is how new a wallet may be at its first buy of a token to count as fresh.
const FreshPeriod = 24 * time.Hour
