package token_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/token"
)

func TestParseFiltersValid(t *testing.T) {
	d := sampleDetail() // marketCap 500000, price 0.5, buys1h 12
	tests := []struct {
		name  string
		raw   string
		n     int
		match bool
	}{
		{"empty means none", "", 0, true},
		{"min as string, inclusive", `[{"field":"marketData.marketCapInUsd","min":"500000"}]`, 1, true},
		{"max as number, inclusive", `[{"field":"marketData.marketCapInUsd","max":500000}]`, 1, true},
		{"range excludes", `[{"field":"marketData.marketCapInUsd","min":"1","max":"499999.99"}]`, 1, false},
		{"null bound ignored", `[{"field":"marketData.priceInUsd","min":null,"max":"1"}]`, 1, true},
		{"single object", `{"field":"stats.buys1h","min":"12"}`, 1, true},
		{"gt false at equality", `[{"field":"stats.buys1h","operator":"gt","value":"12"}]`, 1, false},
		{"gte true at equality", `[{"field":"stats.buys1h","operator":"gte","value":12}]`, 1, true},
		{"lt", `[{"field":"marketData.priceInUsd","operator":"lt","value":"0.51"}]`, 1, true},
		{"lte", `[{"field":"marketData.priceInUsd","operator":"lte","value":"0.49"}]`, 1, false},
		{"eq ignores trailing zeros", `[{"field":"marketData.priceInUsd","operator":"EQ","value":"0.500"}]`, 1, true},
		{"ne", `[{"field":"marketData.priceInUsd","operator":"ne","value":"0.5"}]`, 1, false},
		{"all conditions AND-ed", `[{"field":"stats.buys1h","min":"1"},{"field":"marketData.priceInUsd","max":"0.1"}]`, 2, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs, err := token.ParseFilters("filterBy", tc.raw, token.MultiFields)
			require.NoError(t, err)
			assert.Len(t, fs, tc.n)
			assert.Equal(t, tc.match, token.MatchesAll(fs, d))
		})
	}
}

func TestParseFiltersInvalid(t *testing.T) {
	tests := []struct {
		name string
		raw  string
	}{
		{"bad json", `[{"field":`},
		{"not an array of objects", `["marketData.priceInUsd"]`},
		{"unknown field", `[{"field":"marketData.nope","min":"1"}]`},
		{"field of the other operation", `[{"field":"marketData.maxPoolTvlInUsd","min":"1"}]`},
		{"missing field", `[{"min":"1"}]`},
		{"unknown operator", `[{"field":"stats.buys1h","operator":"between","value":"1"}]`},
		{"operator without value", `[{"field":"stats.buys1h","operator":"gt"}]`},
		{"value without operator", `[{"field":"stats.buys1h","value":"1"}]`},
		{"both forms", `[{"field":"stats.buys1h","operator":"gt","value":"1","min":"2"}]`},
		{"no bound", `[{"field":"stats.buys1h"}]`},
		{"non-decimal bound", `[{"field":"stats.buys1h","min":"ten"}]`},
		{"boolean bound", `[{"field":"stats.buys1h","min":true}]`},
		{"min above max", `[{"field":"stats.buys1h","min":"5","max":"4"}]`},
		{"huge exponent", `[{"field":"stats.buys1h","min":"1e999999999"}]`},
		{"tiny exponent", `[{"field":"stats.buys1h","max":1e-999999999}]`},
		{"unknown key", `[{"field":"stats.buys1h","minimum":"5"}]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := token.ParseFilters("filterBy", tc.raw, token.MultiFields)
			fe, ok := fault.As(err)
			require.True(t, ok, "want fault, got %v", err)
			assert.Equal(t, fault.KindInvalid, fe.Kind)
			assert.Equal(t, "filterBy", fe.Param)
		})
	}
}

func TestSocialFilter(t *testing.T) {
	socials, err := token.NewSocials(map[string]string{"twitter": "@x", "reddit": "r/x"})
	require.NoError(t, err)
	withLinks := token.Token{Socials: socials}
	bare := token.Token{}
	tests := []struct {
		raw       string
		withLinks bool
		bare      bool
	}{
		{"has_social_media", true, false},
		{"has_twitter", true, false},
		{"HAS_REDDIT", true, false},
		{"has_telegram", false, false},
	}
	for _, tc := range tests {
		t.Run(tc.raw, func(t *testing.T) {
			f, err := token.ParseSocialFilter("filters", tc.raw)
			require.NoError(t, err)
			assert.Equal(t, tc.withLinks, f.Matches(withLinks))
			assert.Equal(t, tc.bare, f.Matches(bare))
		})
	}
	_, err = token.ParseSocialFilter("filters", "has_myspace")
	fe, ok := fault.As(err)
	require.True(t, ok)
	assert.Equal(t, "filters", fe.Param)
	assert.Len(t, fe.Allowed, 14)
}
