package evm_test

import (
	"context"
	"crypto/ecdsa"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/evm/evmtest"
	"github.com/tokenscope/tokenscope/adapters/postgres/pgtest"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/dexlog"
	"github.com/tokenscope/tokenscope/domain/trade"
	"github.com/tokenscope/tokenscope/ports"
)

// v3World is the standard market (its V2 WETH/USDC stable pool prices ETH at 3000) plus the
// real Uniswap V3 factory with two full-range pools: TKN/USDC at 1 USDC per TKN (1,000,000 of
// each) and TKN/WETH at 0.0004 WETH per TKN (1,000,000 TKN, 400 WETH).
type v3World struct {
	*world
	v3                *evmtest.V3
	tknUSDC3, tknETH3 common.Address
}

func newV3World(t *testing.T, wallets ...*ecdsa.PrivateKey) *v3World {
	w := &v3World{world: newWorld(t, wallets...)}
	w.v3 = evmtest.NewV3(t, w.Market, w.WETH)
	w.tknUSDC3 = w.v3.Pool(w.TKN, w.USDC, evmtest.Q96)
	// √(WETH per TKN) = √0.0004 = 1/50 with TKN as token0; √2500 = 50 the other way round.
	sqrt := new(big.Int).Div(evmtest.Q96, big.NewInt(50))
	if lower(w.WETH) < lower(w.TKN) {
		sqrt = new(big.Int).Mul(evmtest.Q96, big.NewInt(50))
	}
	w.tknETH3 = w.v3.Pool(w.TKN, w.WETH, sqrt)
	w.v3.Liquidity(w.tknUSDC3, units(1_000_000), units(1_000_000))
	t0, _ := w.v3.Tokens(w.tknETH3)
	if t0 == w.TKN {
		w.v3.Liquidity(w.tknETH3, units(1_000_000), units(400))
	} else {
		w.v3.Liquidity(w.tknETH3, units(400), units(1_000_000))
	}
	return w
}

// delta is what a wallet's balance of a token did across a change, in whole tokens.
type delta struct {
	w      *v3World
	k      *ecdsa.PrivateKey
	token  common.Address
	before *big.Int
}

func (w *v3World) watch(k *ecdsa.PrivateKey, token common.Address) delta {
	return delta{w: w, k: k, token: token, before: w.Balance(token, addr(k))}
}

func (d delta) got() decimal.Decimal {
	return whole(new(big.Int).Sub(d.w.Balance(d.token, addr(d.k)), d.before))
}

// priceOf is the price of base in the other token of a V3 pool from its sqrtPriceX96 now, as
// the pool's contract reports it, in whole tokens of 18 decimals both: sqrtP² / 2^192 (or its
// inverse), to 18 places.
func (w *v3World) priceOf(pool, base common.Address) decimal.Decimal {
	sp := w.v3.SqrtPrice(pool)
	num := new(big.Int).Mul(sp, sp)
	den := new(big.Int).Lsh(big.NewInt(1), 192)
	if t0, _ := w.v3.Tokens(pool); t0 != base {
		num, den = den, num
	}
	return decimal.NewFromBigInt(num, 0).DivRound(decimal.NewFromBigInt(den, 0), 18)
}

// Swaps through the real V3 router from three wallets across three blocks become trades whose
// amounts are the wallets' balance changes, valued through the stable quote (USDC at 1) or the
// V2 stable pool's ETH price (3000); the V3 pools and their tokens are announced with the V3
// factory as program; each pool's newest snapshot holds its token balances and the price its
// slot0 reports; the wallets' PnL is what their swaps made.
func TestFollowerWritesV3SwapsAsTrades(t *testing.T) {
	ka, kb, kc := newKey(t), newKey(t), newKey(t)
	w := newV3World(t, ka, kb, kc)
	eth := decimal.NewFromInt(3000)

	// Block S1: A buys TKN for 1000 USDC, B buys TKN for 1 WETH.
	aTKN, bTKN := w.watch(ka, w.TKN), w.watch(kb, w.TKN)
	aBuy := w.v3.Swap(ka, w.USDC, w.TKN, units(1000))
	bBuy := w.v3.Swap(kb, w.WETH, w.TKN, units(1))
	w.Commit()
	aGot, bGot := aTKN.got(), bTKN.got()
	require.True(t, aGot.IsPositive() && bGot.IsPositive())
	// Block S2: A sells all its TKN for USDC; C buys TKN for 2 WETH.
	aUSDC, cTKN := w.watch(ka, w.USDC), w.watch(kc, w.TKN)
	aSell := w.v3.Swap(ka, w.TKN, w.USDC, aGot.Shift(18).BigInt())
	cBuy := w.v3.Swap(kc, w.WETH, w.TKN, units(2))
	w.Commit()
	aProceeds, cGot := aUSDC.got(), cTKN.got()
	// Block S3: B sells all its TKN for WETH.
	bWETH := w.watch(kb, w.WETH)
	bSell := w.v3.Swap(kb, w.TKN, w.WETH, bGot.Shift(18).BigInt())
	w.Commit()
	bProceeds := bWETH.got()
	w.Commit()
	head := w.Commit()

	r := w.follow(t, w.activities(nil), 2, 50)
	assert.Equal(t, head.Number.Int64()-2, r.Block)

	tradeOf := func(tx *types.Transaction) trade.Trade {
		t.Helper()
		ts := w.trades(t, ports.TradeFilter{Signatures: []string{tx.Hash().Hex()}})
		require.Len(t, ts, 1, "swap %s stored once", tx.Hash().Hex())
		return ts[0]
	}
	for _, c := range []struct {
		name        string
		tx          *types.Transaction
		wallet      *ecdsa.PrivateKey
		pool        common.Address
		side        trade.Side
		amount, usd decimal.Decimal
		quote       common.Address
		quoteAmount decimal.Decimal
	}{
		{"A buy", aBuy, ka, w.tknUSDC3, trade.Buy, aGot, decimal.NewFromInt(1000), w.USDC, decimal.NewFromInt(1000)},
		{"B buy", bBuy, kb, w.tknETH3, trade.Buy, bGot, eth, w.WETH, decimal.NewFromInt(1)},
		{"A sell", aSell, ka, w.tknUSDC3, trade.Sell, aGot, aProceeds, w.USDC, aProceeds},
		{"C buy", cBuy, kc, w.tknETH3, trade.Buy, cGot, eth.Mul(decimal.NewFromInt(2)), w.WETH, decimal.NewFromInt(2)},
		{"B sell", bSell, kb, w.tknETH3, trade.Sell, bGot, bProceeds.Mul(eth), w.WETH, bProceeds},
	} {
		tr := tradeOf(c.tx)
		assert.Equal(t, c.side, tr.Side, c.name)
		assert.Equal(t, lower(addr(c.wallet)), tr.Wallet, "%s: the transaction's sender, not the router", c.name)
		assert.Equal(t, lower(c.pool), tr.PoolAddress, c.name)
		assert.Equal(t, lower(w.TKN), tr.TokenAddress, c.name)
		assert.Equal(t, lower(c.quote), tr.SideTokenAddress, c.name)
		assert.Equal(t, dexlog.FamilyV3, tr.DexProtocolFamily, c.name)
		assert.Equal(t, lower(w.v3.Factory), tr.DexProgramAddress, c.name)
		assertDec(t, c.amount, tr.TokenAmount, c.name+" amount")
		assertDec(t, c.quoteAmount, tr.SideTokenAmount, c.name+" quote amount")
		assertDec(t, c.usd, tr.TokenAmountInUSD, c.name+" usd")
		assertDec(t, c.usd.DivRound(c.amount, 18), tr.TokenPriceInUSD, c.name+" price")
	}

	pnl := func(k *ecdsa.PrivateKey) ports.PricedPosition {
		ps, err := w.reader.PricedPositions(context.Background(), chain.Eth, lower(addr(k)), []string{lower(w.TKN)}, nil)
		require.NoError(t, err)
		require.Len(t, ps, 1)
		return ps[0]
	}
	pa := pnl(ka)
	assertDec(t, aProceeds.Sub(decimal.NewFromInt(1000)), pa.Position.RealizedProfitInUSD, "A realized")
	assert.True(t, pa.Position.Balance.IsZero())
	pb := pnl(kb)
	assertDec(t, bProceeds.Mul(eth).Sub(eth), pb.Position.RealizedProfitInUSD, "B realized")
	pc := pnl(kc)
	assertDec(t, cGot, pc.Position.Balance, "C holds what it bought")
	assertDec(t, decimal.NewFromInt(6000), pc.Position.CostInUSD, "C's cost: 2 WETH at 3000")

	for _, c := range []struct {
		pool  common.Address
		quote common.Address
		qUSD  decimal.Decimal
	}{{w.tknUSDC3, w.USDC, decimal.NewFromInt(1)}, {w.tknETH3, w.WETH, eth}} {
		snaps, err := w.reader.ListSnapshots(context.Background(), chain.Eth, lower(c.pool), nil, ports.PageRequest{Limit: 1})
		require.NoError(t, err)
		require.NotEmpty(t, snaps.Items)
		s := snaps.Items[0]
		assert.Equal(t, lower(w.TKN), s.TokenA.TokenAddress)
		assert.Equal(t, w.Balance(w.TKN, c.pool).String(), string(s.TokenA.VaultAmount), "TKN held by the pool")
		assert.Equal(t, w.Balance(c.quote, c.pool).String(), string(s.TokenB.VaultAmount), "quote held by the pool")
		price := w.priceOf(c.pool, w.TKN)
		assertDec(t, price.Mul(c.qUSD), s.TokenA.PriceUSD, "TKN price from slot0")
		tvl := whole(w.Balance(w.TKN, c.pool)).Mul(price.Mul(c.qUSD)).Round(18).Add(whole(w.Balance(c.quote, c.pool)).Mul(c.qUSD))
		assertDec(t, tvl, s.TVLInUSD, "tvl: both balances at the pool's price, to 18 places")
	}
	var family, program string
	require.NoError(t, pgtest.Pool(t).QueryRow(context.Background(),
		"SELECT protocol_family, program_address FROM pools WHERE chain = 'eth' AND address = $1", lower(w.tknETH3)).Scan(&family, &program))
	assert.Equal(t, dexlog.FamilyV3, family)
	assert.Equal(t, lower(w.v3.Factory), program)
}
