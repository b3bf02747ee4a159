package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// burstEvents is the size of the kill -9 burst (issue 12 asks for 20,000).
const burstEvents = 20_000

// TestDevKilledDuringWebhookBurst writes burstEvents outbox rows (as the engine's ingest
// transaction does) for one endpoint of tokenscope-dev, kills the process with SIGKILL once part
// of them has arrived, and starts it again on the same data directory and database: every event
// must then reach the receiver at least once (distinct webhook-ids = events), with the
// process's own durable state only (outbox, delivery queue, recorded attempts, the Temporal
// history of the dispatcher).
func TestDevKilledDuringWebhookBurst(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		mu.Lock()
		seen[req.Header.Get("webhook-id")]++
		mu.Unlock()
		w.WriteHeader(200)
	}))
	defer rcv.Close()
	distinct := func() (ids, reqs int) {
		mu.Lock()
		defer mu.Unlock()
		for _, n := range seen {
			reqs += n
		}
		return len(seen), reqs
	}

	d := newDevProcesses(t, "WEBHOOK_DISPATCH_POLL=200ms")
	first, _ := d.start("first start")
	d.waitReady("first start", 3*time.Minute)
	key, err := os.ReadFile(filepath.Join(d.dir, "data", "dev-api-key"))
	require.NoError(t, err)
	bearer := "Bearer " + strings.TrimSpace(string(key))
	status, o := call(t, "POST", d.base+"/v2/webhook/endpoint",
		map[string]any{"url": rcv.URL, "channels": []string{"sol.token.created"}}, "Authorization", bearer)
	require.Equal(t, 200, status, "%v", o)

	ctx := context.Background()
	db, err := pgx.Connect(ctx, d.dbURL)
	require.NoError(t, err)
	defer db.Close(ctx)
	events := make([]string, burstEvents)
	payloads := make([]string, burstEvents)
	for i := range events {
		events[i] = fmt.Sprintf("sol.token.created:burst-%d", i)
		payloads[i] = fmt.Sprintf(`{"address":"burst-%d","name":"B","symbol":"BRST","decimals":9}`, i)
	}
	// In 500-row commits, as ingest batches do.
	for i := 0; i < burstEvents; i += 500 {
		_, err := db.Exec(ctx, `INSERT INTO outbox (event_id, channel, payload, created_at_ms)
			SELECT e, 'sol.token.created', p::jsonb, $3 FROM unnest($1::text[], $2::text[]) AS t(e, p)`,
			events[i:i+500], payloads[i:i+500], time.Now().UnixMilli())
		require.NoError(t, err)
	}
	eventually(t, 60*time.Second, "part of the burst delivered", func() bool { n, _ := distinct(); return n >= burstEvents/10 })
	d.stop(first, syscall.SIGKILL)
	before, _ := distinct()
	require.Less(t, before, burstEvents, "the kill came in the middle of the burst")

	restarted, _ := d.start("restart")
	d.waitReady("restart", 30*time.Second)
	eventually(t, 3*time.Minute, "every event delivered after the restart", func() bool { n, _ := distinct(); return n == burstEvents })
	ids, reqs := distinct()
	assert.Equal(t, burstEvents, ids, "distinct webhook-ids = events")
	var queued, unstamped int
	require.NoError(t, db.QueryRow(ctx, `SELECT count(*) FROM webhook_queue`).Scan(&queued))
	require.NoError(t, db.QueryRow(ctx, `SELECT count(*) FROM outbox WHERE dispatched_at_ms IS NULL`).Scan(&unstamped))
	assert.Zero(t, unstamped, "every outbox row dispatched")
	eventually(t, 30*time.Second, "the queue drained", func() bool {
		require.NoError(t, db.QueryRow(ctx, `SELECT count(*) FROM webhook_queue`).Scan(&queued))
		return queued == 0
	})
	t.Logf("%d events: %d delivered before the kill, %d requests in all (%d repeats, all around the kill)",
		burstEvents, before, reqs, reqs-ids)
	d.stop(restarted, syscall.SIGTERM)
}
