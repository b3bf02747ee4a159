package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/adapters/postgres/internal/dbsqlc"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/ports"
)

// statsColumns are the token_stats columns, staged in ingest_stats and upserted by writeWindows.
var statsColumns = []string{
	"chain", "address", "window_name", "buys", "sells", "trades", "buyers", "sellers", "traders", "buy_volume",
	"sell_volume", "total_volume", "buy_volume_usd", "sell_volume_usd", "total_volume_usd", "open_usd", "close_usd",
	"high_usd", "low_usd", "price_change_ratio_usd", "current_liquidity_usd", "updated_at_ms",
}

// windowStats is one token_stats row before it is written.
type windowStats struct {
	ref    ports.TokenRef
	window token.Window
	stats  token.PeriodStats
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
	end := now.UnixMilli()
	out := newCopyRows(len(windows) * 320)
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
	}
	if err := copyStagedRows(ctx, tx, "", "ingest_stats", statsColumns, out, "stats"); err != nil {
		return err
	}
	cols := joinCols(statsColumns)
	set := ""
	for _, c := range statsColumns[3:] {
		if set != "" {
			set += ", "
		}
		set += c + " = EXCLUDED." + c
	}
	// hand-built: the column and SET lists are generated from statsColumns; ingest_stats is a temporary table.
	if _, err := tx.Exec(ctx, `INSERT INTO token_stats (`+cols+`) SELECT `+cols+` FROM ingest_stats
		ON CONFLICT (chain, address, window_name) DO UPDATE SET `+set); err != nil {
		return fmt.Errorf("upsert stats: %w", err)
	}
	return nil
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
		FROM ingest_stats s WHERE s.window_name = '24h' AND m.chain = s.chain AND m.address = s.address`); err != nil {
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
