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
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/ports"
)

// marketColumns are the token_market fields a batch rewrites, staged in ingest_market and applied
// with one UPDATE. volume_24h_usd and trades_24h are NULL for tokens whose windows the batch did
// not recompute, which keeps their stored values.
var marketColumns = []string{
	"chain", "address", "price_usd", "price_sol", "total_supply", "circulating_supply", "market_cap_usd", "market_cap_sol",
	"fdv_usd", "fdv_sol", "holders", "top10_holdings", "top10_ratio", "top50_holdings", "top50_ratio", "top100_holdings",
	"top100_ratio", "dev_holdings", "dev_ratio", "groups", "completion_ratio", "max_pool_tvl_usd", "max_pool_tvl_sol",
	"total_tvl_usd", "total_tvl_sol", "last_trade_at_ms", "volume_24h_usd", "trades_24h",
}

// deriveMarket recomputes token_market for refs and the windows of windowRefs (a subset of refs),
// writing each table once: price from the newest trade, holders and holdings from the kept
// holder totals and the largest balances (engine_holders.go), TVL from pools, the formulas of
// domain/stats, and the windows from the time buckets (engine_bucket.go) with the liquidity just
// derived. Tokens without a tokens row have neither
// market nor stats rows and are skipped. Its steps: read the inputs (loadMarketInputs) and the
// holders (loadHolders), compute the windows (computeWindows), compute each row (marketRow, no
// SQL), write token_market (writeMarket), then token_stats (writeWindows).
func deriveMarket(ctx context.Context, tx pgx.Tx, refs []ports.TokenRef, windowRefs map[ports.TokenRef]bool, now time.Time) error {
	if len(refs) == 0 {
		return nil
	}
	cs, as := refArrays(refs)
	solUSD, err := solPriceUSD(ctx, tx)
	if err != nil {
		return err
	}
	inputs, order, err := loadMarketInputs(ctx, tx, cs, as)
	if err != nil {
		return err
	}
	holders, err := loadHolders(ctx, tx, cs, as)
	if err != nil {
		return err
	}
	wrefs, liquidity := batchWindowTargets(order, inputs, windowRefs)
	windows, err := computeWindows(ctx, tx, wrefs, liquidity, now)
	if err != nil {
		return err
	}
	day := dayWindows(windows)
	rows := make([][]any, 0, len(order))
	for _, ref := range order {
		var d *token.PeriodStats
		if s, ok := day[ref]; ok {
			d = &s
		}
		row, err := marketRow(ref, inputs[ref], holders[ref], solUSD, d)
		if err != nil {
			return err
		}
		rows = append(rows, row)
	}
	if err := writeMarket(ctx, tx, rows, now); err != nil {
		return err
	}
	// The other tokens' windows carry the liquidity just derived (their sums are kept by the
	// batches' deltas, writeWindowDeltas).
	// hand-built: reads the temporary table ingest_market, which is not in the schema sqlc reads.
	if _, err := tx.Exec(ctx, `UPDATE token_stats t SET current_liquidity_usd = s.total_tvl_usd FROM ingest_market s
		WHERE t.chain = s.chain AND t.address = s.address AND t.current_liquidity_usd <> s.total_tvl_usd`); err != nil {
		return fmt.Errorf("window liquidity: %w", err)
	}
	return writeWindows(ctx, tx, windows, now)
}

// marketInput is what a token's market row is derived from besides its holders: its tokens row,
// its newest successful trade, its bonding-curve pool and the TVL over all its pools.
type marketInput struct {
	creator                         string
	total, circ, target             decimal.Decimal
	priceUSD, priceNative, curveRes decimal.Decimal
	migrated                        bool
	maxTVLUSD, maxTVLSol            decimal.Decimal
	sumTVLUSD, sumTVLSol            decimal.Decimal
	lastTrade                       int64
}

// loadMarketInputs reads the market inputs of the tokens (cs, as) that have a tokens row, and
// lists those tokens in the order read.
func loadMarketInputs(ctx context.Context, tx pgx.Tx, cs, as []string) (map[ports.TokenRef]*marketInput, []ports.TokenRef, error) {
	rows, err := dbsqlc.New().MarketInputs(ctx, tx, dbsqlc.MarketInputsParams{Chains: cs, Addresses: as})
	if err != nil {
		return nil, nil, fmt.Errorf("market inputs: %w", err)
	}
	inputs := make(map[ports.TokenRef]*marketInput, len(rows))
	order := make([]ports.TokenRef, 0, len(rows))
	for _, r := range rows {
		ref := ports.TokenRef{Chain: chain.Chain(r.Chain), Address: r.Address}
		inputs[ref] = &marketInput{creator: r.CreatorAddress, total: r.TotalSupply, circ: r.CirculatingSupply,
			target: r.CurveTargetNative, migrated: r.Migrated, priceUSD: r.PriceUsd, priceNative: r.PriceNative,
			lastTrade: r.LastTradeMs, curveRes: r.CurveReserve, maxTVLUSD: r.MaxTvlUsd, maxTVLSol: r.MaxTvlSol,
			sumTVLUSD: r.SumTvlUsd, sumTVLSol: r.SumTvlSol}
		order = append(order, ref)
	}
	return inputs, order, nil
}

// writeMarket stages rows (marketColumns) in ingest_market with COPY, inserts the rows of new
// tokens and applies the others with one UPDATE that skips rows whose values did not change (each
// rewrite of a token_market row adds an entry to every one of its sort indexes):
// last_trade_at_ms only moves forward, and NULL 24h figures keep the stored ones (0 for a new row).
func writeMarket(ctx context.Context, tx pgx.Tx, rows [][]any, now time.Time) error {
	if len(rows) == 0 {
		return nil
	}
	if err := copyStaged(ctx, tx, "", "ingest_market", marketColumns, rows, "market"); err != nil {
		return err
	}
	// A row without 24h figures copies them from the token's stored 24h window, which the
	// batches' deltas keep current.
	// hand-built: updates the temporary table ingest_market, which is not in the schema sqlc reads.
	if _, err := tx.Exec(ctx, `UPDATE ingest_market s SET volume_24h_usd = t.total_volume_usd, trades_24h = t.trades
		FROM token_stats t WHERE s.volume_24h_usd IS NULL AND t.chain = s.chain AND t.address = s.address
		AND t.window_name = '24h'`); err != nil {
		return fmt.Errorf("24h market figures: %w", err)
	}
	var set, vals, olds, news []string
	for _, c := range marketColumns[2:] {
		v := "s." + c
		switch c {
		case "last_trade_at_ms":
			v = "GREATEST(m.last_trade_at_ms, s.last_trade_at_ms)"
		case "volume_24h_usd", "trades_24h":
			v = "COALESCE(s." + c + ", m." + c + ")"
		}
		set = append(set, c+" = "+v)
		olds, news = append(olds, "m."+c), append(news, v)
		if c == "volume_24h_usd" || c == "trades_24h" {
			vals = append(vals, "COALESCE(s."+c+", 0)")
		} else {
			vals = append(vals, "s."+c)
		}
	}
	cols := joinCols(marketColumns)
	// hand-built: the column and value lists are generated from marketColumns; ingest_market is a temporary table.
	if _, err := tx.Exec(ctx, `INSERT INTO token_market (`+cols+`, updated_at_ms)
		SELECT s.chain, s.address, `+strings.Join(vals, ", ")+`, $1 FROM ingest_market s
		ON CONFLICT (chain, address) DO NOTHING`, now.UnixMilli()); err != nil {
		return fmt.Errorf("insert market: %w", err)
	}
	// hand-built: the SET list is generated from marketColumns; ingest_market is a temporary table.
	if _, err := tx.Exec(ctx, `UPDATE token_market m SET updated_at_ms = $1, `+strings.Join(set, ", ")+`
			FROM ingest_market s WHERE m.chain = s.chain AND m.address = s.address
			AND (`+strings.Join(olds, ", ")+`) IS DISTINCT FROM (`+strings.Join(news, ", ")+`)`, now.UnixMilli()); err != nil {
		return fmt.Errorf("update market: %w", err)
	}
	return nil
}
