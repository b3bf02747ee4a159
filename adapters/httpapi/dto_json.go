package httpapi

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/app/market"
	"github.com/tokenscope/tokenscope/domain/page"
	"github.com/tokenscope/tokenscope/domain/pool"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/domain/trade"
)

// Hand-written encoders of the hot routes' DTOs (see json.go): trades, pool snapshots, PnL and
// the token records (dto_token.go). Each response has one mapping layer, its DTO: a
// constructor maps the domain value to it, and its appendJSON writes the fields in declaration
// order under their json tags, exactly the bytes encoding/json writes for the same value (HTML
// escaping off). json_test.go checks that on random values (nulls, empty and nil slices,
// unicode, invalid UTF-8, HTML-special characters), so a field added to a DTO without its line
// here fails the tests.
//
// By hand rather than go:generate: seven records (trade, snapshot, PnL entry and summary, the
// three token records) and a few nested objects, each a straight list of key and value lines
// the oracle test checks; the token records' keyed objects are key tables (tokenKeys) a struct
// generator would not produce anyway; a generator, its output and a test that the output is
// current would be more code than these encoders and one more step on every DTO change.
// Routes whose encoding cost does not show next to their database or workflow time (whoami,
// webhook endpoints, KYT, jobs, red packets) use c.JSON over plain DTOs instead.

// appendArray writes items as a JSON array, item writing each one: [] when empty or nil.
func appendArray[T any](b []byte, items []T, item func(*T, []byte) []byte) []byte {
	b = append(b, '[')
	for i := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = item(&items[i], b)
	}
	return append(b, ']')
}

// appendPage writes toPage(p, …) without building the DTO slice, item writing each item: the
// page envelope with data [] when empty, like toPage's slice.
func appendPage[T any](b []byte, p page.Page[T], item func(*T, []byte) []byte) []byte {
	b = append(b, `{"data":`...)
	b = appendArray(b, p.Items, item)
	return appendPageTail(b, p.StartCursor, p.EndCursor, p.HasNext, p.HasPrev)
}

// appendTradePage writes toPage(p, tradeOut): each trade is converted into a DTO on the stack
// and encoded.
func appendTradePage(b []byte, p page.Page[trade.Trade]) []byte {
	return appendPage(b, p, func(t *trade.Trade, b []byte) []byte {
		dto := tradeOut(*t)
		return dto.appendJSON(b)
	})
}

// appendSnapshotPage writes toPage(p, snapshotOut) as appendTradePage does.
func appendSnapshotPage(b []byte, p page.Page[pool.Snapshot]) []byte {
	return appendPage(b, p, func(s *pool.Snapshot, b []byte) []byte {
		dto := snapshotOut(*s)
		return dto.appendJSON(b)
	})
}

// appendPnLPage writes pnlPageDTO{pageDTO: toPage(r.Page, pnlEntryOut), Summary:
// pnlSummaryOut(r.Summary)} as appendTradePage does: the page's fields, then summary
// (encoding/json flattens the embedded page).
func appendPnLPage(b []byte, r market.PnLResult) []byte {
	b = appendPage(b, r.Page, func(e *market.PnLEntry, b []byte) []byte {
		dto := pnlEntryOut(*e)
		return dto.appendJSON(b)
	})
	b = b[:len(b)-1] // reopen the object for summary
	b = append(b, `,"summary":`...)
	summary := pnlSummaryOut(r.Summary)
	b = summary.appendJSON(b)
	return append(b, '}')
}

// appendPageTail writes the fields of pageDTO after data, and the closing brace.
func appendPageTail(b []byte, start, end *string, hasNext, hasPrev bool) []byte {
	b = append(b, `,"startCursor":`...)
	b = appendNullableString(b, start)
	b = append(b, `,"endCursor":`...)
	b = appendNullableString(b, end)
	b = append(b, `,"hasNext":`...)
	b = appendBool(b, hasNext)
	b = append(b, `,"hasPrev":`...)
	b = appendBool(b, hasPrev)
	return append(b, '}')
}

func (t *tradeDTO) appendJSON(b []byte) []byte {
	b = append(b, `{"accountOwnerAddress":`...)
	b = appendString(b, t.AccountOwnerAddress)
	b = append(b, `,"blockHeight":`...)
	b = strconv.AppendInt(b, t.BlockHeight, 10)
	b = append(b, `,"blockTimestamp":`...)
	b = strconv.AppendInt(b, t.BlockTimestamp, 10)
	b = append(b, `,"chain":`...)
	b = appendString(b, t.Chain)
	b = append(b, `,"poolAddress":`...)
	b = appendString(b, t.PoolAddress)
	b = append(b, `,"tokenAddress":`...)
	b = appendString(b, t.TokenAddress)
	b = append(b, `,"tokenName":`...)
	b = appendString(b, t.TokenName)
	b = append(b, `,"tokenSymbol":`...)
	b = appendString(b, t.TokenSymbol)
	b = append(b, `,"tokenImageUrl":`...)
	b = appendString(b, t.TokenImageURL)
	b = append(b, `,"tokenAmount":`...)
	b = appendDecimal(b, t.TokenAmount)
	b = append(b, `,"tokenAmountInNative":`...)
	b = appendDecimal(b, t.TokenAmountInNative)
	b = append(b, `,"tokenAmountInUsd":`...)
	b = appendDecimal(b, t.TokenAmountInUsd)
	b = append(b, `,"tokenPriceInNative":`...)
	b = appendDecimal(b, t.TokenPriceInNative)
	b = append(b, `,"tokenPriceInUsd":`...)
	b = appendDecimal(b, t.TokenPriceInUsd)
	b = append(b, `,"sideTokenAddress":`...)
	b = appendString(b, t.SideTokenAddress)
	b = append(b, `,"sideTokenName":`...)
	b = appendString(b, t.SideTokenName)
	b = append(b, `,"sideTokenSymbol":`...)
	b = appendString(b, t.SideTokenSymbol)
	b = append(b, `,"sideTokenImageUrl":`...)
	b = appendString(b, t.SideTokenImageURL)
	b = append(b, `,"sideTokenAmount":`...)
	b = appendDecimal(b, t.SideTokenAmount)
	b = append(b, `,"sideTokenAmountInNative":`...)
	b = appendDecimal(b, t.SideTokenAmountInNative)
	b = append(b, `,"sideTokenAmountInUsd":`...)
	b = appendDecimal(b, t.SideTokenAmountInUsd)
	b = append(b, `,"sideTokenPriceInNative":`...)
	b = appendDecimal(b, t.SideTokenPriceInNative)
	b = append(b, `,"sideTokenPriceInUsd":`...)
	b = appendDecimal(b, t.SideTokenPriceInUsd)
	b = append(b, `,"status":`...)
	b = appendString(b, t.Status)
	b = append(b, `,"transactionSignature":`...)
	b = appendString(b, t.TransactionSignature)
	b = append(b, `,"type":`...)
	b = appendString(b, t.Type)
	b = append(b, `,"dexImage":`...)
	b = appendString(b, t.DexImage)
	b = append(b, `,"dexProgramAddress":`...)
	b = appendString(b, t.DexProgramAddress)
	b = append(b, `,"dexProtocolFamily":`...)
	b = appendString(b, t.DexProtocolFamily)
	return append(b, '}')
}

func (s *poolSideDTO) appendJSON(b []byte) []byte {
	b = append(b, `{"amountInNative":`...)
	b = appendDecimal(b, s.AmountInNative)
	b = append(b, `,"amountInUsd":`...)
	b = appendDecimal(b, s.AmountInUsd)
	b = append(b, `,"decimals":`...)
	b = strconv.AppendInt(b, int64(s.Decimals), 10)
	b = append(b, `,"priceNative":`...)
	b = appendDecimal(b, s.PriceNative)
	b = append(b, `,"priceUsd":`...)
	b = appendDecimal(b, s.PriceUsd)
	b = append(b, `,"tokenAddress":`...)
	b = appendString(b, s.TokenAddress)
	b = append(b, `,"vaultAmount":`...)
	b = appendString(b, s.VaultAmount)
	return append(b, '}')
}

func (s *snapshotDTO) appendJSON(b []byte) []byte {
	b = append(b, `{"blockHeight":`...)
	b = strconv.AppendInt(b, s.BlockHeight, 10)
	b = append(b, `,"blockSlot":`...)
	b = appendNullableInt(b, s.BlockSlot)
	b = append(b, `,"blockTimestamp":`...)
	b = strconv.AppendInt(b, s.BlockTimestamp, 10)
	b = append(b, `,"snapshotTime":`...)
	b = strconv.AppendInt(b, s.SnapshotTime, 10)
	b = append(b, `,"poolAddress":`...)
	b = appendString(b, s.PoolAddress)
	b = append(b, `,"tokenA":`...)
	b = s.TokenA.appendJSON(b)
	b = append(b, `,"tokenB":`...)
	b = s.TokenB.appendJSON(b)
	b = append(b, `,"tvlInNative":`...)
	b = appendDecimal(b, s.TvlInNative)
	b = append(b, `,"tvlInUsd":`...)
	b = appendDecimal(b, s.TvlInUsd)
	return append(b, '}')
}

func (e *pnlEntryDTO) appendJSON(b []byte) []byte {
	b = append(b, `{"avgBuyPriceInUsd":`...)
	b = appendDecimal(b, e.AvgBuyPriceInUsd)
	b = append(b, `,"avgProfitPerTradeInUsd":`...)
	b = appendDecimal(b, e.AvgProfitPerTradeInUsd)
	b = append(b, `,"avgSellPriceInUsd":`...)
	b = appendDecimal(b, e.AvgSellPriceInUsd)
	b = append(b, `,"balance":`...)
	b = appendDecimal(b, e.Balance)
	b = append(b, `,"buyAmount":`...)
	b = appendDecimal(b, e.BuyAmount)
	b = append(b, `,"buyAmountInUsd":`...)
	b = appendDecimal(b, e.BuyAmountInUsd)
	b = append(b, `,"currentValue":`...)
	b = appendDecimal(b, e.CurrentValue)
	b = append(b, `,"priceInUsd":`...)
	b = appendDecimal(b, e.PriceInUsd)
	b = append(b, `,"realizedProfitInUsd":`...)
	b = appendDecimal(b, e.RealizedProfitInUsd)
	b = append(b, `,"realizedProfitRatio":`...)
	b = appendDecimal(b, e.RealizedProfitRatio)
	b = append(b, `,"sellAmount":`...)
	b = appendDecimal(b, e.SellAmount)
	b = append(b, `,"sellAmountInUsd":`...)
	b = appendDecimal(b, e.SellAmountInUsd)
	b = append(b, `,"totalProfitInUsd":`...)
	b = appendDecimal(b, e.TotalProfitInUsd)
	b = append(b, `,"totalProfitRatio":`...)
	b = appendDecimal(b, e.TotalProfitRatio)
	b = append(b, `,"unrealizedProfitInUsd":`...)
	b = appendDecimal(b, e.UnrealizedProfitInUsd)
	b = append(b, `,"unrealizedProfitRatio":`...)
	b = appendDecimal(b, e.UnrealizedProfitRatio)
	b = append(b, `,"buys":`...)
	b = appendString(b, e.Buys)
	b = append(b, `,"sells":`...)
	b = appendString(b, e.Sells)
	b = append(b, `,"totalTrades":`...)
	b = appendString(b, e.TotalTrades)
	b = append(b, `,"tokenAddress":`...)
	b = appendString(b, e.TokenAddress)
	b = append(b, `,"walletAddress":`...)
	b = appendString(b, e.WalletAddress)
	b = append(b, `,"logoUri":`...)
	b = appendString(b, e.LogoURI)
	b = append(b, `,"name":`...)
	b = appendString(b, e.Name)
	b = append(b, `,"symbol":`...)
	b = appendString(b, e.Symbol)
	b = append(b, `,"decimals":`...)
	b = strconv.AppendInt(b, int64(e.Decimals), 10)
	b = append(b, `,"isClosed":`...)
	b = appendBool(b, e.IsClosed)
	return append(b, '}')
}

func (s *pnlSummaryDTO) appendJSON(b []byte) []byte {
	b = append(b, `{"avgProfitPerTradeInUsd":`...)
	b = appendDecimal(b, s.AvgProfitPerTradeInUsd)
	b = append(b, `,"buyAmountInUsd":`...)
	b = appendDecimal(b, s.BuyAmountInUsd)
	b = append(b, `,"currentValue":`...)
	b = appendDecimal(b, s.CurrentValue)
	b = append(b, `,"realizedProfitInUsd":`...)
	b = appendDecimal(b, s.RealizedProfitInUsd)
	b = append(b, `,"realizedProfitRatio":`...)
	b = appendDecimal(b, s.RealizedProfitRatio)
	b = append(b, `,"sellAmountInUsd":`...)
	b = appendDecimal(b, s.SellAmountInUsd)
	b = append(b, `,"totalCostInUsd":`...)
	b = appendDecimal(b, s.TotalCostInUsd)
	b = append(b, `,"totalProfitInUsd":`...)
	b = appendDecimal(b, s.TotalProfitInUsd)
	b = append(b, `,"unrealizedProfitInUsd":`...)
	b = appendDecimal(b, s.UnrealizedProfitInUsd)
	b = append(b, `,"winRate":`...)
	b = appendDecimal(b, s.WinRate)
	b = append(b, `,"buys":`...)
	b = appendString(b, s.Buys)
	b = append(b, `,"sells":`...)
	b = appendString(b, s.Sells)
	b = append(b, `,"losses":`...)
	b = appendString(b, s.Losses)
	b = append(b, `,"wins":`...)
	b = appendString(b, s.Wins)
	b = append(b, `,"tokens":`...)
	b = appendString(b, s.Tokens)
	b = append(b, `,"totalTrades":`...)
	b = appendString(b, s.TotalTrades)
	return append(b, '}')
}

// --- token records (dto_token.go) ---

// appendTokenV2List writes the bare array of v2 records of ranking and v2 multi-detail ([] when
// empty, as the handlers' make([]tokenV2DTO, len(ds)) was).
func appendTokenV2List(b []byte, ds []token.Detail) []byte {
	return appendArray(b, ds, tokenV2Item)
}

// appendMultiTokenList writes the bare array of multi-detail records ([] when empty).
func appendMultiTokenList(b []byte, ds []token.Detail, chainName string) []byte {
	return appendArray(b, ds, func(d *token.Detail, b []byte) []byte {
		t := multiTokenOut(d, chainName)
		return t.appendJSON(b)
	})
}

// appendTokenV2Page writes toPage(p, tokenV2Out) as appendTradePage does.
func appendTokenV2Page(b []byte, p page.Page[token.Detail]) []byte {
	return appendPage(b, p, tokenV2Item)
}

// appendTokenFastPage writes toPage(p, tokenFastOut) as appendTradePage does.
func appendTokenFastPage(b []byte, p page.Page[token.Detail]) []byte {
	return appendPage(b, p, func(d *token.Detail, b []byte) []byte {
		t := tokenFastOut(d)
		return t.appendJSON(b)
	})
}

// tokenV2Item writes the v2 record of d, built on the stack.
func tokenV2Item(d *token.Detail, b []byte) []byte {
	t := tokenV2Out(d)
	return t.appendJSON(b)
}

func (t *tokenV2DTO) appendJSON(b []byte) []byte {
	b = append(b, `{"address":`...)
	b = appendString(b, t.Address)
	b = append(b, `,"chain":`...)
	b = appendString(b, t.Chain)
	b = append(b, `,"decimals":`...)
	b = strconv.AppendInt(b, int64(t.Decimals), 10)
	b = append(b, `,"name":`...)
	b = appendString(b, t.Name)
	b = append(b, `,"symbol":`...)
	b = appendString(b, t.Symbol)
	b = append(b, `,"vendorCoinId":`...)
	b = t.VendorCoinID.appendJSON(b)
	b = append(b, `,"description":`...)
	b = t.Description.appendJSON(b)
	b = append(b, `,"devLastTokenCreatedAt":`...)
	b = t.DevLastTokenCreatedAt.appendJSON(b)
	b = append(b, `,"devTotalTokens":`...)
	b = appendNullableQuotedInt(b, t.DevTotalTokens)
	b = append(b, `,"extension":`...)
	start := len(b)
	b = t.Extension.appendJSON(b)
	end := len(b)
	b = append(b, `,"extra":`...)
	if t.Extra == t.Extension { // the same pointers, as tokenV2Out builds them: the same bytes
		b = append(b, b[start:end]...)
	} else {
		b = t.Extra.appendJSON(b)
	}
	b = append(b, `,"imageUrl":`...)
	b = t.ImageURL.appendJSON(b)
	b = append(b, `,"market":`...)
	b = t.Market.appendJSON(b)
	b = append(b, `,"marketData":`...)
	b = t.MarketData.appendJSON(b)
	b = append(b, `,"metadataAddress":`...)
	b = t.MetadataAddress.appendJSON(b)
	b = append(b, `,"socialMedias":`...)
	b = t.SocialMedias.appendJSON(b)
	b = append(b, `,"stats":{"address":`...)
	b = appendString(b, t.Stats.Address)
	b = append(b, `,"periods":`...)
	b = t.Stats.Periods.appendJSON(b)
	b = append(b, `},"tokenCreatedAt":`...)
	b = appendNullableInt(b, t.TokenCreatedAt)
	b = append(b, `,"tokenCreatedBlockHeight":`...)
	b = appendNullableQuotedInt(b, t.TokenCreatedBlockHeight)
	b = append(b, `,"tokenCreatedSlot":`...)
	b = appendNullableQuotedInt(b, t.TokenCreatedSlot)
	b = append(b, `,"tokenCreatedTxSignature":`...)
	b = t.TokenCreatedTxSignature.appendJSON(b)
	b = append(b, `,"tokenCreators":`...)
	b = t.TokenCreators.appendJSON(b)
	b = append(b, `,"uri":`...)
	b = t.URI.appendJSON(b)
	return append(b, '}')
}

func (t *tokenFastDTO) appendJSON(b []byte) []byte {
	b = append(b, `{"address":`...)
	b = appendString(b, t.Address)
	b = append(b, `,"chain":`...)
	b = appendString(b, t.Chain)
	b = append(b, `,"decimals":`...)
	b = strconv.AppendInt(b, int64(t.Decimals), 10)
	b = append(b, `,"name":`...)
	b = appendString(b, t.Name)
	b = append(b, `,"symbol":`...)
	b = appendString(b, t.Symbol)
	b = append(b, `,"imageUrl":`...)
	b = t.ImageURL.appendJSON(b)
	b = append(b, `,"tokenCreatedAt":`...)
	b = appendNullableInt(b, t.TokenCreatedAt)
	m := &t.MarketData
	b = append(b, `,"marketData":{"holders":`...)
	b = appendDecimal(b, m.Holders)
	b = append(b, `,"marketCapInUsd":`...)
	b = appendDecimal(b, m.MarketCapInUsd)
	b = append(b, `,"priceInUsd":`...)
	b = appendDecimal(b, m.PriceInUsd)
	b = append(b, `,"totalTvlInUsd":`...)
	b = appendDecimal(b, m.TotalTvlInUsd)
	b = append(b, `},"stats":{"address":`...)
	b = appendString(b, t.Stats.Address)
	day := &t.Stats.Periods.Day
	b = append(b, `,"periods":{"24h":{"totalVolumeInUsd":`...)
	b = appendDecimal(b, day.TotalVolumeInUsd)
	b = append(b, `,"trades":`...)
	b = appendQuotedInt(b, day.Trades)
	return append(b, "}}}}"...)
}

func (t *multiTokenDTO) appendJSON(b []byte) []byte {
	b = append(b, `{"chain":`...)
	b = appendString(b, t.Chain)
	b = append(b, `,"decimals":`...)
	b = strconv.AppendInt(b, int64(t.Decimals), 10)
	b = append(b, `,"name":`...)
	b = appendString(b, t.Name)
	b = append(b, `,"symbol":`...)
	b = appendString(b, t.Symbol)
	b = append(b, `,"address":`...)
	b = appendString(b, t.Address)
	b = append(b, `,"stats":`...)
	b = t.Stats.appendJSON(b)
	b = append(b, `,"marketData":`...)
	b = t.MarketData.appendJSON(b)
	b = append(b, `,"metadataAddress":`...)
	b = t.MetadataAddress.appendJSON(b)
	b = append(b, `,"tokenCreators":`...)
	b = t.TokenCreators.appendJSON(b)
	b = append(b, `,"imageUrl":`...)
	b = t.ImageURL.appendJSON(b)
	b = append(b, `,"uri":`...)
	b = t.URI.appendJSON(b)
	b = append(b, `,"extra":`...)
	b = t.Extra.appendJSON(b)
	b = append(b, `,"socialMedias":`...)
	b = t.SocialMedias.appendJSON(b)
	b = append(b, `,"tokenCreatedAt":`...)
	b = appendNullableInt(b, t.TokenCreatedAt)
	b = append(b, `,"description":`...)
	b = t.Description.appendJSON(b)
	b = append(b, `,"market":`...)
	b = t.Market.appendJSON(b)
	b = append(b, `,"extension":{"website":`...)
	b = t.Extension.Website.appendJSON(b)
	b = append(b, `,"twitter":`...)
	b = t.Extension.Twitter.appendJSON(b)
	b = append(b, `},"liquidity":`...)
	b = t.Liquidity.appendJSON(b)
	return append(b, '}')
}

func (l *liquidityDTO) appendJSON(b []byte) []byte {
	b = append(b, `{"programAddress":`...)
	b = appendString(b, l.ProgramAddress)
	b = append(b, `,"protocolFamily":`...)
	b = appendString(b, l.ProtocolFamily)
	b = append(b, `,"image":`...)
	b = appendString(b, l.Image)
	b = append(b, `,"chain":`...)
	b = appendString(b, l.Chain)
	b = append(b, `,"poolAddress":`...)
	b = appendString(b, l.PoolAddress)
	b = append(b, `,"protocolName":`...)
	b = appendString(b, l.ProtocolName)
	b = append(b, `,"tokenAAddress":`...)
	b = appendString(b, l.TokenAAddress)
	b = append(b, `,"tokenBAddress":`...)
	b = appendString(b, l.TokenBAddress)
	b = append(b, `,"tvlInUsd":`...)
	b = appendDecimal(b, l.TvlInUsd)
	b = append(b, `,"tvlInSol":`...)
	b = appendDecimal(b, l.TvlInSol)
	return append(b, '}')
}

func (l creatorList) appendJSON(b []byte) []byte {
	return appendArray(b, l, func(c *token.Creator, b []byte) []byte {
		dto := creatorDTO(*c)
		return dto.appendJSON(b)
	})
}

func (l liquidityList) appendJSON(b []byte) []byte {
	return appendArray(b, l.pools, func(p *token.PoolLiquidity, b []byte) []byte {
		dto := liquidityOut(p, l.chainName)
		return dto.appendJSON(b)
	})
}

func (c *creatorDTO) appendJSON(b []byte) []byte {
	b = append(b, `{"address":`...)
	b = appendString(b, c.Address)
	b = append(b, `,"isVerified":`...)
	b = appendBool(b, c.IsVerified)
	b = append(b, `,"share":`...)
	b = strconv.AppendInt(b, c.Share, 10)
	return append(b, '}')
}

func (e *extraDTO) appendJSON(b []byte) []byte {
	b = append(b, `{"collectionAddress":`...)
	b = e.CollectionAddress.appendJSON(b)
	b = append(b, `,"editionNonce":`...)
	b = appendNullableInt(b, e.EditionNonce)
	b = append(b, `,"freezeAuthority":`...)
	b = e.FreezeAuthority.appendJSON(b)
	b = append(b, `,"fungible":`...)
	b = appendNullableBool(b, e.Fungible)
	b = append(b, `,"isMutable":`...)
	b = appendNullableBool(b, e.IsMutable)
	b = append(b, `,"isNative":`...)
	b = appendNullableBool(b, e.IsNative)
	b = append(b, `,"isVerifiedCollection":`...)
	b = appendNullableBool(b, e.IsVerifiedCollection)
	b = append(b, `,"isWrapped":`...)
	b = appendNullableBool(b, e.IsWrapped)
	b = append(b, `,"key":`...)
	b = e.Key.appendJSON(b)
	b = append(b, `,"launchFromProgramAddress":`...)
	b = e.LaunchFromProgramAddress.appendJSON(b)
	b = append(b, `,"launchFromProtocolFamily":`...)
	b = e.LaunchFromProtocolFamily.appendJSON(b)
	b = append(b, `,"migratedAt":`...)
	b = e.MigratedAt.appendJSON(b)
	b = append(b, `,"migratedToPoolAddress":`...)
	b = e.MigratedToPoolAddress.appendJSON(b)
	b = append(b, `,"migratedToProgramAddress":`...)
	b = e.MigratedToProgramAddress.appendJSON(b)
	b = append(b, `,"migratedToProtocolFamily":`...)
	b = e.MigratedToProtocolFamily.appendJSON(b)
	b = append(b, `,"mintAuthority":`...)
	b = e.MintAuthority.appendJSON(b)
	b = append(b, `,"primarySaleHappened":`...)
	b = appendNullableBool(b, e.PrimarySaleHappened)
	b = append(b, `,"programAddress":`...)
	b = e.ProgramAddress.appendJSON(b)
	b = append(b, `,"sellerFeeBasisPoints":`...)
	b = appendNullableInt(b, e.SellerFeeBasisPoints)
	b = append(b, `,"tokenStandard":`...)
	b = e.TokenStandard.appendJSON(b)
	b = append(b, `,"updateAuthority":`...)
	b = e.UpdateAuthority.appendJSON(b)
	return append(b, '}')
}

// --- the keyed objects of the token records: each writes its key table (tokenKeys) in order ---

func (v socialsView) appendJSON(b []byte) []byte {
	if !v.s.Any() {
		return append(b, tokenKeys.noSocials...)
	}
	for i, k := range tokenKeys.socials {
		b = append(b, tokenKeys.socialKeys[i]...)
		if link := v.s.Get(k); link != "" {
			b = appendString(b, link)
		} else {
			b = append(b, "null"...)
		}
	}
	return append(b, '}')
}

func (v marketDataV2) appendJSON(b []byte) []byte {
	// A group's three keys are next to each other: one lookup serves them.
	var group token.HolderGroup
	var holding token.GroupHolding
	read := false
	for i := range tokenKeys.marketDataV2 {
		f := &tokenKeys.marketDataV2[i]
		b = append(b, f.key...)
		if f.get != nil {
			b = appendDecimal(b, f.get(v.m))
			continue
		}
		if !read || f.group != group {
			group, holding, read = f.group, v.m.Group(f.group), true
		}
		b = appendDecimal(b, groupPart(holding, f.part))
	}
	return append(b, '}')
}

func (v periodsV2) appendJSON(b []byte) []byte {
	if len(tokenKeys.windows) == 0 {
		return append(b, "{}"...)
	}
	for i, w := range tokenKeys.windows {
		b = append(b, tokenKeys.windowKeys[i]...)
		s := v.stats[w]
		for j := range tokenKeys.periodV2 {
			f := &tokenKeys.periodV2[j]
			b = append(b, f.key...)
			if f.field.isCount() {
				b = appendQuotedInt(b, f.field.count(&s)) // decimal.NewFromInt(n)
			} else {
				b = appendDecimal(b, f.field.decimal(&s))
			}
		}
		b = append(b, '}')
	}
	return append(b, '}')
}

// maxWindows is how many windows multiStats.appendJSON reads into an array on the stack.
const maxWindows = 8

func (v multiStats) appendJSON(b []byte) []byte {
	var buf [maxWindows]token.PeriodStats
	stats := buf[:0]
	if len(token.AllWindows) > maxWindows {
		stats = make([]token.PeriodStats, 0, len(token.AllWindows))
	}
	for _, w := range token.AllWindows {
		stats = append(stats, v.d.Stats[w])
	}
	for i := range tokenKeys.multiStats {
		f := &tokenKeys.multiStats[i]
		b = append(b, f.key...)
		switch {
		case f.window < 0:
			b = appendString(b, v.d.Address)
		case f.field.isCount():
			b = strconv.AppendInt(b, f.field.count(&stats[f.window]), 10)
		default:
			b = appendDecimal(b, f.field.decimal(&stats[f.window]))
		}
	}
	return append(b, '}')
}

func (v multiMarketData) appendJSON(b []byte) []byte {
	for i := range tokenKeys.multiMarketData {
		f := &tokenKeys.multiMarketData[i]
		b = append(b, f.key...)
		if f.count != nil {
			b = strconv.AppendInt(b, f.count(v.m), 10)
		} else {
			b = appendDecimal(b, f.get(v.m))
		}
	}
	return append(b, '}')
}

func (s nullString) appendJSON(b []byte) []byte {
	if s == "" {
		return append(b, "null"...)
	}
	return appendString(b, string(s))
}

func (n nullInt) appendJSON(b []byte) []byte {
	if !n.ok {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, n.v, 10)
}

func (u utcTime) appendJSON(b []byte) []byte {
	if u.t == nil {
		return append(b, "null"...)
	}
	// RFC 3339 text is digits, '-', ':', '.', 'T' and 'Z': nothing to escape.
	b = append(b, '"')
	b = u.t.UTC().AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

// appendNullableBool writes a *bool: null or the boolean.
func appendNullableBool(b []byte, v *bool) []byte {
	if v == nil {
		return append(b, "null"...)
	}
	return strconv.AppendBool(b, *v)
}

// appendQuotedInt writes n as a JSON string, as the ,string option and decimal.NewFromInt(n) do.
func appendQuotedInt(b []byte, n int64) []byte {
	b = append(b, '"')
	b = strconv.AppendInt(b, n, 10)
	return append(b, '"')
}

// appendNullableQuotedInt writes a *int64 field with the ,string option: null or the quoted integer.
func appendNullableQuotedInt(b []byte, n *int64) []byte {
	if n == nil {
		return append(b, "null"...)
	}
	return appendQuotedInt(b, *n)
}

// statField is one field of token.PeriodStats.
type statField uint8

const (
	// counts (int64)
	statBuys statField = iota
	statSells
	statTrades
	statBuyers
	statSellers
	statTraders
	// decimals
	statBuyVolume
	statSellVolume
	statTotalVolume
	statBuyVolumeInUSD
	statSellVolumeInUSD
	statTotalVolumeInUSD
	statOpenInUSD
	statCloseInUSD
	statHighInUSD
	statLowInUSD
	statPriceChangeRatioInUSD
	statCurrentLiquidityInUSD
)

func (f statField) isCount() bool { return f <= statTraders }

func (f statField) count(s *token.PeriodStats) int64 {
	switch f {
	case statBuys:
		return s.Buys
	case statSells:
		return s.Sells
	case statTrades:
		return s.Trades
	case statBuyers:
		return s.Buyers
	case statSellers:
		return s.Sellers
	case statTraders:
		return s.Traders
	}
	panic("statField.count: not a count")
}

func (f statField) decimal(s *token.PeriodStats) decimal.Decimal {
	switch f {
	case statBuyVolume:
		return s.BuyVolume
	case statSellVolume:
		return s.SellVolume
	case statTotalVolume:
		return s.TotalVolume
	case statBuyVolumeInUSD:
		return s.BuyVolumeInUSD
	case statSellVolumeInUSD:
		return s.SellVolumeInUSD
	case statTotalVolumeInUSD:
		return s.TotalVolumeInUSD
	case statOpenInUSD:
		return s.OpenInUSD
	case statCloseInUSD:
		return s.CloseInUSD
	case statHighInUSD:
		return s.HighInUSD
	case statLowInUSD:
		return s.LowInUSD
	case statPriceChangeRatioInUSD:
		return s.PriceChangeRatioInUSD
	case statCurrentLiquidityInUSD:
		return s.CurrentLiquidityInUSD
	}
	panic("statField.decimal: not a decimal")
}

// The three values of a holder group in marketDataV2.
const (
	groupRatio uint8 = iota
	groupHolders
	groupHoldings
)

func groupPart(h token.GroupHolding, part uint8) decimal.Decimal {
	switch part {
	case groupRatio:
		return h.HoldingsRatio
	case groupHolders:
		return h.TotalHolders
	default:
		return h.TotalHoldings
	}
}

// mdField is one key of a marketData object, in the order written: name, and key, the name
// encoded as `{"name":` for the first key and `,"name":` for the others. get reads a decimal;
// count, when set, an int64 instead; with neither, the value is part of group's holdings.
type mdField struct {
	name, key string
	get       func(*token.MarketData) decimal.Decimal
	count     func(*token.MarketData) int64
	group     token.HolderGroup
	part      uint8
}

// statKey is one key of a stats object, in the order written (name and key as in mdField):
// field of the window at index window of token.AllWindows, or the token's address when window
// is -1.
type statKey struct {
	name, key string
	window    int
	field     statField
}

// tokenKeys holds the key tables of the token records' keyed objects, each sorted as
// encoding/json sorts a map's keys, each key already encoded.
var tokenKeys = newTokenKeys()

type tokenKeyOrders struct {
	socials         []string // token.SocialKeys sorted
	socialKeys      []string // their `{"key":` / `,"key":`
	noSocials       string   // the socials object of a token without links
	marketDataV2    []mdField
	windows         []token.Window // token.AllWindows sorted
	windowKeys      []string       // their `{"w":` / `,"w":`
	periodV2        []statKey      // the keys of one period; window unused
	multiStats      []statKey
	multiMarketData []mdField
}

// objectKey is the encoded key of the i-th member of an object: `{"k":` or `,"k":`.
func objectKey(i int, k string) string {
	sep := byte(',')
	if i == 0 {
		sep = '{'
	}
	return string(appendString([]byte{sep}, k)) + ":"
}

func newTokenKeys() tokenKeyOrders {
	var o tokenKeyOrders

	o.socials = slices.Clone(token.SocialKeys)
	slices.Sort(o.socials)
	noSocials := []byte{}
	for i, k := range o.socials {
		o.socialKeys = append(o.socialKeys, objectKey(i, k))
		noSocials = append(append(noSocials, o.socialKeys[i]...), "null"...)
	}
	if len(o.socials) == 0 {
		noSocials = append(noSocials, '{')
	}
	o.noSocials = string(append(noSocials, '}'))

	// marketDataV2's keys.
	md := func(name string, get func(*token.MarketData) decimal.Decimal) mdField {
		return mdField{name: name, get: get}
	}
	v2 := []mdField{
		md("top10HoldingsRatio", func(m *token.MarketData) decimal.Decimal { return m.Top10.HoldingsRatio }),
		md("top10TotalHoldings", func(m *token.MarketData) decimal.Decimal { return m.Top10.TotalHoldings }),
		md("top50HoldingsRatio", func(m *token.MarketData) decimal.Decimal { return m.Top50.HoldingsRatio }),
		md("top50TotalHoldings", func(m *token.MarketData) decimal.Decimal { return m.Top50.TotalHoldings }),
		md("top100HoldingsRatio", func(m *token.MarketData) decimal.Decimal { return m.Top100.HoldingsRatio }),
		md("top100TotalHoldings", func(m *token.MarketData) decimal.Decimal { return m.Top100.TotalHoldings }),
		md("circulatingSupply", func(m *token.MarketData) decimal.Decimal { return m.CirculatingSupply }),
		md("completionRatio", func(m *token.MarketData) decimal.Decimal { return m.CompletionRatio }),
		md("fdvInSol", func(m *token.MarketData) decimal.Decimal { return m.FDVInSol }),
		md("fdvInUsd", func(m *token.MarketData) decimal.Decimal { return m.FDVInUSD }),
		md("holders", func(m *token.MarketData) decimal.Decimal { return m.Holders }),
		md("marketCapInSol", func(m *token.MarketData) decimal.Decimal { return m.MarketCapInSol }),
		md("marketCapInUsd", func(m *token.MarketData) decimal.Decimal { return m.MarketCapInUSD }),
		md("maxPoolTvlInSol", func(m *token.MarketData) decimal.Decimal { return m.MaxPoolTVLInSol }),
		md("maxPoolTvlInUsd", func(m *token.MarketData) decimal.Decimal { return m.MaxPoolTVLInUSD }),
		md("priceInSol", func(m *token.MarketData) decimal.Decimal { return m.PriceInSol }),
		md("priceInUsd", func(m *token.MarketData) decimal.Decimal { return m.PriceInUSD }),
		md("totalSupply", func(m *token.MarketData) decimal.Decimal { return m.TotalSupply }),
		md("totalTvlInSol", func(m *token.MarketData) decimal.Decimal { return m.TotalTVLInSol }),
		md("totalTvlInUsd", func(m *token.MarketData) decimal.Decimal { return m.TotalTVLInUSD }),
	}
	for _, g := range token.AllHolderGroups {
		v2 = append(v2, mdField{name: string(g) + "HoldingsRatio", group: g, part: groupRatio},
			mdField{name: string(g) + "TotalHolders", group: g, part: groupHolders},
			mdField{name: string(g) + "TotalHoldings", group: g, part: groupHoldings})
	}
	o.marketDataV2 = sortedFields(v2)

	o.windows = slices.Clone(token.AllWindows)
	slices.Sort(o.windows)
	for i, w := range o.windows {
		o.windowKeys = append(o.windowKeys, objectKey(i, string(w)))
	}

	// period's keys.
	o.periodV2 = sortedStatKeys([]statKey{
		{name: "buyVolumeInUsd", field: statBuyVolumeInUSD}, {name: "buyers", field: statBuyers},
		{name: "buys", field: statBuys}, {name: "closeInUsd", field: statCloseInUSD},
		{name: "currentLiquidityInUsd", field: statCurrentLiquidityInUSD}, {name: "highInUsd", field: statHighInUSD},
		{name: "lowInUsd", field: statLowInUSD}, {name: "openInUsd", field: statOpenInUSD},
		{name: "priceChangeRatioInUsd", field: statPriceChangeRatioInUSD}, {name: "sellVolumeInUsd", field: statSellVolumeInUSD},
		{name: "sellers", field: statSellers}, {name: "sells", field: statSells},
		{name: "totalVolumeInUsd", field: statTotalVolumeInUSD}, {name: "traders", field: statTraders},
		{name: "trades", field: statTrades},
	})

	// multiToken's stats keys: the address, then each field under its name and the window.
	multi := []statKey{{name: "address", window: -1}}
	for i, w := range token.AllWindows {
		for _, f := range []struct {
			name  string
			field statField
		}{
			{"price", statCloseInUSD}, {"buyVolumes", statBuyVolume}, {"sellsVolumes", statSellVolume},
			{"volumes", statTotalVolume}, {"buyVolumesInUsd", statBuyVolumeInUSD}, {"sellVolumesInUsd", statSellVolumeInUSD},
			{"volumesInUsd", statTotalVolumeInUSD}, {"openPriceInUsd", statOpenInUSD}, {"closePriceInUsd", statCloseInUSD},
			{"priceChangeRatioInUsd", statPriceChangeRatioInUSD}, {"highInUsd", statHighInUSD}, {"lowInUsd", statLowInUSD},
			{"buys", statBuys}, {"sells", statSells}, {"buyers", statBuyers}, {"sellers", statSellers},
			{"trades", statTrades}, {"traders", statTraders},
		} {
			multi = append(multi, statKey{name: f.name + string(w), window: i, field: f.field})
		}
	}
	o.multiStats = sortedStatKeys(multi)

	// multiToken's marketData keys.
	dev := func(m *token.MarketData) token.GroupHolding { return m.Group(token.Dev) }
	o.multiMarketData = sortedFields([]mdField{
		md("totalSupply", func(m *token.MarketData) decimal.Decimal { return m.TotalSupply }),
		md("marketCapInSol", func(m *token.MarketData) decimal.Decimal { return m.MarketCapInSol }),
		md("marketCapInUsd", func(m *token.MarketData) decimal.Decimal { return m.MarketCapInUSD }),
		md("top10TotalHoldings", func(m *token.MarketData) decimal.Decimal { return m.Top10.TotalHoldings }),
		md("top10HoldingsRatio", func(m *token.MarketData) decimal.Decimal { return m.Top10.HoldingsRatio }),
		md("top100TotalHoldings", func(m *token.MarketData) decimal.Decimal { return m.Top100.TotalHoldings }),
		md("top100HoldingsRatio", func(m *token.MarketData) decimal.Decimal { return m.Top100.HoldingsRatio }),
		md("priceInSol", func(m *token.MarketData) decimal.Decimal { return m.PriceInSol }),
		md("priceInUsd", func(m *token.MarketData) decimal.Decimal { return m.PriceInUSD }),
		md("tvlInSol", func(m *token.MarketData) decimal.Decimal { return m.TotalTVLInSol }),
		md("tvlInUsd", func(m *token.MarketData) decimal.Decimal { return m.TotalTVLInUSD }),
		md("completionRatio", func(m *token.MarketData) decimal.Decimal { return m.CompletionRatio }),
		md("devTeamAmount", func(m *token.MarketData) decimal.Decimal { return m.CreatorHoldings() }),
		md("devTeamRatio", func(m *token.MarketData) decimal.Decimal { return m.CreatorHoldingsRatio() }),
		{name: "holders", count: func(m *token.MarketData) int64 { return m.Holders.IntPart() }},
		{name: "devTeamCount", count: func(m *token.MarketData) int64 { return dev(m).TotalHolders.IntPart() }},
	})
	return o
}

// sortedFields sorts fs by name, as encoding/json orders a map's keys, and encodes the names.
func sortedFields(fs []mdField) []mdField {
	slices.SortFunc(fs, func(a, b mdField) int { return strings.Compare(a.name, b.name) })
	for i := range fs {
		fs[i].key = objectKey(i, fs[i].name)
	}
	return fs
}

// sortedStatKeys sorts ks by name, as encoding/json orders a map's keys, and encodes the names.
func sortedStatKeys(ks []statKey) []statKey {
	slices.SortFunc(ks, func(a, b statKey) int { return strings.Compare(a.name, b.name) })
	for i := range ks {
		ks[i].key = objectKey(i, ks[i].name)
	}
	return ks
}
