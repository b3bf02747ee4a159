package trade_test

import (
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/trade"
)

func TestParseSide(t *testing.T) {
	tests := []struct {
		raw     string
		want    trade.Side
		wantErr bool
	}{
		{"BUY", trade.Buy, false},
		{"sell", trade.Sell, false},
		{" Buy ", trade.Buy, false},
		{"HOLD", "", true},
		{"", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.raw, func(t *testing.T) {
			got, err := trade.ParseSide("type", tc.raw)
			if tc.wantErr {
				fe, ok := fault.As(err)
				require.True(t, ok)
				assert.Equal(t, "type", fe.Param)
				assert.Equal(t, []string{"BUY", "SELL"}, fe.Allowed)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func valid() trade.Trade {
	return trade.Trade{
		Chain: chain.Sol, TransactionSignature: "sig", InstructionIndex: 2, BlockHeight: 10, BlockTimestamp: 1717334400000,
		Wallet: "W", PoolAddress: "P", Side: trade.Buy, Status: trade.Succeeded,
		TokenAddress: "T", SideTokenAddress: "So111",
		TokenAmount: decimal.RequireFromString("5"), TokenAmountInUSD: decimal.RequireFromString("10"),
		TokenPriceInUSD: decimal.RequireFromString("2"),
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		edit   func(*trade.Trade)
		param  string
		isMiss bool
	}{
		{"valid", func(*trade.Trade) {}, "", false},
		{"chain outside v2", func(tr *trade.Trade) { tr.Chain = chain.Base }, "chain", false},
		{"no signature", func(tr *trade.Trade) { tr.TransactionSignature = " " }, "transactionSignature", true},
		{"no wallet", func(tr *trade.Trade) { tr.Wallet = "" }, "accountOwnerAddress", true},
		{"no token", func(tr *trade.Trade) { tr.TokenAddress = "" }, "tokenAddress", true},
		{"no status", func(tr *trade.Trade) { tr.Status = "" }, "status", true},
		{"bad side", func(tr *trade.Trade) { tr.Side = "SWAP" }, "type", false},
		{"negative instruction", func(tr *trade.Trade) { tr.InstructionIndex = -1 }, "instructionIndex", false},
		{"zero timestamp", func(tr *trade.Trade) { tr.BlockTimestamp = 0 }, "blockTimestamp", false},
		{"negative amount", func(tr *trade.Trade) { tr.TokenAmount = decimal.RequireFromString("-1") }, "tokenAmount", false},
		{"negative side price", func(tr *trade.Trade) { tr.SideTokenPriceInUSD = decimal.RequireFromString("-0.1") }, "sideTokenPriceInUsd", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := valid()
			tc.edit(&tr)
			err := tr.Validate()
			if tc.param == "" {
				require.NoError(t, err)
				return
			}
			fe, ok := fault.As(err)
			require.True(t, ok, "want fault, got %v", err)
			assert.Equal(t, fault.KindInvalid, fe.Kind)
			assert.Equal(t, tc.param, fe.Param)
			if tc.isMiss {
				assert.Equal(t, fault.CodeMissingParameter, fe.Code)
			}
		})
	}
}

func TestKey(t *testing.T) {
	a := valid()
	b := valid()
	b.TokenAmount = decimal.RequireFromString("99") // same instruction seen again with other data
	c := valid()
	c.InstructionIndex = 3
	assert.Equal(t, a.Key(), b.Key())
	assert.NotEqual(t, a.Key(), c.Key())
	assert.Equal(t, "sol:sig:2", a.Key().String())
}

func TestSorted(t *testing.T) {
	mk := func(name string, ts, h int64, sig string, ix int32) trade.Trade {
		return trade.Trade{TokenName: name, BlockTimestamp: ts, BlockHeight: h, TransactionSignature: sig, InstructionIndex: ix}
	}
	in := []trade.Trade{
		mk("e", 2000, 1, "a", 0),
		mk("d", 1000, 6, "a", 0),
		mk("c", 1000, 5, "b", 1),
		mk("b", 1000, 5, "b", 0),
		mk("a", 1000, 5, "a", 9),
	}
	// Time first (1000 before 2000), then height (5 before 6), then signature ("a" before "b"), then index.
	want := []string{"a", "b", "c", "d", "e"}
	got := trade.Sorted(in)
	names := make([]string, len(got))
	for i, tr := range got {
		names[i] = tr.TokenName
	}
	assert.Equal(t, want, names)
	assert.Equal(t, "e", in[0].TokenName, "input untouched")
}
