package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tokenscope/tokenscope/adapters/postgres/internal/dbsqlc"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/pnl"
	"github.com/tokenscope/tokenscope/domain/trade"
	"github.com/tokenscope/tokenscope/ports"
)

// WalletRederiver implements ports.WalletRederiver for the calculate-pnl job.
type WalletRederiver struct {
	pool *pgxpool.Pool
	q    *dbsqlc.Queries
}

var _ ports.WalletRederiver = (*WalletRederiver)(nil)

// NewWalletRederiver builds it over pool.
func NewWalletRederiver(pool *pgxpool.Pool) *WalletRederiver {
	return &WalletRederiver{pool: pool, q: dbsqlc.New()}
}

// WalletTokens lists the tokens the wallet traded on c.
func (r *WalletRederiver) WalletTokens(ctx context.Context, c chain.Chain, wallet string) ([]string, error) {
	ts, err := r.q.WalletTradedTokens(ctx, r.pool, dbsqlc.WalletTradedTokensParams{Chain: string(c), Wallet: wallet})
	return ts, interpretError(err, "wallet tokens", wallet)
}

// RederivePosition replays every stored trade of the pair into a fresh position. The existing
// row is locked first, so an ingest batch touching the same pair either commits before the
// trades are read (and is included) or waits for this transaction.
func (r *WalletRederiver) RederivePosition(ctx context.Context, c chain.Chain, wallet, token string, now time.Time) (int, error) {
	n := 0
	err := pgx.BeginFunc(ctx, r.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT 1 FROM wallet_positions WHERE chain = $1 AND wallet = $2 AND token_address = $3 FOR UPDATE`,
			string(c), wallet, token); err != nil {
			return fmt.Errorf("lock position: %w", err)
		}
		rows, err := tx.Query(ctx, `SELECT tx_signature, instruction_index, block_height, block_timestamp_ms, side, status,
			token_amount, token_amount_usd, token_price_usd FROM trades
			WHERE chain = $1 AND wallet = $2 AND token_address = $3`, string(c), wallet, token)
		if err != nil {
			return fmt.Errorf("load trades: %w", err)
		}
		trades, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (trade.Trade, error) {
			t := trade.Trade{Chain: c, Wallet: wallet, TokenAddress: token}
			var side, status string
			err := row.Scan(&t.TransactionSignature, &t.InstructionIndex, &t.BlockHeight, &t.BlockTimestamp, &side, &status,
				&t.TokenAmount, &t.TokenAmountInUSD, &t.TokenPriceInUSD)
			t.Side, t.Status = trade.Side(side), trade.Status(status)
			return t, err
		})
		if err != nil {
			return fmt.Errorf("load trades: %w", err)
		}
		n = len(trades)
		if n == 0 {
			_, err := tx.Exec(ctx, `DELETE FROM wallet_positions WHERE chain = $1 AND wallet = $2 AND token_address = $3`,
				string(c), wallet, token)
			return err
		}
		p, err := pnl.Rederive(trades)
		if err != nil {
			return err
		}
		sorted := trade.Sorted(trades)
		last := sorted[len(sorted)-1]
		var firstHeight *int64
		for _, t := range sorted {
			if t.Side == trade.Buy && t.Succeeded() && (firstHeight == nil || t.BlockHeight < *firstHeight) {
				h := t.BlockHeight
				firstHeight = &h
			}
		}
		_, err = tx.Exec(ctx, `INSERT INTO wallet_positions (chain, wallet, token_address, balance, cost_usd, buy_amount,
			buy_amount_usd, sell_amount, sell_amount_usd, sold_cost_usd, realized_usd, buys, sells, first_buy_at_ms,
			last_sell_at_ms, last_block_timestamp_ms, last_block_height, last_tx_signature, last_instruction_index,
			first_block_height, updated_at_ms)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)
			ON CONFLICT (chain, wallet, token_address) DO UPDATE SET balance = EXCLUDED.balance,
			cost_usd = EXCLUDED.cost_usd, buy_amount = EXCLUDED.buy_amount, buy_amount_usd = EXCLUDED.buy_amount_usd,
			sell_amount = EXCLUDED.sell_amount, sell_amount_usd = EXCLUDED.sell_amount_usd,
			sold_cost_usd = EXCLUDED.sold_cost_usd, realized_usd = EXCLUDED.realized_usd, buys = EXCLUDED.buys,
			sells = EXCLUDED.sells, first_buy_at_ms = EXCLUDED.first_buy_at_ms, last_sell_at_ms = EXCLUDED.last_sell_at_ms,
			last_block_timestamp_ms = EXCLUDED.last_block_timestamp_ms, last_block_height = EXCLUDED.last_block_height,
			last_tx_signature = EXCLUDED.last_tx_signature, last_instruction_index = EXCLUDED.last_instruction_index,
			first_block_height = EXCLUDED.first_block_height, updated_at_ms = EXCLUDED.updated_at_ms`,
			string(c), wallet, token, p.Balance, p.CostInUSD, p.BuyAmount, p.BuyAmountInUSD, p.SellAmount, p.SellAmountInUSD,
			p.SoldCostInUSD, p.RealizedProfitInUSD, p.Buys, p.Sells, p.FirstBuyAt, p.LastSellAt, last.BlockTimestamp,
			last.BlockHeight, last.TransactionSignature, last.InstructionIndex, firstHeight, now.UnixMilli())
		if err != nil {
			return fmt.Errorf("write position: %w", err)
		}
		return nil
	})
	if err != nil {
		return 0, interpretError(err, "rederive position", wallet+"/"+token)
	}
	return n, nil
}
