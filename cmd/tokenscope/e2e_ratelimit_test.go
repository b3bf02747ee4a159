package main

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/postgres/pgtest"
	"github.com/tokenscope/tokenscope/internal/loopback"
)

// testRedisURL is the Redis .ci/run starts; the tests fail without it.
const testRedisURL = "redis://127.0.0.1:6379/0"

// replica is one `tokenscope serve` child process (this test binary re-executed as main()).
type replica struct {
	main, dex, admin string
	out              *bytes.Buffer
}

// startReplica runs `tokenscope serve` on free loopback ports over the package database, the
// shared Temporal server and Redis, and waits until its /readyz answers 200.
func startReplica(t *testing.T, dbURL string) *replica {
	t.Helper()
	ports, err := loopback.FreePorts("127.0.0.1", 3)
	require.NoError(t, err)
	r := &replica{main: fmt.Sprintf("http://127.0.0.1:%d", ports[0]), dex: fmt.Sprintf("http://127.0.0.1:%d", ports[1]),
		admin: fmt.Sprintf("http://127.0.0.1:%d", ports[2]), out: &bytes.Buffer{}}
	ts := sharedTemporal()
	cmd := exec.Command(os.Args[0], "serve")
	cmd.Env = append(os.Environ(), runMainEnv+"=1", "DATABASE_URL="+dbURL, "LOG_LEVEL=warn", "DB_MAX_CONNS=4",
		"TEMPORAL_ADDRESS="+ts.GetFrontendHostPort(), "TEMPORAL_NAMESPACE="+ts.GetDefaultNamespace(),
		fmt.Sprintf("HTTP_ADDR=127.0.0.1:%d", ports[0]), fmt.Sprintf("DEX_HTTP_ADDR=127.0.0.1:%d", ports[1]),
		fmt.Sprintf("ADMIN_HTTP_ADDR=127.0.0.1:%d", ports[2]), "REDIS_URL="+testRedisURL)
	cmd.Stdout, cmd.Stderr = r.out, r.out
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		res, err := http.Get(r.main + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return r
			}
		}
		select {
		case <-done:
			t.Fatalf("tokenscope serve exited before it was ready:\n%s", r.out)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("tokenscope serve not ready within 60s:\n%s", r.out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// runTool runs a short tokenscope subcommand and returns its stdout.
func runTool(t *testing.T, dbURL string, args ...string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), runMainEnv+"=1", "DATABASE_URL="+dbURL, "LOG_LEVEL=warn")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "tokenscope %s: %s", strings.Join(args, " "), stderr.String())
	return string(out)
}

// TestRateLimitSharedByReplicas: two API processes on one Redis spend one bucket per key. A key
// created with --rate 2 --burst 3 gets 5 answers, alternating between the replicas and between
// the main address and the dex address's multi-detail route, then 429s on either. The rate
// refills one request every 30 s, far longer than the test takes.
func TestRateLimitSharedByReplicas(t *testing.T) {
	dbURL := pgtest.URL(t)
	key := strings.TrimSpace(runTool(t, dbURL, "apikey", "create", "--account", "ratelimit", "--name", "e2e", "--rate", "2", "--burst", "3"))
	require.Regexp(t, `^tsk_`, key)
	list := runTool(t, dbURL, "apikey", "list", "--account", "ratelimit")
	assert.Contains(t, list, "2/min+3", "apikey list shows the key's own limit")

	a, b := startReplica(t, dbURL), startReplica(t, dbURL)
	urls := []string{a.main + "/v2/whoami", b.dex + "/v1/token/sol/multi?tokenAddresses=RateLimitUnknown1111111111111111111111111"}
	var c env
	for i := range 5 {
		r := c.doURL(t, "GET", urls[i%2], nil, "X-API-KEY", key)
		require.Equal(t, http.StatusOK, r.Status, "request %d: %s", i+1, r.Body)
		assert.Equal(t, "5", r.Header.Get("RateLimit-Limit"), "request %d", i+1)
		assert.Equal(t, strconv.Itoa(4-i), r.Header.Get("RateLimit-Remaining"), "request %d: one bucket across both replicas", i+1)
		reset, err := strconv.Atoi(r.Header.Get("RateLimit-Reset"))
		require.NoError(t, err)
		assert.True(t, reset >= 1 && reset <= 150, "RateLimit-Reset %d: at most 5 requests of 30 s", reset)
	}
	for _, u := range []string{a.dex + "/v1/token/sol/multi?tokenAddresses=RateLimitUnknown1111111111111111111111111", b.main + "/v2/whoami", a.main + "/v2/whoami"} {
		r := c.doURL(t, "GET", u, nil, "X-API-KEY", key)
		body := requireErrorBody(t, r, http.StatusTooManyRequests)
		assert.Contains(t, body["message"], "2 requests per minute, burst 3")
		retry, err := strconv.Atoi(r.Header.Get("Retry-After"))
		require.NoError(t, err, "Retry-After on a 429")
		assert.True(t, retry >= 1 && retry <= 30, "Retry-After %d: the next request comes within one 30 s interval", retry)
		assert.Equal(t, "5", r.Header.Get("RateLimit-Limit"))
		assert.Equal(t, "0", r.Header.Get("RateLimit-Remaining"))
		assert.NotEmpty(t, r.Header.Get("RateLimit-Reset"))
	}
	// Another key is not affected.
	other := strings.TrimSpace(runTool(t, dbURL, "apikey", "create", "--account", "ratelimit", "--name", "other"))
	r := c.doURL(t, "GET", b.main+"/v2/whoami", nil, "X-API-KEY", other)
	require.Equal(t, http.StatusOK, r.Status)
	assert.NotEqual(t, "5", r.Header.Get("RateLimit-Limit"), "the default limit, not the other key's")

	// Rejections are counted on each replica's /metrics: a refused 1, b 1, a 1 more.
	rejected := func(rp *replica) string {
		res := c.doURL(t, "GET", rp.admin+"/metrics", nil, "Authorization", "")
		m := regexp.MustCompile(`(?m)^tokenscope_ratelimit_rejected_total (\S+)$`).FindSubmatch(res.Body)
		require.NotNil(t, m)
		return string(m[1])
	}
	assert.Equal(t, "2", rejected(a))
	assert.Equal(t, "1", rejected(b))
}

// The harness's own env keeps limits on with a default no test reaches (testConfig).
func TestRateLimitHeadersInTheHarness(t *testing.T) {
	e := newEnv(t)
	r := e.do(t, "GET", "/v2/whoami", nil)
	require.Equal(t, http.StatusOK, r.Status)
	assert.NotEmpty(t, r.Header.Get("RateLimit-Limit"))
	assert.NotEmpty(t, r.Header.Get("RateLimit-Remaining"))
	assert.NotEmpty(t, r.Header.Get("RateLimit-Reset"))
}
