package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/ports"
)

// positionsSQL reads at most 100 positions by primary key (chain, wallet, token_address).
const positionsSQL = `SELECT p.token_address, p.balance, p.cost_usd, p.buy_amount, p.buy_amount_usd, p.sell_amount,
	p.sell_amount_usd, p.sold_cost_usd, p.realized_usd, p.buys, p.sells, p.first_buy_at_ms, p.last_sell_at_ms,
	COALESCE(m.price_usd, 0), COALESCE(t.name, ''), COALESCE(t.symbol, ''), COALESCE(t.image_url, ''), COALESCE(t.decimals, 0)
FROM wallet_positions p
LEFT JOIN token_market m ON m.chain = p.chain AND m.address = p.token_address
LEFT JOIN tokens t ON t.chain = p.chain AND t.address = p.token_address
WHERE p.chain = $1 AND p.wallet = $2 AND p.token_address = ANY($3::text[]) AND p.buys + p.sells > 0
ORDER BY p.token_address`

// PricedPositions implements ports.PositionReader.
func (r *MarketReader) PricedPositions(ctx context.Context, c chain.Chain, wallet string, tokens []string) ([]ports.PricedPosition, error) {
	rows, err := r.pool.Query(ctx, positionsSQL, string(c), wallet, tokens)
	if err != nil {
		return nil, interpretError(err, "wallet positions", wallet)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ports.PricedPosition, error) {
		pp := ports.PricedPosition{}
		p := &pp.Position
		p.Chain, p.Wallet = c, wallet
		err := row.Scan(&p.Token, &p.Balance, &p.CostInUSD, &p.BuyAmount, &p.BuyAmountInUSD, &p.SellAmount, &p.SellAmountInUSD,
			&p.SoldCostInUSD, &p.RealizedProfitInUSD, &p.Buys, &p.Sells, &p.FirstBuyAt, &p.LastSellAt, &pp.PriceInUSD,
			&pp.Name, &pp.Symbol, &pp.LogoURI, &pp.Decimals)
		return pp, err
	})
	if err != nil {
		return nil, interpretError(err, "wallet positions", wallet)
	}
	return out, nil
}
