package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDevIsReadyWithRankings runs tokenscope-dev with its simulated market on an empty
// database: the market is backfilled in the background after start, and /readyz must not answer
// 200 before the hot-token rankings include it. So at the first 200, every chain with trades in
// the last 24 hours has a non-empty 24h ranking. (Before, the lists stayed empty for the ~10 s
// of the backfill and the next refresh round after readiness.)
func TestDevIsReadyWithRankings(t *testing.T) {
	d := newDevProcesses(t, "DEV_SIMULATE=true")
	p, _ := d.start("simulated market")
	checks := d.waitReady("simulated market", 3*time.Minute)
	assert.Equal(t, "up", checks["rankings"])

	ctx := context.Background()
	db, err := pgx.Connect(ctx, d.dbURL)
	require.NoError(t, err)
	defer db.Close(ctx)
	rows, err := db.Query(ctx, `SELECT DISTINCT chain FROM trades WHERE status = 'SUCCEEDED'
		AND block_timestamp_ms > (extract(epoch FROM now()) * 1000)::bigint - 86400000`)
	require.NoError(t, err)
	chains, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.NotEmpty(t, chains, "the simulated market was backfilled before readiness")

	key, err := os.ReadFile(filepath.Join(d.dir, "data", "dev-api-key"))
	require.NoError(t, err)
	for _, c := range chains {
		req, err := http.NewRequest("GET", d.base+"/v2/ranking/"+c+"/hotTokens/24h", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(key)))
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		var list []map[string]any
		require.NoError(t, json.NewDecoder(res.Body).Decode(&list))
		res.Body.Close()
		require.Equal(t, 200, res.StatusCode)
		assert.NotEmpty(t, list, "%s: the 24h ranking at readiness", c)
	}
	d.stop(p, syscall.SIGTERM)
}
