package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/postgres/pgtest"
	"github.com/tokenscope/tokenscope/app/config"
	"github.com/tokenscope/tokenscope/cmd/internal/wire"
	"github.com/tokenscope/tokenscope/internal/loopback"
)

// helperDevEnv makes TestHelperDev run tokenscope-dev in a child process (the test binary
// re-executed), configured from the environment like the real binary.
const helperDevEnv = "TOKENSCOPE_TEST_HELPER_DEV"

func TestHelperDev(t *testing.T) {
	if os.Getenv(helperDevEnv) == "" {
		t.Skip("helper process only")
	}
	// As main runs it: wire.Run loads the configuration, stops on SIGINT/SIGTERM and logs the
	// last line.
	wire.Run("tokenscope-dev", func(ctx context.Context, cfg config.Config, log *slog.Logger) error {
		return runDev(ctx, cfg, log, nil)
	})
	os.Exit(0)
}

// devProcesses runs tokenscope-dev in child processes over one database of its own, one data
// directory and fixed ports, so successive processes are restarts of the same installation.
type devProcesses struct {
	t       *testing.T
	dir     string
	dbURL   string
	base    string // main API
	environ []string
	n       int
}

func newDevProcesses(t *testing.T, extraEnv ...string) *devProcesses {
	t.Helper()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	dbName := "tokenscope_devtest_" + hex.EncodeToString(b)
	u, err := url.Parse(pgtest.AdminURL())
	require.NoError(t, err)
	u.Path = "/" + dbName
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, pgtest.AdminURL())
		if assert.NoError(t, err) {
			defer conn.Close(ctx)
			_, err = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{dbName}.Sanitize()+" WITH (FORCE)")
			assert.NoError(t, err)
		}
	})
	ports, err := loopback.FreePorts("127.0.0.1", 4)
	require.NoError(t, err)
	dir := t.TempDir()
	httpAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
	environ := append(os.Environ(), helperDevEnv+"=1",
		"DATABASE_URL="+u.String(), "DATA_DIR="+filepath.Join(dir, "data"),
		"HTTP_ADDR="+httpAddr, "DEX_HTTP_ADDR="+net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1])),
		"ADMIN_HTTP_ADDR="+net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[3])),
		"TEMPORAL_ADDRESS=", "TEMPORAL_NAMESPACE=default", "TEMPORAL_PORT="+strconv.Itoa(ports[2]),
		"TEMPORAL_UI_PORT=0", "DEV_SIMULATE=false", "LOG_LEVEL=warn", "KYT_PROVIDER_URL=")
	return &devProcesses{t: t, dir: dir, dbURL: u.String(), base: "http://" + httpAddr,
		environ: append(environ, extraEnv...)}
}

// start runs one more dev process and returns it with the moment it was started.
func (d *devProcesses) start(name string) (*exec.Cmd, time.Time) {
	t := d.t
	t.Helper()
	logFile, err := os.Create(filepath.Join(d.dir, "dev-"+strconv.Itoa(d.n)+".log"))
	require.NoError(t, err)
	d.n++
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperDev$", "-test.count=1")
	cmd.Env, cmd.Stdout, cmd.Stderr = d.environ, logFile, logFile
	started := time.Now()
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		_ = logFile.Close()
		if t.Failed() {
			out, _ := os.ReadFile(logFile.Name())
			t.Logf("%s: dev output (last 4 KB):\n%s", name, out[max(0, len(out)-4096):])
		}
	})
	return cmd, started
}

// waitReady waits (at most within) for /readyz to answer 200 and returns its checks.
func (d *devProcesses) waitReady(name string, within time.Duration) map[string]any {
	d.t.Helper()
	var ready map[string]any
	eventually(d.t, within, name+": /readyz answers 200", func() bool {
		res, err := http.Get(d.base + "/readyz")
		if err != nil {
			return false
		}
		defer res.Body.Close()
		ready = nil
		_ = json.NewDecoder(res.Body).Decode(&ready)
		return res.StatusCode == 200
	})
	checks, _ := ready["checks"].(map[string]any)
	return checks
}

// stop ends p with sig and waits for it; SIGTERM must end it cleanly.
func (d *devProcesses) stop(p *exec.Cmd, sig syscall.Signal) {
	d.t.Helper()
	require.NoError(d.t, p.Process.Signal(sig))
	err := p.Wait()
	if sig == syscall.SIGTERM {
		require.NoError(d.t, err, "dev stops cleanly on SIGTERM")
	}
}

// TestDevRestartRunsWorkflowsAtReadiness runs tokenscope-dev (embedded Temporal on a data
// directory, no simulated market) in a child process on a database of its own, stops it with
// SIGTERM, starts it again on the same data directory, database and ports, kills it with
// SIGKILL and starts it once more, as restarted `make run`s do. Each time, once /readyz
// answers 200 (its workflows check up), a KYT registration POSTed at that moment must be
// processed by its workflow, and a restarted process must get ready as a first start does.
// Before the embedded server used static membership a restarted process ran nothing for about
// 50 s (while /readyz said ready); the 30 s deadlines are correctness bounds that this fails,
// not performance targets.
//
// The webhook pump is part of it: at readiness it holds its lock (it runs), and an event
// published then is delivered. Before, after SIGKILL the pump came back only when Temporal
// retried its lost activity (heartbeat timeout), 15-30 s after /readyz said ready.
func TestDevRestartRunsWorkflowsAtReadiness(t *testing.T) {
	d := newDevProcesses(t)
	hooks := make(chan string, 16)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hooks <- r.Header.Get("webhook-id")
	}))
	t.Cleanup(receiver.Close)
	var endpoint string
	var prev *exec.Cmd
	for i, run := range []struct {
		name string
		stop syscall.Signal // how the previous process ends
	}{{name: "first start"}, {"restart after SIGTERM", syscall.SIGTERM}, {"restart after SIGKILL", syscall.SIGKILL}} {
		within := 3 * time.Minute // a first start creates the database and the Temporal schema
		if prev != nil {
			d.stop(prev, run.stop)
			within = 30 * time.Second
		}
		var started time.Time
		prev, started = d.start(run.name)
		checks := d.waitReady(run.name, within)
		readyAt := time.Now()
		assert.Equal(t, "up", checks["workflows"], "%s: readiness includes the workflow round trip", run.name)
		assert.Equal(t, "up", checks["rankings"], "%s: an empty market is ready without rankings", run.name)

		key, err := os.ReadFile(filepath.Join(d.dir, "data", "dev-api-key"))
		require.NoError(t, err)
		bearer := "Bearer " + strings.TrimSpace(string(key))
		status, o := call(t, "POST", d.base+"/v2/kyt/withdrawal", withdrawal("7"),
			"Authorization", bearer, "Idempotency-Key", "dev-restart-"+strconv.Itoa(i))
		require.Equal(t, 200, status, "%s: %v", run.name, o)
		id := o["externalId"].(string)
		eventually(t, 30*time.Second, run.name+": the registration's workflow processed it", func() bool {
			_, o := call(t, "GET", d.base+"/v2/kyt/withdrawal/"+id+"/summary", nil, "Authorization", bearer)
			return o["status"] == "registered"
		})
		t.Logf("%s: /readyz 200 after %s, KYT registration processed %s after readiness", run.name,
			readyAt.Sub(started).Round(time.Millisecond), time.Since(readyAt).Round(time.Millisecond))

		if endpoint == "" {
			status, o := call(t, "POST", d.base+"/v2/webhook/endpoint", map[string]any{"url": receiver.URL,
				"channels": []string{"sol.token.migrated"}}, "Authorization", bearer)
			require.Equal(t, 200, status, "%v", o)
			endpoint = o["id"].(string)
		}
		assert.Equal(t, "up", checks["webhooks"], "%s: readiness includes the webhook pump", run.name)
		published := time.Now()
		event := publishEvent(t, d.dbURL, "dev-restart-"+strconv.Itoa(i))
		select {
		case <-hooks:
		case <-time.After(60 * time.Second):
			t.Fatalf("%s: event %s not delivered within 60 s", run.name, event)
		}
		t.Logf("%s: a webhook event published at readiness (+%s) delivered %s after readiness", run.name,
			published.Sub(readyAt).Round(time.Millisecond), time.Since(readyAt).Round(time.Millisecond))
	}
	d.stop(prev, syscall.SIGTERM)
}

// TestDevRestartRetriesALostRefreshRound kills tokenscope-dev (SIGKILL) while a market refresh
// round is in flight (held on the round's advisory lock, which the test takes) and starts it
// again: the restarted process must complete a round soon after it is ready, that is retry the
// lost round once its heartbeat stops (RefreshHeartbeatTimeout), not after the round's 1-minute
// start-to-close timeout. The 30 s deadline is a correctness bound that the 1-minute wait fails.
func TestDevRestartRetriesALostRefreshRound(t *testing.T) {
	d := newDevProcesses(t, "MARKET_REFRESH_INTERVAL=200ms")
	ctx := context.Background()
	first, _ := d.start("first start")
	d.waitReady("first start", 3*time.Minute)
	db, err := pgx.Connect(ctx, d.dbURL)
	require.NoError(t, err)
	defer db.Close(ctx)
	lastRound := func() int64 {
		var at int64
		require.NoError(t, db.QueryRow(ctx, `SELECT coalesce(max(windows_at_ms), 0) FROM refresh_state`).Scan(&at))
		return at
	}
	eventually(t, 30*time.Second, "a first round", func() bool { return lastRound() > 0 })

	// Hold the rounds' lock, wait until a round waits for it, and kill the process under it.
	lock, err := pgx.Connect(ctx, d.dbURL)
	require.NoError(t, err)
	defer lock.Close(ctx)
	_, err = lock.Exec(ctx, "SELECT pg_advisory_lock($1)", 7_346_503) // adapters/postgres refreshRoundLock
	require.NoError(t, err)
	eventually(t, 30*time.Second, "a round waiting for the lock", func() bool {
		var waiting int
		require.NoError(t, db.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`).Scan(&waiting))
		return waiting > 0
	})
	before := lastRound()
	d.stop(first, syscall.SIGKILL)
	_, err = lock.Exec(ctx, "SELECT pg_advisory_unlock($1)", 7_346_503)
	require.NoError(t, err)

	restarted, started := d.start("restart")
	d.waitReady("restart", 30*time.Second)
	readyAt := time.Now()
	eventually(t, 30*time.Second, "a round after the restart", func() bool { return lastRound() > before })
	t.Logf("restart: ready after %s, next completed round %s after readiness",
		readyAt.Sub(started).Round(time.Millisecond), time.Since(readyAt).Round(time.Millisecond))
	d.stop(restarted, syscall.SIGTERM)
}

// publishEvent writes one outbox row on sol.token.migrated (what the engine writes when a token
// migrates) and returns its event id.
func publishEvent(t *testing.T, dbURL, id string) string {
	t.Helper()
	ctx := context.Background()
	db, err := pgx.Connect(ctx, dbURL)
	require.NoError(t, err)
	defer db.Close(ctx)
	event := "sol.token.migrated:" + id
	_, err = db.Exec(ctx, `INSERT INTO outbox (event_id, channel, payload, created_at_ms) VALUES ($1, $2, $3::jsonb, $4)`,
		event, "sol.token.migrated", `{"address":"So1","name":"N","symbol":"NNN","decimals":9}`, time.Now().UnixMilli())
	require.NoError(t, err)
	return event
}

// eventually polls cond every 20 ms until it holds, failing the test after d.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// withdrawal is a KYT withdrawal registration body.
func withdrawal(amount string) map[string]any {
	return map[string]any{"address": "D1Mc6j9xQWgR1o1Z7yU5nVVXFQiAYx7FG9AW1aVfwrUM", "asset": "SOL",
		"assetAmount": amount, "attemptTimestamp": "2024-01-15T10:30:00.000Z", "network": "Solana", "assetPrice": "3"}
}

// call sends body (nil for none) as JSON with the given header pairs and decodes the JSON
// object it answers.
func call(t *testing.T, method, url string, body any, headers ...string) (int, map[string]any) {
	t.Helper()
	var raw []byte
	if body != nil {
		var err error
		raw, err = json.Marshal(body)
		require.NoError(t, err)
	}
	req, err := http.NewRequest(method, url, bytes.NewReader(raw))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	var o map[string]any
	require.NoError(t, json.NewDecoder(res.Body).Decode(&o))
	return res.StatusCode, o
}
