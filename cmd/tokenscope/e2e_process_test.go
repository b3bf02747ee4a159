package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/server/temporaltest"

	"github.com/tokenscope/tokenscope/internal/loopback"
)

// lockedBuffer is a child process's output, written by its pipes and read by the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// serviceProcess runs `tokenscope <command>` (this test binary re-executed as main()) on a
// migrated database of its own and a Temporal server of its own (its loops and pumps must not
// meet the package's), logging at info.
func serviceProcess(t *testing.T, command string, env ...string) (*exec.Cmd, *lockedBuffer) {
	t.Helper()
	dbURL := engineDatabase(t, command)
	migrate := exec.Command(os.Args[0], "migrate")
	migrate.Env = append(os.Environ(), runMainEnv+"=1", "DATABASE_URL="+dbURL, "LOG_LEVEL=warn")
	out, err := migrate.CombinedOutput()
	require.NoError(t, err, "%s", out)
	ts := temporaltest.NewServer()
	t.Cleanup(ts.Stop)
	cmd := exec.Command(os.Args[0], command)
	cmd.Env = append(append(os.Environ(), runMainEnv+"=1", "DATABASE_URL="+dbURL, "LOG_LEVEL=info", "DB_MAX_CONNS=4",
		"TEMPORAL_ADDRESS="+ts.GetFrontendHostPort(), "TEMPORAL_NAMESPACE="+ts.GetDefaultNamespace(), "KYT_PROVIDER_URL="), env...)
	buf := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = buf, buf
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		if t.Failed() {
			t.Logf("tokenscope %s output:\n%s", command, buf.String())
		}
	})
	return cmd, buf
}

// get waits (at most 60 s) for url to answer 200 with a body that want accepts, and returns it.
func getUntil(t *testing.T, url string, want func(string) bool) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if res, err := http.Get(url); err == nil {
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode == http.StatusOK && want(string(b)) {
				return string(b)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not answer as wanted within 60 s", url)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stopQuietly sends SIGINT (Ctrl-C) and checks that the process exits 0, logged no warning and
// no error, and ended with "<program> stopped".
func stopQuietly(t *testing.T, cmd *exec.Cmd, out *lockedBuffer, program string) {
	t.Helper()
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	require.NoError(t, cmd.Wait(), "Ctrl-C ends %s cleanly", program)
	var lines []string
	for _, l := range strings.Split(out.String(), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	require.NotEmpty(t, lines)
	for _, l := range lines {
		assert.NotContains(t, strings.ToLower(l), `"level":"warn"`, l)
		assert.NotContains(t, strings.ToLower(l), `"level":"error"`, l)
	}
	assert.Contains(t, lines[len(lines)-1], `"msg":"`+program+` stopped"`, "the last line says the service stopped")
}

// TestWorkerServesMetricsAndStopsQuietly: `tokenscope worker` serves /metrics on its admin
// address (ADMIN_HTTP_ADDR) with its workflow outcomes, webhook deliveries (sent, failed,
// retried, latency), the pump's queue, ingest and database pool figures; Ctrl-C ends it without
// a warning, with "tokenscope worker stopped" last.
func TestWorkerServesMetricsAndStopsQuietly(t *testing.T) {
	ports, err := loopback.FreePorts("127.0.0.1", 2)
	require.NoError(t, err)
	admin := fmt.Sprintf("127.0.0.1:%d", ports[0])
	cmd, out := serviceProcess(t, "worker", "ADMIN_HTTP_ADDR="+admin, fmt.Sprintf("WORKER_HEALTH_ADDR=127.0.0.1:%d", ports[1]))
	// The readiness probe's no-op workflow has run once its outcome is counted.
	metrics := getUntil(t, "http://"+admin+"/metrics", func(b string) bool {
		return strings.Contains(b, `tokenscope_workflow_outcomes_total{outcome="completed"`)
	})
	for _, want := range []string{
		`tokenscope_webhook_deliveries_total{result="sent"} 0`,
		`tokenscope_webhook_deliveries_total{result="failed"} 0`,
		"tokenscope_webhook_retries_total 0",
		"tokenscope_webhook_delivery_duration_seconds_count 0",
		"tokenscope_webhook_queue_depth 0",
		"tokenscope_webhook_outbox_pending 0",
		"tokenscope_ingest_events_total 0",
		"tokenscope_ingest_trades_total 0",
		"tokenscope_db_pool_max_conns 4",
		"tokenscope_db_pool_acquired_conns ",
		"tokenscope_db_pool_acquires_total ",
	} {
		assert.Contains(t, metrics, want+"", "worker /metrics")
	}
	stopQuietly(t, cmd, out, "tokenscope worker")
}

// TestServeStopsQuietly: Ctrl-C ends `tokenscope serve` without a warning, with "tokenscope serve
// stopped" last.
func TestServeStopsQuietly(t *testing.T) {
	ports, err := loopback.FreePorts("127.0.0.1", 3)
	require.NoError(t, err)
	main := fmt.Sprintf("127.0.0.1:%d", ports[0])
	cmd, out := serviceProcess(t, "serve", "HTTP_ADDR="+main, fmt.Sprintf("DEX_HTTP_ADDR=127.0.0.1:%d", ports[1]),
		fmt.Sprintf("ADMIN_HTTP_ADDR=127.0.0.1:%d", ports[2]))
	getUntil(t, "http://"+main+"/healthz", func(string) bool { return true })
	stopQuietly(t, cmd, out, "tokenscope serve")
}
