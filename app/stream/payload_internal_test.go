package stream

import (
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
