package stream

import (
	"reflect"
	"slices"
	"strings"
	"testing"
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
