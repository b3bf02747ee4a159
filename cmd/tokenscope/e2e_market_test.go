package main

// End-to-end tests of the read API (operations 1–9): data goes in through the ingest use case
// (and the ranking through the MarketRefresher port), answers come back over HTTP and are
// checked field by field against the spec's JSON types.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/domain/page"
	"github.com/tokenscope/tokenscope/domain/pool"
	"github.com/tokenscope/tokenscope/domain/ranking"
	"github.com/tokenscope/tokenscope/domain/redpacket"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/domain/trade"
	"github.com/tokenscope/tokenscope/ports"
)

// JSON types of every record, from the spec's field tables. "decimal" is a string holding a
// decimal number, "count" a string holding an integer, "integer" a JSON number without a
// fraction; "|null" allows null.
var (
	typesPage = map[string]string{"data": "array", "startCursor": "string|null", "endCursor": "string|null",
		"hasNext": "boolean", "hasPrev": "boolean"}
	typesRedPacketPage = map[string]string{"records": "array", "hasNextPage": "boolean", "total": "integer",
		"startCursor": "string|null", "endCursor": "string|null"}
	typesTrade = map[string]string{
		"accountOwnerAddress": "string", "blockHeight": "integer", "blockTimestamp": "integer", "chain": "string",
		"poolAddress": "string", "tokenAddress": "string", "tokenName": "string", "tokenSymbol": "string",
		"tokenImageUrl": "string", "tokenAmount": "decimal", "tokenAmountInNative": "decimal", "tokenAmountInUsd": "decimal",
		"tokenPriceInNative": "decimal", "tokenPriceInUsd": "decimal", "sideTokenAddress": "string", "sideTokenName": "string",
		"sideTokenSymbol": "string", "sideTokenImageUrl": "string", "sideTokenAmount": "decimal",
		"sideTokenAmountInNative": "decimal", "sideTokenAmountInUsd": "decimal", "sideTokenPriceInNative": "decimal",
		"sideTokenPriceInUsd": "decimal", "status": "string", "transactionSignature": "string", "type": "string",
		"dexImage": "string", "dexProgramAddress": "string", "dexProtocolFamily": "string",
	}
	typesSnapshot = map[string]string{"blockHeight": "integer", "blockSlot": "integer|null", "blockTimestamp": "integer",
		"snapshotTime": "integer", "poolAddress": "string", "tokenA": "object", "tokenB": "object", "tvlInNative": "decimal",
		"tvlInUsd": "decimal"}
	typesPoolSide = map[string]string{"amountInNative": "decimal", "amountInUsd": "decimal", "decimals": "integer",
		"priceNative": "decimal", "priceUsd": "decimal", "tokenAddress": "string", "vaultAmount": "count"}
	typesRedPacket = map[string]string{"id": "string", "creator": "string", "claimAuthority": "string", "mint": "string",
		"chain": "string", "maxClaims": "integer", "claimedCount": "integer", "totalAmount": "count", "claimedAmount": "count",
		"refundedAmount": "count", "createdAt": "integer", "expiredAt": "integer", "expiration": "integer", "expired": "boolean",
		"memo": "string", "shareId": "string", "txHash": "string"}
	typesClaim = map[string]string{"amount": "count", "claimer": "string", "mint": "string", "packetId": "string",
		"chain": "string", "claimedAt": "integer", "creator": "string", "txHash": "string"}
	typesPnLEntry = map[string]string{
		"avgBuyPriceInUsd": "decimal", "avgProfitPerTradeInUsd": "decimal", "avgSellPriceInUsd": "decimal", "balance": "decimal",
		"buyAmount": "decimal", "buyAmountInUsd": "decimal", "currentValue": "decimal", "priceInUsd": "decimal",
		"realizedProfitInUsd": "decimal", "realizedProfitRatio": "decimal", "sellAmount": "decimal", "sellAmountInUsd": "decimal",
		"totalProfitInUsd": "decimal", "totalProfitRatio": "decimal", "unrealizedProfitInUsd": "decimal",
		"unrealizedProfitRatio": "decimal", "buys": "count", "sells": "count", "totalTrades": "count", "tokenAddress": "string",
		"walletAddress": "string", "logoUri": "string", "name": "string", "symbol": "string", "decimals": "integer",
		"isClosed": "boolean"}
	typesPnLSummary = map[string]string{"avgProfitPerTradeInUsd": "decimal", "buyAmountInUsd": "decimal",
		"currentValue": "decimal", "realizedProfitInUsd": "decimal", "realizedProfitRatio": "decimal",
		"sellAmountInUsd": "decimal", "totalCostInUsd": "decimal", "totalProfitInUsd": "decimal",
		"unrealizedProfitInUsd": "decimal", "winRate": "decimal", "buys": "count", "sells": "count", "losses": "count",
		"wins": "count", "tokens": "count", "totalTrades": "count"}
	typesTokenV2 = map[string]string{
		"address": "string", "chain": "string", "decimals": "integer", "name": "string", "symbol": "string",
		"vendorCoinId": "string|null", "description": "string|null", "devLastTokenCreatedAt": "string|null",
		"devTotalTokens": "count|null", "extension": "object", "extra": "object", "imageUrl": "string|null",
		"market": "string|null", "marketData": "object", "metadataAddress": "string|null", "socialMedias": "object",
		"stats": "object", "tokenCreatedAt": "integer|null", "tokenCreatedBlockHeight": "count|null",
		"tokenCreatedSlot": "count|null", "tokenCreatedTxSignature": "string|null", "tokenCreators": "array",
		"uri": "string|null"}
	typesTokenFast = map[string]string{"address": "string", "chain": "string", "decimals": "integer", "name": "string",
		"symbol": "string", "imageUrl": "string|null", "tokenCreatedAt": "integer|null", "marketData": "object",
		"stats": "object"}
	typesFastMarketData = map[string]string{"priceInUsd": "decimal", "marketCapInUsd": "decimal",
		"totalTvlInUsd": "decimal", "holders": "decimal"}
	typesFastPeriod = map[string]string{"totalVolumeInUsd": "decimal", "trades": "decimal"}
	typesCreator    = map[string]string{"address": "string", "isVerified": "boolean", "share": "integer"}
	typesExtra      = map[string]string{
		"collectionAddress": "string|null", "editionNonce": "integer|null", "freezeAuthority": "string|null",
		"fungible": "boolean|null", "isMutable": "boolean|null", "isNative": "boolean|null",
		"isVerifiedCollection": "boolean|null", "isWrapped": "boolean|null", "key": "string|null",
		"launchFromProgramAddress": "string|null", "launchFromProtocolFamily": "string|null", "migratedAt": "integer|null",
		"migratedToPoolAddress": "string|null", "migratedToProgramAddress": "string|null",
		"migratedToProtocolFamily": "string|null", "mintAuthority": "string|null", "primarySaleHappened": "boolean|null",
		"programAddress": "string|null", "sellerFeeBasisPoints": "integer|null", "tokenStandard": "string|null",
		"updateAuthority": "string|null"}
	typesSocials        = allOf(token.SocialKeys, "string|null")
	typesMarketDataV2   = marketDataV2Types()
	typesPeriodV2       = allOf([]string{"buyVolumeInUsd", "buyers", "buys", "closeInUsd", "currentLiquidityInUsd", "highInUsd", "lowInUsd", "openInUsd", "priceChangeRatioInUsd", "sellVolumeInUsd", "sellers", "sells", "totalVolumeInUsd", "traders", "trades"}, "decimal")
	typesStatsV2        = map[string]string{"address": "string", "periods": "object"}
	typesMulti          = map[string]string{"chain": "string", "decimals": "integer", "name": "string", "symbol": "string", "address": "string", "stats": "object", "marketData": "object", "metadataAddress": "string|null", "tokenCreators": "array", "imageUrl": "string|null", "uri": "string|null", "extra": "object", "socialMedias": "object", "tokenCreatedAt": "integer|null", "description": "string|null", "market": "string|null", "extension": "object", "liquidity": "array"}
	typesMultiExtension = map[string]string{"website": "string|null", "twitter": "string|null"}
	typesMultiMarket    = map[string]string{"totalSupply": "decimal", "marketCapInSol": "decimal", "marketCapInUsd": "decimal",
		"top10TotalHoldings": "decimal", "top10HoldingsRatio": "decimal", "top100TotalHoldings": "decimal",
		"top100HoldingsRatio": "decimal", "priceInSol": "decimal", "priceInUsd": "decimal", "tvlInSol": "decimal",
		"tvlInUsd": "decimal", "completionRatio": "decimal", "devTeamAmount": "decimal", "devTeamRatio": "decimal",
		"holders": "integer", "devTeamCount": "integer"}
	typesMultiStats = multiStatsTypes()
	typesLiquidity  = map[string]string{"programAddress": "string", "protocolFamily": "string", "image": "string",
		"chain": "string", "poolAddress": "string", "protocolName": "string", "tokenAAddress": "string",
		"tokenBAddress": "string", "tvlInUsd": "decimal", "tvlInSol": "decimal"}
)

func allOf(keys []string, typ string) map[string]string {
	m := make(map[string]string, len(keys))
	for _, k := range keys {
		m[k] = typ
	}
	return m
}

func marketDataV2Types() map[string]string {
	keys := []string{"circulatingSupply", "completionRatio", "fdvInSol", "fdvInUsd", "holders", "marketCapInSol",
		"marketCapInUsd", "maxPoolTvlInSol", "maxPoolTvlInUsd", "priceInSol", "priceInUsd", "totalSupply", "totalTvlInSol",
		"totalTvlInUsd"}
	for _, n := range []string{"10", "50", "100"} {
		keys = append(keys, "top"+n+"HoldingsRatio", "top"+n+"TotalHoldings")
	}
	for _, g := range []string{"bluechip", "bundle", "dev", "fresh", "insider", "kol", "pro", "sandwish", "sniper"} {
		keys = append(keys, g+"HoldingsRatio", g+"TotalHolders", g+"TotalHoldings")
	}
	return allOf(keys, "decimal")
}

func multiStatsTypes() map[string]string {
	m := map[string]string{"address": "string"}
	for _, p := range []string{"1m", "5m", "15m", "30m", "1h", "4h", "24h"} {
		for _, k := range []string{"price", "buyVolumes", "sellsVolumes", "volumes", "buyVolumesInUsd", "sellVolumesInUsd",
			"volumesInUsd", "openPriceInUsd", "closePriceInUsd", "priceChangeRatioInUsd", "highInUsd", "lowInUsd"} {
			m[k+p] = "decimal"
		}
		for _, k := range []string{"buys", "sells", "buyers", "sellers", "trades", "traders"} {
			m[k+p] = "integer"
		}
	}
	return m
}

// checkTypes asserts that obj has exactly the keys of want, each of the listed JSON type.
func checkTypes(t *testing.T, where string, v any, want map[string]string) map[string]any {
	t.Helper()
	obj, ok := v.(map[string]any)
	require.True(t, ok, "%s is not an object: %v", where, v)
	var missing, extra []string
	for k := range want {
		if _, ok := obj[k]; !ok {
			missing = append(missing, k)
		}
	}
	for k := range obj {
		if _, ok := want[k]; !ok {
			extra = append(extra, k)
		}
	}
	slices.Sort(missing)
	slices.Sort(extra)
	assert.Empty(t, missing, "%s: missing fields", where)
	assert.Empty(t, extra, "%s: unexpected fields", where)
	for k, typ := range want {
		val, ok := obj[k]
		if !ok {
			continue
		}
		assert.True(t, hasType(val, typ), "%s.%s = %#v, want %s", where, k, val, typ)
	}
	return obj
}

func hasType(v any, typ string) bool {
	for _, alt := range strings.Split(typ, "|") {
		switch x := v.(type) {
		case nil:
			if alt == "null" {
				return true
			}
		case string:
			switch alt {
			case "string":
				return true
			case "decimal":
				if _, err := decimal.NewFromString(x); err == nil {
					return true
				}
			case "count":
				if _, err := strconv.ParseInt(x, 10, 64); err == nil {
					return true
				}
			}
		case json.Number:
			if alt == "integer" {
				if _, err := x.Int64(); err == nil {
					return true
				}
			}
		case bool:
			if alt == "boolean" {
				return true
			}
		case map[string]any:
			if alt == "object" {
				return true
			}
		case []any:
			if alt == "array" {
				return true
			}
		}
	}
	return false
}

// --- seed data ---

const (
	mktBonk   = "MktBonk1111"
	mktWif    = "MktWif2222"
	mktPop    = "MktPop3333"
	mktEth    = "MktEth4444"
	mktSol    = "So11111111111111111111111111111111111111112"
	mktPool   = "MktPoolBonk"
	mktPoolW  = "MktPoolWif"
	mktPoolP  = "MktPoolPop"
	mktW1     = "MktW1"
	mktW2     = "MktW2"
	mktW3     = "MktW3"
	mktDev    = "MktDev1"
	mktPopBuy = 25 // trades of POP by W3
)

func dd(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// mktTrade is `amount` tokens at `price` USD each against SOL at $100.
func mktTrade(sig, wallet, tok, poolAddr string, side trade.Side, amount, price string, at time.Time, height int64) chainevent.Trade {
	a, p := dd(amount), dd(price)
	usd := a.Mul(p)
	native := usd.Div(dd("100"))
	return chainevent.Trade{Trade: trade.Trade{Chain: chain.Sol, TransactionSignature: sig, BlockHeight: height,
		BlockSlot: height + 10, BlockTimestamp: at.UnixMilli(), Wallet: wallet, PoolAddress: poolAddr, Side: side,
		Status: trade.Succeeded, TokenAddress: tok, TokenAmount: a, TokenAmountInNative: native, TokenAmountInUSD: usd,
		TokenPriceInNative: p.Div(dd("100")), TokenPriceInUSD: p, SideTokenAddress: mktSol, SideTokenAmount: native,
		SideTokenAmountInNative: native, SideTokenAmountInUSD: usd, SideTokenPriceInNative: dd("1"), SideTokenPriceInUSD: dd("100"),
		DexImage: "https://dex/img.png", DexProgramAddress: "DexProg", DexProtocolFamily: "Raydium"}}
}

func ptr[T any](v T) *T { return &v }

type seeded struct {
	now      time.Time
	bonkTs   []time.Time // W1 buy, W1 buy, W1 sell, W2 buy
	snapTs   []time.Time // snapshot times, oldest first
	migrated time.Time
}

func seedReadAPI(t *testing.T, e *env) seeded {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	s := seeded{now: now, migrated: now.Add(-15 * time.Minute)}
	bonkSocials, err := token.NewSocials(map[string]string{"twitter": "@zqbonk", "website": "https://bonk.example"})
	require.NoError(t, err)
	wifSocials, err := token.NewSocials(map[string]string{"telegram": "https://t.me/zqwif"})
	require.NoError(t, err)
	created := now.Add(-6 * time.Hour).UnixMilli()
	devLast := now.Add(-48 * time.Hour)
	tok := func(addr, name, symbol string, c chain.Chain, soc token.Socials, tag token.Tag, createdAt int64) chainevent.TokenCreated {
		return chainevent.TokenCreated{Token: token.Token{Chain: c, Address: addr, Decimals: 6, Name: name, Symbol: symbol,
			Description: name + " description", ImageURL: "https://img/" + symbol + ".png", URI: "https://meta/" + symbol,
			MetadataAddress: "Meta" + symbol, DevTotalTokens: ptr(int64(3)), DevLastTokenCreatedAt: &devLast,
			CreatedAt: ptr(createdAt), CreatedBlockHeight: ptr(int64(1000)), CreatedSlot: ptr(int64(2000)),
			CreatedTxSignature: "Tx" + symbol, Creators: []token.Creator{{Address: mktDev, IsVerified: true, Share: 100}},
			Extra:   token.Extra{LaunchFromProtocolFamily: "pumpfun", ProgramAddress: "TokenkegQ", IsMutable: ptr(true)},
			Socials: soc, LaunchpadTag: tag},
			TotalSupply: dd("1000"), CirculatingSupply: dd("1000"), Creator: mktDev}
	}
	events := []chainevent.Event{
		tok(mktBonk, "Zqxmkt Bonk", "ZQBONK", chain.Sol, bonkSocials, token.PumpFun, created),
		tok(mktWif, "Zqxmkt Dogwifhat", "ZQWIF", chain.Sol, wifSocials, token.RaydiumLaunchpad, created+1000),
		tok(mktPop, "Zqxmkt Popcat", "ZQPOP", chain.Sol, token.Socials{}, "", created+2000),
		tok(mktEth, "Zqxmkt Ether Thing", "ZQETH", chain.Eth, token.Socials{}, "", created+3000),
		chainevent.PoolCreated{Pool: pool.Pool{Chain: chain.Sol, Address: mktPool, ProgramAddress: "DexProg", ProtocolFamily: "Raydium",
			ProtocolName: "Raydium AMM", Image: "https://dex/img.png", TokenAAddress: mktBonk, TokenADecimals: 6,
			TokenBAddress: mktSol, TokenBDecimals: 9}, At: created},
	}
	s.bonkTs = []time.Time{now.Add(-50 * time.Minute), now.Add(-40 * time.Minute), now.Add(-30 * time.Minute), now.Add(-20 * time.Minute)}
	events = append(events,
		mktTrade("MktSigB1", mktW1, mktBonk, mktPool, trade.Buy, "100", "1", s.bonkTs[0], 1101),
		mktTrade("MktSigB2", mktW1, mktBonk, mktPool, trade.Buy, "100", "3", s.bonkTs[1], 1102),
		mktTrade("MktSigB3", mktW1, mktBonk, mktPool, trade.Sell, "150", "4", s.bonkTs[2], 1103),
		mktTrade("MktSigB4", mktW2, mktBonk, mktPool, trade.Buy, "10", "5", s.bonkTs[3], 1104),
		mktTrade("MktSigW1", mktW1, mktWif, mktPoolW, trade.Buy, "10", "2", now.Add(-10*time.Minute), 1105),
	)
	for i := range mktPopBuy {
		events = append(events, mktTrade(fmt.Sprintf("MktSigP%02d", i), mktW3, mktPop, mktPoolP, trade.Buy, "10", "0.5",
			now.Add(-5*time.Hour+time.Duration(i)*time.Minute), int64(900+i)))
	}
	s.snapTs = []time.Time{now.Add(-3 * time.Hour), now.Add(-2 * time.Hour), now.Add(-1 * time.Hour)}
	for i, at := range s.snapTs {
		tvl := decimal.NewFromInt(int64(1000 * (i + 1)))
		events = append(events, chainevent.PoolSnapshot{Snapshot: pool.Snapshot{Chain: chain.Sol, PoolAddress: mktPool,
			BlockHeight: int64(5001 + i), BlockSlot: ptr(int64(6001 + i)), BlockTimestamp: at.UnixMilli(), SnapshotTime: at.UnixMilli(),
			TokenA: pool.Side{TokenAddress: mktBonk, Decimals: 6, AmountInNative: dd("5"), AmountInUSD: tvl.Div(dd("2")),
				PriceNative: dd("0.05"), PriceUSD: dd("5"), VaultAmount: "100000000"},
			TokenB: pool.Side{TokenAddress: mktSol, Decimals: 9, AmountInNative: dd("5"), AmountInUSD: tvl.Div(dd("2")),
				PriceNative: dd("1"), PriceUSD: dd("100"), VaultAmount: "5000000000"},
			TVLInNative: tvl.Div(dd("100")), TVLInUSD: tvl}})
	}
	_, err = e.rt.App.Ingest.Ingest(ctx, events)
	require.NoError(t, err)
	// Migration and red packets come after their tokens exist.
	rp := func(id, creator string, c chain.Chain, createdAt time.Time) chainevent.RedPacketCreated {
		return chainevent.RedPacketCreated{Packet: redpacket.RedPacket{ID: id, Creator: creator, ClaimAuthority: "MktAuth", Mint: mktBonk,
			Chain: c, MaxClaims: 5, TotalAmount: dd("1000"), CreatedAt: createdAt.UnixMilli(),
			ExpiredAt: redpacket.ExpiresAt(createdAt.UnixMilli(), 86400), Expiration: 86400, Memo: "gift " + id, ShareID: "share" + id,
			TxHash: "tx" + id}}
	}
	_, err = e.rt.App.Ingest.Ingest(ctx, []chainevent.Event{
		chainevent.TokenMigrated{Chain: chain.Sol, Address: mktBonk, PoolAddress: mktPool, ProgramAddress: "DexProg",
			ProtocolFamily: "Raydium", At: s.migrated.UnixMilli()},
		rp("MktRP1", "MktC1", chain.Sol, now.Add(-3*time.Hour)),
		rp("MktRP2", "MktC1", chain.Sol, now.Add(-2*time.Hour)),
		rp("MktRP3", "MktC2", chain.Bsc, now.Add(-1*time.Hour)),
	})
	require.NoError(t, err)
	_, err = e.rt.App.Ingest.Ingest(ctx, []chainevent.Event{
		chainevent.RedPacketClaimed{Claim: redpacket.Claim{PacketID: "MktRP1", Claimer: "MktK1", Mint: mktBonk, Chain: chain.Sol,
			Amount: dd("100"), ClaimedAt: now.Add(-150 * time.Minute).UnixMilli(), TxHash: "txK1"}},
		chainevent.RedPacketClaimed{Claim: redpacket.Claim{PacketID: "MktRP1", Claimer: "MktK2", Mint: mktBonk, Chain: chain.Sol,
			Amount: dd("200"), ClaimedAt: now.Add(-140 * time.Minute).UnixMilli(), TxHash: "txK2"}},
	})
	require.NoError(t, err)
	// The ranking is what the refresh loop writes through the MarketRefresher port.
	require.NoError(t, postgres.NewIngestStore(e.rt.Pool).ReplaceHotTokens(ctx, chain.Sol, ranking.Duration4h, []ports.HotEntry{
		{Address: mktPop, Rank: 1, Score: dd("3")}, {Address: mktBonk, Rank: 2, Score: dd("2")}, {Address: mktWif, Rank: 3, Score: dd("1")},
	}, now))
	return s
}

// --- helpers over responses ---

func okJSON(t *testing.T, r resp) any {
	t.Helper()
	require.Equal(t, 200, r.Status, "body: %s", r.Body)
	assert.Contains(t, r.Header.Get("Content-Type"), "application/json")
	return r.JSON(t)
}

func items(t *testing.T, v any, key string) []any {
	t.Helper()
	m, ok := v.(map[string]any)
	require.True(t, ok)
	a, ok := m[key].([]any)
	require.True(t, ok, "%s is not an array: %v", key, m[key])
	return a
}

func field(v any, k string) any { return v.(map[string]any)[k] }

func addresses(list []any, key string) []string {
	out := make([]string, 0, len(list))
	for _, v := range list {
		out = append(out, fmt.Sprint(field(v, key)))
	}
	return out
}

// only keeps the given addresses, in the order they appear (other tests share the database).
func only(list []string, keep ...string) []string {
	var out []string
	for _, a := range list {
		if slices.Contains(keep, a) {
			out = append(out, a)
		}
	}
	return out
}

func assertDec(t *testing.T, want string, got any, msg string) {
	t.Helper()
	s, ok := got.(string)
	require.True(t, ok, "%s: %#v is not a string", msg, got)
	assert.True(t, dd(want).Equal(dd(s)), "%s: want %s, got %s", msg, want, s)
}

func badRequest(t *testing.T, r resp, param string) {
	t.Helper()
	require.Equal(t, 400, r.Status, "body: %s", r.Body)
	body := r.Object(t)
	details, _ := body["details"].(map[string]any)
	assert.Equal(t, param, details["parameter"], "body: %s", r.Body)
}

func TestReadAPI(t *testing.T) {
	e := newEnv(t)
	s := seedReadAPI(t, e)

	t.Run("op1 token search", func(t *testing.T) { testSearch(t, e, s) })
	t.Run("op2 multi-token detail", func(t *testing.T) { testMulti(t, e, s) })
	t.Run("op3 trades", func(t *testing.T) { testTrades(t, e, s) })
	t.Run("op4 pool snapshots", func(t *testing.T) { testSnapshots(t, e, s) })
	t.Run("op5-7 red packets", func(t *testing.T) { testRedPackets(t, e) })
	t.Run("op8 pnl by token", func(t *testing.T) { testPnL(t, e) })
	t.Run("op9 hot tokens", func(t *testing.T) { testHotTokens(t, e) })
}

func testSearch(t *testing.T, e *env, s seeded) {
	t.Run("fast shape", func(t *testing.T) {
		v := okJSON(t, e.do(t, "GET", "/v2/token/search?q=zqbonk", nil))
		checkTypes(t, "page", v, typesPage)
		data := items(t, v, "data")
		require.NotEmpty(t, data)
		tok := checkTypes(t, "token", data[0], typesTokenFast)
		assert.Equal(t, mktBonk, tok["address"])
		checkTypes(t, "marketData", tok["marketData"], typesFastMarketData)
		// BONK: last trade at $5, supply 1000 → market cap 5000.
		assertDec(t, "5", field(tok["marketData"], "priceInUsd"), "price")
		assertDec(t, "5000", field(tok["marketData"], "marketCapInUsd"), "market cap")
		st := checkTypes(t, "stats", tok["stats"], typesStatsV2)
		day := checkTypes(t, "stats.periods", st["periods"], map[string]string{"24h": "object"})
		checkTypes(t, "period 24h", day["24h"], typesFastPeriod)
		// 100×1 + 100×3 + 150×4 + 10×5 = 1050 USD over 4 trades.
		assertDec(t, "1050", field(day["24h"], "totalVolumeInUsd"), "24h volume")
		assertDec(t, "4", field(day["24h"], "trades"), "24h trades")
	})
	t.Run("normal shape", func(t *testing.T) {
		v := okJSON(t, e.do(t, "GET", "/v2/token/search?q=zqbonk&mode=normal", nil))
		tok := checkTypes(t, "token", items(t, v, "data")[0], typesTokenV2)
		assert.Equal(t, mktBonk, tok["address"])
		checkTypes(t, "extra", tok["extra"], typesExtra)
		checkTypes(t, "extension", tok["extension"], typesExtra)
		checkTypes(t, "socialMedias", tok["socialMedias"], typesSocials)
		checkTypes(t, "marketData", tok["marketData"], typesMarketDataV2)
		for _, c := range tok["tokenCreators"].([]any) {
			checkTypes(t, "creator", c, typesCreator)
		}
		st := checkTypes(t, "stats", tok["stats"], typesStatsV2)
		periods := checkTypes(t, "periods", st["periods"], allOf([]string{"1m", "5m", "15m", "30m", "1h", "4h", "24h"}, "object"))
		for w, p := range periods {
			checkTypes(t, "period "+w, p, typesPeriodV2)
		}
		// migratedAt is milliseconds in the v2 shape.
		assert.Equal(t, json.Number(strconv.FormatInt(s.migrated.UnixMilli(), 10)), field(tok["extra"], "migratedAt"))
		assert.Equal(t, "@zqbonk", field(tok["socialMedias"], "twitter"))
		assert.Nil(t, field(tok["socialMedias"], "discord"))
		assert.Equal(t, "3", tok["devTotalTokens"])
		assert.Equal(t, "1000", tok["tokenCreatedBlockHeight"])
	})
	t.Run("fuzzy matching", func(t *testing.T) {
		for _, q := range []string{"zqbonk", "ZQBONK", "zqbnok", "zqbon", "Zqxmkt Bonk", "zqxmkt bnok", mktBonk, "MktBonk"} {
			v := okJSON(t, e.do(t, "GET", "/v2/token/search?q="+url.QueryEscape(q), nil))
			got := addresses(items(t, v, "data"), "address")
			require.NotEmpty(t, got, "q=%s", q)
			assert.Equal(t, mktBonk, got[0], "q=%s finds BONK first", q)
		}
		v := okJSON(t, e.do(t, "GET", "/v2/token/search?q=qqqqqqqqqqqqqq", nil))
		assert.Empty(t, items(t, v, "data"))
	})
	t.Run("sort keys", func(t *testing.T) {
		// Market caps: BONK 5×1000, WIF 2×1000, POP 0.5×1000. Liquidity: only BONK has a pool (TVL 3000).
		// Holders: BONK 2 (W1 50, W2 10), WIF 1, POP 1. Created: BONK < WIF < POP.
		tests := []struct{ sortBy, sort, want string }{
			{"marketCapInUsd", "desc", mktBonk + mktWif + mktPop},
			{"marketCapInUsd", "ASC", mktPop + mktWif + mktBonk},
			{"priceInUsd", "desc", mktBonk + mktWif + mktPop},
			{"liquidityInUsd", "desc", mktBonk},
			{"holderCount", "desc", mktBonk},
			{"h24VolumeInUsd", "desc", mktBonk + mktPop + mktWif},
			{"h24Transactions", "desc", mktPop + mktBonk + mktWif},
			{"tokenCreatedAt", "desc", mktPop + mktWif + mktBonk},
			{"tokenCreatedAt", "Asc", mktBonk + mktWif + mktPop},
		}
		for _, tc := range tests {
			t.Run(tc.sortBy+" "+tc.sort, func(t *testing.T) {
				v := okJSON(t, e.do(t, "GET", "/v2/token/search?q=zqxmkt&chains=sol&sortBy="+tc.sortBy+"&sort="+tc.sort, nil))
				got := strings.Join(only(addresses(items(t, v, "data"), "address"), mktBonk, mktWif, mktPop), "")
				assert.True(t, strings.HasPrefix(got, tc.want), "got %s want prefix %s", got, tc.want)
			})
		}
	})
	t.Run("filters", func(t *testing.T) {
		v := okJSON(t, e.do(t, "GET", "/v2/token/search?q=zqxmkt&chains[]=eth", nil))
		assert.Equal(t, []string{mktEth}, only(addresses(items(t, v, "data"), "address"), mktBonk, mktWif, mktPop, mktEth))
		v = okJSON(t, e.do(t, "GET", "/v2/token/search?q=zqxmkt&chains=sol,eth", nil))
		assert.Len(t, only(addresses(items(t, v, "data"), "address"), mktBonk, mktWif, mktPop, mktEth), 4)
		// BONK migrated to Raydium; all four launched from pumpfun.
		v = okJSON(t, e.do(t, "GET", "/v2/token/search?q=zqxmkt&protocols=RAYDIUM", nil))
		assert.Equal(t, []string{mktBonk}, only(addresses(items(t, v, "data"), "address"), mktBonk, mktWif, mktPop, mktEth))
	})
	t.Run("paging", func(t *testing.T) {
		walkBothWays(t, e, "/v2/token/search?q=zqxmkt&sortBy=tokenCreatedAt&sort=asc", 1, "address",
			[]string{mktBonk, mktWif, mktPop, mktEth})
		walkBothWays(t, e, "/v2/token/search?q=zqxmkt", 3, "address", nil)
	})
	t.Run("bad input", func(t *testing.T) {
		badRequest(t, e.do(t, "GET", "/v2/token/search?sortBy=volume", nil), "sortBy")
		badRequest(t, e.do(t, "GET", "/v2/token/search?sort=up", nil), "sort")
		badRequest(t, e.do(t, "GET", "/v2/token/search?mode=slow", nil), "mode")
		badRequest(t, e.do(t, "GET", "/v2/token/search?chains=doge", nil), "chains")
		badRequest(t, e.do(t, "GET", "/v2/token/search?limit=0", nil), "limit")
		badRequest(t, e.do(t, "GET", "/v2/token/search?limit=101", nil), "limit")
		badRequest(t, e.do(t, "GET", "/v2/token/search?direction=sideways", nil), "direction")
		badRequest(t, e.do(t, "GET", "/v2/token/search?cursor=bm90LWEtY3Vyc29y", nil), "cursor")
		badRequest(t, e.do(t, "GET", "/v2/token/search?q=%00", nil), "q")
		badRequest(t, e.do(t, "GET", "/v2/token/search?q=zqxmkt&cursor="+page.Encode("search-rel", "-1", "sol", "a\x00"), nil), "cursor")
		badRequest(t, e.do(t, "GET", "/v2/token/search?sortBy=priceInUsd&cursor="+page.Encode("search-priceInUsd", "1e99999", "sol", "a"), nil), "cursor")
		// A trade cursor is not a search cursor.
		tr := okJSON(t, e.do(t, "GET", "/v2/trade/sol?limit=1", nil))
		badRequest(t, e.do(t, "GET", "/v2/token/search?cursor="+field(tr, "endCursor").(string), nil), "cursor")
		r := e.do(t, "GET", "/v2/token/search?unknownParam=1&q=zqbonk", nil)
		assert.Equal(t, 200, r.Status)
	})
}

// walkBothWays pages forward through path with limit, then back from the last page, and checks
// every item appears exactly once and in the same order both ways. want, when set, is the
// expected order of the listed keys among the items.
func walkBothWays(t *testing.T, e *env, path string, limit int, key string, want []string) []string {
	t.Helper()
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	get := func(extra string) map[string]any {
		return okJSON(t, e.do(t, "GET", path+sep+"limit="+strconv.Itoa(limit)+extra, nil)).(map[string]any)
	}
	var forward []string
	pg := get("")
	assert.Equal(t, false, pg["hasPrev"])
	var last map[string]any
	for i := 0; ; i++ {
		require.Less(t, i, 1000)
		list := pg["data"].([]any)
		require.LessOrEqual(t, len(list), limit)
		forward = append(forward, addresses(list, key)...)
		last = pg
		if pg["hasNext"] != true {
			break
		}
		pg = get("&cursor=" + url.QueryEscape(pg["endCursor"].(string)))
		assert.Equal(t, true, pg["hasPrev"])
	}
	var backward []string
	pg = last
	for i := 0; ; i++ {
		require.Less(t, i, 1000)
		backward = append(addresses(pg["data"].([]any), key), backward...)
		if pg["hasPrev"] != true {
			break
		}
		pg = get("&direction=prev&cursor=" + url.QueryEscape(pg["startCursor"].(string)))
		assert.Equal(t, true, pg["hasNext"])
	}
	assert.Equal(t, forward, backward, "forward and backward walks differ")
	seen := map[string]bool{}
	for _, a := range forward {
		assert.False(t, seen[a], "%s listed twice", a)
		seen[a] = true
	}
	if want != nil {
		assert.Equal(t, want, only(forward, want...))
	}
	return forward
}

func testMulti(t *testing.T, e *env, s seeded) {
	q := "/v1/token/sol/multi?tokenAddresses=" + url.QueryEscape(mktWif+","+mktBonk+",MktUnknown")
	t.Run("shape on the dex address", func(t *testing.T) {
		v := okJSON(t, e.doDex(t, "GET", q, nil))
		list, ok := v.([]any)
		require.True(t, ok, "bare array")
		require.Len(t, list, 2)
		assert.Equal(t, []string{mktWif, mktBonk}, addresses(list, "address"), "input order, unknown left out")
		tok := checkTypes(t, "multi", list[1], typesMulti)
		checkTypes(t, "stats", tok["stats"], typesMultiStats)
		checkTypes(t, "marketData", tok["marketData"], typesMultiMarket)
		checkTypes(t, "extra", tok["extra"], typesExtra)
		checkTypes(t, "extension", tok["extension"], typesMultiExtension)
		checkTypes(t, "socialMedias", tok["socialMedias"], typesSocials)
		liq := tok["liquidity"].([]any)
		require.Len(t, liq, 1)
		checkTypes(t, "liquidity", liq[0], typesLiquidity)
		assert.Equal(t, mktPool, field(liq[0], "poolAddress"))
		// The newest snapshot of the pool has TVL 3000.
		assertDec(t, "3000", field(liq[0], "tvlInUsd"), "pool tvl")
		// migratedAt is seconds in the multi-detail shape.
		assert.Equal(t, json.Number(strconv.FormatInt(s.migrated.Unix(), 10)), field(tok["extra"], "migratedAt"))
		assert.Equal(t, "@zqbonk", field(tok["extension"], "twitter"))
		// BONK in the 24h window: 3 buys, 1 sell, buyers W1 and W2, traders 2.
		st := tok["stats"].(map[string]any)
		assert.Equal(t, json.Number("3"), st["buys24h"])
		assert.Equal(t, json.Number("1"), st["sells24h"])
		assert.Equal(t, json.Number("2"), st["buyers24h"])
		assert.Equal(t, json.Number("4"), st["trades24h"])
		assert.Equal(t, json.Number("2"), field(tok["marketData"], "holders"))
	})
	t.Run("also on the main address", func(t *testing.T) {
		v := okJSON(t, e.do(t, "GET", q, nil))
		assert.Len(t, v, 2)
	})
	t.Run("sort and filter", func(t *testing.T) {
		tests := []struct{ extra, want string }{
			{"&sortBy=marketData.priceInUsd&sortDirection=ASC", mktWif + mktBonk},
			{"&sortBy=marketData.priceInUsd", mktBonk + mktWif},
			{"&sortBy=stats.buys24h&sortDirection=desc", mktBonk + mktWif},
			{"&sortBy=tokenCreatedAt&sortDirection=ASC", mktBonk + mktWif},
			{"&filterBy=" + url.QueryEscape(`[{"field":"marketData.priceInUsd","min":"3"}]`), mktBonk},
			{"&filterBy=" + url.QueryEscape(`[{"field":"marketData.priceInUsd","min":"2","max":"2"}]`), mktWif},
			{"&filterBy=" + url.QueryEscape(`[{"field":"marketData.priceInUsd","operator":"lt","value":"3"}]`), mktWif},
			{"&filterBy=" + url.QueryEscape(`[{"field":"stats.trades24h","operator":"gte","value":1},{"field":"marketData.holders","min":"2"}]`), mktBonk},
		}
		for _, tc := range tests {
			v := okJSON(t, e.doDex(t, "GET", q+tc.extra, nil))
			assert.Equal(t, tc.want, strings.Join(addresses(v.([]any), "address"), ""), tc.extra)
		}
	})
	t.Run("chains", func(t *testing.T) {
		for _, c := range []string{"base", "polygon", "arbitrum", "optimism", "avalanche", "zksync", "sui"} {
			v := okJSON(t, e.doDex(t, "GET", "/v1/token/"+c+"/multi?tokenAddresses="+mktBonk, nil))
			assert.Equal(t, []any{}, v, c)
		}
		v := okJSON(t, e.doDex(t, "GET", "/v1/token/ethereum/multi?tokenAddresses="+mktEth, nil))
		require.Len(t, v, 1)
		assert.Equal(t, "ethereum", field(v.([]any)[0], "chain"))
	})
	t.Run("v2 path", func(t *testing.T) {
		v := okJSON(t, e.do(t, "GET", "/v2/token/sol/multi?tokenAddresses="+mktBonk, nil))
		require.Len(t, v, 1)
		checkTypes(t, "token", v.([]any)[0], typesTokenV2)
	})
	t.Run("bad input", func(t *testing.T) {
		badRequest(t, e.doDex(t, "GET", "/v1/token/doge/multi?tokenAddresses=a", nil), "chain")
		badRequest(t, e.doDex(t, "GET", "/v1/token/sol/multi", nil), "tokenAddresses")
		many := make([]string, 101)
		for i := range many {
			many[i] = "a" + strconv.Itoa(i)
		}
		badRequest(t, e.doDex(t, "GET", "/v1/token/sol/multi?tokenAddresses="+strings.Join(many, ","), nil), "tokenAddresses")
		badRequest(t, e.doDex(t, "GET", q+"&sortBy=marketData.maxPoolTvlInUsd", nil), "sortBy")
		sideways := e.doDex(t, "GET", q+"&sortDirection=sideways", nil)
		badRequest(t, sideways, "sortDirection")
		// The spec's values for operation 2, as the document lists them.
		assert.Equal(t, []any{"ASC", "DESC"}, sideways.Object(t)["details"].(map[string]any)["allowed_values"])
		assert.Contains(t, sideways.Object(t)["message"], "allowed: ASC, DESC")
		badRequest(t, e.doDex(t, "GET", q+"&filterBy=notjson", nil), "filterBy")
		badRequest(t, e.doDex(t, "GET", q+"&filterBy="+url.QueryEscape(`[{"field":"nope","min":"1"}]`), nil), "filterBy")
	})
}

func testTrades(t *testing.T, e *env, s seeded) {
	t.Run("shape", func(t *testing.T) {
		v := okJSON(t, e.do(t, "GET", "/v2/trade/sol?tokenAddress="+mktBonk+"&limit=1", nil))
		checkTypes(t, "page", v, typesPage)
		tr := checkTypes(t, "trade", items(t, v, "data")[0], typesTrade)
		// Newest first: W2's buy of 10 at $5.
		assert.Equal(t, "MktSigB4", tr["transactionSignature"])
		assert.Equal(t, "BUY", tr["type"])
		assert.Equal(t, "SUCCEEDED", tr["status"])
		assert.Equal(t, "ZQBONK", tr["tokenSymbol"])
		assert.Equal(t, "Zqxmkt Bonk", tr["tokenName"])
		assert.Equal(t, json.Number(strconv.FormatInt(s.bonkTs[3].UnixMilli(), 10)), tr["blockTimestamp"])
		assert.Equal(t, json.Number("1104"), tr["blockHeight"])
		assertDec(t, "50", tr["tokenAmountInUsd"], "10 × 5")
	})
	sec := func(ts time.Time) string { return strconv.FormatInt(ts.Unix(), 10) }
	ms := func(ts time.Time) string { return strconv.FormatInt(ts.UnixMilli(), 10) }
	tests := []struct {
		name, query string
		want        []string
	}{
		{"token", "tokenAddress=" + mktBonk, []string{"MktSigB4", "MktSigB3", "MktSigB2", "MktSigB1"}},
		{"wallet", "walletAddress=" + mktW1, []string{"MktSigW1", "MktSigB3", "MktSigB2", "MktSigB1"}},
		{"pool", "poolAddress=" + mktPool, []string{"MktSigB4", "MktSigB3", "MktSigB2", "MktSigB1"}},
		{"signatures", "transactionsSignature=MktSigB1,MktSigW1", []string{"MktSigW1", "MktSigB1"}},
		{"type", "tokenAddress=" + mktBonk + "&type=SELL", []string{"MktSigB3"}},
		{"type lower case", "walletAddress=" + mktW1 + "&type=buy", []string{"MktSigW1", "MktSigB2", "MktSigB1"}},
		{"after seconds", "tokenAddress=" + mktBonk + "&afterTimestamp=" + sec(s.bonkTs[1]), []string{"MktSigB4", "MktSigB3", "MktSigB2"}},
		{"before seconds", "tokenAddress=" + mktBonk + "&beforeTimestamp=" + sec(s.bonkTs[1]), []string{"MktSigB2", "MktSigB1"}},
		{"window ms", "tokenAddress=" + mktBonk + "&afterTimestamp=" + ms(s.bonkTs[1]) + "&beforeTimestamp=" + ms(s.bonkTs[2]), []string{"MktSigB3", "MktSigB2"}},
		{"block heights", "tokenAddress=" + mktBonk + "&afterBlockHeight=1102&beforeBlockHeight=1103", []string{"MktSigB3", "MktSigB2"}},
		{"everything", "tokenAddress=" + mktBonk + "&walletAddress=" + mktW1 + "&poolAddress=" + mktPool + "&type=BUY&afterBlockHeight=1101&beforeTimestamp=" + sec(s.now), []string{"MktSigB2", "MktSigB1"}},
		{"nothing", "tokenAddress=" + mktBonk + "&walletAddress=" + mktW3, []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := okJSON(t, e.do(t, "GET", "/v2/trade/sol?"+tc.query, nil))
			assert.Equal(t, tc.want, addresses(items(t, v, "data"), "transactionSignature"))
		})
	}
	t.Run("paging while trades arrive", func(t *testing.T) {
		path := "/v2/trade/sol?tokenAddress=" + mktPop + "&limit=10"
		p1 := okJSON(t, e.do(t, "GET", path, nil)).(map[string]any)
		assert.Len(t, p1["data"], 10)
		assert.Equal(t, true, p1["hasNext"])
		assert.Equal(t, false, p1["hasPrev"])
		// A newer trade arrives between pages: it sorts before page 1 and must not shift page 2.
		_, err := e.rt.App.Ingest.Ingest(context.Background(), []chainevent.Event{
			mktTrade("MktSigPnew", mktW3, mktPop, mktPoolP, trade.Buy, "1", "0.5", time.Now(), 990)})
		require.NoError(t, err)
		var all []string
		all = append(all, addresses(p1["data"].([]any), "transactionSignature")...)
		pg := p1
		for pg["hasNext"] == true {
			pg = okJSON(t, e.do(t, "GET", path+"&cursor="+url.QueryEscape(pg["endCursor"].(string)), nil)).(map[string]any)
			all = append(all, addresses(pg["data"].([]any), "transactionSignature")...)
		}
		want := make([]string, mktPopBuy)
		for i := range want {
			want[i] = fmt.Sprintf("MktSigP%02d", mktPopBuy-1-i)
		}
		assert.Equal(t, want, all)
		// Back from page 1's start: the new trade is there.
		prev := okJSON(t, e.do(t, "GET", path+"&direction=prev&cursor="+url.QueryEscape(p1["startCursor"].(string)), nil)).(map[string]any)
		assert.Equal(t, []string{"MktSigPnew"}, addresses(prev["data"].([]any), "transactionSignature"))
		assert.Equal(t, false, prev["hasPrev"])
		assert.Equal(t, true, prev["hasNext"])
		walkBothWays(t, e, "/v2/trade/sol?tokenAddress="+mktPop, 7, "transactionSignature", nil)
	})
	t.Run("bad input", func(t *testing.T) {
		badRequest(t, e.do(t, "GET", "/v2/trade/doge", nil), "chain")
		badRequest(t, e.do(t, "GET", "/v2/trade/sol?type=HOLD", nil), "type")
		badRequest(t, e.do(t, "GET", "/v2/trade/sol?beforeTimestamp=yesterday", nil), "beforeTimestamp")
		badRequest(t, e.do(t, "GET", "/v2/trade/sol?afterTimestamp=-5", nil), "afterTimestamp")
		badRequest(t, e.do(t, "GET", "/v2/trade/sol?beforeBlockHeight=1e9", nil), "beforeBlockHeight")
		badRequest(t, e.do(t, "GET", "/v2/trade/sol?afterBlockHeight=-1", nil), "afterBlockHeight")
		badRequest(t, e.do(t, "GET", "/v2/trade/sol?afterBlockHeight=99999999999999999999", nil), "afterBlockHeight")
		many := strings.Repeat("s,", 101)
		badRequest(t, e.do(t, "GET", "/v2/trade/sol?transactionsSignature="+many, nil), "transactionsSignature")
		badRequest(t, e.do(t, "GET", "/v2/trade/sol?tokenAddress=a%00b", nil), "tokenAddress")
		badRequest(t, e.do(t, "GET", "/v2/trade/sol?walletAddress=%ff%fe", nil), "walletAddress")
		// A cursor with a valid checksum but values no trade cursor holds.
		badRequest(t, e.do(t, "GET", "/v2/trade/sol?cursor="+page.Encode("trade", "x", "1"), nil), "cursor")
	})
}

func testSnapshots(t *testing.T, e *env, s seeded) {
	path := "/v2/dexpools/sol/" + mktPool + "/snapshots"
	t.Run("shape and order", func(t *testing.T) {
		v := okJSON(t, e.do(t, "GET", path, nil))
		checkTypes(t, "page", v, typesPage)
		list := items(t, v, "data")
		require.Len(t, list, 3)
		snap := checkTypes(t, "snapshot", list[0], typesSnapshot)
		checkTypes(t, "tokenA", snap["tokenA"], typesPoolSide)
		checkTypes(t, "tokenB", snap["tokenB"], typesPoolSide)
		heights := []any{field(list[0], "blockHeight"), field(list[1], "blockHeight"), field(list[2], "blockHeight")}
		assert.Equal(t, []any{json.Number("5003"), json.Number("5002"), json.Number("5001")}, heights)
		assert.Equal(t, "100000000", field(snap["tokenA"], "vaultAmount"))
		assert.Equal(t, json.Number("6003"), snap["blockSlot"])
	})
	at := func(q string) []any {
		v := okJSON(t, e.do(t, "GET", path+"?"+q, nil))
		var hs []any
		for _, it := range items(t, v, "data") {
			hs = append(hs, field(it, "blockHeight"))
		}
		return hs
	}
	t.Run("time", func(t *testing.T) {
		// At the middle snapshot's second: it and the older one. A second before it: only the oldest.
		assert.Equal(t, []any{json.Number("5002"), json.Number("5001")}, at("time="+strconv.FormatInt(s.snapTs[1].Unix(), 10)))
		assert.Equal(t, []any{json.Number("5001")}, at("time="+strconv.FormatInt(s.snapTs[1].Unix()-1, 10)))
		assert.Equal(t, []any{json.Number("5002"), json.Number("5001")}, at("time="+strconv.FormatInt(s.snapTs[1].UnixMilli(), 10)))
		assert.Nil(t, at("time="+strconv.FormatInt(s.snapTs[0].Unix()-60, 10)))
		assert.Equal(t, []any{json.Number("5002")}, at("limit=1&time="+strconv.FormatInt(s.snapTs[1].Unix(), 10)))
	})
	t.Run("paging", func(t *testing.T) {
		walkBothWays(t, e, path, 1, "blockHeight", []string{"5003", "5002", "5001"})
		v := okJSON(t, e.do(t, "GET", path+"?limit=2", nil))
		assert.Equal(t, true, field(v, "hasNext"))
		v = okJSON(t, e.do(t, "GET", path+"?limit=2&cursor="+url.QueryEscape(field(v, "endCursor").(string)), nil))
		assert.Equal(t, []any{json.Number("5001")}, []any{field(items(t, v, "data")[0], "blockHeight")})
		assert.Equal(t, false, field(v, "hasNext"))
	})
	t.Run("unknown pool is an empty page", func(t *testing.T) {
		v := okJSON(t, e.do(t, "GET", "/v2/dexpools/sol/NoSuchPool/snapshots", nil))
		assert.Equal(t, []any{}, field(v, "data"))
		assert.Nil(t, field(v, "endCursor"))
	})
	t.Run("bad input", func(t *testing.T) {
		badRequest(t, e.do(t, "GET", "/v2/dexpools/base/"+mktPool+"/snapshots", nil), "chain")
		badRequest(t, e.do(t, "GET", path+"?time=noon", nil), "time")
	})
}

func testRedPackets(t *testing.T, e *env) {
	t.Run("of a wallet", func(t *testing.T) {
		v := okJSON(t, e.do(t, "GET", "/v2/redpacket/wallet/MktC1/redpackets", nil))
		checkTypes(t, "page", v, typesRedPacketPage)
		list := items(t, v, "records")
		assert.Equal(t, []string{"MktRP2", "MktRP1"}, addresses(list, "id"))
		assert.Equal(t, json.Number("2"), field(v, "total"))
		rp := checkTypes(t, "redPacket", list[1], typesRedPacket)
		// 1000 total, 100 + 200 claimed by two wallets.
		assert.Equal(t, "300", rp["claimedAmount"])
		assert.Equal(t, json.Number("2"), rp["claimedCount"])
		assert.Equal(t, "0", rp["refundedAmount"])
		assert.Equal(t, json.Number("86400"), rp["expiration"])
		created, _ := rp["createdAt"].(json.Number).Int64()
		expired, _ := rp["expiredAt"].(json.Number).Int64()
		assert.Equal(t, int64(86_400_000), expired-created)
	})
	t.Run("list by creator and chain", func(t *testing.T) {
		tests := []struct {
			query string
			want  []string
			total string
		}{
			{"creator=MktC1", []string{"MktRP2", "MktRP1"}, "2"},
			{"creator=MktC1&chain=sol", []string{"MktRP2", "MktRP1"}, "2"},
			{"creator=MktC1&chain=bsc", []string{}, "0"},
			{"creator=MktC2&chain=BSC", []string{"MktRP3"}, "1"},
			{"creator=MktC1&limit=1", []string{"MktRP2"}, "2"},
		}
		for _, tc := range tests {
			v := okJSON(t, e.do(t, "GET", "/v2/redpacket?"+tc.query, nil))
			assert.Equal(t, tc.want, addresses(items(t, v, "records"), "id"), tc.query)
			assert.Equal(t, json.Number(tc.total), field(v, "total"), tc.query)
		}
		v := okJSON(t, e.do(t, "GET", "/v2/redpacket?chain=bsc", nil))
		assert.Contains(t, addresses(items(t, v, "records"), "id"), "MktRP3")
		v = okJSON(t, e.do(t, "GET", "/v2/redpacket?creator=MktC1&limit=1", nil))
		assert.Equal(t, true, field(v, "hasNextPage"))
		v = okJSON(t, e.do(t, "GET", "/v2/redpacket?creator=MktC1&limit=1&cursor="+url.QueryEscape(field(v, "endCursor").(string)), nil))
		assert.Equal(t, []string{"MktRP1"}, addresses(items(t, v, "records"), "id"))
		assert.Equal(t, false, field(v, "hasNextPage"))
		v = okJSON(t, e.do(t, "GET", "/v2/redpacket?creator=MktC1&limit=1&direction=prev&cursor="+url.QueryEscape(field(v, "startCursor").(string)), nil))
		assert.Equal(t, []string{"MktRP2"}, addresses(items(t, v, "records"), "id"))
	})
	t.Run("claims", func(t *testing.T) {
		v := okJSON(t, e.do(t, "GET", "/v2/redpacket/MktRP1/claims", nil))
		checkTypes(t, "page", v, typesRedPacketPage)
		list := items(t, v, "records")
		assert.Equal(t, []string{"MktK2", "MktK1"}, addresses(list, "claimer"))
		c := checkTypes(t, "claim", list[0], typesClaim)
		assert.Equal(t, "200", c["amount"])
		assert.Equal(t, "MktC1", c["creator"])
		assert.Equal(t, json.Number("2"), field(v, "total"))
		v = okJSON(t, e.do(t, "GET", "/v2/redpacket/MktRP2/claims", nil))
		assert.Equal(t, []any{}, field(v, "records"))
		assert.Equal(t, json.Number("0"), field(v, "total"))
		r := e.do(t, "GET", "/v2/redpacket/NoSuchPacket/claims", nil)
		assert.Equal(t, 404, r.Status, "body: %s", r.Body)
	})
	t.Run("bad input", func(t *testing.T) {
		badRequest(t, e.do(t, "GET", "/v2/redpacket?chain=doge", nil), "chain")
		badRequest(t, e.do(t, "GET", "/v2/redpacket?limit=500", nil), "limit")
		badRequest(t, e.do(t, "GET", "/v2/redpacket/MktRP1/claims?cursor=xyz", nil), "cursor")
	})
}

func testPnL(t *testing.T, e *env) {
	path := "/v2/wallet/sol/" + mktW1 + "/pnl-by-token?tokenAddresses=" + url.QueryEscape(mktBonk+","+mktWif+",MktUnknown")
	v := okJSON(t, e.do(t, "GET", path, nil))
	page := checkTypes(t, "page", v, map[string]string{"data": "array", "startCursor": "string|null",
		"endCursor": "string|null", "hasNext": "boolean", "hasPrev": "boolean", "summary": "object"})
	list := page["data"].([]any)
	require.Len(t, list, 2, "one entry per traded token; the unknown one is left out")
	for _, it := range list {
		checkTypes(t, "entry", it, typesPnLEntry)
	}
	bonk := list[0].(map[string]any)
	require.Equal(t, mktBonk, bonk["tokenAddress"])
	// W1 bought 100 at $1 and 100 at $3 (200 tokens for $400, average $2), sold 150 at $4 ($600,
	// cost removed 150 × 2 = $300, realized $300). 50 left costing $100, now worth 50 × $5 = $250:
	// unrealized $150, total $450 over 3 trades.
	want := map[string]string{"buyAmount": "200", "buyAmountInUsd": "400", "sellAmount": "150", "sellAmountInUsd": "600",
		"avgBuyPriceInUsd": "2", "avgSellPriceInUsd": "4", "balance": "50", "priceInUsd": "5", "currentValue": "250",
		"realizedProfitInUsd": "300", "realizedProfitRatio": "1", "unrealizedProfitInUsd": "150",
		"unrealizedProfitRatio": "1.5", "totalProfitInUsd": "450", "totalProfitRatio": "1.125", "avgProfitPerTradeInUsd": "150"}
	for k, w := range want {
		assertDec(t, w, bonk[k], k)
	}
	assert.Equal(t, "2", bonk["buys"])
	assert.Equal(t, "1", bonk["sells"])
	assert.Equal(t, "3", bonk["totalTrades"])
	assert.Equal(t, false, bonk["isClosed"])
	assert.Equal(t, "ZQBONK", bonk["symbol"])
	assert.Equal(t, json.Number("6"), bonk["decimals"])
	assert.Equal(t, mktW1, bonk["walletAddress"])
	// Summary: WIF adds a $20 buy worth $20 now (no profit, neither win nor loss).
	sum := checkTypes(t, "summary", page["summary"], typesPnLSummary)
	wantSum := map[string]string{"buyAmountInUsd": "420", "sellAmountInUsd": "600", "totalCostInUsd": "420",
		"currentValue": "270", "realizedProfitInUsd": "300", "unrealizedProfitInUsd": "150", "totalProfitInUsd": "450",
		"realizedProfitRatio": "1", "avgProfitPerTradeInUsd": "112.5", "winRate": "1"}
	for k, w := range wantSum {
		assertDec(t, w, sum[k], "summary."+k)
	}
	for k, w := range map[string]string{"tokens": "2", "buys": "3", "sells": "1", "totalTrades": "4", "wins": "1", "losses": "0"} {
		assert.Equal(t, w, sum[k], "summary."+k)
	}
	t.Run("paging keeps the summary", func(t *testing.T) {
		p1 := okJSON(t, e.do(t, "GET", path+"&limit=1", nil)).(map[string]any)
		assert.Equal(t, []string{mktBonk}, addresses(p1["data"].([]any), "tokenAddress"))
		assert.Equal(t, true, p1["hasNext"])
		assert.Equal(t, "2", field(p1["summary"], "tokens"))
		p2 := okJSON(t, e.do(t, "GET", path+"&limit=1&cursor="+url.QueryEscape(p1["endCursor"].(string)), nil)).(map[string]any)
		assert.Equal(t, []string{mktWif}, addresses(p2["data"].([]any), "tokenAddress"))
		assert.Equal(t, false, p2["hasNext"])
		assert.Equal(t, true, p2["hasPrev"])
		walkBothWays(t, e, path, 1, "tokenAddress", []string{mktBonk, mktWif})
	})
	t.Run("bad input", func(t *testing.T) {
		badRequest(t, e.do(t, "GET", "/v2/wallet/sol/"+mktW1+"/pnl-by-token", nil), "tokenAddresses")
		many := make([]string, 101)
		for i := range many {
			many[i] = "t" + strconv.Itoa(i)
		}
		badRequest(t, e.do(t, "GET", "/v2/wallet/sol/"+mktW1+"/pnl-by-token?tokenAddresses="+strings.Join(many, ","), nil), "tokenAddresses")
		badRequest(t, e.do(t, "GET", "/v2/wallet/base/"+mktW1+"/pnl-by-token?tokenAddresses=a", nil), "chain")
	})
}

func testHotTokens(t *testing.T, e *env) {
	base := "/v2/ranking/sol/hotTokens/4h"
	get := func(q string) []string {
		t.Helper()
		v := okJSON(t, e.do(t, "GET", base+"?"+q, nil))
		list, ok := v.([]any)
		require.True(t, ok, "bare array")
		return only(addresses(list, "address"), mktBonk, mktWif, mktPop)
	}
	t.Run("shape", func(t *testing.T) {
		v := okJSON(t, e.do(t, "GET", base, nil))
		list := v.([]any)
		require.NotEmpty(t, list)
		assert.LessOrEqual(t, len(list), 100)
		for _, it := range list {
			tok := checkTypes(t, "token", it, typesTokenV2)
			checkTypes(t, "marketData", tok["marketData"], typesMarketDataV2)
			checkTypes(t, "extra", tok["extra"], typesExtra)
		}
	})
	rf := func(s string) string { return "rangeFilters=" + url.QueryEscape(s) }
	tests := []struct {
		name, query string
		want        []string
	}{
		{"rank order", "", []string{mktPop, mktBonk, mktWif}},
		{"sort market cap desc", "sortBy=marketData.marketCapInUsd", []string{mktBonk, mktWif, mktPop}},
		{"sort market cap asc", "sortBy=marketData.marketCapInUsd&sortDirection=ASC", []string{mktPop, mktWif, mktBonk}},
		{"sort max pool tvl", "sortBy=marketData.maxPoolTvlInUsd&sortDirection=desc", []string{mktBonk, mktPop, mktWif}},
		{"sort total tvl", "sortBy=marketData.totalTvlInUsd", []string{mktBonk, mktPop, mktWif}},
		{"sort trades 24h", "sortBy=stats.trades24h", []string{mktPop, mktBonk, mktWif}},
		{"tag", "tag=alpha_fun", []string{mktBonk}},
		{"launchpad platforms", "launchpadPlatform=alpha_fun&launchpadPlatform=beta_launchpad", []string{mktBonk, mktWif}},
		{"has twitter", "filters=has_twitter", []string{mktBonk}},
		{"has telegram", "filters[]=has_telegram", []string{mktWif}},
		{"has social media", "filters=has_social_media", []string{mktBonk, mktWif}},
		{"has twitter and telegram", "filters=has_twitter,has_telegram", nil},
		{"search keywords", "searchKeywords=DOG&searchKeywords=zqpop", []string{mktPop, mktWif}},
		{"exclude keywords", "excludeKeywords=bonk", []string{mktPop, mktWif}},
		{"range", rf(`[{"field":"marketData.priceInUsd","min":"1","max":"5"}]`), []string{mktBonk, mktWif}},
		{"range per key", rf(`{"field":"marketData.priceInUsd","min":"1"}`) + "&" + rf(`{"field":"marketData.holders","max":"1"}`), []string{mktWif}},
		{"range legacy filterBy", "filterBy=" + url.QueryEscape(`[{"field":"marketData.priceInUsd","max":"0.5"}]`), []string{mktPop}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, get(tc.query))
		})
	}
	t.Run("other durations are empty", func(t *testing.T) {
		v := okJSON(t, e.do(t, "GET", "/v2/ranking/sol/hotTokens/1m", nil))
		assert.Empty(t, only(addresses(v.([]any), "address"), mktBonk, mktWif, mktPop))
		v = okJSON(t, e.do(t, "GET", "/v2/ranking/eth/hotTokens/1m", nil))
		assert.Equal(t, []any{}, v)
	})
	t.Run("bad input", func(t *testing.T) {
		badRequest(t, e.do(t, "GET", "/v2/ranking/sol/hotTokens/2h", nil), "duration")
		badRequest(t, e.do(t, "GET", "/v2/ranking/base/hotTokens/1h", nil), "chain")
		badRequest(t, e.do(t, "GET", base+"?sortBy=marketData.tvlInUsd", nil), "sortBy")
		badRequest(t, e.do(t, "GET", base+"?sortDirection=sideways", nil), "sortDirection")
		badRequest(t, e.do(t, "GET", base+"?tag=pump", nil), "tag")
		badRequest(t, e.do(t, "GET", base+"?filters=has_wings", nil), "filters")
		badRequest(t, e.do(t, "GET", base+"?launchpadPlatform=nope", nil), "launchpadPlatform")
		badRequest(t, e.do(t, "GET", base+"?"+rf(`[{"field":"marketData.priceInUsd","min":"x"}]`), nil), "rangeFilters")
		many := strings.Repeat("k,", 101)
		badRequest(t, e.do(t, "GET", base+"?searchKeywords="+many, nil), "searchKeywords")
	})
}
