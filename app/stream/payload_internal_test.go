package stream

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"

	"github.com/tokenscope/tokenscope/domain/token"
)

// TestPayloadMembersAreInKeyOrder: each payload struct declares its members in the order of
// their keys, the order encoding/json wrote the maps the payloads were built from before, so a
// publication's bytes did not change with the types.
func TestPayloadMembersAreInKeyOrder(t *testing.T) {
	for _, v := range []any{tradeMsg{}, newTokenMsg{}, protocolMsg{}, poolBalanceMsg{}, holdingMsg{}, supplyMsg{},
		statNumMsg{}, maxLiquidityMsg{}, totalLiquidityMsg{}, walletBalanceMsg{}, walletTokenPnLMsg{}, walletPnLMsg{},
		rankStatsMsg{}, rankHoldingMsg{}, rankBondingCurveMsg{}, rankListMsg{}, rankHoldersMsg{}, rankTokenMsg{},
		rankPriceMsg{}, candleMsg{}} {
		ty := reflect.TypeOf(v)
		var keys []string
		for f := range ty.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" {
				t.Fatalf("%s.%s has no json key", ty.Name(), f.Name)
			}
			keys = append(keys, name)
		}
		if !slices.IsSorted(keys) {
			t.Errorf("%s declares its members as %v, not in key order", ty.Name(), keys)
		}
	}
}

// TestMaxLiquidityNamesItsPool: p is the largest pool's address, sent even when that address is
// empty (as the map-built payload sent "p":""), and left out only for a token without pools.
func TestMaxLiquidityNamesItsPool(t *testing.T) {
	usd := func(s string) decimal.Decimal { return decimal.RequireFromString(s) }
	d := token.Detail{Token: token.Token{Address: "tok"}}
	assert.Equal(t, `{"a":"tok","lin":"0","liu":"0","ts":7}`, string(encode(maxLiquidityMsgOf(d, 7))))

	d.Pools = []token.PoolLiquidity{{PoolAddress: "small", TVLInUSD: usd("1")}, {PoolAddress: "big", TVLInUSD: usd("5")}}
	assert.Equal(t, `{"a":"tok","lin":"0","liu":"0","p":"big","ts":7}`, string(encode(maxLiquidityMsgOf(d, 7))))

	d.Pools = []token.PoolLiquidity{{TVLInUSD: usd("1")}}
	assert.Equal(t, `{"a":"tok","lin":"0","liu":"0","p":"","ts":7}`, string(encode(maxLiquidityMsgOf(d, 7))))
}

// TestStatsMessageHasTheTokensWindows: a dex-token-stats message carries a, p and t and the
// twelve members of every window the token has stats of, named by the member and the window,
// and nothing of a window it has none of.
func TestStatsMessageHasTheTokensWindows(t *testing.T) {
	members := []string{"b", "s", "be", "se", "tr", "bviu", "sviu", "p", "oiu", "ciu", "liq", "pc"}
	d := token.Detail{Token: token.Token{Address: "tok"}, Stats: map[token.Window]token.PeriodStats{},
		Pools: []token.PoolLiquidity{{PoolAddress: "p1"}, {PoolAddress: "p2"}}}
	d.MarketData.PriceInUSD = decimal.RequireFromString("1.5")
	for i, w := range token.AllWindows {
		d.Stats[w] = token.PeriodStats{Buys: int64(i + 1), Sells: 2, Buyers: 3, Sellers: 4, Trades: 5,
			BuyVolumeInUSD: decimal.RequireFromString("6.25"), SellVolumeInUSD: decimal.RequireFromString("7"),
			OpenInUSD: decimal.RequireFromString("0.5"), CloseInUSD: decimal.RequireFromString("1.5"),
			CurrentLiquidityInUSD: decimal.RequireFromString("9")}
	}
	var got map[string]any
	d2 := json.NewDecoder(bytes.NewReader(encode(statsMsgOf(d, 7))))
	d2.UseNumber()
	assert.NoError(t, d2.Decode(&got))
	want := map[string]any{"a": "tok", "p": "1.5", "t": json.Number("7")}
	for i, w := range token.AllWindows {
		for _, m := range members {
			want[m+string(w)] = nil
		}
		sfx := string(w)
		want["b"+sfx], want["s"+sfx], want["be"+sfx], want["se"+sfx] = json.Number(fmt.Sprint(i+1)), json.Number("2"), json.Number("3"), json.Number("4")
		want["tr"+sfx], want["bviu"+sfx], want["sviu"+sfx], want["p"+sfx] = json.Number("5"), "6.25", "7", "1.5"
		want["oiu"+sfx], want["ciu"+sfx], want["liq"+sfx], want["pc"+sfx] = "0.5", "1.5", "9", json.Number("2")
	}
	assert.Equal(t, want, got)

	only := token.Detail{Token: token.Token{Address: "tok"}, Stats: map[token.Window]token.PeriodStats{token.Window1h: {Buys: 1}}}
	got = nil
	assert.NoError(t, json.Unmarshal(encode(statsMsgOf(only, 7)), &got))
	assert.Len(t, got, 3+len(members), "%v", got)
	assert.Contains(t, got, "b1h")
	assert.NotContains(t, got, "b1m")
}
