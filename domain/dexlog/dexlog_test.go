package dexlog_test

import (
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/domain/dexlog"
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

func trades(evs []chainevent.Event) []trade.Trade {
	var out []trade.Trade
	for _, e := range evs {
		if t, ok := e.(chainevent.Trade); ok {
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
	var types []chainevent.Type
	for _, e := range evs {
		types = append(types, e.Type())
	}
	assert.Equal(t, []chainevent.Type{
		chainevent.TypeTokenCreated, chainevent.TypeTokenCreated, chainevent.TypePoolCreated, chainevent.TypePoolSnapshot, // weth, usdc, stable pool
		chainevent.TypeTokenCreated, chainevent.TypePoolCreated, chainevent.TypePoolSnapshot, chainevent.TypePoolSnapshot, // tkn, its pool, blocks 11, 12
	}, types)
	tc := evs[4].(chainevent.TokenCreated)
	assert.Equal(t, "TKN", tc.Token.Symbol)
	assertDec(t, "2000000", tc.TotalSupply, "supply scaled by 9 decimals")
	pc := evs[5].(chainevent.PoolCreated)
	assert.Equal(t, tkn, pc.Pool.TokenAAddress, "the traded token is side A")
	assert.Equal(t, weth, pc.Pool.TokenBAddress)
	assert.Equal(t, int32(9), pc.Pool.TokenADecimals)
	s := evs[6].(chainevent.PoolSnapshot).Snapshot
	assert.Equal(t, int64(11), s.BlockHeight)
	assert.Equal(t, "1000000000000000", string(s.TokenA.VaultAmount), "the block's last Sync")
	assert.Equal(t, "500000000000000000000", string(s.TokenB.VaultAmount))
	assertDec(t, "0.0005", s.TokenA.PriceNative, "500 ETH / 1,000,000 TKN")
	assertDec(t, "1.5", s.TokenA.PriceUSD, "price usd")
	assertDec(t, "1000", s.TVLInNative, "tvl native")
	assertDec(t, "3000000", s.TVLInUSD, "tvl usd")
	ns := evs[3].(chainevent.PoolSnapshot).Snapshot
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

// q96 is 2^96: sqrtPriceX96 = √price · 2^96, price in smallest units of token1 per token0.
const q96 = "79228162514264337593543950336"

func sqrtX96(sqrtRaw int64) decimal.Decimal { return d(q96).Mul(decimal.NewFromInt(sqrtRaw)) }

func bal(b0, b1 string) *[2]decimal.Decimal { return &[2]decimal.Decimal{d(b0), d(b1)} }

// Hand-computed V3: the TKN/WETH pool (TKN token0, 9 decimals) at sqrtPriceX96 = 2000·2^96 is
// 2000² = 4,000,000 wei per smallest TKN unit, 4e6·10^(9−18) = 0.004 ETH per TKN, 12 USD with
// ETH at 3000. Holding 1000 TKN and 2 WETH, its sides are worth 4 and 2 ETH (12,000 and 6,000
// USD), TVL 6 ETH, 18,000 USD. A swap paying 0.41 WETH in (+) for 100 TKN out (−) is a BUY of
// 100 TKN for 1,230 USD, 12.3 USD and 0.0041 ETH per TKN.
func TestV3PoolsSnapshotTheirSqrtPriceAndSwapsAreTrades(t *testing.T) {
	m := newMapper()
	v3 := "0x0000000000000000000000000000000000000005"
	v3Factory := "0x00000000000000000000000000000000000000f3"
	evs := m.Map([]dexlog.Log{
		syncLog(9, 0, stablePool, "100000000000000000000", "300000000000"),
		{Block: block(10), Index: 0, Address: v3Factory,
			PoolCreated: &dexlog.PoolCreated{Pair: dexlog.Pair{Address: v3, Factory: v3Factory, Token0: tkn, Token1: weth}}},
		{Block: block(10), Index: 1, Address: v3, Initialize: &dexlog.Initialize{State: dexlog.V3State{SqrtPriceX96: sqrtX96(2000),
			Balances: bal("1000000000000", "2000000000000000000")}}},
		{Block: block(11), TxHash: "0xs", Index: 4, From: trader, Address: v3, SwapV3: &dexlog.SwapV3{Amount0: d("-100000000000"),
			Amount1: d("410000000000000000"), State: dexlog.V3State{SqrtPriceX96: sqrtX96(2000), Balances: bal("900000000000", "2410000000000000000")}}},
	})
	var pc chainevent.PoolCreated
	var snaps []chainevent.PoolSnapshot
	for _, e := range evs {
		require.NoError(t, e.Validate())
		switch v := e.(type) {
		case chainevent.PoolCreated:
			if v.Pool.Address == v3 {
				pc = v
			}
		case chainevent.PoolSnapshot:
			if v.Snapshot.PoolAddress == v3 {
				snaps = append(snaps, v)
			}
		}
	}
	assert.Equal(t, dexlog.FamilyV3, pc.Pool.ProtocolFamily)
	assert.Equal(t, dexlog.ProtocolV3, pc.Pool.ProtocolName)
	assert.Equal(t, v3Factory, pc.Pool.ProgramAddress)
	assert.Equal(t, tkn, pc.Pool.TokenAAddress)

	require.Len(t, snaps, 2, "one per block")
	s := snaps[0].Snapshot
	assert.Equal(t, int64(10), s.BlockHeight)
	assertDec(t, "0.004", s.TokenA.PriceNative, "tkn in eth")
	assertDec(t, "12", s.TokenA.PriceUSD, "tkn usd")
	assertDec(t, "4", s.TokenA.AmountInNative, "tkn side")
	assertDec(t, "12000", s.TokenA.AmountInUSD, "tkn side usd")
	assertDec(t, "2", s.TokenB.AmountInNative, "weth side")
	assertDec(t, "6", s.TVLInNative, "tvl native")
	assertDec(t, "18000", s.TVLInUSD, "tvl usd")
	assert.Equal(t, "1000000000000", string(s.TokenA.VaultAmount))
	assert.Equal(t, "2000000000000000000", string(s.TokenB.VaultAmount))
	assert.Equal(t, "900000000000", string(snaps[1].Snapshot.TokenA.VaultAmount), "the swap's block")

	ts := trades(evs)
	require.Len(t, ts, 1)
	tr := ts[0]
	assert.Equal(t, trade.Buy, tr.Side)
	assert.Equal(t, dexlog.FamilyV3, tr.DexProtocolFamily)
	assert.Equal(t, v3Factory, tr.DexProgramAddress)
	assert.Equal(t, "0xs", tr.TransactionSignature)
	assert.Equal(t, int32(4), tr.InstructionIndex)
	assert.Equal(t, trader, tr.Wallet)
	assertDec(t, "100", tr.TokenAmount, "tkn out")
	assertDec(t, "0.41", tr.SideTokenAmount, "weth in")
	assertDec(t, "1230", tr.TokenAmountInUSD, "usd")
	assertDec(t, "12.3", tr.TokenPriceInUSD, "price usd")
	assertDec(t, "0.0041", tr.TokenPriceInNative, "price native")
}

// A V3 native/stable pool prices the native token: USDC (6 decimals) is its token0, so
// sqrtPriceX96 = 20000·2^96 is 4e8 wei per smallest USDC unit, 4e8·10^(6−18) = 0.0004 ETH per
// USDC, ETH at 1 / 0.0004 = 2500 USD. A V3 sell of 100 TKN for 0.5 WETH is then 1,250 USD; with
// its balances unknown, the snapshot carries the price and zero values.
func TestAV3StablePoolPricesTheNativeToken(t *testing.T) {
	v3Stable := "0x0000000000000000000000000000000000000006"
	m := dexlog.NewMapper(dexlog.Config{Chain: chain.Eth, Native: weth, Stables: []string{usdc}, StablePool: v3Stable})
	m.AddToken(dexlog.Token{Address: weth, Name: "Wrapped Ether", Symbol: "WETH", Decimals: 18})
	m.AddToken(dexlog.Token{Address: usdc, Name: "USD Coin", Symbol: "USDC", Decimals: 6})
	m.AddToken(dexlog.Token{Address: tkn, Name: "Token", Symbol: "TKN", Decimals: 9})
	m.AddPair(dexlog.Pair{Address: v3Stable, Factory: factory, Token0: usdc, Token1: weth, Version: dexlog.V3})
	m.AddPair(dexlog.Pair{Address: tknPool, Factory: factory, Token0: tkn, Token1: weth, Version: dexlog.V3})
	m.SetV3Price(v3Stable, sqrtX96(20000))
	evs := m.Map([]dexlog.Log{{Block: block(11), TxHash: "0xs", Index: 0, From: trader, Address: tknPool,
		SwapV3: &dexlog.SwapV3{Amount0: d("100000000000"), Amount1: d("-500000000000000000"), State: dexlog.V3State{SqrtPriceX96: sqrtX96(2000)}}}})
	ts := trades(evs)
	require.Len(t, ts, 1)
	assert.Equal(t, trade.Sell, ts[0].Side)
	assertDec(t, "2500", ts[0].SideTokenPriceInUSD, "eth from the v3 stable pool")
	assertDec(t, "1250", ts[0].TokenAmountInUSD, "usd")
	snaps := 0
	for _, e := range evs {
		require.NoError(t, e.Validate())
		if s, ok := e.(chainevent.PoolSnapshot); ok {
			snaps++
			assertDec(t, "10", s.Snapshot.TokenA.PriceUSD, "0.004 ETH at 2500")
			assert.True(t, s.Snapshot.TVLInUSD.IsZero())
			assert.Equal(t, "0", string(s.Snapshot.TokenA.VaultAmount))
		}
	}
	assert.Equal(t, 1, snaps)
}
