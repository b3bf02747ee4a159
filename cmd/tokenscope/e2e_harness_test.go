package main

// The end-to-end harness: real HTTP servers (main and dex) over this package's own Postgres
// database and an in-process Temporal server shared by the package, with a worker that runs
// every registered workflow. Tests talk to it over loopback HTTP only.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/server/temporaltest"

	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/adapters/postgres/pgtest"
	"github.com/tokenscope/tokenscope/app/config"
	"github.com/tokenscope/tokenscope/cmd/internal/wire"
	"github.com/tokenscope/tokenscope/domain/account"
	"github.com/tokenscope/tokenscope/domain/ratelimit"
	"github.com/tokenscope/tokenscope/workflows"
)

var (
	temporalOnce sync.Once
	temporalSrv  *temporaltest.TestServer
)

func TestMain(m *testing.M) {
	// The engine tests run the real command line (`tokenscope import …`) in a child process: this
	// test binary re-executed with runMainEnv set runs main() instead of the tests.
	if os.Getenv(runMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	pgtest.Main(m, func() {
		if temporalSrv != nil {
			temporalSrv.Stop()
		}
	}, dropEngineDatabases)
}

// sharedTemporal starts the package's Temporal server once.
func sharedTemporal() *temporaltest.TestServer {
	temporalOnce.Do(func() { temporalSrv = temporaltest.NewServer() })
	return temporalSrv
}

// env is one running tokenscope over the package database.
type env struct {
	rt    *wire.Runtime
	base  string // main API, e.g. http://127.0.0.1:41234
	dex   string // dex API
	admin string // operator address (/metrics)
	key   string // all scopes, account "e2e"
}

// envOption adjusts the configuration before the env starts.
type envOption func(*config.Config)

func testLogger() *slog.Logger {
	if os.Getenv("E2E_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// testConfig is the configuration every env starts from.
func testConfig(t *testing.T) config.Config {
	cfg, err := config.Load()
	require.NoError(t, err)
	cfg.DatabaseURL = pgtest.URL(t)
	cfg.HTTPAddr = "127.0.0.1:0"
	cfg.DexHTTPAddr = "127.0.0.1:0"
	cfg.AdminHTTPAddr = "127.0.0.1:0"
	cfg.WebhookAllowed = "127.0.0.0/8"
	cfg.ShutdownTimeout = 5 * time.Second
	cfg.TemporalNS = sharedTemporal().GetDefaultNamespace()
	// Rate limits stay on (every response carries the headers) with a default no test reaches;
	// the in-process limiter unless a test sets REDIS_URL (e2e_ratelimit_test.go).
	cfg.RedisURL = ""
	cfg.RateLimitPerMinute, cfg.RateLimitBurst = ratelimit.MaxPerMinute, ratelimit.MaxBurst
	// Every test's client is 127.0.0.1: its 401s are not limited either (adapters/httpapi tests
	// check that limit).
	cfg.RateLimitFailedAuthPerMinute = 0
	return cfg
}

// newEnv starts the HTTP servers and a worker; everything stops when the test ends.
func newEnv(t *testing.T, opts ...envOption) *env {
	t.Helper()
	ts := sharedTemporal()
	return newEnvWithClient(t, ts.GetDefaultClient(), true, opts...)
}

// newEnvWithClient is newEnv over a given Temporal client; withWorker=false leaves the work
// undone until a worker is started (tests of durability start and stop their own).
func newEnvWithClient(t *testing.T, tc client.Client, withWorker bool, opts ...envOption) *env {
	t.Helper()
	cfg := testConfig(t)
	for _, o := range opts {
		o(&cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	pool, err := postgres.Open(ctx, cfg.DatabaseURL, 10)
	require.NoError(t, err)
	rt := wire.NewRuntime(cfg, testLogger(), pool, tc)
	lns, err := wire.ListenHTTP(cfg)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- wire.ServeHTTP(ctx, rt, lns, nil) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Errorf("http servers did not stop within 15s")
		}
		pool.Close()
	})
	// Registered after the pool's cleanup, so it runs before it: a worker must never outlive
	// the pool its activities use (it would keep taking tasks from the shared queue and fail them).
	if withWorker {
		startWorker(t, rt)
	}
	dropEndpointsAtCleanup(t, pool)
	e := &env{rt: rt, base: "http://" + lns.Main.Addr().String(), dex: "http://" + lns.Dex.Addr().String(),
		admin: "http://" + lns.Admin.Addr().String()}
	e.key = e.keyFor(t, "e2e", account.AllScopes...)
	return e
}

// dropEndpointsAtCleanup deletes, when the test ends and before its worker stops, the webhook
// endpoints created from now on. The database and the outbox dispatcher (a singleton workflow
// the next env's worker takes over) are the package's: an endpoint left behind, its receiver
// closed, would get every event later tests publish, fail each first attempt, and fill the
// shared task queue with one retry workflow per event, which later tests' workflows
// (KYTRegistration, jobs) then wait behind. Deleted, its queued events are dropped and its
// retries end at their next attempt.
func dropEndpointsAtCleanup(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	var last int64
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT coalesce(max(seq), 0) FROM webhook_endpoints`).Scan(&last))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := pool.Exec(ctx, `DELETE FROM webhook_endpoints WHERE seq > $1`, last); err != nil {
			t.Errorf("delete the test's webhook endpoints: %v", err)
		}
	})
}

// testWorker is a started worker whose Stop may be called any number of times; the test's
// cleanup stops it too, so a test that fails half-way never leaves a worker polling the
// package's shared task queue after its env's pool has closed.
type testWorker struct {
	w    worker.Worker
	once sync.Once
}

func (tw *testWorker) Stop() { tw.once.Do(tw.w.Stop) }

// startWorker starts a worker for rt on its Temporal client; stop it to simulate a crash.
func startWorker(t *testing.T, rt *wire.Runtime) *testWorker {
	t.Helper()
	tw := &testWorker{w: wire.NewWorker(rt)}
	require.NoError(t, tw.w.Start())
	t.Cleanup(tw.Stop)
	return tw
}

// dumpTemporal logs the open workflows of the shared namespace with their pending activities
// (attempt and last failure) and the pollers of the task queue: what a test that timed out
// waiting on a workflow needs to say why.
func dumpTemporal(t *testing.T) {
	t.Helper()
	if temporalSrv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	tc := temporalSrv.GetDefaultClient()
	ns := temporalSrv.GetDefaultNamespace()
	if q, err := tc.DescribeTaskQueue(ctx, workflows.TaskQueue, enumspb.TASK_QUEUE_TYPE_ACTIVITY); err == nil {
		t.Logf("temporal: %d activity pollers on %q", len(q.GetPollers()), workflows.TaskQueue)
	}
	if q, err := tc.DescribeTaskQueue(ctx, workflows.TaskQueue, enumspb.TASK_QUEUE_TYPE_WORKFLOW); err == nil {
		t.Logf("temporal: %d workflow pollers on %q", len(q.GetPollers()), workflows.TaskQueue)
	}
	list, err := tc.WorkflowService().ListOpenWorkflowExecutions(ctx, &workflowservice.ListOpenWorkflowExecutionsRequest{
		Namespace: ns, MaximumPageSize: 30})
	if err != nil {
		t.Logf("temporal: list open workflows: %v", err)
		return
	}
	for _, ex := range list.GetExecutions() {
		id, run := ex.GetExecution().GetWorkflowId(), ex.GetExecution().GetRunId()
		d, err := tc.DescribeWorkflowExecution(ctx, id, run)
		if err != nil {
			t.Logf("temporal: %s: describe: %v", id, err)
			continue
		}
		t.Logf("temporal: open %s (%s) since %s, %d pending activities",
			id, ex.GetType().GetName(), ex.GetStartTime().AsTime().Format(time.RFC3339Nano), len(d.GetPendingActivities()))
		for _, a := range d.GetPendingActivities() {
			t.Logf("temporal:   activity %s: state %s, attempt %d, last worker %q, last failure: %s",
				a.GetActivityType().GetName(), a.GetState(), a.GetAttempt(), a.GetLastWorkerIdentity(), a.GetLastFailure().GetMessage())
		}
		if wt := d.GetPendingWorkflowTask(); wt != nil {
			t.Logf("temporal:   workflow task: state %s, attempt %d", wt.GetState(), wt.GetAttempt())
		}
	}
}

// keyFor creates a key for accountID with the given scopes.
func (e *env) keyFor(t *testing.T, accountID string, scopes ...account.Scope) string {
	t.Helper()
	full, _, err := e.rt.App.Keys.Create(context.Background(), accountID, "e2e", scopes)
	require.NoError(t, err)
	return full
}

// resp is one HTTP answer.
type resp struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body (numbers kept as json.Number so types can be checked).
func (r resp) JSON(t *testing.T) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v), "body: %s", r.Body)
	return v
}

// Object decodes a JSON object body.
func (r resp) Object(t *testing.T) map[string]any {
	t.Helper()
	m, ok := r.JSON(t).(map[string]any)
	require.True(t, ok, "body is not a JSON object: %s", r.Body)
	return m
}

var httpClient = &http.Client{Timeout: 30 * time.Second}

// do sends a request to the main API with the env's key (unless headers set Authorization or
// X-API-KEY themselves, or contain "Authorization", "" to send none). body may be nil, a
// string or []byte (sent as is), or any value (sent as JSON). headers are key, value pairs.
func (e *env) do(t *testing.T, method, path string, body any, headers ...string) resp {
	t.Helper()
	return e.doURL(t, method, e.base+path, body, headers...)
}

// doDex is do against the dex address.
func (e *env) doDex(t *testing.T, method, path string, body any, headers ...string) resp {
	t.Helper()
	return e.doURL(t, method, e.dex+path, body, headers...)
}

func (e *env) doURL(t *testing.T, method, url string, body any, headers ...string) resp {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = bytes.NewReader([]byte(b))
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		require.NoError(t, err)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, url, rd)
	require.NoError(t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	authSet := false
	for i := 0; i+1 < len(headers); i += 2 {
		if http.CanonicalHeaderKey(headers[i]) == "Authorization" || http.CanonicalHeaderKey(headers[i]) == "X-Api-Key" {
			authSet = true
			if headers[i+1] == "" {
				continue
			}
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	if !authSet {
		req.Header.Set("Authorization", "Bearer "+e.key)
	}
	res, err := httpClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	e.checkAgainstSpec(t, req, res.StatusCode, res.Header, raw)
	return resp{Status: res.StatusCode, Header: res.Header, Body: raw}
}
