package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/httpapi"
	"github.com/tokenscope/tokenscope/domain/account"
)

// logBuffer collects log lines; the handler writes each line in one call.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// lines returns the logged records with message msg, decoded.
func (l *logBuffer) lines(t *testing.T, msg string) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.buf.String()), "\n") {
		if line == "" { // nothing logged yet
			continue
		}
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec), line)
		if rec["msg"] == msg {
			out = append(out, rec)
		}
	}
	return out
}

type result struct {
	status int
	header http.Header
	body   []byte
}

func (s *server) do(t *testing.T, method, path string, headers ...string) result {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := s.app.Test(req, -1)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return result{status: resp.StatusCode, header: resp.Header, body: body}
}

func (s *server) get(t *testing.T, path string) result {
	return s.do(t, "GET", path, "X-API-KEY", s.key)
}

func TestRequestIDs(t *testing.T) {
	s := newServer(t, io.Discard)
	hexID := regexp.MustCompile(`^[0-9a-f]{24}$`)
	seen := map[string]bool{}
	for range 2000 {
		id := s.get(t, "/v2/whoami").header.Get("X-Request-Id")
		require.Regexp(t, hexID, id)
		require.False(t, seen[id], "request id %s repeated", id)
		seen[id] = true
	}

	r := s.do(t, "GET", "/v2/whoami", "X-API-KEY", s.key, "X-Request-Id", "abc-123")
	assert.Equal(t, "abc-123", r.header.Get("X-Request-Id"))
	for _, bad := range []string{"has space", strings.Repeat("x", 129)} {
		id := s.do(t, "GET", "/v2/whoami", "X-API-KEY", s.key, "X-Request-Id", bad).header.Get("X-Request-Id")
		assert.Regexp(t, hexID, id, "an unusable incoming id is replaced")
	}

	// Error bodies carry the same id as the header.
	r = s.do(t, "GET", "/v2/whoami", "X-Request-Id", "err-1")
	require.Equal(t, http.StatusUnauthorized, r.status)
	var body map[string]any
	require.NoError(t, json.Unmarshal(r.body, &body))
	assert.Equal(t, "err-1", body["requestId"])
}

func TestAccessLogLine(t *testing.T) {
	var logs logBuffer
	s := newServer(t, &logs)
	require.Equal(t, http.StatusOK, s.do(t, "GET", "/v2/whoami?x=1", "X-API-KEY", s.key, "X-Request-Id", "log-1").status)
	require.Equal(t, http.StatusNotFound, s.do(t, "GET", "/nope", "X-API-KEY", s.key, "X-Request-Id", "log-2").status)
	// The fixture's endpoint store implements Get only: deleting panics, which must become a 500.
	require.Equal(t, http.StatusInternalServerError,
		s.do(t, "DELETE", "/v2/webhook/endpoint/"+fixtureEndpoint, "Authorization", "Bearer "+s.key, "X-Request-Id", "log-3").status)

	lines := logs.lines(t, "http")
	require.Len(t, lines, 3)
	fields := []string{"time", "level", "msg", "requestId", "method", "route", "path", "status", "durationMs", "bytes"}
	for _, l := range lines {
		keys := make([]string, 0, len(l))
		for k := range l {
			keys = append(keys, k)
		}
		assert.ElementsMatch(t, fields, keys)
		assert.IsType(t, float64(0), l["durationMs"])
		assert.GreaterOrEqual(t, l["durationMs"].(float64), 0.0)
	}
	assert.Equal(t, map[string]any{"level": "INFO", "requestId": "log-1", "method": "GET", "route": "/v2/whoami",
		"path": "/v2/whoami", "status": 200.0}, pick(lines[0], "level", "requestId", "method", "route", "path", "status"))
	assert.Equal(t, map[string]any{"level": "INFO", "requestId": "log-2", "route": "unmatched", "path": "/nope", "status": 404.0},
		pick(lines[1], "level", "requestId", "route", "path", "status"))
	assert.Equal(t, map[string]any{"level": "ERROR", "requestId": "log-3", "method": "DELETE", "route": "/v2/webhook/endpoint/:id",
		"status": 500.0}, pick(lines[2], "level", "requestId", "method", "route", "status"))
	body := s.get(t, "/v2/whoami").body
	last := logs.lines(t, "http")
	assert.Equal(t, float64(len(body)), last[len(last)-1]["bytes"])
	require.Len(t, logs.lines(t, "panic"), 1)

	raw := func() string { logs.mu.Lock(); defer logs.mu.Unlock(); return logs.buf.String() }()
	assert.NotContains(t, raw, s.key, "API keys are never logged")
}

func pick(m map[string]any, keys ...string) map[string]any {
	out := map[string]any{}
	for _, k := range keys {
		out[k] = m[k]
	}
	return out
}

func TestMetricsCountEveryRequest(t *testing.T) {
	s := newServer(t, io.Discard)
	for range 3 {
		require.Equal(t, http.StatusOK, s.get(t, "/v2/whoami").status)
	}
	require.Equal(t, http.StatusUnauthorized, s.do(t, "GET", "/v2/whoami").status)
	require.Equal(t, http.StatusOK, s.get(t, endpoints[0].path).status)
	require.Equal(t, http.StatusNotFound, s.get(t, "/nope").status)

	require.Equal(t, http.StatusNotFound, s.get(t, "/metrics").status, "not on the API address")
	text := string((&server{app: s.admin}).do(t, "GET", "/metrics").body)
	for _, want := range []string{
		`tokenscope_http_requests_total{method="GET",route="/v2/whoami",status="200"} 3`,
		`tokenscope_http_requests_total{method="GET",route="/v2/trade/:chain",status="200"} 1`,
		// A request refused by the auth middleware never reached its route.
		`tokenscope_http_requests_total{method="GET",route="unmatched",status="401"} 1`,
		`tokenscope_http_requests_total{method="GET",route="unmatched",status="404"} 2`,
		`tokenscope_http_request_duration_seconds_count{method="GET",route="/v2/whoami"} 3`,
		`tokenscope_http_request_duration_seconds_count{method="GET",route="unmatched"} 3`,
		`tokenscope_http_request_duration_seconds_count{method="GET",route="/v2/trade/:chain"} 1`,
	} {
		assert.Contains(t, text, want)
	}
}

// TestProfilesOnlyOnTheAdminAddressWhenAsked: Go's profiles (Deps.Pprof) are served on the
// admin address only, and only when enabled.
func TestProfilesOnlyOnTheAdminAddressWhenAsked(t *testing.T) {
	off := newServer(t, io.Discard)
	assert.Equal(t, http.StatusNotFound, (&server{app: off.admin}).do(t, "GET", "/debug/pprof/").status, "off by default")
	on := newServer(t, io.Discard, func(d *httpapi.Deps) { d.Pprof = true })
	assert.Equal(t, http.StatusOK, (&server{app: on.admin}).do(t, "GET", "/debug/pprof/").status)
	assert.Equal(t, http.StatusOK, (&server{app: on.admin}).do(t, "GET", "/debug/pprof/cmdline").status)
	assert.Equal(t, http.StatusNotFound, on.get(t, "/debug/pprof/").status, "never on the API address")
	assert.Equal(t, http.StatusNotFound, (&server{app: on.dex, key: on.key}).get(t, "/debug/pprof/").status, "nor on the dex address")
}

func TestScopesAreEnforced(t *testing.T) {
	s := newServer(t, io.Discard)
	keys := s.keys
	readOnly, _, err := keys.Create(context.Background(), fixtureAccount, "reader", []account.Scope{account.ScopeRead})
	require.NoError(t, err)

	r := s.do(t, "GET", "/v2/whoami", "X-API-KEY", readOnly)
	require.Equal(t, http.StatusOK, r.status)
	assert.JSONEq(t, `{"accountId":"acct_bench","keyId":"`+account.PrefixOf(readOnly)[len(account.KeyPrefix):]+`","scopes":["read"]}`, string(r.body))
	assert.Equal(t, http.StatusForbidden, s.do(t, "GET", "/v2/webhook/endpoint/"+fixtureEndpoint, "X-API-KEY", readOnly).status)
	assert.Equal(t, http.StatusOK, s.get(t, "/v2/webhook/endpoint/"+fixtureEndpoint).status)

	r = s.do(t, "GET", "/v2/whoami")
	assert.Equal(t, http.StatusUnauthorized, r.status)
	assert.NotEmpty(t, r.header.Get("WWW-Authenticate"))
}

// TestReadResponses pins the rendered shape of the benchmarked routes: decimals as strings
// exactly as shopspring renders them, absent values as null, counts as strings.
func TestReadResponses(t *testing.T) {
	s := newServer(t, io.Discard)
	r := s.get(t, endpoints[0].path)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Equal(t, "application/json", r.header.Get("Content-Type"))
	var trades struct {
		Data []map[string]any `json:"data"`
	}
	require.NoError(t, json.Unmarshal(r.body, &trades))
	want := tradesFixture(20)
	require.Len(t, trades.Data, 20)
	for i, tr := range trades.Data {
		assert.Equal(t, want[i].TokenAmount.String(), tr["tokenAmount"])
		assert.Equal(t, want[i].SideTokenPriceInUSD.String(), tr["sideTokenPriceInUsd"])
		assert.Equal(t, want[i].TransactionSignature, tr["transactionSignature"])
		assert.Equal(t, float64(want[i].BlockTimestamp), tr["blockTimestamp"])
		assert.Len(t, tr, 29)
	}
	assert.True(t, strings.HasPrefix(string(r.body), `{"data":[{"accountOwnerAddress":"`))
	assert.True(t, strings.HasSuffix(string(r.body), `],"startCursor":"dHJhZGU6MTcxNzAwMDAwMDAwMDpzaWc6MA","endCursor":"dHJhZGU6MTcxNjk5OTk5MjQwMDpzaWc6MTk","hasNext":true,"hasPrev":false}`))

	r = s.get(t, endpoints[1].path)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	var snaps struct {
		Data []struct {
			BlockSlot *int64          `json:"blockSlot"`
			TokenA    map[string]any  `json:"tokenA"`
			TvlInUsd  json.RawMessage `json:"tvlInUsd"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(r.body, &snaps))
	ws := snapshotsFixture(20)
	for i, sn := range snaps.Data {
		assert.Equal(t, ws[i].BlockSlot == nil, sn.BlockSlot == nil)
		assert.Equal(t, `"`+ws[i].TVLInUSD.String()+`"`, string(sn.TvlInUsd))
		assert.Equal(t, string(ws[i].TokenA.VaultAmount), sn.TokenA["vaultAmount"])
	}

	r = s.get(t, endpoints[2].path)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	var pnl struct {
		Data    []map[string]any `json:"data"`
		Summary map[string]any   `json:"summary"`
	}
	require.NoError(t, json.Unmarshal(r.body, &pnl))
	assert.Len(t, pnl.Data, 10)
	assert.Equal(t, "10", pnl.Summary["tokens"])

	r = s.get(t, endpoints[3].path)
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	assert.Equal(t, `{"id":"ep_01HZX3K6Q9V7M2C8T4N5P0R1SB","url":"https://hooks.example.com/tokenscope",`+
		`"channels":["sol.token.migrated","sol.token.created"],"createdAt":"2024-05-29T16:26:40.123Z",`+
		`"updatedAt":"2024-05-29T16:26:40.123Z","description":"Migrations for the trading desk","disabled":false,`+
		`"filter":null,"filterTypes":["sol.token.migrated"],"metadata":{"env":"prod","team":"desk"},"rateLimit":50}`, string(r.body))
}

// TestKeysStayValidAcrossRequests: the key cache outlives the request, so what it keeps must not
// alias the request's buffers (fasthttp reuses them for the next request, which rewrote a cached
// prefix in place and made valid keys fail with 401).
func TestKeysStayValidAcrossRequests(t *testing.T) {
	s := newServer(t, io.Discard)
	var keys []string
	for i := range 300 {
		k, _, err := s.keys.Create(context.Background(), fixtureAccount, "k"+strconv.Itoa(i), account.AllScopes)
		require.NoError(t, err)
		keys = append(keys, k)
		for _, k := range []string{k, keys[i/2], keys[i/3]} {
			r := s.do(t, "GET", "/v2/whoami", "Authorization", "Bearer "+k)
			require.Equal(t, http.StatusOK, r.status, "request %d with %s: %s", i, k, r.body)
		}
	}
}

// TestNotReadyIsNoError: /readyz answering 503 (start-up, a dependency down) is the check's
// answer, polled by orchestrators, so the access log does not report it as an error (it is a
// debug line); a handler's 500 still is one.
func TestNotReadyIsNoError(t *testing.T) {
	var logs logBuffer
	s := newServer(t, &logs, func(d *httpapi.Deps) {
		d.Checks = []httpapi.Check{{Name: "postgres", Ping: func(context.Context) error { return errors.New("starting") }}}
	})
	for range 3 {
		require.Equal(t, http.StatusServiceUnavailable, s.do(t, "GET", "/readyz").status)
	}
	assert.Empty(t, logs.lines(t, "http"), "no info or error line for a not-ready answer")
	require.Equal(t, http.StatusInternalServerError,
		s.do(t, "DELETE", "/v2/webhook/endpoint/"+fixtureEndpoint, "Authorization", "Bearer "+s.key).status)
	lines := logs.lines(t, "http")
	require.Len(t, lines, 1)
	assert.Equal(t, "ERROR", lines[0]["level"])
}

// TestFaviconNeedsNoKey: the icon browsers request by themselves answers 204 without a key, on
// every address, instead of a 401.
func TestFaviconNeedsNoKey(t *testing.T) {
	s := newServer(t, io.Discard)
	r := s.do(t, "GET", "/favicon.ico")
	assert.Equal(t, http.StatusNoContent, r.status)
	assert.Empty(t, r.body)
}
