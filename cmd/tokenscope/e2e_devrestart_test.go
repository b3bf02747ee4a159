package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
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
	"github.com/tokenscope/tokenscope/internal/loopback"
)

// helperDevEnv makes TestHelperDev run `tokenscope dev` in a child process (the test binary
// re-executed), configured from the environment like the real binary.
const helperDevEnv = "TOKENSCOPE_TEST_HELPER_DEV"

func TestHelperDev(t *testing.T) {
	if os.Getenv(helperDevEnv) == "" {
		t.Skip("helper process only")
	}
	cfg, err := config.Load()
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := runDev(ctx, cfg, newLogger(cfg), nil); err != nil {
		os.Stderr.WriteString("dev: " + err.Error() + "\n")
		os.Exit(1)
	}
	os.Exit(0)
}

// TestDevRestartRunsWorkflowsAtReadiness runs `tokenscope dev` (embedded Temporal on a data
// directory, no simulated market) in a child process on a database of its own, stops it with
// SIGTERM, starts it again on the same data directory, database and ports, kills it with
// SIGKILL and starts it once more, as restarted `make run`s do. Each time, once /readyz
// answers 200 (its workflows check up), a KYT registration POSTed at that moment must be
// processed by its workflow, and a restarted process must get ready as a first start does.
// Before the embedded server used static membership a restarted process ran nothing for about
// 50 s (while /readyz said ready); the 30 s deadlines are correctness bounds that this fails,
// not performance targets.
func TestDevRestartRunsWorkflowsAtReadiness(t *testing.T) {
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
	ports, err := loopback.FreePorts("127.0.0.1", 3)
	require.NoError(t, err)
	dir := t.TempDir()
	httpAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
	base := "http://" + httpAddr
	environ := append(os.Environ(), helperDevEnv+"=1",
		"DATABASE_URL="+u.String(), "DATA_DIR="+filepath.Join(dir, "data"),
		"HTTP_ADDR="+httpAddr, "DEX_HTTP_ADDR="+net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1])),
		"TEMPORAL_ADDRESS=", "TEMPORAL_NAMESPACE=default", "TEMPORAL_PORT="+strconv.Itoa(ports[2]),
		"TEMPORAL_UI_PORT=0", "DEV_SIMULATE=false", "LOG_LEVEL=warn", "KYT_PROVIDER_URL=")

	var prev *exec.Cmd
	for i, run := range []struct {
		name string
		stop syscall.Signal // how the previous process ends
	}{{name: "first start"}, {"restart after SIGTERM", syscall.SIGTERM}, {"restart after SIGKILL", syscall.SIGKILL}} {
		within := 3 * time.Minute // a first start creates the database and the Temporal schema
		if prev != nil {
			require.NoError(t, prev.Process.Signal(run.stop))
			err := prev.Wait()
			if run.stop == syscall.SIGTERM {
				require.NoError(t, err, "%s: dev stops cleanly", run.name)
			}
			within = 30 * time.Second
		}
		logFile, err := os.Create(filepath.Join(dir, "dev-"+strconv.Itoa(i)+".log"))
		require.NoError(t, err)
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperDev$", "-test.count=1")
		cmd.Env, cmd.Stdout, cmd.Stderr = environ, logFile, logFile
		started := time.Now()
		require.NoError(t, cmd.Start())
		prev = cmd
		t.Cleanup(func() {
			if cmd.ProcessState == nil {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
			}
			_ = logFile.Close()
			if t.Failed() {
				out, _ := os.ReadFile(logFile.Name())
				t.Logf("%s: dev output (last 4 KB):\n%s", run.name, out[max(0, len(out)-4096):])
			}
		})

		var ready map[string]any
		eventually(t, within, run.name+": /readyz answers 200", func() bool {
			res, err := http.Get(base + "/readyz")
			if err != nil {
				return false
			}
			defer res.Body.Close()
			ready = nil
			_ = json.NewDecoder(res.Body).Decode(&ready)
			return res.StatusCode == 200
		})
		readyAt := time.Now()
		checks, _ := ready["checks"].(map[string]any)
		assert.Equal(t, "up", checks["workflows"], "%s: readiness includes the workflow round trip", run.name)

		key, err := os.ReadFile(filepath.Join(dir, "data", "dev-api-key"))
		require.NoError(t, err)
		e := &env{base: base, key: strings.TrimSpace(string(key))}
		r := e.do(t, "POST", "/v2/kyt/withdrawal", withdrawalBody("7"), "Idempotency-Key", "dev-restart-"+strconv.Itoa(i))
		require.Equal(t, 200, r.Status, "%s: %s", run.name, r.Body)
		id := r.Object(t)["externalId"].(string)
		eventually(t, 30*time.Second, run.name+": the registration's workflow processed it", func() bool {
			return e.do(t, "GET", "/v2/kyt/withdrawal/"+id+"/summary", nil).Object(t)["status"] == "registered"
		})
		t.Logf("%s: /readyz 200 after %s, KYT registration processed %s after readiness", run.name,
			readyAt.Sub(started).Round(time.Millisecond), time.Since(readyAt).Round(time.Millisecond))
	}
	require.NoError(t, prev.Process.Signal(syscall.SIGTERM))
	require.NoError(t, prev.Wait(), "dev stops cleanly")
}
