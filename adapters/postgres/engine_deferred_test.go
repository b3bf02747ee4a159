package postgres

import (
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/trade"
)

func TestPendingFieldsRoundTrip(t *testing.T) {
	t.Parallel()
	ts := []trade.Trade{
		{Chain: chain.Sol, Wallet: "w1", TokenAddress: "tok", TransactionSignature: "sig-1", InstructionIndex: 3,
			BlockHeight: 123_456_789, BlockTimestamp: 1_700_000_000_123, Side: trade.Buy, Status: trade.Succeeded,
			TokenAmount: decimal.RequireFromString("12.500"), TokenAmountInUSD: decimal.RequireFromString("0.000000000000000001"),
			TokenPriceInUSD: decimal.RequireFromString("123456789012345678901234567890.123456")},
		{Chain: chain.Sol, Wallet: "", TokenAddress: "tök", TransactionSignature: "sig-2", InstructionIndex: -1,
			BlockHeight: 0, BlockTimestamp: -5, Side: trade.Sell, Status: trade.Failed,
			TokenAmount: decimal.Zero, TokenAmountInUSD: decimal.RequireFromString("7"), TokenPriceInUSD: decimal.RequireFromString("1e-30")},
	}
	ptrs := []*trade.Trade{&ts[0], &ts[1]}
	b := encodePending(ptrs)
	got, err := decodePending(nil, chain.Sol, b, len(ts))
	require.NoError(t, err)
	require.Len(t, got, 2)
	for i := range ts {
		assert.Equal(t, ts[i].Key(), got[i].Key())
		assert.Equal(t, ts[i].Wallet, got[i].Wallet)
		assert.Equal(t, ts[i].TokenAddress, got[i].TokenAddress)
		assert.Equal(t, ts[i].Side, got[i].Side)
		assert.Equal(t, ts[i].Status, got[i].Status)
		assert.Equal(t, ts[i].BlockHeight, got[i].BlockHeight)
		assert.Equal(t, ts[i].BlockTimestamp, got[i].BlockTimestamp)
		for j, pair := range [][2]decimal.Decimal{{ts[i].TokenAmount, got[i].TokenAmount},
			{ts[i].TokenAmountInUSD, got[i].TokenAmountInUSD}, {ts[i].TokenPriceInUSD, got[i].TokenPriceInUSD}} {
			assert.True(t, pair[0].Equal(pair[1]), "trade %d decimal %d: %s != %s", i, j, pair[0], pair[1])
			assert.Equal(t, pair[0].String(), pair[1].String())
		}
	}
	_, err = decodePending(nil, chain.Sol, b[:len(b)-3], len(ts))
	assert.Error(t, err, "a truncated list is refused")
	_, err = decodePending(nil, chain.Sol, append(b, 0), len(ts))
	assert.Error(t, err, "trailing bytes are refused")
}
