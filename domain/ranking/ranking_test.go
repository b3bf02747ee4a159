package ranking_test

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/ranking"
	"github.com/tokenscope/tokenscope/domain/token"
)

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func TestParseDuration(t *testing.T) {
	tests := []struct {
		raw    string
		want   ranking.Duration
		window token.Window
		length time.Duration
	}{
		{"1m", ranking.Duration1m, token.Window1m, time.Minute},
		{"5M", ranking.Duration5m, token.Window5m, 5 * time.Minute},
		{"1h", ranking.Duration1h, token.Window1h, time.Hour},
		{"4h", ranking.Duration4h, token.Window4h, 4 * time.Hour},
		{"24h", ranking.Duration24h, token.Window24h, 24 * time.Hour},
	}
	for _, tc := range tests {
		t.Run(tc.raw, func(t *testing.T) {
			d, err := ranking.ParseDuration("duration", tc.raw)
			require.NoError(t, err)
			assert.Equal(t, tc.want, d)
			assert.Equal(t, tc.window, d.Window())
			assert.Equal(t, tc.length, d.Duration())
		})
	}
	for _, bad := range []string{"15m", "6h", "1d", ""} {
		_, err := ranking.ParseDuration("duration", bad)
		fe, ok := fault.As(err)
		require.True(t, ok, bad)
		assert.Equal(t, []string{"1m", "5m", "1h", "4h", "24h"}, fe.Allowed)
	}
}

func TestScore(t *testing.T) {
	tests := []struct {
		name      string
		cur, prev ranking.Activity
		want      string
	}{
		{"no activity", ranking.Activity{}, ranking.Activity{}, "0"},
		{"went quiet", ranking.Activity{}, ranking.Activity{Buyers: 10, VolumeUSD: dec("1000"), Trades: 20}, "0"},
		{
			// buyers 10→20: 10/10 = 1; volume 1000→3000: 2000/1000 = 2; activity 30/(30+10) = 0.75.
			// 0.5×1 + 0.4×2 + 0.1×0.75 = 0.5 + 0.8 + 0.075 = 1.375.
			"growing",
			ranking.Activity{Buyers: 20, VolumeUSD: dec("3000"), Trades: 30},
			ranking.Activity{Buyers: 10, VolumeUSD: dec("1000"), Trades: 20},
			"1.375",
		},
		{
			// New token, floors apply: buyers 5/1 = 5; volume 50/100 = 0.5; activity 5/15 = 0.333333333333333333.
			// 2.5 + 0.2 + 0.0333333333333333333 = 2.7333333333333333333 → 18 places 2.733333333333333333.
			"brand new",
			ranking.Activity{Buyers: 5, VolumeUSD: dec("50"), Trades: 5},
			ranking.Activity{},
			"2.733333333333333333",
		},
		{
			// Falling buyers and volume count as 0 growth; activity 10/20 = 0.5 → 0.1×0.5 = 0.05.
			"cooling",
			ranking.Activity{Buyers: 5, VolumeUSD: dec("500"), Trades: 10},
			ranking.Activity{Buyers: 10, VolumeUSD: dec("1000"), Trades: 20},
			"0.05",
		},
		{
			// prev volume 50 is below the floor: (250−50)/100 = 2; buyers 0→1: 1/1 = 1;
			// activity 1/11 = 0.090909090909090909. 0.5 + 0.8 + 0.0090909090909090909 = 1.3090909090909090909
			// → 1.309090909090909091.
			"volume floor",
			ranking.Activity{Buyers: 1, VolumeUSD: dec("250"), Trades: 1},
			ranking.Activity{VolumeUSD: dec("50")},
			"1.309090909090909091",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, dec(tc.want).String(), ranking.Score(tc.cur, tc.prev).String())
		})
	}
}

func TestScoreOrdersActiveAboveDead(t *testing.T) {
	prev := ranking.Activity{Buyers: 100, VolumeUSD: dec("100000"), Trades: 500}
	cooling := ranking.Score(ranking.Activity{Buyers: 1, VolumeUSD: dec("1"), Trades: 1}, prev)
	dead := ranking.Score(ranking.Activity{}, prev)
	assert.True(t, cooling.GreaterThan(dead))
	assert.True(t, dead.IsZero())
}

func TestActivityOf(t *testing.T) {
	a := ranking.ActivityOf(token.PeriodStats{Buyers: 3, Trades: 9, TotalVolumeInUSD: dec("12.5"), BuyVolumeInUSD: dec("10")})
	assert.Equal(t, int64(3), a.Buyers)
	assert.Equal(t, int64(9), a.Trades)
	assert.Equal(t, "12.5", a.VolumeUSD.String())
}

func TestSortByScore(t *testing.T) {
	ds := []token.Detail{{Token: token.Token{Address: "C"}}, {Token: token.Token{Address: "B"}}, {Token: token.Token{Address: "A"}}, {Token: token.Token{Address: "D"}}}
	// B highest; A and C tie at 1 (A first by address); D has no score (0).
	ranking.SortByScore(ds, map[string]decimal.Decimal{"A": dec("1"), "B": dec("2.5"), "C": dec("1.0")})
	var got []string
	for _, d := range ds {
		got = append(got, d.Address)
	}
	assert.Equal(t, []string{"B", "A", "C", "D"}, got)
}

func TestKeywords(t *testing.T) {
	trump := token.Token{Name: "Official Trump", Symbol: "TRUMP"}
	doge := token.Token{Name: "Dogecoin", Symbol: "DOGE"}
	scam := token.Token{Name: "Totally not a SCAM", Symbol: "DOGESCAM"}
	tests := []struct {
		name            string
		search, exclude []string
		want            []bool // trump, doge, scam
	}{
		{"no keywords", nil, nil, []bool{true, true, true}},
		{"search by symbol, any case", []string{"trump"}, nil, []bool{true, false, false}},
		{"any search keyword suffices", []string{"trump", "doge"}, nil, []bool{true, true, true}},
		{"exclude by name", nil, []string{"Scam"}, []bool{true, true, false}},
		{"exclude wins over search", []string{"doge"}, []string{"scam"}, []bool{false, true, false}},
		{"blank keywords ignored", []string{" ", ""}, []string{""}, []bool{true, true, true}},
		{"substring of name", []string{"ecoi"}, nil, []bool{false, true, false}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k := ranking.NewKeywords(tc.search, tc.exclude)
			assert.Equal(t, tc.want, []bool{k.Matches(trump), k.Matches(doge), k.Matches(scam)})
		})
	}
}
