package token

import (
	"sort"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/domain/fault"
)

// Field is a sortBy / filter field of the multi-detail (op 2) and ranking (op 9) operations.
// The names are the public API's flat v1 paths even where the v2 record nests them
// (stats.buys1h reads stats.periods["1h"].buys).
type Field string

const (
	FieldPriceInUSD     Field = "marketData.priceInUsd"
	FieldMarketCapInUSD Field = "marketData.marketCapInUsd"
	// FieldTVLInUSD is the multi-detail name for the token's total TVL across pools.
	FieldTVLInUSD             Field = "marketData.tvlInUsd"
	FieldMaxPoolTVLInUSD      Field = "marketData.maxPoolTvlInUsd"
	FieldTotalTVLInUSD        Field = "marketData.totalTvlInUsd"
	FieldTop10TotalHoldings   Field = "marketData.top10TotalHoldings"
	FieldTop10HoldingsRatio   Field = "marketData.top10HoldingsRatio"
	FieldTop100TotalHoldings  Field = "marketData.top100TotalHoldings"
	FieldTop100HoldingsRatio  Field = "marketData.top100HoldingsRatio"
	FieldHolders              Field = "marketData.holders"
	FieldCreatorHoldings      Field = "marketData.creatorHoldings"
	FieldCreatorHoldingsRatio Field = "marketData.creatorHoldingsRatio"
	FieldTokenCreatedAt       Field = "tokenCreatedAt"
)

// StatMetric is the part of a stats field before its window suffix.
type StatMetric string

const (
	StatPriceChangeRatioInUSD StatMetric = "priceChangeRatioInUsd"
	StatBuys                  StatMetric = "buys"
	StatSells                 StatMetric = "sells"
	StatTrades                StatMetric = "trades"
	StatTraders               StatMetric = "traders"
	// StatVolumesInUSD is the total USD volume of the window.
	StatVolumesInUSD StatMetric = "volumesInUsd"
)

// StatField names a per-window field, e.g. StatField(StatBuys, Window1h) = "stats.buys1h".
func StatField(m StatMetric, w Window) Field { return Field("stats." + string(m) + string(w)) }

func statFields(m StatMetric, ws ...Window) []Field {
	out := make([]Field, len(ws))
	for i, w := range ws {
		out[i] = StatField(m, w)
	}
	return out
}

func fieldList(tvl ...Field) []Field {
	five := []Window{Window1m, Window5m, Window1h, Window4h, Window24h}
	var fs []Field
	fs = append(fs, FieldPriceInUSD)
	fs = append(fs, statFields(StatPriceChangeRatioInUSD, five...)...)
	fs = append(fs, FieldMarketCapInUSD)
	fs = append(fs, tvl...)
	fs = append(fs, FieldTop10TotalHoldings, FieldTop10HoldingsRatio, FieldTop100TotalHoldings,
		FieldTop100HoldingsRatio, FieldHolders, FieldCreatorHoldings, FieldCreatorHoldingsRatio)
	fs = append(fs, statFields(StatBuys, AllWindows...)...)
	fs = append(fs, statFields(StatSells, AllWindows...)...)
	fs = append(fs, statFields(StatTrades, five...)...)
	fs = append(fs, statFields(StatTraders, five...)...)
	fs = append(fs, statFields(StatVolumesInUSD, five...)...)
	fs = append(fs, FieldTokenCreatedAt)
	return fs
}

// MultiFields is the sortBy/filterBy vocabulary of the multi-detail operation, in the spec's order.
var MultiFields = fieldList(FieldTVLInUSD)

// RankingFields is the sortBy/rangeFilters vocabulary of the ranking operation: MultiFields with
// tvlInUsd replaced by maxPoolTvlInUsd and totalTvlInUsd.
var RankingFields = fieldList(FieldMaxPoolTVLInUSD, FieldTotalTVLInUSD)

// ParseField accepts one of allowed, matching case-insensitively, and returns its canonical spelling.
func ParseField(param, s string, allowed []Field) (Field, error) {
	want := strings.TrimSpace(s)
	for _, f := range allowed {
		if strings.EqualFold(string(f), want) {
			return f, nil
		}
	}
	names := make([]string, len(allowed))
	for i, f := range allowed {
		names[i] = string(f)
	}
	return "", fault.InvalidParam(param, s, names...)
}

type valuer func(Detail) decimal.Decimal

var valuers = buildValuers()

func buildValuers() map[Field]valuer {
	m := map[Field]valuer{
		FieldPriceInUSD:           func(d Detail) decimal.Decimal { return d.MarketData.PriceInUSD },
		FieldMarketCapInUSD:       func(d Detail) decimal.Decimal { return d.MarketData.MarketCapInUSD },
		FieldTVLInUSD:             func(d Detail) decimal.Decimal { return d.MarketData.TotalTVLInUSD },
		FieldMaxPoolTVLInUSD:      func(d Detail) decimal.Decimal { return d.MarketData.MaxPoolTVLInUSD },
		FieldTotalTVLInUSD:        func(d Detail) decimal.Decimal { return d.MarketData.TotalTVLInUSD },
		FieldTop10TotalHoldings:   func(d Detail) decimal.Decimal { return d.MarketData.Top10.TotalHoldings },
		FieldTop10HoldingsRatio:   func(d Detail) decimal.Decimal { return d.MarketData.Top10.HoldingsRatio },
		FieldTop100TotalHoldings:  func(d Detail) decimal.Decimal { return d.MarketData.Top100.TotalHoldings },
		FieldTop100HoldingsRatio:  func(d Detail) decimal.Decimal { return d.MarketData.Top100.HoldingsRatio },
		FieldHolders:              func(d Detail) decimal.Decimal { return d.MarketData.Holders },
		FieldCreatorHoldings:      func(d Detail) decimal.Decimal { return d.MarketData.CreatorHoldings() },
		FieldCreatorHoldingsRatio: func(d Detail) decimal.Decimal { return d.MarketData.CreatorHoldingsRatio() },
		FieldTokenCreatedAt: func(d Detail) decimal.Decimal {
			if d.CreatedAt == nil {
				return decimal.Zero
			}
			return decimal.NewFromInt(*d.CreatedAt)
		},
	}
	for _, w := range AllWindows {
		m[StatField(StatPriceChangeRatioInUSD, w)] = func(d Detail) decimal.Decimal { return d.Period(w).PriceChangeRatioInUSD }
		m[StatField(StatBuys, w)] = func(d Detail) decimal.Decimal { return decimal.NewFromInt(d.Period(w).Buys) }
		m[StatField(StatSells, w)] = func(d Detail) decimal.Decimal { return decimal.NewFromInt(d.Period(w).Sells) }
		m[StatField(StatTrades, w)] = func(d Detail) decimal.Decimal { return decimal.NewFromInt(d.Period(w).Trades) }
		m[StatField(StatTraders, w)] = func(d Detail) decimal.Decimal { return decimal.NewFromInt(d.Period(w).Traders) }
		m[StatField(StatVolumesInUSD, w)] = func(d Detail) decimal.Decimal { return d.Period(w).TotalVolumeInUSD }
	}
	return m
}

// Value reads field f of d. Absent data (a missing stats window, no creation time) reads as 0,
// and so does a field outside the vocabulary; ParseField keeps those out of requests.
func Value(d Detail, f Field) decimal.Decimal {
	if v, ok := valuers[f]; ok {
		return v(d)
	}
	return decimal.Zero
}

// ParseSortDirection reads asc/desc case-insensitively; empty means desc, the default of both
// sorted operations. It returns true for descending.
func ParseSortDirection(param, raw string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(raw)) {
	case "", "desc":
		return true, nil
	case "asc":
		return false, nil
	}
	return false, fault.InvalidParam(param, raw, "asc", "desc")
}

// SortDetails orders ds by f. Equal values are ordered by address ascending in both directions,
// so a ranking never reshuffles between identical requests.
func SortDetails(ds []Detail, f Field, desc bool) {
	keys := make([]decimal.Decimal, len(ds))
	idx := make([]int, len(ds))
	for i := range ds {
		keys[i] = Value(ds[i], f)
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		i, j := idx[a], idx[b]
		if c := keys[i].Cmp(keys[j]); c != 0 {
			return (c > 0) == desc
		}
		return ds[i].Address < ds[j].Address
	})
	sorted := make([]Detail, len(ds))
	for k, i := range idx {
		sorted[k] = ds[i]
	}
	copy(ds, sorted)
}
