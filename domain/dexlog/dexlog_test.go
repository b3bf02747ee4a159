package dexlog_test

import (
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/dexlog"
	"github.com/tokenscope/tokenscope/domain/ingest"
	"github.com/tokenscope/tokenscope/domain/trade"
)

const (
	weth    = "0x00000000000000000000000000000000000000e1"
	usdc    = "0x00000000000000000000000000000000000000c6"
	tkn     = "0x00000000000000000000000000000000000000a9"
	xyz     = "0x00000000000000000000000000000000000000b1"
	factory = "0x00000000000000000000000000000000000000f0"
	// pools: WETH/USDC (the stable pool), TKN/WETH, USDC/XYZ, TKN/XYZ (no price path)
	stablePool = "0x0000000000000000000000000000000000000001"
	tknPool    = "0x0000000000000000000000000000000000000002"
	xyzPool    = "0x0000000000000000000000000000000000000003"
	barePool   = "0x0000000000000000000000000000000000000004"
	trader     = "0x00000000000000000000000000000000000000aa"
)

func d(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func newMapper() *dexlog.Mapper {
	m := dexlog.NewMapper(dexlog.Config{Chain: chain.Eth, Native: weth, Stables: []string{usdc}, StablePool: stablePool})
	m.AddToken(dexlog.Token{Address: weth, Name: "Wrapped Ether", Symbol: "WETH", Decimals: 18, TotalSupply: d("1000000000000000000000")})
	m.AddToken(dexlog.Token{Address: usdc, Name: "USD Coin", Symbol: "USDC", Decimals: 6, TotalSupply: d("5000000000000")})
	m.AddToken(dexlog.Token{Address: tkn, Name: "Token", Symbol: "TKN", Decimals: 9, TotalSupply: d("2000000000000000")})
	m.AddToken(dexlog.Token{Address: xyz, Name: "Xyz", Symbol: "XYZ", Decimals: 18, TotalSupply: d("1000000000000000000000000")})
	m.AddPair(dexlog.Pair{Address: stablePool, Factory: factory, Token0: weth, Token1: usdc})
	m.AddPair(dexlog.Pair{Address: tknPool, Factory: factory, Token0: tkn, Token1: weth})
	m.AddPair(dexlog.Pair{Address: xyzPool, Factory: factory, Token0: usdc, Token1: xyz})
	m.AddPair(dexlog.Pair{Address: barePool, Factory: factory, Token0: tkn, Token1: xyz})
	return m
}

func block(n int64) dexlog.Block {
	return dexlog.Block{Number: n, Hash: "0xb", Time: 1_700_000_000_000 + n*12_000}
}

func syncLog(n int64, idx int32, pool, r0, r1 string) dexlog.Log {
	return dexlog.Log{Block: block(n), TxHash: "0xt", Index: idx, Address: pool, Sync: &dexlog.Sync{Reserve0: d(r0), Reserve1: d(r1)}}
}

func swapLog(n int64, idx int32, pool, in0, in1, out0, out1 string) dexlog.Log {
	return dexlog.Log{Block: block(n), TxHash: "0xT", Index: idx, From: "0x00000000000000000000000000000000000000AA", Address: pool,
		Swap: &dexlog.Swap{Amount0In: d(in0), Amount1In: d(in1), Amount0Out: d(out0), Amount1Out: d(out1)}}
}

func trades(evs []ingest.Event) []trade.Trade {
	var out []trade.Trade
	for _, e := range evs {
		if t, ok := e.(ingest.Trade); ok {
			out = append(out, t.Trade)
		}
	}
	return out
}

func assertDec(t *testing.T, want string, got decimal.Decimal, what string) {
	t.Helper()
	assert.True(t, d(want).Equal(got), "%s: want %s, got %s", what, want, got)
}

// Hand-computed: the stable pool at 100 WETH / 300,000 USDC prices ETH at 3000 USD. A buy of
// 1000 TKN (9 decimals) for 0.5 WETH is 1500 USD at 1.5 USD and 0.0005 ETH per TKN; a sell of
// 400 TKN for 0.3 WETH is 900 USD at 2.25 USD.
func TestSwapsInANativePoolArePricedThroughTheStablePool(t *testing.T) {
	m := newMapper()
	evs := m.Map([]dexlog.Log{
		syncLog(10, 0, stablePool, "100000000000000000000", "300000000000"),
		swapLog(11, 3, tknPool, "0", "500000000000000000", "1000000000000", "0"),
		swapLog(12, 1, tknPool, "400000000000", "0", "0", "300000000000000000"),
	})
	ts := trades(evs)
	require.Len(t, ts, 2)
	buy, sell := ts[0], ts[1]
	assert.Equal(t, trade.Buy, buy.Side)
	assert.Equal(t, tkn, buy.TokenAddress)
	assert.Equal(t, weth, buy.SideTokenAddress)
	assert.Equal(t, trader, buy.Wallet, "the sender, lower case")
	assert.Equal(t, tknPool, buy.PoolAddress)
	assert.Equal(t, int32(3), buy.InstructionIndex, "the log index")
	assert.Equal(t, "0xt", buy.TransactionSignature)
	assert.Equal(t, int64(11), buy.BlockHeight)
	assert.Equal(t, int64(1_700_000_132_000), buy.BlockTimestamp)
	assert.Equal(t, dexlog.Family, buy.DexProtocolFamily)
	assert.Equal(t, factory, buy.DexProgramAddress)
	assertDec(t, "1000", buy.TokenAmount, "buy amount")
	assertDec(t, "0.5", buy.SideTokenAmount, "buy side amount")
	assertDec(t, "1500", buy.TokenAmountInUSD, "buy usd")
	assertDec(t, "0.5", buy.TokenAmountInNative, "buy native")
	assertDec(t, "1.5", buy.TokenPriceInUSD, "buy price usd")
	assertDec(t, "0.0005", buy.TokenPriceInNative, "buy price native")
	assertDec(t, "3000", buy.SideTokenPriceInUSD, "weth usd")
	assertDec(t, "1", buy.SideTokenPriceInNative, "weth native")

	assert.Equal(t, trade.Sell, sell.Side)
	assertDec(t, "400", sell.TokenAmount, "sell amount")
	assertDec(t, "0.3", sell.SideTokenAmount, "sell side amount")
	assertDec(t, "900", sell.TokenAmountInUSD, "sell usd")
	assertDec(t, "2.25", sell.TokenPriceInUSD, "sell price usd")
	for _, e := range evs {
		require.NoError(t, e.Validate())
	}
}

// A stable-quoted pool (USDC is token0 here) values the trade at its USDC amount; its native
// price divides by the ETH price: 1/3000 to 18 places.
func TestSwapsInAStablePoolAreWorthTheirStableAmount(t *testing.T) {
	m := newMapper()
	ts := trades(m.Map([]dexlog.Log{
		syncLog(10, 0, stablePool, "100000000000000000000", "300000000000"),
		swapLog(11, 0, xyzPool, "100000000", "0", "0", "50000000000000000000"),
	}))
	require.Len(t, ts, 1)
	tr := ts[0]
	assert.Equal(t, trade.Buy, tr.Side)
	assert.Equal(t, xyz, tr.TokenAddress)
	assert.Equal(t, usdc, tr.SideTokenAddress)
	assertDec(t, "50", tr.TokenAmount, "amount")
	assertDec(t, "100", tr.SideTokenAmount, "usdc amount")
	assertDec(t, "100", tr.TokenAmountInUSD, "usd")
	assertDec(t, "2", tr.TokenPriceInUSD, "price usd")
	assertDec(t, "0.000333333333333333", tr.SideTokenPriceInNative, "usdc in eth")
	assertDec(t, "0.0333333333333333", tr.TokenAmountInNative, "native amount")
	assertDec(t, "0.000666666666666666", tr.TokenPriceInNative, "price native")
}

// Without a native or stable side, or before the ETH price is known, the amounts are stored and
// the values are zero (docs/engine.md: no price path).
func TestSwapsWithoutAPricePathKeepAmountsOnly(t *testing.T) {
	m := newMapper()
	ts := trades(m.Map([]dexlog.Log{
		swapLog(11, 0, barePool, "0", "7000000000000000000", "2000000000", "0"),
		swapLog(11, 1, tknPool, "0", "500000000000000000", "1000000000000", "0"),
	}))
	require.Len(t, ts, 2)
	assert.Equal(t, tkn, ts[0].TokenAddress)
	assert.Equal(t, xyz, ts[0].SideTokenAddress)
	assertDec(t, "2", ts[0].TokenAmount, "amount")
	assertDec(t, "7", ts[0].SideTokenAmount, "side amount")
	for _, tr := range ts {
		assert.True(t, tr.TokenAmountInUSD.IsZero() && tr.TokenPriceInUSD.IsZero(), "no usd value: %v", tr.TokenAmountInUSD)
	}
	assertDec(t, "0.0005", ts[1].TokenPriceInNative, "the native price needs no usd")
}

// Each pair and token is announced once, before its first trade or snapshot; two Syncs of one
// pair in one block make one snapshot, the last; the snapshot prices the base at the reserves.
func TestSnapshotsAndAnnouncements(t *testing.T) {
	m := newMapper()
	evs := m.Map([]dexlog.Log{
		syncLog(10, 0, stablePool, "100000000000000000000", "300000000000"),
		syncLog(11, 0, tknPool, "999000000000000", "400000000000000000000"),
		syncLog(11, 2, tknPool, "1000000000000000", "500000000000000000000"),
		syncLog(12, 0, tknPool, "1000000000000000", "500000000000000000000"),
	})
	var types []ingest.Type
	for _, e := range evs {
		types = append(types, e.Type())
	}
	assert.Equal(t, []ingest.Type{
		ingest.TypeTokenCreated, ingest.TypeTokenCreated, ingest.TypePoolCreated, ingest.TypePoolSnapshot, // weth, usdc, stable pool
		ingest.TypeTokenCreated, ingest.TypePoolCreated, ingest.TypePoolSnapshot, ingest.TypePoolSnapshot, // tkn, its pool, blocks 11, 12
	}, types)
	tc := evs[4].(ingest.TokenCreated)
	assert.Equal(t, "TKN", tc.Token.Symbol)
	assertDec(t, "2000000", tc.TotalSupply, "supply scaled by 9 decimals")
	pc := evs[5].(ingest.PoolCreated)
	assert.Equal(t, tkn, pc.Pool.TokenAAddress, "the traded token is side A")
	assert.Equal(t, weth, pc.Pool.TokenBAddress)
	assert.Equal(t, int32(9), pc.Pool.TokenADecimals)
	s := evs[6].(ingest.PoolSnapshot).Snapshot
	assert.Equal(t, int64(11), s.BlockHeight)
	assert.Equal(t, "1000000000000000", string(s.TokenA.VaultAmount), "the block's last Sync")
	assert.Equal(t, "500000000000000000000", string(s.TokenB.VaultAmount))
	assertDec(t, "0.0005", s.TokenA.PriceNative, "500 ETH / 1,000,000 TKN")
	assertDec(t, "1.5", s.TokenA.PriceUSD, "price usd")
	assertDec(t, "1000", s.TVLInNative, "tvl native")
	assertDec(t, "3000000", s.TVLInUSD, "tvl usd")
	ns := evs[3].(ingest.PoolSnapshot).Snapshot
	assert.Equal(t, weth, ns.TokenA.TokenAddress, "a native/stable pool trades native")
	assertDec(t, "3000", ns.TokenA.PriceUSD, "eth")
	for _, e := range evs {
		require.NoError(t, e.Validate())
	}
}

// Logs of a contract the mapper was not taught are skipped; a forgotten native price leaves the
// next trade without USD until the stable pool's reserves are known again.
func TestUnknownPairsAndForgottenPrices(t *testing.T) {
	m := newMapper()
	assert.Empty(t, m.Map([]dexlog.Log{swapLog(11, 0, "0x0000000000000000000000000000000000000099", "1", "0", "0", "1")}))
	m.SetReserves(stablePool, d("1000000000000000000"), d("2000000000"))
	ts := trades(m.Map([]dexlog.Log{swapLog(11, 1, tknPool, "0", "1000000000000000000", "1000000000", "0")}))
	require.Len(t, ts, 1)
	assertDec(t, "2000", ts[0].TokenAmountInUSD, "1 ETH at 2000 from SetReserves")
	m.ForgetNativePrice()
	ts = trades(m.Map([]dexlog.Log{swapLog(12, 1, tknPool, "0", "1000000000000000000", "1000000000", "0")}))
	require.Len(t, ts, 1)
	assert.True(t, ts[0].TokenAmountInUSD.IsZero())
}
