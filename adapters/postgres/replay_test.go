package postgres_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/ndjson"
	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/adapters/postgres/pgtest"
	"github.com/tokenscope/tokenscope/app/ingest"
	"github.com/tokenscope/tokenscope/app/simulate"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/internal/fakeclock"
)

// dump renders every engine table as text, rows sorted, minus the columns that record when or
// in which order a row was written (seq, ingested_at_ms, updated_at, inserted_at).
func dump(t *testing.T) string {
	t.Helper()
	var out strings.Builder
	for _, table := range engineTables {
		var body string
		require.NoError(t, pgtest.Pool(t).QueryRow(context.Background(), `SELECT COALESCE(string_agg(r, E'\n' ORDER BY r), '')
			FROM (SELECT (to_jsonb(x) - 'seq' - 'ingested_at_ms' - 'updated_at' - 'inserted_at')::text AS r FROM `+table+` x) s`).Scan(&body))
		out.WriteString("== " + table + "\n" + body + "\n")
	}
	return out.String()
}

func TestImportingTheSameFileTwiceChangesNothing(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	end := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	var file bytes.Buffer
	sim := simulate.New(simulate.Config{Seed: 42, Tokens: 15, Wallets: 150, Trades: 2500, Start: end.Add(-3 * time.Hour), End: end})
	require.NoError(t, sim.Backfill(context.Background(), simulate.EncoderSink{Enc: ndjson.NewEncoder(&file)}))

	svc := ingest.New(postgres.NewIngestStore(pgtest.Pool(t)), fakeclock.At(end), 700)
	first, err := svc.Stream(context.Background(), ndjson.NewDecoder(bytes.NewReader(file.Bytes())), nil)
	require.NoError(t, err)
	require.Positive(t, first.Trades)
	before := dump(t)
	require.Contains(t, before, "sol.token.created")

	second, err := svc.Stream(context.Background(), ndjson.NewDecoder(bytes.NewReader(file.Bytes())), nil)
	require.NoError(t, err)
	assert.Equal(t, 0, second.Inserted, "a replay inserts nothing")
	assert.Equal(t, 0, second.Trades)
	assert.Equal(t, first.Events, second.Events)
	after := dump(t)
	assert.Equal(t, before, after)
}

func TestStreamStopsAtAMalformedLine(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	svc := ingest.New(postgres.NewIngestStore(pgtest.Pool(t)), fakeclock.At(now), 1)
	body := `{"type":"wallet.label","chain":"sol","wallet":"w1","label":"kol"}` + "\n" +
		`{"type":"wallet.label","chain":"sol","wallet":"w2","label":"kol","extra":1}` + "\n"
	res, err := svc.Stream(context.Background(), ndjson.NewDecoder(strings.NewReader(body)), nil)
	require.Error(t, err)
	fe, ok := fault.As(err)
	require.True(t, ok)
	assert.Equal(t, 2, fe.Details["line"])
	assert.Equal(t, "extra", fe.Param)
	// Batch size 1: the first line was committed before the second failed.
	assert.Equal(t, 1, res.Inserted)
}
