package token_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/token"
)

func TestFieldLists(t *testing.T) {
	// 1 price + 5 price-change + 1 market cap + 1 tvl + 4 top + holders + 2 creator
	// + 7 buys + 7 sells + 5 trades + 5 traders + 5 volumes + tokenCreatedAt = 45.
	assert.Len(t, token.MultiFields, 45)
	// Ranking swaps the one tvl field for two and adds the SDK's athMarketCapInUsd: 47.
	assert.Len(t, token.RankingFields, 47)
	assert.Contains(t, token.RankingFields, token.Field("marketData.athMarketCapInUsd"))
	assert.NotContains(t, token.MultiFields, token.Field("marketData.athMarketCapInUsd"))
	assert.Contains(t, token.MultiFields, token.Field("marketData.tvlInUsd"))
	assert.NotContains(t, token.RankingFields, token.Field("marketData.tvlInUsd"))
	assert.Contains(t, token.RankingFields, token.Field("marketData.maxPoolTvlInUsd"))
	assert.Contains(t, token.RankingFields, token.Field("marketData.totalTvlInUsd"))
	assert.Contains(t, token.MultiFields, token.Field("stats.buys15m"))
	// trades/traders/volumes exist only for the five ranking durations.
	assert.NotContains(t, token.MultiFields, token.Field("stats.trades15m"))
	assert.NotContains(t, token.MultiFields, token.Field("stats.priceChangeRatioInUsd30m"))
	assert.Equal(t, token.Field("marketData.priceInUsd"), token.MultiFields[0])
	assert.Equal(t, token.Field("tokenCreatedAt"), token.MultiFields[44])
}

func TestParseField(t *testing.T) {
	tests := []struct {
		raw     string
		allowed []token.Field
		want    token.Field
		wantErr bool
	}{
		{"marketData.marketCapInUsd", token.MultiFields, token.FieldMarketCapInUSD, false},
		{"stats.volumesinusd1h", token.RankingFields, "stats.volumesInUsd1h", false},
		{"marketData.tvlInUsd", token.RankingFields, "", true},
		{"marketData.maxPoolTvlInUsd", token.MultiFields, "", true},
		{"price", token.MultiFields, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.raw, func(t *testing.T) {
			f, err := token.ParseField("sortBy", tc.raw, tc.allowed)
			if tc.wantErr {
				fe, ok := fault.As(err)
				require.True(t, ok)
				assert.Equal(t, "sortBy", fe.Param)
				assert.Len(t, fe.Allowed, len(tc.allowed))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, f)
		})
	}
}

func sampleDetail() token.Detail {
	created := int64(1710417600000)
	return token.Detail{
		Token: token.Token{Address: "A", CreatedAt: &created},
		MarketData: token.MarketData{
			PriceInUSD:      dec("0.5"),
			MarketCapInUSD:  dec("500000"),
			MaxPoolTVLInUSD: dec("1200"),
			TotalTVLInUSD:   dec("3400"),
			Holders:         dec("77"),
			Top10:           token.TopHolding{TotalHoldings: dec("900"), HoldingsRatio: dec("0.09")},
			Top100:          token.TopHolding{TotalHoldings: dec("4000"), HoldingsRatio: dec("0.4")},
			Groups: map[token.HolderGroup]token.GroupHolding{
				token.Dev: {TotalHoldings: dec("50"), HoldingsRatio: dec("0.005")},
			},
		},
		Stats: map[token.Window]token.PeriodStats{
			token.Window1h: {Buys: 12, Sells: 3, Trades: 15, Traders: 9, TotalVolumeInUSD: dec("880.5"), PriceChangeRatioInUSD: dec("-0.25")},
		},
	}
}

func TestValue(t *testing.T) {
	d := sampleDetail()
	tests := []struct {
		field token.Field
		want  string
	}{
		{"marketData.priceInUsd", "0.5"},
		{"marketData.marketCapInUsd", "500000"},
		{"marketData.tvlInUsd", "3400"}, // multi-detail tvl is the total across pools
		{"marketData.maxPoolTvlInUsd", "1200"},
		{"marketData.totalTvlInUsd", "3400"},
		{"marketData.holders", "77"},
		{"marketData.top10TotalHoldings", "900"},
		{"marketData.top10HoldingsRatio", "0.09"},
		{"marketData.top100TotalHoldings", "4000"},
		{"marketData.top100HoldingsRatio", "0.4"},
		{"marketData.creatorHoldings", "50"},
		{"marketData.creatorHoldingsRatio", "0.005"},
		{"stats.buys1h", "12"},
		{"stats.sells1h", "3"},
		{"stats.trades1h", "15"},
		{"stats.traders1h", "9"},
		{"stats.volumesInUsd1h", "880.5"},
		{"stats.priceChangeRatioInUsd1h", "-0.25"},
		{"stats.buys24h", "0"}, // window absent
		{"tokenCreatedAt", "1710417600000"},
		{"not.a.field", "0"},
	}
	for _, tc := range tests {
		t.Run(string(tc.field), func(t *testing.T) {
			got := token.Value(d, tc.field)
			assert.True(t, dec(tc.want).Equal(got), "got %s", got)
		})
	}
	assert.True(t, token.Value(token.Detail{}, token.FieldTokenCreatedAt).IsZero())
}

func TestParseSortDirection(t *testing.T) {
	tests := []struct {
		raw      string
		wantDesc bool
		wantErr  bool
	}{
		{"", true, false}, {"desc", true, false}, {"DESC", true, false}, {"Asc", false, false}, {"up", false, true},
	}
	for _, tc := range tests {
		t.Run(tc.raw, func(t *testing.T) {
			desc, err := token.ParseSortDirection("sortDirection", tc.raw)
			if tc.wantErr {
				assert.True(t, fault.Is(err, fault.KindInvalid))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.wantDesc, desc)
		})
	}
}

// TestParseUpperSortDirection: operation 2 reads the same values as the others, and a bad one
// names the spec's ASC and DESC.
func TestParseUpperSortDirection(t *testing.T) {
	for raw, wantDesc := range map[string]bool{"": true, "DESC": true, "desc": true, "ASC": false, "asc": false} {
		desc, err := token.ParseUpperSortDirection("sortDirection", raw)
		require.NoError(t, err, raw)
		assert.Equal(t, wantDesc, desc, raw)
	}
	_, err := token.ParseUpperSortDirection("sortDirection", "up")
	f, ok := fault.As(err)
	require.True(t, ok)
	assert.Equal(t, fault.KindInvalid, f.Kind)
	assert.Equal(t, []string{"ASC", "DESC"}, f.Allowed)
	assert.Contains(t, err.Error(), "ASC, DESC")
}

func TestSortDetails(t *testing.T) {
	mk := func(addr, price string) token.Detail {
		return token.Detail{Token: token.Token{Address: addr}, MarketData: token.MarketData{PriceInUSD: dec(price)}}
	}
	addrs := func(ds []token.Detail) []string {
		out := make([]string, len(ds))
		for i, d := range ds {
			out[i] = d.Address
		}
		return out
	}
	tests := []struct {
		name string
		desc bool
		want []string
	}{
		// Prices: C=3, A=1, D=2, B=1 (A and B tie, so A before B either way).
		{"descending", true, []string{"C", "D", "A", "B"}},
		{"ascending", false, []string{"A", "B", "D", "C"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ds := []token.Detail{mk("C", "3"), mk("B", "1.0"), mk("D", "2"), mk("A", "1")}
			token.SortDetails(ds, token.FieldPriceInUSD, tc.desc)
			assert.Equal(t, tc.want, addrs(ds))
		})
	}
}

// A field a token has no data for (athMarketCapInUsd for every token, tokenCreatedAt for a
// token without a creation time) sorts after every value in both directions, like SQL's
// NULLS LAST, and satisfies no filter condition.
func TestFieldWithoutDataSortsLastAndMatchesNothing(t *testing.T) {
	created := func(addr string, at *int64) token.Detail {
		return token.Detail{Token: token.Token{Address: addr, CreatedAt: at}}
	}
	one, two := int64(1), int64(2)
	addrs := func(ds []token.Detail) []string {
		out := make([]string, len(ds))
		for i, d := range ds {
			out[i] = d.Address
		}
		return out
	}
	for _, tc := range []struct {
		desc bool
		want []string
	}{
		{true, []string{"B", "A", "C", "D"}},
		{false, []string{"A", "B", "C", "D"}},
	} {
		ds := []token.Detail{created("D", nil), created("B", &two), created("C", nil), created("A", &one)}
		token.SortDetails(ds, token.FieldTokenCreatedAt, tc.desc)
		assert.Equal(t, tc.want, addrs(ds), "tokenCreatedAt desc=%v", tc.desc)

		ds = []token.Detail{created("D", nil), created("B", &two), created("C", nil), created("A", &one)}
		token.SortDetails(ds, token.FieldATHMarketCapInUSD, tc.desc)
		assert.Equal(t, []string{"A", "B", "C", "D"}, addrs(ds), "athMarketCapInUsd desc=%v: address order", tc.desc)
	}

	_, ok := token.Lookup(sampleDetail(), token.FieldATHMarketCapInUSD)
	assert.False(t, ok)
	v, ok := token.Lookup(sampleDetail(), token.FieldTokenCreatedAt)
	assert.True(t, ok)
	assert.True(t, dec("1710417600000").Equal(v))

	for _, raw := range []string{`{"field":"marketData.athMarketCapInUsd","min":"0"}`,
		`{"field":"marketData.athMarketCapInUsd","operator":"ne","value":"1"}`} {
		fs, err := token.ParseFilters("rangeFilters", raw, token.RankingFields)
		require.NoError(t, err)
		assert.False(t, token.MatchesAll(fs, sampleDetail()), raw)
	}
	fs, err := token.ParseFilters("rangeFilters", `{"field":"tokenCreatedAt","operator":"ne","value":"1"}`, token.RankingFields)
	require.NoError(t, err)
	assert.False(t, token.MatchesAll(fs, created("X", nil)), "unknown creation time")
	assert.True(t, token.MatchesAll(fs, created("X", &two)))
}
