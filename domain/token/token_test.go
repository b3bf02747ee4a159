package token_test

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/token"
)

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func TestNewSocials(t *testing.T) {
	tests := []struct {
		name    string
		in      map[string]string
		want    map[string]string
		wantErr string
	}{
		{"spec keys kept", map[string]string{"twitter": "@x", "website": "https://x.io"},
			map[string]string{"twitter": "@x", "website": "https://x.io"}, ""},
		{"case and space folded", map[string]string{" Telegram ": " https://t.me/x "},
			map[string]string{"telegram": "https://t.me/x"}, ""},
		{"reddit is the spec's 'the service'", map[string]string{"reddit": "r/x"},
			map[string]string{"the service": "r/x"}, ""},
		{"blank link dropped", map[string]string{"discord": "  "}, map[string]string{}, ""},
		{"unknown key", map[string]string{"myspace": "x"}, nil, "myspace"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := token.NewSocials(tc.in)
			if tc.wantErr != "" {
				fe, ok := fault.As(err)
				require.True(t, ok)
				assert.Equal(t, "socialMedias", fe.Param)
				assert.Equal(t, tc.wantErr, fe.Value)
				assert.Len(t, fe.Allowed, 13)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, s.Map())
			assert.Equal(t, len(tc.want) > 0, s.Any())
		})
	}
}

func TestSocialsMapIsACopy(t *testing.T) {
	s, err := token.NewSocials(map[string]string{"twitter": "@x"})
	require.NoError(t, err)
	m := s.Map()
	m["twitter"] = "@changed"
	assert.Equal(t, "@x", s.Get("twitter"))
	assert.Equal(t, []string{"twitter"}, s.Keys())
}

func TestParseHolderGroup(t *testing.T) {
	g, err := token.ParseHolderGroup("group", "Sandwish")
	require.NoError(t, err)
	assert.Equal(t, token.Sandwish, g)
	assert.Len(t, token.AllHolderGroups, 9)

	_, err = token.ParseHolderGroup("group", "whale")
	fe, ok := fault.As(err)
	require.True(t, ok)
	assert.Equal(t, "group", fe.Param)
}

func TestWindow(t *testing.T) {
	tests := []struct {
		raw  string
		want token.Window
		dur  time.Duration
	}{
		{"1m", token.Window1m, time.Minute},
		{"5m", token.Window5m, 5 * time.Minute},
		{"15m", token.Window15m, 15 * time.Minute},
		{"30m", token.Window30m, 30 * time.Minute},
		{"1H", token.Window1h, time.Hour},
		{"4h", token.Window4h, 4 * time.Hour},
		{"24h", token.Window24h, 24 * time.Hour},
	}
	for _, tc := range tests {
		t.Run(tc.raw, func(t *testing.T) {
			w, err := token.ParseWindow("period", tc.raw)
			require.NoError(t, err)
			assert.Equal(t, tc.want, w)
			assert.Equal(t, tc.dur, w.Duration())
		})
	}
	_, err := token.ParseWindow("period", "6h")
	assert.True(t, fault.Is(err, fault.KindInvalid))
	assert.Equal(t, time.Duration(0), token.Window("6h").Duration())
}

func TestParseTag(t *testing.T) {
	// The spec's neutral words stand for the public API's launchpad ids, in RankingTag order.
	tests := []struct {
		in   string
		want token.Tag
	}{
		{"pump_fun", token.PumpFun}, {"alpha_fun", token.PumpFun}, {"Pump_Fun", token.PumpFun},
		{"raydium_launchpad", token.RaydiumLaunchpad}, {"beta_launchpad", token.RaydiumLaunchpad},
		{"meteora_dynamic_bounding_curve", token.MeteoraDynamicBondingCurve},
		{"GAMMA_DYNAMIC_BOUNDING_CURVE", token.MeteoraDynamicBondingCurve},
		{"bonk_fun", token.BonkFun}, {"delta_fun", token.BonkFun},
		{"moonit_fun", token.MoonitFun}, {" epsilon_fun ", token.MoonitFun},
		{"boop_fun", token.BoopFun},
	}
	for _, tc := range tests {
		got, err := token.ParseTag("tag", tc.in)
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
		assert.Equal(t, tc.want, token.CanonicalTag(tc.in), "stored %q reads as the id", tc.in)
	}

	_, err := token.ParseTag("tag", "pump")
	fe, ok := fault.As(err)
	require.True(t, ok)
	assert.Equal(t, "tag", fe.Param)
	assert.Equal(t, []string{"alpha_fun", "beta_launchpad", "gamma_dynamic_bounding_curve", "delta_fun", "epsilon_fun",
		"pump_fun", "raydium_launchpad", "meteora_dynamic_bounding_curve", "bonk_fun", "moonit_fun", "boop_fun"}, fe.Allowed)
	assert.Equal(t, token.Tag("someday_fun"), token.CanonicalTag("someday_fun"), "unknown stored values are kept")
}

func TestMarketDataCreatorIsDevGroup(t *testing.T) {
	m := token.MarketData{Groups: map[token.HolderGroup]token.GroupHolding{
		token.Dev: {TotalHolders: dec("1"), TotalHoldings: dec("250"), HoldingsRatio: dec("0.025")},
	}}
	assert.True(t, dec("250").Equal(m.CreatorHoldings()))
	assert.True(t, dec("0.025").Equal(m.CreatorHoldingsRatio()))
	assert.True(t, m.Group(token.Kol).TotalHoldings.IsZero())
}
