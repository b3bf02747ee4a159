package httpapi

import (
	"slices"
	"strconv"

	"github.com/tokenscope/tokenscope/app/market"
	"github.com/tokenscope/tokenscope/domain/page"
	"github.com/tokenscope/tokenscope/domain/pool"
	"github.com/tokenscope/tokenscope/domain/trade"
)

// Hand-written encoders of the DTOs of the busiest routes (see json.go). Each writes the fields
// in declaration order under their json tags, exactly as encoding/json would; json_test.go
// fails when a field is added to one of these types without being added here.

// appendTradePage writes toPage(p, tradeOut) without building the DTO slice: each trade is
// converted into a DTO on the stack and encoded. Like toPage's slice, data is [] when empty.
func appendTradePage(b []byte, p page.Page[trade.Trade]) []byte {
	b = append(b, `{"data":[`...)
	for i := range p.Items {
		if i > 0 {
			b = append(b, ',')
		}
		dto := tradeOut(p.Items[i])
		b = dto.appendJSON(b)
	}
	b = append(b, ']')
	return appendPageTail(b, p.StartCursor, p.EndCursor, p.HasNext, p.HasPrev)
}

// appendSnapshotPage writes toPage(p, snapshotOut) as appendTradePage does.
func appendSnapshotPage(b []byte, p page.Page[pool.Snapshot]) []byte {
	b = append(b, `{"data":[`...)
	for i := range p.Items {
		if i > 0 {
			b = append(b, ',')
		}
		dto := snapshotOut(p.Items[i])
		b = dto.appendJSON(b)
	}
	b = append(b, ']')
	return appendPageTail(b, p.StartCursor, p.EndCursor, p.HasNext, p.HasPrev)
}

// appendPnLPage writes pnlPageDTO{pageDTO: toPage(r.Page, pnlEntryOut), Summary:
// pnlSummaryOut(r.Summary)} as appendTradePage does: the page's fields, then summary
// (encoding/json flattens the embedded page).
func appendPnLPage(b []byte, r market.PnLResult) []byte {
	b = append(b, `{"data":[`...)
	for i := range r.Page.Items {
		if i > 0 {
			b = append(b, ',')
		}
		dto := pnlEntryOut(r.Page.Items[i])
		b = dto.appendJSON(b)
	}
	b = append(b, ']')
	b = appendPageTail(b, r.Page.StartCursor, r.Page.EndCursor, r.Page.HasNext, r.Page.HasPrev)
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

// appendItems writes a slice of DTOs: null when nil, else an array.
func appendItems[T any](b []byte, items []T, item func(*T, []byte) []byte) []byte {
	if items == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = item(&items[i], b)
	}
	return append(b, ']')
}

func appendRedPacketPage[T any](b []byte, p redPacketPageDTO[T], item func(*T, []byte) []byte) []byte {
	b = append(b, `{"records":`...)
	b = appendItems(b, p.Records, item)
	b = append(b, `,"hasNextPage":`...)
	b = appendBool(b, p.HasNextPage)
	b = append(b, `,"total":`...)
	b = strconv.AppendInt(b, p.Total, 10)
	b = append(b, `,"startCursor":`...)
	b = appendNullableString(b, p.StartCursor)
	b = append(b, `,"endCursor":`...)
	b = appendNullableString(b, p.EndCursor)
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

func (p *redPacketDTO) appendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, p.ID)
	b = append(b, `,"creator":`...)
	b = appendString(b, p.Creator)
	b = append(b, `,"claimAuthority":`...)
	b = appendString(b, p.ClaimAuthority)
	b = append(b, `,"mint":`...)
	b = appendString(b, p.Mint)
	b = append(b, `,"chain":`...)
	b = appendString(b, p.Chain)
	b = append(b, `,"maxClaims":`...)
	b = strconv.AppendInt(b, int64(p.MaxClaims), 10)
	b = append(b, `,"claimedCount":`...)
	b = strconv.AppendInt(b, int64(p.ClaimedCount), 10)
	b = append(b, `,"totalAmount":`...)
	b = appendString(b, p.TotalAmount)
	b = append(b, `,"claimedAmount":`...)
	b = appendString(b, p.ClaimedAmount)
	b = append(b, `,"refundedAmount":`...)
	b = appendString(b, p.RefundedAmount)
	b = append(b, `,"createdAt":`...)
	b = strconv.AppendInt(b, p.CreatedAt, 10)
	b = append(b, `,"expiredAt":`...)
	b = strconv.AppendInt(b, p.ExpiredAt, 10)
	b = append(b, `,"expiration":`...)
	b = strconv.AppendInt(b, p.Expiration, 10)
	b = append(b, `,"expired":`...)
	b = appendBool(b, p.Expired)
	b = append(b, `,"memo":`...)
	b = appendString(b, p.Memo)
	b = append(b, `,"shareId":`...)
	b = appendString(b, p.ShareID)
	b = append(b, `,"txHash":`...)
	b = appendString(b, p.TxHash)
	return append(b, '}')
}

func (c *claimDTO) appendJSON(b []byte) []byte {
	b = append(b, `{"amount":`...)
	b = appendString(b, c.Amount)
	b = append(b, `,"claimer":`...)
	b = appendString(b, c.Claimer)
	b = append(b, `,"mint":`...)
	b = appendString(b, c.Mint)
	b = append(b, `,"packetId":`...)
	b = appendString(b, c.PacketID)
	b = append(b, `,"chain":`...)
	b = appendString(b, c.Chain)
	b = append(b, `,"claimedAt":`...)
	b = strconv.AppendInt(b, c.ClaimedAt, 10)
	b = append(b, `,"creator":`...)
	b = appendString(b, c.Creator)
	b = append(b, `,"txHash":`...)
	b = appendString(b, c.TxHash)
	return append(b, '}')
}

func (e endpointDTO) appendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, e.ID)
	b = append(b, `,"url":`...)
	b = appendString(b, e.URL)
	b = append(b, `,"channels":`...)
	b = appendStrings(b, e.Channels)
	b = append(b, `,"createdAt":`...)
	b = appendString(b, e.CreatedAt)
	b = append(b, `,"updatedAt":`...)
	b = appendString(b, e.UpdatedAt)
	b = append(b, `,"description":`...)
	b = appendNullableString(b, e.Description)
	b = append(b, `,"disabled":`...)
	b = appendBool(b, e.Disabled)
	b = append(b, `,"filter":`...)
	b = appendNullableString(b, e.Filter)
	b = append(b, `,"filterTypes":`...)
	b = appendStrings(b, e.FilterTypes)
	b = append(b, `,"metadata":`...)
	b = appendStringMap(b, e.Metadata)
	b = append(b, `,"rateLimit":`...)
	b = appendNullableInt(b, e.RateLimit)
	return append(b, '}')
}

// appendStringMap writes a map[string]string as encoding/json does: null when nil, keys sorted.
func appendStringMap(b []byte, m map[string]string) []byte {
	if m == nil {
		return append(b, "null"...)
	}
	var small [16]string
	keys := small[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		b = appendString(b, m[k])
	}
	return append(b, '}')
}

func (w whoamiDTO) appendJSON(b []byte) []byte {
	b = append(b, `{"accountId":`...)
	b = appendString(b, w.AccountID)
	b = append(b, `,"keyId":`...)
	b = appendString(b, w.KeyID)
	b = append(b, `,"scopes":`...)
	b = appendStrings(b, w.Scopes)
	return append(b, '}')
}

func (l endpointListDTO) appendJSON(b []byte) []byte {
	b = append(b, `{"data":`...)
	b = appendItems(b, l.Data, func(e *endpointDTO, b []byte) []byte { return e.appendJSON(b) })
	b = append(b, `,"done":`...)
	b = appendBool(b, l.Done)
	b = append(b, `,"iterator":`...)
	b = appendNullableString(b, l.Iterator)
	b = append(b, `,"prevIterator":`...)
	b = appendNullableString(b, l.PrevIterator)
	return append(b, '}')
}
