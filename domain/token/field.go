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
	// FieldATHMarketCapInUSD is in the public SDK's TokenField. tokenscope keeps no all-time
	// high, so no token has data for it: it sorts every token last and matches no filter.
	FieldATHMarketCapInUSD Field = "marketData.athMarketCapInUsd"
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

// RankingFields is the public API's v2 TokenField, the sortBy/rangeFilters vocabulary of the
// ranking operation and of the v2 multi path: MultiFields with tvlInUsd replaced by
// maxPoolTvlInUsd and totalTvlInUsd, plus athMarketCapInUsd (which the public SDK adds).
var RankingFields = append(fieldList(FieldMaxPoolTVLInUSD, FieldTotalTVLInUSD), FieldATHMarketCapInUSD)

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

// valuer reads a field; ok is false when the token has no data for it.
type valuer func(Detail) (v decimal.Decimal, ok bool)

var valuers = buildValuers()

func buildValuers() map[Field]valuer {
	always := func(f func(Detail) decimal.Decimal) valuer {
		return func(d Detail) (decimal.Decimal, bool) { return f(d), true }
	}
	count := func(f func(Detail) int64) valuer {
		return func(d Detail) (decimal.Decimal, bool) { return decimal.NewFromInt(f(d)), true }
	}
	m := map[Field]valuer{
		FieldPriceInUSD:           always(func(d Detail) decimal.Decimal { return d.MarketData.PriceInUSD }),
		FieldMarketCapInUSD:       always(func(d Detail) decimal.Decimal { return d.MarketData.MarketCapInUSD }),
		FieldTVLInUSD:             always(func(d Detail) decimal.Decimal { return d.MarketData.TotalTVLInUSD }),
		FieldMaxPoolTVLInUSD:      always(func(d Detail) decimal.Decimal { return d.MarketData.MaxPoolTVLInUSD }),
		FieldTotalTVLInUSD:        always(func(d Detail) decimal.Decimal { return d.MarketData.TotalTVLInUSD }),
		FieldTop10TotalHoldings:   always(func(d Detail) decimal.Decimal { return d.MarketData.Top10.TotalHoldings }),
		FieldTop10HoldingsRatio:   always(func(d Detail) decimal.Decimal { return d.MarketData.Top10.HoldingsRatio }),
		FieldTop100TotalHoldings:  always(func(d Detail) decimal.Decimal { return d.MarketData.Top100.TotalHoldings }),
		FieldTop100HoldingsRatio:  always(func(d Detail) decimal.Decimal { return d.MarketData.Top100.HoldingsRatio }),
		FieldHolders:              always(func(d Detail) decimal.Decimal { return d.MarketData.Holders }),
		FieldCreatorHoldings:      always(func(d Detail) decimal.Decimal { return d.MarketData.CreatorHoldings() }),
		FieldCreatorHoldingsRatio: always(func(d Detail) decimal.Decimal { return d.MarketData.CreatorHoldingsRatio() }),
		FieldTokenCreatedAt: func(d Detail) (decimal.Decimal, bool) {
			if d.CreatedAt == nil {
				return decimal.Zero, false
			}
			return decimal.NewFromInt(*d.CreatedAt), true
		},
		FieldATHMarketCapInUSD: func(Detail) (decimal.Decimal, bool) { return decimal.Zero, false },
	}
	for _, w := range AllWindows {
		m[StatField(StatPriceChangeRatioInUSD, w)] = always(func(d Detail) decimal.Decimal { return d.Period(w).PriceChangeRatioInUSD })
		m[StatField(StatBuys, w)] = count(func(d Detail) int64 { return d.Period(w).Buys })
		m[StatField(StatSells, w)] = count(func(d Detail) int64 { return d.Period(w).Sells })
		m[StatField(StatTrades, w)] = count(func(d Detail) int64 { return d.Period(w).Trades })
		m[StatField(StatTraders, w)] = count(func(d Detail) int64 { return d.Period(w).Traders })
		m[StatField(StatVolumesInUSD, w)] = always(func(d Detail) decimal.Decimal { return d.Period(w).TotalVolumeInUSD })
	}
	return m
}

// Lookup reads field f of d; ok is false when d has no data for f: athMarketCapInUsd (never
// tracked), tokenCreatedAt of a token whose creation time is unknown, and a field outside the
// vocabulary (ParseField keeps those out of requests). A missing stats window reads as 0: no
// trades in it.
func Lookup(d Detail, f Field) (v decimal.Decimal, ok bool) {
	if get, known := valuers[f]; known {
		return get(d)
	}
	return decimal.Zero, false
}

// SortKey is one token's value of the sort field.
type SortKey struct {
	Value decimal.Decimal
	// Missing means the token has no data for the field.
	Missing bool
}

// KeyOf is d's sort key for f.
func KeyOf(d Detail, f Field) SortKey {
	v, ok := Lookup(d, f)
	return SortKey{Value: v, Missing: !ok}
}

// Compare orders k before (-1) or after (1) o in a sort that is descending when desc; a key
// without data comes after every key with data in both directions (like SQL's NULLS LAST), so
// a field nothing has data for leaves the tie-break order. Equal keys compare 0.
func (k SortKey) Compare(o SortKey, desc bool) int {
	switch {
	case k.Missing && o.Missing:
		return 0
	case k.Missing:
		return 1
	case o.Missing:
		return -1
	}
	c := k.Value.Cmp(o.Value)
	if desc {
		return -c
	}
	return c
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

// ParseUpperSortDirection is ParseSortDirection for operation 2, whose spec spells the values
// ASC and DESC: it reads the same values (case-insensitively), and its error lists them so.
func ParseUpperSortDirection(param, raw string) (bool, error) {
	desc, err := ParseSortDirection(param, raw)
	if err != nil {
		return false, fault.InvalidParam(param, raw, "ASC", "DESC")
	}
	return desc, nil
}

// SortDetails orders ds by f, tokens without data for f last (SortKey.Compare). Equal values
// are ordered by address ascending in both directions, so a ranking never reshuffles between
// identical requests.
func SortDetails(ds []Detail, f Field, desc bool) {
	keys := make([]SortKey, len(ds))
	idx := make([]int, len(ds))
	for i := range ds {
		keys[i] = KeyOf(ds[i], f)
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		i, j := idx[a], idx[b]
		if c := keys[i].Compare(keys[j], desc); c != 0 {
			return c < 0
		}
		return ds[i].Address < ds[j].Address
	})
	sorted := make([]Detail, len(ds))
	for k, i := range idx {
		sorted[k] = ds[i]
	}
	copy(ds, sorted)
}
