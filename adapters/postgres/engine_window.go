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
	"github.com/tokenscope/tokenscope/domain/stats"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/ports"
)

// statsColumns are the token_stats columns, staged in ingest_stats and upserted by writeWindows.
var statsColumns = []string{
	"chain", "address", "window_name", "buys", "sells", "trades", "buyers", "sellers", "traders", "buy_volume",
	"sell_volume", "total_volume", "buy_volume_usd", "sell_volume_usd", "total_volume_usd", "open_usd", "close_usd",
	"high_usd", "low_usd", "price_change_ratio_usd", "current_liquidity_usd", "updated_at_ms",
	"open_ms", "open_height", "open_sig", "open_ix", "close_ms", "close_height", "close_sig", "close_ix",
}

// windowStats is one token_stats row before it is written: the window's statistics and the keys
// of its open and close trades (zero when it holds no trade).
type windowStats struct {
	ref         ports.TokenRef
	window      token.Window
	stats       token.PeriodStats
	open, close stats.Mark
}

// windowOf is the token_stats row of ref's window w whose buckets merge to sum.
func windowOf(ref ports.TokenRef, w token.Window, sum stats.Bucket, liquidity decimal.Decimal) windowStats {
	return windowStats{ref: ref, window: w, stats: sum.Period(liquidity), open: sum.Open, close: sum.Close}
}

// computeWindows derives every window of refs as of now from their time buckets
// (bucketWindows). It is the ingest batch's path (deriveMarket), with the liquidity the batch
// just derived.
func computeWindows(ctx context.Context, tx pgx.Tx, refs []ports.TokenRef, liquidity map[ports.TokenRef]decimal.Decimal,
	now time.Time) ([]windowStats, error) {
	targets := make([]windowTarget, len(refs))
	for i, r := range refs {
		targets[i] = windowTarget{ref: r, windows: allWindowsSet}
	}
	return bucketWindows(ctx, tx, targets, liquidity, now)
}

// writeWindows upserts the computed windows into token_stats.
func writeWindows(ctx context.Context, tx pgx.Tx, windows []windowStats, now time.Time) error {
	if len(windows) == 0 {
		return nil
	}
	if err := stageWindows(ctx, tx, "", "ingest_stats", windows, now); err != nil {
		return err
	}
	// hand-built: the column and SET lists are generated from statsColumns; ingest_stats is a temporary table.
	if _, err := tx.Exec(ctx, `INSERT INTO token_stats (`+joinCols(statsColumns)+`) SELECT `+joinCols(statsColumns)+`
		FROM ingest_stats ON CONFLICT (chain, address, window_name) DO UPDATE SET `+windowOverwrite); err != nil {
		return fmt.Errorf("upsert stats: %w", err)
	}
	return nil
}

// windowOverwrite is the ON CONFLICT clause that replaces a stored window with the staged one.
var windowOverwrite = func() string {
	set := make([]string, 0, len(statsColumns)-3)
	for _, c := range statsColumns[3:] {
		set = append(set, c+" = EXCLUDED."+c)
	}
	return strings.Join(set, ", ")
}()

// stageWindows COPYs windows as token_stats rows (statsColumns) updated at now into the
// per-connection table table (created by ddl unless empty).
func stageWindows(ctx context.Context, tx pgx.Tx, ddl, table string, windows []windowStats, now time.Time) error {
	out := newCopyRows(len(windows) * 400)
	end := now.UnixMilli()
	for i := range windows {
		w := &windows[i]
		s := &w.stats
		out.row(len(statsColumns))
		out.text(string(w.ref.Chain))
		out.text(w.ref.Address)
		out.text(string(w.window))
		for _, n := range [...]int64{s.Buys, s.Sells, s.Trades, s.Buyers, s.Sellers, s.Traders} {
			out.int8(n)
		}
		for _, d := range [...]*decimal.Decimal{&s.BuyVolume, &s.SellVolume, &s.TotalVolume, &s.BuyVolumeInUSD,
			&s.SellVolumeInUSD, &s.TotalVolumeInUSD, &s.OpenInUSD, &s.CloseInUSD, &s.HighInUSD, &s.LowInUSD,
			&s.PriceChangeRatioInUSD, &s.CurrentLiquidityInUSD} {
			out.numeric(*d)
		}
		out.int8(end)
		copyMarks(out, s.Trades > 0, &w.open, &w.close)
	}
	return copyStagedRows(ctx, tx, ddl, table, statsColumns, out, "windows")
}

// copyMarks writes the keys (time, height, signature, index) of an open and a close mark, or
// NULLs when there is no trade.
func copyMarks(c *copyRows, traded bool, marks ...*stats.Mark) {
	for _, m := range marks {
		if !traded {
			c.null()
			c.null()
			c.null()
			c.null()
			continue
		}
		c.int8(m.At)
		c.int8(m.Height)
		c.text(m.Signature)
		c.int4(m.Index)
	}
}

// windowSet is a set of token.AllWindows: bit i stands for token.AllWindows[i].
type windowSet int32

// allWindowsSet holds every window.
var allWindowsSet = windowSet(1<<len(token.AllWindows) - 1)

// windowTarget is a token and the windows of it a refresh recomputes.
type windowTarget struct {
	ref     ports.TokenRef
	windows windowSet
}

// recomputeWindows rewrites the given windows of the given tokens as of now from their time
// buckets, with the liquidity stored on token_market, and copies the 24h figures of the tokens
// whose 24h window it rewrote to token_market, where search sorts by them. It is the refresh
// loop's path; an ingest batch derives all windows of the tokens it touches inside deriveMarket.
func recomputeWindows(ctx context.Context, tx pgx.Tx, targets []windowTarget, now time.Time) error {
	if len(targets) == 0 {
		return nil
	}
	cs, as := make([]string, len(targets)), make([]string, len(targets))
	want := make(map[ports.TokenRef]windowSet, len(targets))
	for i, t := range targets {
		cs[i], as[i] = string(t.ref.Chain), t.ref.Address
		want[t.ref] = t.windows
	}
	liquidity, known, err := windowLiquidity(ctx, tx, cs, as)
	if err != nil {
		return err
	}
	present := make([]windowTarget, len(known))
	for i, ref := range known {
		present[i] = windowTarget{ref: ref, windows: want[ref]}
	}
	windows, err := bucketWindows(ctx, tx, present, liquidity, now)
	if err != nil {
		return err
	}
	if err := writeWindows(ctx, tx, windows, now); err != nil {
		return err
	}
	// hand-built: reads the temporary table ingest_stats, which is not in the schema sqlc reads.
	if _, err := tx.Exec(ctx, `UPDATE token_market m SET volume_24h_usd = s.total_volume_usd, trades_24h = s.trades
		FROM ingest_stats s WHERE s.window_name = '24h' AND m.chain = s.chain AND m.address = s.address
			AND (m.volume_24h_usd, m.trades_24h) IS DISTINCT FROM (s.total_volume_usd, s.trades)`); err != nil {
		return fmt.Errorf("update 24h market figures: %w", err)
	}
	return nil
}

// windowLiquidity reads the liquidity stored on token_market of the given tokens, the refresh's
// stand-in for the batch's freshly derived one, and lists the tokens that have a market row.
func windowLiquidity(ctx context.Context, tx pgx.Tx, cs, as []string) (map[ports.TokenRef]decimal.Decimal, []ports.TokenRef, error) {
	rows, err := dbsqlc.New().WindowLiquidity(ctx, tx, dbsqlc.WindowLiquidityParams{Chains: cs, Addresses: as})
	if err != nil {
		return nil, nil, fmt.Errorf("window liquidity: %w", err)
	}
	liquidity := make(map[ports.TokenRef]decimal.Decimal, len(rows))
	known := make([]ports.TokenRef, 0, len(rows))
	for _, r := range rows {
		ref := ports.TokenRef{Chain: chain.Chain(r.Chain), Address: r.Address}
		liquidity[ref] = r.TotalTvlUsd
		known = append(known, ref)
	}
	return liquidity, known, nil
}

// windowDeltas are the changes a batch's bucket deltas make to the windows of their tokens as of
// now (stats.WindowDelta): one row per token and window that changed, without liquidity.
func windowDeltas(d *bucketDeltas, now time.Time) []windowStats {
	var out []windowStats
	var buf []stats.Bucket
	for ref, tb := range d.m {
		buf = buf[:0]
		for _, b := range tb {
			buf = append(buf, *b)
		}
		for _, w := range token.AllWindows {
			sum := stats.WindowDelta(buf, now, w)
			if sum.Trades() == 0 && sum.LastBuyers == 0 && sum.LastSellers == 0 && sum.LastTraders == 0 {
				continue
			}
			out = append(out, windowOf(ref, w, sum, decimal.Zero))
		}
	}
	return out
}

// windowMerge is the ON CONFLICT clause that adds a staged window delta to a stored window, as
// stats.Bucket.Merge adds buckets (bucketMerge): counts and volumes add, the earlier open and the
// later close win (a stored window without keys, from before migration 0045 until the next full
// refresh round, keeps its open and takes the delta's close), extremes; the price change is
// recomputed from the merged open and close with the domain's division (div_round18).
// Liquidity stays: the flush that derives the token's market row sets it.
var windowMerge = func() string {
	var set []string
	for _, c := range []string{"buys", "sells", "trades", "buyers", "sellers", "traders", "buy_volume", "sell_volume",
		"total_volume", "buy_volume_usd", "sell_volume_usd", "total_volume_usd"} {
		set = append(set, c+" = s."+c+" + EXCLUDED."+c)
	}
	key := func(t, side string) string {
		return "(" + t + "." + side + "_ms, " + t + "." + side + "_height, " + t + "." + side + "_sig, " + t + "." + side + "_ix)"
	}
	wins := map[string]string{
		"open":  "(EXCLUDED.trades > 0 AND (s.trades = 0 OR (s.open_ms IS NOT NULL AND " + key("EXCLUDED", "open") + " < " + key("s", "open") + ")))",
		"close": "(EXCLUDED.trades > 0 AND (s.trades = 0 OR s.close_ms IS NULL OR " + key("EXCLUDED", "close") + " > " + key("s", "close") + "))",
	}
	merged := func(side, c string) string {
		return "CASE WHEN " + wins[side] + " THEN EXCLUDED." + side + c + " ELSE s." + side + c + " END"
	}
	for _, side := range []string{"open", "close"} {
		for _, c := range []string{"_usd", "_ms", "_height", "_sig", "_ix"} {
			set = append(set, side+c+" = "+merged(side, c))
		}
	}
	extreme := func(c, f string) string {
		return c + " = CASE WHEN EXCLUDED.trades = 0 THEN s." + c + " WHEN s.trades = 0 THEN EXCLUDED." + c +
			" ELSE " + f + "(s." + c + ", EXCLUDED." + c + ") END"
	}
	set = append(set, extreme("high_usd", "GREATEST"), extreme("low_usd", "LEAST"),
		"price_change_ratio_usd = div_round18(("+merged("close", "_usd")+") - ("+merged("open", "_usd")+"), "+merged("open", "_usd")+")",
		"updated_at_ms = EXCLUDED.updated_at_ms")
	return strings.Join(set, ", ")
}()

// windowStaging is the per-connection table writeWindowDeltas copies deltas into.
const windowStaging = `CREATE TEMP TABLE IF NOT EXISTS ingest_window_deltas (LIKE token_stats) ON COMMIT DELETE ROWS`

// writeWindowDeltas adds a batch's window deltas (windowDeltas) to token_stats: COPY into
// ingest_window_deltas, then one INSERT … ON CONFLICT that merges (windowMerge). Only tokens with
// a tokens row have windows: the flush that derives a token created later computes its windows
// from its buckets.
func writeWindowDeltas(ctx context.Context, tx pgx.Tx, deltas []windowStats, now time.Time) error {
	if len(deltas) == 0 {
		return nil
	}
	if err := stageWindows(ctx, tx, windowStaging, "ingest_window_deltas", deltas, now); err != nil {
		return err
	}
	// hand-built: the column list and merge clause are generated from statsColumns; ingest_window_deltas is a temporary table.
	if _, err := tx.Exec(ctx, `INSERT INTO token_stats AS s (`+joinCols(statsColumns)+`) SELECT d.`+strings.Join(statsColumns, ", d.")+`
		FROM ingest_window_deltas d JOIN tokens t ON t.chain = d.chain AND t.address = d.address
		ON CONFLICT (chain, address, window_name) DO UPDATE SET `+windowMerge); err != nil {
		return fmt.Errorf("merge window deltas: %w", err)
	}
	return nil
}
