package postgres

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/adapters/postgres/internal/dbsqlc"
	"github.com/tokenscope/tokenscope/domain/pnl"
	"github.com/tokenscope/tokenscope/domain/trade"
)

// Day marks (position_day_marks, migration 0068): a pair's position as of its trades before each
// UTC day it traded in, from which pnl-by-token answers a period (read_pnl.go). A mark depends on
// the pair's trades only, so the engine writes it as it applies trades: positionRow.markDay, called
// before each trade is applied, notes the position when the trade opens a new day for the pair.

// dayMark is a pair's position before its first trade of the UTC day that starts at day (ms).
type dayMark struct {
	day int64
	pos pnl.Position
}

// markDay notes r's position as the mark of t's day when t is the pair's first trade of that day:
// applied says whether r already holds a trade (r.last is then the latest one).
func (r *positionRow) markDay(t *trade.Trade, applied bool) {
	if day := pnl.Day(t.BlockTimestamp); !applied || day > pnl.Day(r.last.BlockTimestamp) {
		r.marks = append(r.marks, dayMark{day: day, pos: r.pos})
	}
}

// markColumns are the columns of position_day_marks in copyMarks' order.
var markColumns = []string{
	"chain", "wallet", "token_address", "day_ms", "balance", "cost_usd", "buy_amount", "buy_amount_usd",
	"sell_amount", "sell_amount_usd", "sold_cost_usd", "realized_usd", "buys", "sells",
}

// copyMarks writes r's new marks to c, in markColumns order.
func (r *positionRow) copyMarks(c *copyRows, k posKey) {
	for i := range r.marks {
		m := &r.marks[i]
		c.row(len(markColumns))
		c.text(string(k.chain))
		c.text(k.wallet)
		c.text(k.token)
		c.int8(m.day)
		p := &m.pos
		for _, d := range [...]*decimal.Decimal{&p.Balance, &p.CostInUSD, &p.BuyAmount, &p.BuyAmountInUSD, &p.SellAmount,
			&p.SellAmountInUSD, &p.SoldCostInUSD, &p.RealizedProfitInUSD} {
			c.numeric(*d)
		}
		c.int8(p.Buys)
		c.int8(p.Sells)
	}
}

// allDays is remarkFrom for a pair re-derived without a base: every mark is written again.
const allDays = math.MinInt64

// dropMarks removes the stored marks that a re-derived r writes again (those of the days from
// r.remarkFrom on); r not re-derived drops nothing.
func dropMarks(ctx context.Context, db dbsqlc.DBTX, k posKey, r *positionRow) error {
	if r != nil && !r.remark {
		return nil
	}
	from := int64(allDays)
	if r != nil {
		from = r.remarkFrom
	}
	err := dbsqlc.New().DeletePositionMarksFrom(ctx, db, dbsqlc.DeletePositionMarksFromParams{Chain: string(k.chain),
		Wallet: k.wallet, TokenAddress: k.token, FromMs: from})
	if err != nil {
		return fmt.Errorf("drop day marks: %w", err)
	}
	return nil
}

const markStaging = `CREATE TEMP TABLE IF NOT EXISTS ingest_marks (LIKE position_day_marks) ON COMMIT DELETE ROWS`

// writeMarks upserts rows (copyMarks) into position_day_marks. A mark is only ever written for a
// day after every stored mark of its pair (or after dropMarks), so the update is for safety: a
// mark written twice holds the same position.
func writeMarks(ctx context.Context, tx pgx.Tx, rows *copyRows) error {
	if rows.rows == 0 {
		return nil
	}
	if err := copyStagedRows(ctx, tx, markStaging, "ingest_marks", markColumns, rows, "day marks"); err != nil {
		return err
	}
	set := make([]string, 0, len(markColumns))
	for _, c := range markColumns[4:] {
		set = append(set, c+" = EXCLUDED."+c)
	}
	cols := joinCols(markColumns)
	// hand-built: the column and SET lists are generated from markColumns; ingest_marks is a temporary table.
	if _, err := tx.Exec(ctx, `INSERT INTO position_day_marks (`+cols+`) SELECT `+cols+` FROM ingest_marks
		ON CONFLICT (chain, wallet, token_address, day_ms) DO UPDATE SET `+strings.Join(set, ", ")); err != nil {
		return fmt.Errorf("upsert day marks: %w", err)
	}
	return nil
}
