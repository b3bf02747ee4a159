package httpapi

import (
	"strconv"

	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/app/market"
	"github.com/tokenscope/tokenscope/domain/page"
	"github.com/tokenscope/tokenscope/domain/pnl"
	"github.com/tokenscope/tokenscope/domain/pool"
	"github.com/tokenscope/tokenscope/domain/redpacket"
	"github.com/tokenscope/tokenscope/domain/trade"
	"github.com/tokenscope/tokenscope/ports"
)

// JSON shapes of the read API (operations 1–9; the token records are in dto_token.go).
// Decimals render as strings (shopspring's MarshalJSON), counts the spec types as strings go
// through count, absent optional values are null (never omitted), and every array is non-nil so
// it renders as []. The trade, snapshot and PnL DTOs have generated encoders (dto_json_gen.go,
// encode.go); red packets and claims go through c.JSON.

func count(n int64) string { return strconv.FormatInt(n, 10) }

type pageDTO[T any] struct {
	Data        []T     `json:"data"`
	StartCursor *string `json:"startCursor"`
	EndCursor   *string `json:"endCursor"`
	HasNext     bool    `json:"hasNext"`
	HasPrev     bool    `json:"hasPrev"`
}

type redPacketPageDTO[T any] struct {
	Records     []T     `json:"records"`
	HasNextPage bool    `json:"hasNextPage"`
	Total       int64   `json:"total"`
	StartCursor *string `json:"startCursor"`
	EndCursor   *string `json:"endCursor"`
}

// toPage is the page DTO of p, each item mapped by f.
func toPage[A, B any](p page.Page[A], f func(A) B) *pageDTO[B] {
	out := &pageDTO[B]{Data: make([]B, len(p.Items)), StartCursor: p.StartCursor, EndCursor: p.EndCursor,
		HasNext: p.HasNext, HasPrev: p.HasPrev}
	for i, v := range p.Items {
		out.Data[i] = f(v)
	}
	return out
}

func toRedPacketPage[A, B any](p ports.Counted[A], f func(A) B) redPacketPageDTO[B] {
	out := redPacketPageDTO[B]{Records: make([]B, len(p.Items)), HasNextPage: p.HasNext, Total: p.Total,
		StartCursor: p.StartCursor, EndCursor: p.EndCursor}
	for i, v := range p.Items {
		out.Records[i] = f(v)
	}
	return out
}

// --- trades ---

type tradeDTO struct {
	AccountOwnerAddress     string          `json:"accountOwnerAddress"`
	BlockHeight             int64           `json:"blockHeight"`
	BlockTimestamp          int64           `json:"blockTimestamp"`
	Chain                   string          `json:"chain"`
	PoolAddress             string          `json:"poolAddress"`
	TokenAddress            string          `json:"tokenAddress"`
	TokenName               string          `json:"tokenName"`
	TokenSymbol             string          `json:"tokenSymbol"`
	TokenImageURL           string          `json:"tokenImageUrl"`
	TokenAmount             decimal.Decimal `json:"tokenAmount"`
	TokenAmountInNative     decimal.Decimal `json:"tokenAmountInNative"`
	TokenAmountInUsd        decimal.Decimal `json:"tokenAmountInUsd"`
	TokenPriceInNative      decimal.Decimal `json:"tokenPriceInNative"`
	TokenPriceInUsd         decimal.Decimal `json:"tokenPriceInUsd"`
	SideTokenAddress        string          `json:"sideTokenAddress"`
	SideTokenName           string          `json:"sideTokenName"`
	SideTokenSymbol         string          `json:"sideTokenSymbol"`
	SideTokenImageURL       string          `json:"sideTokenImageUrl"`
	SideTokenAmount         decimal.Decimal `json:"sideTokenAmount"`
	SideTokenAmountInNative decimal.Decimal `json:"sideTokenAmountInNative"`
	SideTokenAmountInUsd    decimal.Decimal `json:"sideTokenAmountInUsd"`
	SideTokenPriceInNative  decimal.Decimal `json:"sideTokenPriceInNative"`
	SideTokenPriceInUsd     decimal.Decimal `json:"sideTokenPriceInUsd"`
	Status                  string          `json:"status"`
	TransactionSignature    string          `json:"transactionSignature"`
	Type                    string          `json:"type"`
	DexImage                string          `json:"dexImage"`
	DexProgramAddress       string          `json:"dexProgramAddress"`
	DexProtocolFamily       string          `json:"dexProtocolFamily"`
}

func tradeOut(t trade.Trade) tradeDTO {
	return tradeDTO{
		AccountOwnerAddress: t.Wallet, BlockHeight: t.BlockHeight, BlockTimestamp: t.BlockTimestamp, Chain: string(t.Chain),
		PoolAddress: t.PoolAddress, TokenAddress: t.TokenAddress, TokenName: t.TokenName, TokenSymbol: t.TokenSymbol,
		TokenImageURL: t.TokenImageURL, TokenAmount: t.TokenAmount, TokenAmountInNative: t.TokenAmountInNative,
		TokenAmountInUsd: t.TokenAmountInUSD, TokenPriceInNative: t.TokenPriceInNative, TokenPriceInUsd: t.TokenPriceInUSD,
		SideTokenAddress: t.SideTokenAddress, SideTokenName: t.SideTokenName, SideTokenSymbol: t.SideTokenSymbol,
		SideTokenImageURL: t.SideTokenImageURL, SideTokenAmount: t.SideTokenAmount, SideTokenAmountInNative: t.SideTokenAmountInNative,
		SideTokenAmountInUsd: t.SideTokenAmountInUSD, SideTokenPriceInNative: t.SideTokenPriceInNative,
		SideTokenPriceInUsd: t.SideTokenPriceInUSD, Status: string(t.Status), TransactionSignature: t.TransactionSignature,
		Type: string(t.Side), DexImage: t.DexImage, DexProgramAddress: t.DexProgramAddress, DexProtocolFamily: t.DexProtocolFamily,
	}
}

// --- pool snapshots ---

type poolSideDTO struct {
	AmountInNative decimal.Decimal `json:"amountInNative"`
	AmountInUsd    decimal.Decimal `json:"amountInUsd"`
	Decimals       int32           `json:"decimals"`
	PriceNative    decimal.Decimal `json:"priceNative"`
	PriceUsd       decimal.Decimal `json:"priceUsd"`
	TokenAddress   string          `json:"tokenAddress"`
	VaultAmount    string          `json:"vaultAmount"`
}

type snapshotDTO struct {
	BlockHeight    int64           `json:"blockHeight"`
	BlockSlot      *int64          `json:"blockSlot"`
	BlockTimestamp int64           `json:"blockTimestamp"`
	SnapshotTime   int64           `json:"snapshotTime"`
	PoolAddress    string          `json:"poolAddress"`
	TokenA         poolSideDTO     `json:"tokenA"`
	TokenB         poolSideDTO     `json:"tokenB"`
	TvlInNative    decimal.Decimal `json:"tvlInNative"`
	TvlInUsd       decimal.Decimal `json:"tvlInUsd"`
}

func poolSide(s pool.Side) poolSideDTO {
	return poolSideDTO{AmountInNative: s.AmountInNative, AmountInUsd: s.AmountInUSD, Decimals: s.Decimals,
		PriceNative: s.PriceNative, PriceUsd: s.PriceUSD, TokenAddress: s.TokenAddress, VaultAmount: string(s.VaultAmount)}
}

func snapshotOut(s pool.Snapshot) snapshotDTO {
	return snapshotDTO{BlockHeight: s.BlockHeight, BlockSlot: s.BlockSlot, BlockTimestamp: s.BlockTimestamp,
		SnapshotTime: s.SnapshotTime, PoolAddress: s.PoolAddress, TokenA: poolSide(s.TokenA), TokenB: poolSide(s.TokenB),
		TvlInNative: s.TVLInNative, TvlInUsd: s.TVLInUSD}
}

// --- red packets ---

type redPacketDTO struct {
	ID             string `json:"id"`
	Creator        string `json:"creator"`
	ClaimAuthority string `json:"claimAuthority"`
	Mint           string `json:"mint"`
	Chain          string `json:"chain"`
	MaxClaims      int32  `json:"maxClaims"`
	ClaimedCount   int32  `json:"claimedCount"`
	TotalAmount    string `json:"totalAmount"`
	ClaimedAmount  string `json:"claimedAmount"`
	RefundedAmount string `json:"refundedAmount"`
	CreatedAt      int64  `json:"createdAt"`
	ExpiredAt      int64  `json:"expiredAt"`
	Expiration     int64  `json:"expiration"`
	Expired        bool   `json:"expired"`
	Memo           string `json:"memo"`
	ShareID        string `json:"shareId"`
	TxHash         string `json:"txHash"`
}

// smallest renders an integer amount in smallest units (no decimal point, whatever scale
// Postgres returned it with).
func smallest(d decimal.Decimal) string { return d.Truncate(0).String() }

func redPacketOut(p redpacket.RedPacket) redPacketDTO {
	return redPacketDTO{ID: p.ID, Creator: p.Creator, ClaimAuthority: p.ClaimAuthority, Mint: p.Mint, Chain: string(p.Chain),
		MaxClaims: p.MaxClaims, ClaimedCount: p.ClaimedCount, TotalAmount: smallest(p.TotalAmount),
		ClaimedAmount: smallest(p.ClaimedAmount), RefundedAmount: smallest(p.RefundedAmount), CreatedAt: p.CreatedAt,
		ExpiredAt: p.ExpiredAt, Expiration: p.Expiration, Expired: p.Expired, Memo: p.Memo, ShareID: p.ShareID, TxHash: p.TxHash}
}

type claimDTO struct {
	Amount    string `json:"amount"`
	Claimer   string `json:"claimer"`
	Mint      string `json:"mint"`
	PacketID  string `json:"packetId"`
	Chain     string `json:"chain"`
	ClaimedAt int64  `json:"claimedAt"`
	Creator   string `json:"creator"`
	TxHash    string `json:"txHash"`
}

func claimOut(c redpacket.Claim) claimDTO {
	return claimDTO{Amount: smallest(c.Amount), Claimer: c.Claimer, Mint: c.Mint, PacketID: c.PacketID, Chain: string(c.Chain),
		ClaimedAt: c.ClaimedAt, Creator: c.Creator, TxHash: c.TxHash}
}

// --- wallet PnL ---

type pnlEntryDTO struct {
	AvgBuyPriceInUsd       decimal.Decimal `json:"avgBuyPriceInUsd"`
	AvgProfitPerTradeInUsd decimal.Decimal `json:"avgProfitPerTradeInUsd"`
	AvgSellPriceInUsd      decimal.Decimal `json:"avgSellPriceInUsd"`
	Balance                decimal.Decimal `json:"balance"`
	BuyAmount              decimal.Decimal `json:"buyAmount"`
	BuyAmountInUsd         decimal.Decimal `json:"buyAmountInUsd"`
	CurrentValue           decimal.Decimal `json:"currentValue"`
	PriceInUsd             decimal.Decimal `json:"priceInUsd"`
	RealizedProfitInUsd    decimal.Decimal `json:"realizedProfitInUsd"`
	RealizedProfitRatio    decimal.Decimal `json:"realizedProfitRatio"`
	SellAmount             decimal.Decimal `json:"sellAmount"`
	SellAmountInUsd        decimal.Decimal `json:"sellAmountInUsd"`
	TotalProfitInUsd       decimal.Decimal `json:"totalProfitInUsd"`
	TotalProfitRatio       decimal.Decimal `json:"totalProfitRatio"`
	UnrealizedProfitInUsd  decimal.Decimal `json:"unrealizedProfitInUsd"`
	UnrealizedProfitRatio  decimal.Decimal `json:"unrealizedProfitRatio"`
	Buys                   string          `json:"buys"`
	Sells                  string          `json:"sells"`
	TotalTrades            string          `json:"totalTrades"`
	TokenAddress           string          `json:"tokenAddress"`
	WalletAddress          string          `json:"walletAddress"`
	LogoURI                string          `json:"logoUri"`
	Name                   string          `json:"name"`
	Symbol                 string          `json:"symbol"`
	Decimals               int32           `json:"decimals"`
	IsClosed               bool            `json:"isClosed"`
}

func pnlEntryOut(e market.PnLEntry) pnlEntryDTO {
	return pnlEntryDTO{
		AvgBuyPriceInUsd: e.AvgBuyPriceInUSD, AvgProfitPerTradeInUsd: e.AvgProfitPerTradeInUSD, AvgSellPriceInUsd: e.AvgSellPriceInUSD,
		Balance: e.Balance, BuyAmount: e.BuyAmount, BuyAmountInUsd: e.BuyAmountInUSD, CurrentValue: e.CurrentValue,
		PriceInUsd: e.PriceInUSD, RealizedProfitInUsd: e.RealizedProfitInUSD, RealizedProfitRatio: e.RealizedProfitRatio,
		SellAmount: e.SellAmount, SellAmountInUsd: e.SellAmountInUSD, TotalProfitInUsd: e.TotalProfitInUSD,
		TotalProfitRatio: e.TotalProfitRatio, UnrealizedProfitInUsd: e.UnrealizedProfitInUSD,
		UnrealizedProfitRatio: e.UnrealizedProfitRatio, Buys: count(e.Buys), Sells: count(e.Sells), TotalTrades: count(e.TotalTrades),
		TokenAddress: e.TokenAddress, WalletAddress: e.WalletAddress, LogoURI: e.LogoURI, Name: e.Name, Symbol: e.Symbol,
		Decimals: e.Decimals, IsClosed: e.IsClosed,
	}
}

type pnlSummaryDTO struct {
	AvgProfitPerTradeInUsd decimal.Decimal `json:"avgProfitPerTradeInUsd"`
	BuyAmountInUsd         decimal.Decimal `json:"buyAmountInUsd"`
	CurrentValue           decimal.Decimal `json:"currentValue"`
	RealizedProfitInUsd    decimal.Decimal `json:"realizedProfitInUsd"`
	RealizedProfitRatio    decimal.Decimal `json:"realizedProfitRatio"`
	SellAmountInUsd        decimal.Decimal `json:"sellAmountInUsd"`
	TotalCostInUsd         decimal.Decimal `json:"totalCostInUsd"`
	TotalProfitInUsd       decimal.Decimal `json:"totalProfitInUsd"`
	UnrealizedProfitInUsd  decimal.Decimal `json:"unrealizedProfitInUsd"`
	WinRate                decimal.Decimal `json:"winRate"`
	Buys                   string          `json:"buys"`
	Sells                  string          `json:"sells"`
	Losses                 string          `json:"losses"`
	Wins                   string          `json:"wins"`
	Tokens                 string          `json:"tokens"`
	TotalTrades            string          `json:"totalTrades"`
}

func pnlSummaryOut(s pnl.Summary) pnlSummaryDTO {
	return pnlSummaryDTO{
		AvgProfitPerTradeInUsd: s.AvgProfitPerTradeInUSD, BuyAmountInUsd: s.BuyAmountInUSD, CurrentValue: s.CurrentValue,
		RealizedProfitInUsd: s.RealizedProfitInUSD, RealizedProfitRatio: s.RealizedProfitRatio, SellAmountInUsd: s.SellAmountInUSD,
		TotalCostInUsd: s.TotalCostInUSD, TotalProfitInUsd: s.TotalProfitInUSD, UnrealizedProfitInUsd: s.UnrealizedProfitInUSD,
		WinRate: s.WinRate, Buys: count(s.Buys), Sells: count(s.Sells), Losses: count(s.Losses), Wins: count(s.Wins),
		Tokens: count(s.Tokens), TotalTrades: count(s.TotalTrades),
	}
}

// pnlPageDTO is the pnl-by-token answer: the page's members, then summary.
type pnlPageDTO struct {
	pageDTO[pnlEntryDTO]
	Summary pnlSummaryDTO `json:"summary"`
}

func pnlPageOf(r market.PnLResult) *pnlPageDTO {
	return &pnlPageDTO{pageDTO: *toPage(r.Page, pnlEntryOut), Summary: pnlSummaryOut(r.Summary)}
}
