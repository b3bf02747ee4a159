package postgres

import (
	"context"

	"github.com/tokenscope/tokenscope/adapters/postgres/internal/dbsqlc"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/pnl"
	"github.com/tokenscope/tokenscope/ports"
)

// PricedPositions implements ports.PositionReader: at most 100 positions by primary key.
func (r *MarketReader) PricedPositions(ctx context.Context, c chain.Chain, wallet string, tokens []string) ([]ports.PricedPosition, error) {
	rows, err := r.q.PricedPositions(ctx, r.pool, dbsqlc.PricedPositionsParams{Chain: string(c), Wallet: wallet, Tokens: tokens})
	if err != nil {
		return nil, interpretError(err, "wallet positions", wallet)
	}
	out := make([]ports.PricedPosition, len(rows))
	for i, p := range rows {
		var lastTrade *int64
		if p.LastTradeMs > 0 {
			lastTrade = &p.LastTradeMs
		}
		out[i] = ports.PricedPosition{
			Position: pnl.Position{Chain: c, Wallet: wallet, Token: p.TokenAddress, Buys: p.Buys, Sells: p.Sells,
				BuyAmount: p.BuyAmount, BuyAmountInUSD: p.BuyAmountUsd, SellAmount: p.SellAmount, SellAmountInUSD: p.SellAmountUsd,
				Balance: p.Balance, CostInUSD: p.CostUsd, SoldCostInUSD: p.SoldCostUsd, RealizedProfitInUSD: p.RealizedUsd,
				FirstBuyAt: p.FirstBuyAtMs, LastSellAt: p.LastSellAtMs, LastTradeAt: lastTrade},
			PriceInUSD: p.PriceUsd, Name: p.Name, Symbol: p.Symbol, LogoURI: p.ImageUrl, Decimals: p.Decimals}
	}
	return out, nil
}
