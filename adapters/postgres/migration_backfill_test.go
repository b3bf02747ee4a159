package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/adapters/postgres/pgtest"
	"github.com/tokenscope/tokenscope/app/ingest"
	"github.com/tokenscope/tokenscope/app/simulate"
	"github.com/tokenscope/tokenscope/migrations"
)

// derivedDump is the state the incremental engine keeps, one text per row in key order, numbers
// at their shortest scale; rows that hold nothing (a bucket whose counters moved away, a group
// its holders left) are left out, as the backfill never writes them.
func derivedDump(t *testing.T, ctx context.Context, db *pgx.Conn) []string {
	t.Helper()
	var out []string
	for _, q := range []string{
		`SELECT concat_ws('|', chain, address, res_ms, start_ms, buys, sells, trim_scale(buy_volume), trim_scale(sell_volume),
			trim_scale(buy_volume_usd), trim_scale(sell_volume_usd), trim_scale(open_usd), open_ms, open_height, open_sig, open_ix,
			trim_scale(close_usd), close_ms, close_height, close_sig, close_ix, trim_scale(high_usd), trim_scale(low_usd),
			last_buyers, last_sellers, last_traders)
		FROM token_buckets WHERE buys + sells > 0 OR last_buyers <> 0 OR last_sellers <> 0 OR last_traders <> 0
		ORDER BY chain, address, res_ms, start_ms`,
		`SELECT concat_ws('|', chain, address, holder_group, holders, trim_scale(holdings)) FROM token_holder_groups
		WHERE holders <> 0 OR holdings <> 0 ORDER BY chain, address, holder_group`,
		`SELECT concat_ws('|', chain, wallet, token_address, last_buy_ms, last_sell_ms, last_trade_ms) FROM wallet_positions
		ORDER BY chain, wallet, token_address`,
	} {
		rows, err := db.Query(ctx, q)
		require.NoError(t, err)
		got, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		out = append(out, got...)
	}
	return out
}

// TestMigrationBackfillMatchesTheEngine: the statements of migrations/0041 that build the
// buckets, last-activity times and holder totals from stored trades and positions (what a
// database migrated with data gets) give exactly what the incremental engine kept while ingesting
// the same market.
func TestMigrationBackfillMatchesTheEngine(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	ctx := context.Background()
	store := postgres.NewIngestStore(pgtest.Pool(t))
	end := time.Now().UTC()
	// Within the last 90 minutes: second buckets are kept for two hours, by the engine as of each
	// batch and by the migration as of its run.
	sim := simulate.New(simulate.Config{Seed: 5, Tokens: 8, Wallets: 40, Trades: 1500, Start: end.Add(-90 * time.Minute), End: end})
	require.NoError(t, sim.Backfill(ctx, &simulate.IngestSink{Ingester: ingest.New(store, wallClock{}, 300)}))

	conn, err := pgx.Connect(ctx, pgtest.URL(t))
	require.NoError(t, err)
	defer conn.Close(ctx)
	engine := derivedDump(t, ctx, conn)
	require.NotEmpty(t, engine)

	_, err = conn.Exec(ctx, `TRUNCATE token_buckets, token_holder_groups;
		UPDATE wallet_positions SET last_buy_ms = 0, last_sell_ms = 0, last_trade_ms = 0`)
	require.NoError(t, err)
	body, err := migrations.FS.ReadFile("0041_engine_buckets.sql")
	require.NoError(t, err)
	ran := 0
	for _, stmt := range strings.Split(string(body), ";\n") {
		var code []string
		for _, line := range strings.Split(stmt, "\n") {
			if !strings.HasPrefix(strings.TrimSpace(line), "--") {
				code = append(code, line)
			}
		}
		sql := strings.TrimSpace(strings.Join(code, "\n"))
		if strings.HasPrefix(sql, "INSERT") || strings.HasPrefix(sql, "UPDATE") {
			_, err := conn.Exec(ctx, sql)
			require.NoError(t, err, "%s", sql)
			ran++
		}
	}
	require.Equal(t, 7, ran, "the backfill statements of the migration")
	assert.Equal(t, engine, derivedDump(t, ctx, conn))
}
