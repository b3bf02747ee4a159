package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/temporal"
	"github.com/tokenscope/tokenscope/app/config"
	"github.com/tokenscope/tokenscope/cmd/internal/wire"
	"github.com/tokenscope/tokenscope/domain/account"
	"github.com/tokenscope/tokenscope/domain/kyt"
	"github.com/tokenscope/tokenscope/domain/webhook"
	"github.com/tokenscope/tokenscope/workflows"
)

func TestTemporalUnreachableAtPostTime(t *testing.T) {
	cfg := testConfig(t)
	down, err := temporal.Dial("127.0.0.1:1", cfg.TemporalNS, testLogger())
	require.NoError(t, err)
	t.Cleanup(down.Close)
	bad := newEnvWithClient(t, down, false, fastWorkflows, func(c *config.Config) { c.KYTDeadline = time.Second })
	before := countRows(t, bad, `SELECT count(*) FROM kyt_registrations`)
	jobsBefore := countRows(t, bad, `SELECT count(*) FROM jobs`)

	start := time.Now()
	r := bad.do(t, "POST", "/v2/kyt/withdrawal", withdrawalBody("11"), "Idempotency-Key", "down-1")
	assert.Less(t, time.Since(start), 5*time.Second, "the deadline bounds the request")
	require.Equal(t, 503, r.Status, "%s", r.Body)
	assert.NotEmpty(t, r.Header.Get("Retry-After"))
	assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
	assert.EqualValues(t, "503", r.Object(t)["code"].(json.Number).String())
	r = bad.do(t, "POST", "/v2/wallet/sol/"+solAddr+"/calculate-pnl", map[string]any{})
	require.Equal(t, 503, r.Status, "%s", r.Body)
	assert.Equal(t, before, countRows(t, bad, `SELECT count(*) FROM kyt_registrations`), "nothing half-written")
	assert.Equal(t, jobsBefore, countRows(t, bad, `SELECT count(*) FROM jobs`))

	// The same request once Temporal answers: registered, under the same key's externalId.
	good := newEnv(t, fastWorkflows)
	r = good.do(t, "POST", "/v2/kyt/withdrawal", withdrawalBody("11"), "Idempotency-Key", "down-1")
	require.Equal(t, 200, r.Status, "%s", r.Body)
	id := r.Object(t)["externalId"].(string)
	eventually(t, 30*time.Second, "registered", func() bool {
		return good.do(t, "GET", "/v2/kyt/withdrawal/"+id+"/summary", nil).Object(t)["status"] == "registered"
	})
}

func TestWorkerStoppedMidway(t *testing.T) {
	ts := sharedTemporal()
	e := newEnvWithClient(t, ts.GetDefaultClient(), false, fastWorkflows, func(c *config.Config) { c.WebhookTimeout = 3 * time.Second })

	t.Run("a registration accepted without a worker completes when one starts", func(t *testing.T) {
		r := e.do(t, "POST", "/v2/kyt/withdrawal", withdrawalBody("21"))
		require.Equal(t, 200, r.Status, "%s", r.Body)
		id := r.Object(t)["externalId"].(string)
		time.Sleep(300 * time.Millisecond)
		assert.Equal(t, "pending", e.do(t, "GET", "/v2/kyt/withdrawal/"+id+"/summary", nil).Object(t)["status"])
		w := startWorker(t, e.rt)
		defer w.Stop()
		eventually(t, 30*time.Second, "registered", func() bool {
			return e.do(t, "GET", "/v2/kyt/withdrawal/"+id+"/summary", nil).Object(t)["status"] == "registered"
		})
		assert.Equal(t, 1, countRows(t, e, `SELECT count(*) FROM kyt_registrations WHERE external_id = $1`, id))
		replay(t, e.rt.Temporal, workflows.KYTWorkflowID("e2e", string(kyt.KindWithdrawal), id))
	})

	// The worker stops gracefully (as on SIGTERM): the pump finishes and records the request in
	// flight, so the next worker sends nothing again. A worker that dies outright is
	// TestDevKilledDuringWebhookBurst (cmd/tokenscope-dev).
	t.Run("a delivery in flight when its worker stops is recorded once and not sent again", func(t *testing.T) {
		w1 := startWorker(t, e.rt)
		require.NoError(t, wire.StartWebhookDispatch(context.Background(), e.rt))
		key := e.keyFor(t, "wh-crash", account.ScopeWebhook)
		rcv := newReceiver(t)
		rcv.delay = 1500 * time.Millisecond // the first request is in flight when the worker dies
		id := createEndpoint(t, e, key, map[string]any{"url": rcv.srv.URL})
		evID := publish(t, e, webhook.TokenMigrated, `{"address":"So2"}`)
		eventually(t, 30*time.Second, "first request", func() bool { return rcv.count() >= 1 })
		w1.Stop()
		rcv.mu.Lock()
		rcv.delay = 0
		rcv.mu.Unlock()
		w2 := startWorker(t, e.rt)
		defer w2.Stop()
		eventually(t, 20*time.Second, "a recorded success", func() bool {
			return countRows(t, e, `SELECT count(*) FROM webhook_attempts WHERE endpoint_id = $1 AND succeeded`, id) == 1
		})
		rcv.mu.Lock()
		for _, req := range rcv.reqs {
			assert.Equal(t, workflows.MessageID(evID), req.Header.Get("webhook-id"), "the redelivery carries the same id")
		}
		rcv.mu.Unlock()
		assert.Equal(t, 0, countRows(t, e, `SELECT count(*) FROM outbox WHERE event_id = $1 AND dispatched_at_ms IS NULL`, evID))
		assert.Equal(t, 1, countRows(t, e, `SELECT count(*) FROM webhook_attempts WHERE endpoint_id = $1`, id),
			"one attempt, recorded once")
		assert.Equal(t, 1, rcv.count(), "not sent again by the next worker")
		replay(t, e.rt.Temporal, workflows.WebhookDispatchWorkflowID)
	})
}

// sseMessage is one parsed stream event.
type sseMessage struct {
	ID   string
	Data map[string]any
}

// readSSE reads events until the stream ends or n events arrived, failing on any line that is
// not id:, data:, a comment or blank.
func readSSE(t *testing.T, sc *bufio.Scanner, n int) []sseMessage {
	t.Helper()
	var out []sseMessage
	var cur sseMessage
	for len(out) < n && sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.Data != nil {
				out = append(out, cur)
			}
			cur = sseMessage{}
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "id: "):
			cur.ID = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "data: "):
			require.Nil(t, cur.Data, "one data line per event")
			require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &cur.Data))
		default:
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	return out
}

func openStream(t *testing.T, ctx context.Context, c *http.Client, e *env, jobID string) (*http.Response, *bufio.Scanner) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "GET", e.base+"/v2/job/"+jobID+"/streaming", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+e.key)
	req.Header.Set("Accept", "text/event-stream")
	res, err := c.Do(req)
	require.NoError(t, err)
	return res, bufio.NewScanner(res.Body)
}

func TestJobStream(t *testing.T) {
	ts := sharedTemporal()
	e := newEnvWithClient(t, ts.GetDefaultClient(), false, fastWorkflows)
	r := e.do(t, "POST", "/v2/wallet/sol/"+solAddr+"/calculate-pnl", nil)
	require.Equal(t, 200, r.Status, "%s", r.Body)
	o := r.Object(t)
	assert.Equal(t, true, o["success"])
	jobID := o["jobId"].(string)

	t.Run("unknown and foreign jobs are 404 JSON before any stream", func(t *testing.T) {
		r := e.do(t, "GET", "/v2/job/job_nope/streaming", nil)
		assert.Equal(t, 404, r.Status)
		assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
		other := e.keyFor(t, "job-other", account.ScopeRead)
		assert.Equal(t, 404, e.do(t, "GET", "/v2/job/"+jobID+"/streaming", nil, "Authorization", "Bearer "+other).Status)
		assert.Equal(t, 404, e.do(t, "GET", "/v2/job/"+jobID, nil, "Authorization", "Bearer "+other).Status)
	})

	t.Run("1000 streams on one job cost one poller and leave nothing behind", func(t *testing.T) {
		tr := &http.Transport{MaxIdleConnsPerHost: -1, DisableKeepAlives: true}
		c := &http.Client{Transport: tr}
		goruntime.GC()
		baseG := streamGoroutines()
		var ms goruntime.MemStats
		goruntime.ReadMemStats(&ms)
		baseHeap := ms.HeapInuse
		ctx, cancel := context.WithCancel(context.Background())
		const n = 1000
		var wg sync.WaitGroup
		var mu sync.Mutex
		firsts := 0
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, sc := openStream(t, ctx, c, e, jobID)
				defer res.Body.Close()
				if res.StatusCode != 200 {
					t.Errorf("status %d", res.StatusCode)
					return
				}
				msgs := readSSE(t, sc, 1)
				if len(msgs) == 1 && msgs[0].ID == "1" && msgs[0].Data["status"] == "pending" {
					mu.Lock()
					firsts++
					mu.Unlock()
				}
				<-ctx.Done()
			}()
		}
		eventually(t, 30*time.Second, "every stream's first message", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return firsts == n
		})
		assert.Equal(t, 1, jobPollers(), "one poller for every stream of the job")
		cancel()
		wg.Wait()
		tr.CloseIdleConnections()
		// Each look dumps every goroutine's stack (the Temporal server's thousands too), so it
		// looks every 250 ms rather than every 20 ms.
		eventuallyEvery(t, 30*time.Second, 250*time.Millisecond, "goroutines back to the baseline", func() bool {
			return streamGoroutines() <= baseG+5 && jobPollers() == 0
		})
		// The connections' buffers go back to fasthttp's pools (sync.Pool: dropped by the second
		// collection after their return) and its parked workers' until they are reclaimed, so
		// the heap is looked at, after two collections, until it is back near the baseline.
		heapBack := func() bool {
			goruntime.GC()
			goruntime.GC()
			goruntime.ReadMemStats(&ms)
			return ms.HeapInuse < baseHeap+32<<20
		}
		eventuallyEvery(t, 30*time.Second, 250*time.Millisecond, fmt.Sprintf("heap in use back under the baseline's %d KiB + 32 MiB", baseHeap/1024), heapBack)
		t.Logf("stream-related goroutines: baseline %d, after %d; heap in use: baseline %d KiB, after %d KiB",
			baseG, streamGoroutines(), baseHeap/1024, ms.HeapInuse/1024)
	})

	t.Run("the stream follows the job to its end", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		res, sc := openStream(t, ctx, http.DefaultClient, e, jobID)
		defer res.Body.Close()
		require.Equal(t, 200, res.StatusCode)
		assert.Equal(t, "text/event-stream; charset=utf-8", res.Header.Get("Content-Type"))
		first := readSSE(t, sc, 1)
		require.Len(t, first, 1)
		w := startWorker(t, e.rt)
		defer w.Stop()
		rest := readSSE(t, sc, 100) // until the server ends the stream
		if len(rest) == 0 {
			dumpTemporal(t)
		}
		require.NotEmpty(t, rest)
		last := rest[len(rest)-1]
		assert.Equal(t, "completed", last.Data["status"])
		assert.Equal(t, jobID, last.Data["id"])
		assert.Equal(t, true, last.Data["result"].(map[string]any)["success"])
		for i, m := range append(first, rest...) {
			assert.Equal(t, strconv.Itoa(i+1), m.ID, "ids count 1, 2, 3, …")
		}
		g := e.do(t, "GET", "/v2/job/"+jobID, nil).Object(t)
		assert.Equal(t, "completed", g["state"])
		replay(t, e.rt.Temporal, workflows.JobWorkflowID(jobID))
	})
}

// streamGoroutines counts the service's goroutines a stream can hold: the HTTP server's
// connection goroutines and the job stream's own (the test's client is not the service). The in-process Temporal server grows its
// worker pools lazily and is left out: it is not part of the service. So is a fasthttp worker
// parked with no connection (its stack has workerFunc waiting for the next one, without
// serveConn): fasthttp keeps one for its MaxIdleWorkerDuration (10 s) after its connection
// closed, and it holds nothing of the stream.
func streamGoroutines() int {
	buf := make([]byte, 8<<20)
	n := goruntime.Stack(buf, true)
	count := 0
	for _, g := range strings.Split(string(buf[:n]), "\n\n") {
		if strings.Contains(g, "fasthttp.(*workerPool).workerFunc") && !strings.Contains(g, "serveConn") {
			continue
		}
		if strings.Contains(g, "valyala/fasthttp") || strings.Contains(g, "tokenscope/app/jobrunner") ||
			strings.Contains(g, "adapters/httpapi") {
			count++
		}
	}
	return count
}

// jobPollers counts the job stream hub's pollers: one goroutine per watched job.
func jobPollers() int {
	buf := make([]byte, 8<<20)
	n := goruntime.Stack(buf, true)
	return strings.Count(string(buf[:n]), "tokenscope/app/jobrunner.(*Hub).poll(")
}
