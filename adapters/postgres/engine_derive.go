package postgres

import (
	"encoding/json"
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/domain/stats"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/ports"
)

// The engine's pure steps: what it computes from the rows it read, with the formulas of
// domain/stats, before it writes. Nothing here talks to the database.

// batchWindowTargets lists, in order, the tokens of order whose windows the batch recomputes
// (windowed), each with the liquidity its windows carry: the total TVL of its pools just read.
func batchWindowTargets(order []ports.TokenRef, inputs map[ports.TokenRef]*marketInput,
	windowed map[ports.TokenRef]bool) ([]ports.TokenRef, map[ports.TokenRef]decimal.Decimal) {
	var refs []ports.TokenRef
	liquidity := map[ports.TokenRef]decimal.Decimal{}
	for _, ref := range order {
		if windowed[ref] {
			refs = append(refs, ref)
			liquidity[ref] = inputs[ref].sumTVLUSD
		}
	}
	return refs, liquidity
}

// dayWindows picks each token's 24h window out of windows.
func dayWindows(windows []windowStats) map[ports.TokenRef]token.PeriodStats {
	day := map[ports.TokenRef]token.PeriodStats{}
	for _, w := range windows {
		if w.window == token.Window24h {
			day[w.ref] = w.stats
		}
	}
	return day
}

// marketRow is the token_market row (marketColumns) of one token: price, supply and valuation
// (stats.PriceInSol, stats.MarketValues), the holder figures and groups of h (stats.HoldingsOf; nil
// is no holder), completion (stats.CompletionRatio, 1 once migrated), TVL, the last trade's time
// and the 24h figures of day (nil, for a token whose windows the batch did not recompute, writes
// NULL, which keeps the stored ones).
func marketRow(ref ports.TokenRef, in *marketInput, h *tokenHolders, solUSD decimal.Decimal, day *token.PeriodStats) ([]any, error) {
	if h == nil {
		h = &tokenHolders{}
	}
	md := stats.HoldingsOf(h.top, h.count, h.groups, in.total)
	priceSol := stats.PriceInSol(ref.Chain, in.priceNative, in.priceUSD, solUSD)
	v := stats.MarketValues(in.priceUSD, priceSol, in.total, in.circ)
	completion := stats.CompletionRatio(in.curveRes, in.target)
	if in.migrated {
		completion = decimal.NewFromInt(1)
	}
	groups, err := groupsJSON(md)
	if err != nil {
		return nil, err
	}
	var vol24 decimal.NullDecimal
	var trades24 *int64
	if day != nil {
		vol24, trades24 = decimal.NullDecimal{Decimal: day.TotalVolumeInUSD, Valid: true}, &day.Trades
	}
	dev := md.Group(token.Dev)
	return []any{string(ref.Chain), ref.Address, in.priceUSD, priceSol, in.total, in.circ, v.MarketCapInUSD,
		v.MarketCapInSol, v.FDVInUSD, v.FDVInSol, h.count, md.Top10.TotalHoldings, md.Top10.HoldingsRatio,
		md.Top50.TotalHoldings, md.Top50.HoldingsRatio, md.Top100.TotalHoldings, md.Top100.HoldingsRatio,
		dev.TotalHoldings, dev.HoldingsRatio, groups, completion, in.maxTVLUSD, in.maxTVLSol, in.sumTVLUSD,
		in.sumTVLSol, in.lastTrade, vol24, trades24}, nil
}

// groupsJSON is token_market.groups of md: every holder group's holders, holdings and ratio in the
// stored shape TokenDetails reads back (groupJSON).
func groupsJSON(md token.MarketData) (string, error) {
	gs := make(map[string]groupJSON, len(token.AllHolderGroups))
	for _, g := range token.AllHolderGroups {
		gh := md.Group(g)
		gs[string(g)] = groupJSON{Holders: gh.TotalHolders, Holdings: gh.TotalHoldings, Ratio: gh.HoldingsRatio}
	}
	b, err := json.Marshal(gs)
	if err != nil {
		return "", fmt.Errorf("market groups: %w", err)
	}
	return string(b), nil
}
