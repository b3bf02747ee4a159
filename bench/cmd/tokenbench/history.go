package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tokenscope/tokenscope/bench/report"
)

// saveFillRow keeps the import row of a fill in the bench database itself (table
// tokenbench_fill, which the service never reads), so a later -reuse run reports the figures
// measured when the data went in.
func saveFillRow(ctx context.Context, pool *pgxpool.Pool, r report.Row) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS tokenbench_fill (row JSONB NOT NULL, load_avg TEXT NOT NULL, at TIMESTAMPTZ NOT NULL DEFAULT now());
		TRUNCATE tokenbench_fill`)
	if err == nil {
		_, err = pool.Exec(ctx, `INSERT INTO tokenbench_fill (row, load_avg) VALUES ($1, $2)`, b, loadAverage())
	}
	return err
}

// loadFillRow reads back what saveFillRow kept, noting when it was measured.
func loadFillRow(ctx context.Context, pool *pgxpool.Pool) (report.Row, error) {
	var b []byte
	var load string
	var at time.Time
	if err := pool.QueryRow(ctx, `SELECT row, load_avg, at FROM tokenbench_fill`).Scan(&b, &load, &at); err != nil {
		return report.Row{}, fmt.Errorf("no import figures kept with the database: %w", err)
	}
	var r report.Row
	if err := json.Unmarshal(b, &r); err != nil {
		return report.Row{}, err
	}
	if r.Note != "" {
		r.Note += "; "
	}
	r.Note += fmt.Sprintf("measured when the database was filled (%s UTC, load average %s), not in this run", at.UTC().Format("2006-01-02 15:04"), load)
	return r, nil
}

// fillSpan is the time the simulator spreads a fill's trades over, ending at the run's start.
const fillSpan = 24 * time.Hour

// historyMark is appended (with the copy's number) to the signature of every history copy, so
// a copy never collides with a real trade and a reused database can tell it was extended.
const historyMark = ":hist"

// extendHistory grows the trades table to at least target rows with copies of the trades the
// ingest path wrote: the k-th copy of every trade is the same trade k × fillSpan and k × (the
// block-height span of the data) earlier, with the signature suffixed by historyMark and k.
// Wallets, tokens and pools are the same, so every index keeps the shape it has under real
// traffic, only deeper in the past. The copies go straight into the trades table (INSERT …
// SELECT over generate_series, about a million rows a statement, ON CONFLICT DO NOTHING so an
// interrupted run can be completed): nothing else is derived from them, which is why only the
// trade pages are compared across sizes. A later call continues from the copies already there.
// It returns the time taken, with the VACUUM ANALYZE that gives the planner the new statistics
// as autovacuum would and a CHECKPOINT.
func extendHistory(ctx context.Context, pool *pgxpool.Pool, target int64, logf func(string, ...any)) (time.Duration, error) {
	started := time.Now()
	var maxSeq, minHeight, maxHeight, base, total int64
	if err := pool.QueryRow(ctx, `SELECT COALESCE(max(seq), 0), COALESCE(min(block_height), 0), COALESCE(max(block_height), 0), count(*)
		FROM trades WHERE tx_signature NOT LIKE '%`+historyMark+`%'`).Scan(&maxSeq, &minHeight, &maxHeight, &base); err != nil {
		return 0, fmt.Errorf("read the trades to copy: %w", err)
	}
	if base == 0 {
		return 0, fmt.Errorf("no trades to copy")
	}
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM trades`).Scan(&total); err != nil {
		return 0, err
	}
	have := total/base - 1           // copies already made (each holds base rows)
	want := (target+base-1)/base - 1 // copies for target rows in all
	if want <= have {
		return 0, nil
	}
	heightSpan := maxHeight - minHeight + 1
	cols := append(append([]string{}, copyColumns...), "ingested_at_ms")
	sel := make([]string, len(cols))
	for i, c := range cols {
		switch c {
		case "tx_signature":
			sel[i] = "tx_signature || '" + historyMark + "' || k"
		case "block_height", "block_slot":
			sel[i] = c + " - k * $1::bigint"
		case "block_timestamp_ms":
			sel[i] = c + " - k * $2::bigint"
		default:
			sel[i] = c
		}
	}
	sql := `INSERT INTO trades (` + strings.Join(cols, ", ") + `) SELECT ` + strings.Join(sel, ", ") +
		` FROM generate_series($3::bigint, $4::bigint) AS k, trades WHERE seq <= $5 AND tx_signature NOT LIKE '%` + historyMark +
		`%' ON CONFLICT DO NOTHING`
	per := max(1, 1_000_000/base)
	for k := have + 1; k <= want; k += per {
		last := min(k+per-1, want)
		t := time.Now()
		tag, err := pool.Exec(ctx, sql, heightSpan, fillSpan.Milliseconds(), k, last, maxSeq)
		if err != nil {
			return time.Since(started), fmt.Errorf("history copies %d-%d: %w", k, last, err)
		}
		logf("  history copies %d-%d of %d: %d trades in %s", k, last, want, tag.RowsAffected(), time.Since(t).Round(time.Second))
	}
	t := time.Now()
	if _, err := pool.Exec(ctx, "VACUUM ANALYZE trades"); err != nil {
		return time.Since(started), fmt.Errorf("vacuum analyze trades: %w", err)
	}
	logf("  VACUUM ANALYZE trades: %s", time.Since(t).Round(time.Second))
	// Write the copies' dirty pages out now: left to the checkpointer, gigabytes of them are
	// flushed while the next series runs and that series measures the flush.
	t = time.Now()
	if _, err := pool.Exec(ctx, "CHECKPOINT"); err != nil {
		return time.Since(started), fmt.Errorf("checkpoint: %w", err)
	}
	logf("  CHECKPOINT: %s", time.Since(t).Round(time.Second))
	return time.Since(started), nil
}
