package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/adapters/postgres/internal/dbsqlc"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/pnl"
	"github.com/tokenscope/tokenscope/domain/stats"
	"github.com/tokenscope/tokenscope/domain/trade"
)

// The wallet_positions row has two writers, the ingest engine (applier.positions) and the
// calculate-pnl job (WalletRederiver.RederivePosition). Both re-derive a pair with
// rederivePosition and write with writePositions, so a column added to positionColumns and
// positionRow.values is kept by both.

type posKey struct {
	chain         chain.Chain
	wallet, token string
}

// positionRow is a wallet_positions row: the pnl.Position plus the bookkeeping around it.
type positionRow struct {
	pos         pnl.Position
	last        trade.Trade // only the ordering fields are set
	firstHeight *int64
	// act is when the wallet last bought, sold and traded the token: its place in the token's
	// distinct-wallet bucket counts (engine_bucket.go).
	act    stats.LastActivity
	exists bool
	// marks are the day marks this change adds (position_mark.go). A re-derived row (remark)
	// replaces the stored marks of the days from remarkFrom on.
	marks      []dayMark
	remark     bool
	remarkFrom int64
}

// positionColumns are the columns of wallet_positions in the order of positionRow.values and
// positionRow.scan.
var positionColumns = []string{
	"chain", "wallet", "token_address", "balance", "cost_usd", "buy_amount", "buy_amount_usd", "sell_amount",
	"sell_amount_usd", "sold_cost_usd", "realized_usd", "buys", "sells", "first_buy_at_ms", "last_sell_at_ms",
	"last_block_timestamp_ms", "last_block_height", "last_tx_signature", "last_instruction_index", "first_block_height",
	"last_buy_ms", "last_sell_ms", "last_trade_ms", "updated_at_ms",
}

// copyTo writes the row of pair k at now to c, in positionColumns order.
func (r *positionRow) copyTo(c *copyRows, k posKey, now time.Time) {
	p := &r.pos
	c.row(len(positionColumns))
	c.text(string(k.chain))
	c.text(k.wallet)
	c.text(k.token)
	for _, d := range [...]*decimal.Decimal{&p.Balance, &p.CostInUSD, &p.BuyAmount, &p.BuyAmountInUSD, &p.SellAmount,
		&p.SellAmountInUSD, &p.SoldCostInUSD, &p.RealizedProfitInUSD} {
		c.numeric(*d)
	}
	c.int8(p.Buys)
	c.int8(p.Sells)
	c.int8OrNull(p.FirstBuyAt)
	c.int8OrNull(p.LastSellAt)
	c.int8(r.last.BlockTimestamp)
	c.int8(r.last.BlockHeight)
	c.text(r.last.TransactionSignature)
	c.int4(r.last.InstructionIndex)
	c.int8OrNull(r.firstHeight)
	c.int8(r.act.Buy)
	c.int8(r.act.Sell)
	c.int8(r.act.Trade)
	c.int8(now.UnixMilli())
}

// scan reads a wallet_positions row selected as positionColumns (see selectPositionColumns) into
// r, the inverse of copyTo.
func (r *positionRow) scan(row pgx.Row) (posKey, error) {
	var c string
	var updatedAt int64
	p := &r.pos
	err := row.Scan(&c, &p.Wallet, &p.Token, &p.Balance, &p.CostInUSD, &p.BuyAmount, &p.BuyAmountInUSD,
		&p.SellAmount, &p.SellAmountInUSD, &p.SoldCostInUSD, &p.RealizedProfitInUSD, &p.Buys, &p.Sells, &p.FirstBuyAt,
		&p.LastSellAt, &r.last.BlockTimestamp, &r.last.BlockHeight, &r.last.TransactionSignature,
		&r.last.InstructionIndex, &r.firstHeight, &r.act.Buy, &r.act.Sell, &r.act.Trade, &updatedAt)
	p.Chain = chain.Chain(c)
	if r.act.Trade > 0 {
		at := r.act.Trade
		p.LastTradeAt = &at
	}
	r.exists = true
	return posKey{p.Chain, p.Wallet, p.Token}, err
}

// selectPositionColumns is positionColumns qualified with alias, for a SELECT that scan reads.
func selectPositionColumns(alias string) string {
	return alias + "." + strings.Join(positionColumns, ", "+alias+".")
}

func (r *positionRow) noteFirstBuy(t *trade.Trade) {
	if t.Side == trade.Buy && t.Succeeded() && (r.firstHeight == nil || t.BlockHeight < *r.firstHeight) {
		h := t.BlockHeight
		r.firstHeight = &h
	}
}

// rederivePosition rebuilds pair k from its base (position_bases: its position as of the trades
// retention removed, none without retention) and every stored trade after it, as pnl.Rederive
// replays trades, with the day marks of those trades (the row's remark). It returns the number of stored trades read, and a nil row when the pair has
// neither a base nor a trade.
func rederivePosition(ctx context.Context, db dbsqlc.DBTX, k posKey) (*positionRow, int, error) {
	rows, err := dbsqlc.New().ListPositionTrades(ctx, db, dbsqlc.ListPositionTradesParams{
		Chain: string(k.chain), Wallet: k.wallet, TokenAddress: k.token})
	if err != nil {
		return nil, 0, fmt.Errorf("load trades of position: %w", err)
	}
	bases, err := loadPositionRows(ctx, db, "position_bases", []string{string(k.chain)}, []string{k.wallet}, []string{k.token})
	if err != nil {
		return nil, 0, err
	}
	base := bases[k]
	if len(rows) == 0 && base == nil {
		return nil, 0, nil
	}
	trades := make([]trade.Trade, len(rows))
	for i, row := range rows {
		trades[i] = trade.Trade{Chain: k.chain, Wallet: k.wallet, TokenAddress: k.token,
			TransactionSignature: row.TxSignature, InstructionIndex: row.InstructionIndex, BlockHeight: row.BlockHeight,
			BlockTimestamp: row.BlockTimestampMs, Side: trade.Side(row.Side), Status: trade.Status(row.Status),
			TokenAmount: row.TokenAmount, TokenAmountInUSD: row.TokenAmountUsd, TokenPriceInUSD: row.TokenPriceUsd}
	}
	sorted := trade.Sorted(trades)
	if base != nil {
		// The marks up to the base's last day hold trades retention removed and stay; a
		// re-derivation is only for a trade after the cut, so they do not move.
		base.remark, base.remarkFrom = true, pnl.Day(base.last.BlockTimestamp)+pnl.DayMs
		if err := base.applyAfter(sorted); err != nil {
			return nil, 0, err
		}
		return base, len(trades), nil
	}
	pos, err := pnl.Rederive(trades)
	if err != nil {
		return nil, 0, err
	}
	r := &positionRow{pos: pos, exists: true, remark: true, remarkFrom: allDays}
	r.last = sorted[len(sorted)-1]
	for i := range sorted {
		r.noteFirstBuy(&sorted[i])
		r.act.Note(sorted[i])
	}
	// Every mark is written again, from a replay of the same trades in the same order (an empty
	// row's applyAfter, which gives pnl.Rederive's position: the stored trades are distinct).
	var replay positionRow
	if err := replay.applyAfter(sorted); err != nil {
		return nil, 0, err
	}
	r.marks = replay.marks
	return r, len(trades), nil
}

// applyAfter applies the sorted trades that come after r's last applied trade (all of them to a
// new row), each once, as pnl.Rederive replays them: the trades a base folded (retention) and
// repeats are skipped.
func (r *positionRow) applyAfter(sorted []trade.Trade) error {
	for i := range sorted {
		t := &sorted[i]
		if r.exists && trade.Compare(*t, r.last) <= 0 {
			continue
		}
		r.markDay(t, r.exists)
		if err := r.pos.Apply(*t); err != nil {
			return err
		}
		r.noteFirstBuy(t)
		r.act.Note(*t)
		r.last = *t
		r.exists = true
	}
	return nil
}

// writePositions upserts rows (each written by positionRow.copyTo) into wallet_positions: COPY
// into a temporary table, then one INSERT … SELECT … ON CONFLICT.
func writePositions(ctx context.Context, tx pgx.Tx, rows *copyRows) error {
	return upsertPositionRows(ctx, tx, "wallet_positions", "ingest_positions", rows)
}

// upsertPositionRows upserts rows (positionRow.copyTo) into table (wallet_positions, or
// position_bases, which has its columns) through the per-connection temporary table staging.
func upsertPositionRows(ctx context.Context, tx pgx.Tx, table, staging string, rows *copyRows) error {
	if rows.rows == 0 {
		return nil
	}
	// hand-built: DDL of the per-connection temporary table, named by one of two constants.
	ddl := `CREATE TEMP TABLE IF NOT EXISTS ` + staging + ` (LIKE wallet_positions) ON COMMIT DELETE ROWS`
	if err := copyStagedRows(ctx, tx, ddl, staging, positionColumns, rows, table); err != nil {
		return err
	}
	set := make([]string, 0, len(positionColumns))
	for _, c := range positionColumns[3:] {
		set = append(set, c+" = EXCLUDED."+c)
	}
	cols := joinCols(positionColumns)
	// hand-built: the column and SET lists are generated from positionColumns; the tables are
	// named by constants, the staging one temporary.
	if _, err := tx.Exec(ctx, `INSERT INTO `+table+` (`+cols+`) SELECT `+cols+` FROM `+staging+`
		ON CONFLICT (chain, wallet, token_address) DO UPDATE SET `+strings.Join(set, ", ")); err != nil {
		return fmt.Errorf("upsert %s: %w", table, err)
	}
	return nil
}
