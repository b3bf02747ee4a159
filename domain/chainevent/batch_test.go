package chainevent_test

import (
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/domain/trade"
)

func d(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func sampleTrade() trade.Trade {
	return trade.Trade{Chain: chain.Sol, TransactionSignature: "sig1", InstructionIndex: 2, BlockHeight: 100, BlockSlot: 101,
		BlockTimestamp: 1_700_000_000_000, Wallet: "w1", PoolAddress: "p1", Side: trade.Buy, Status: trade.Succeeded,
		TokenAddress: "t1", TokenAmount: d("100"), TokenAmountInNative: d("0.5"), TokenAmountInUSD: d("100"),
		TokenPriceInNative: d("0.005"), TokenPriceInUSD: d("1"), SideTokenAddress: "So11", SideTokenAmount: d("0.5"),
		SideTokenAmountInNative: d("0.5"), SideTokenAmountInUSD: d("100"), SideTokenPriceInNative: d("1"),
		SideTokenPriceInUSD: d("200")}
}

func TestNewBatchDropsInBatchDuplicates(t *testing.T) {
	t1 := sampleTrade()
	t2 := sampleTrade()
	t2.TokenAmount = d("999") // same key, different body: the first one wins
	t3 := sampleTrade()
	t3.InstructionIndex = 3
	b := chainevent.NewBatch([]chainevent.Event{chainevent.Trade{Trade: t1}, chainevent.Trade{Trade: t2}, chainevent.Trade{Trade: t3},
		chainevent.WalletLabel{Chain: chain.Sol, Wallet: "w", Label: token.Kol}, chainevent.WalletLabel{Chain: chain.Sol, Wallet: "w", Label: token.Kol}})
	require.Len(t, b.Trades, 2)
	assert.True(t, b.Trades[0].TokenAmount.Equal(d("100")))
	assert.Len(t, b.Labels, 1)
	assert.Equal(t, 2, b.Duplicates)
	assert.Equal(t, 3, b.Len())
}
