package postgres

import (
	"context"

	"github.com/tokenscope/tokenscope/adapters/postgres/internal/dbsqlc"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/pnl"
	"github.com/tokenscope/tokenscope/ports"
)

// PricedPositions implements ports.PositionReader: at most 100 positions by primary key, and,
// when starts are asked for, each one's position at every start from its day marks
// (position_mark.go).
func (r *MarketReader) PricedPositions(ctx context.Context, c chain.Chain, wallet string, tokens []string, starts []int64) ([]ports.PricedPosition, error) {
	rows, err := r.q.PricedPositions(ctx, r.pool, dbsqlc.PricedPositionsParams{Chain: string(c), Wallet: wallet, Tokens: tokens})
	if err != nil {
		return nil, interpretError(err, "wallet positions", wallet)
	}
	out := make([]ports.PricedPosition, len(rows))
	at := make(map[string]int, len(rows))
	for i, p := range rows {
		var lastTrade *int64
		if p.LastTradeMs > 0 {
			lastTrade = &p.LastTradeMs
		}
		pos := pnl.Position{Chain: c, Wallet: wallet, Token: p.TokenAddress, Buys: p.Buys, Sells: p.Sells,
			BuyAmount: p.BuyAmount, BuyAmountInUSD: p.BuyAmountUsd, SellAmount: p.SellAmount, SellAmountInUSD: p.SellAmountUsd,
			Balance: p.Balance, CostInUSD: p.CostUsd, SoldCostInUSD: p.SoldCostUsd, RealizedProfitInUSD: p.RealizedUsd,
			FirstBuyAt: p.FirstBuyAtMs, LastSellAt: p.LastSellAtMs, LastTradeAt: lastTrade}
		out[i] = ports.PricedPosition{Position: pos, PriceInUSD: p.PriceUsd, Name: p.Name, Symbol: p.Symbol,
			LogoURI: p.ImageUrl, Decimals: p.Decimals}
		if len(starts) > 0 {
			// A pair without a mark at or after a start has not traded since: its position then is now's.
			out[i].At = make([]pnl.Position, len(starts))
			for j := range starts {
				out[i].At[j] = pos
			}
			at[p.TokenAddress] = i
		}
	}
	if len(starts) == 0 || len(rows) == 0 {
		return out, nil
	}
	marks, err := r.q.PositionsAtDays(ctx, r.pool, dbsqlc.PositionsAtDaysParams{Chain: string(c), Wallet: wallet,
		Starts: starts, Tokens: tokens})
	if err != nil {
		return nil, interpretError(err, "wallet positions at days", wallet)
	}
	for _, m := range marks {
		i, ok := at[m.TokenAddress]
		if !ok {
			continue // a pair whose only trades failed
		}
		for j, s := range starts {
			if s == m.StartMs {
				out[i].At[j] = pnl.Position{Chain: c, Wallet: wallet, Token: m.TokenAddress, Buys: m.Buys, Sells: m.Sells,
					BuyAmount: m.BuyAmount, BuyAmountInUSD: m.BuyAmountUsd, SellAmount: m.SellAmount,
					SellAmountInUSD: m.SellAmountUsd, Balance: m.Balance, CostInUSD: m.CostUsd,
					SoldCostInUSD: m.SoldCostUsd, RealizedProfitInUSD: m.RealizedUsd}
			}
		}
	}
	return out, r.dayProfits(ctx, c, wallet, tokens, out, at)
}

// dayProfits sets each position's Days from the pair's day marks: a marked day's realized profit
// is the realized profit at the pair's next mark (or now, after its last one) minus its own.
func (r *MarketReader) dayProfits(ctx context.Context, c chain.Chain, wallet string, tokens []string, out []ports.PricedPosition, at map[string]int) error {
	marks, err := r.q.PositionDayRealized(ctx, r.pool, dbsqlc.PositionDayRealizedParams{Chain: string(c), Wallet: wallet,
		Tokens: tokens})
	if err != nil {
		return interpretError(err, "wallet day profits", wallet)
	}
	for k, m := range marks {
		i, ok := at[m.TokenAddress]
		if !ok {
			continue
		}
		next := out[i].Position.RealizedProfitInUSD
		if k+1 < len(marks) && marks[k+1].TokenAddress == m.TokenAddress {
			next = marks[k+1].RealizedUsd
		}
		out[i].Days = append(out[i].Days, pnl.DayProfit{Day: m.DayMs, Profit: next.Sub(m.RealizedUsd)})
	}
	return nil
}
