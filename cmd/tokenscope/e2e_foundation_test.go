package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/domain/account"
)

// errorBodyFields checks the one error shape every non-2xx answer carries.
func requireErrorBody(t *testing.T, r resp, status int) map[string]any {
	t.Helper()
	require.Equal(t, status, r.Status, "body: %s", r.Body)
	assert.Contains(t, r.Header.Get("Content-Type"), "application/json")
	body := r.Object(t)
	for _, f := range []string{"code", "message", "timestamp", "details", "requestId"} {
		assert.Contains(t, body, f, "error body lacks %q: %s", f, r.Body)
	}
	assert.Equal(t, r.Header.Get("X-Request-Id"), body["requestId"])
	return body
}

func TestAuthentication(t *testing.T) {
	e := newEnv(t)
	readOnly := e.keyFor(t, "reader", account.ScopeRead)

	cases := []struct {
		name    string
		headers []string
		status  int
	}{
		{"bearer key", []string{"Authorization", "Bearer " + e.key}, 200},
		{"bearer is case-insensitive", []string{"Authorization", "bearer " + e.key}, 200},
		{"X-API-KEY header", []string{"X-API-KEY", e.key}, 200},
		{"no key", []string{"Authorization", ""}, 401},
		{"unknown key", []string{"Authorization", "Bearer tsk_00000000_AAAAAAAAAAAAAAAAAAAAAA"}, 401},
		{"garbage", []string{"Authorization", "Bearer nope"}, 401},
		{"basic scheme", []string{"Authorization", "Basic " + e.key}, 401},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(t, "GET", "/v2/whoami", nil, tc.headers...)
			if tc.status == 200 {
				require.Equal(t, 200, r.Status, "body: %s", r.Body)
				assert.Equal(t, "e2e", r.Object(t)["accountId"])
				return
			}
			requireErrorBody(t, r, tc.status)
			assert.NotEmpty(t, r.Header.Get("WWW-Authenticate"))
		})
	}

	t.Run("revoked key", func(t *testing.T) {
		k := e.keyFor(t, "short-lived", account.ScopeRead)
		require.Equal(t, 200, e.do(t, "GET", "/v2/whoami", nil, "X-API-KEY", k).Status)
		require.NoError(t, e.rt.App.Keys.Revoke(t.Context(), account.PrefixOf(k)))
		requireErrorBody(t, e.do(t, "GET", "/v2/whoami", nil, "X-API-KEY", k), 401)
	})

	t.Run("read-only key may read", func(t *testing.T) {
		r := e.do(t, "GET", "/v2/whoami", nil, "Authorization", "Bearer "+readOnly)
		require.Equal(t, 200, r.Status)
		assert.Equal(t, []any{"read"}, r.Object(t)["scopes"])
	})
}

func TestErrorsAndOperability(t *testing.T) {
	e := newEnv(t)

	t.Run("unknown route is a 404 JSON error", func(t *testing.T) {
		body := requireErrorBody(t, e.do(t, "GET", "/v2/nope", nil), 404)
		assert.Contains(t, body["message"], "/v2/nope")
	})
	t.Run("unknown route without a key is still JSON", func(t *testing.T) {
		requireErrorBody(t, e.do(t, "GET", "/nowhere", nil, "Authorization", ""), 401)
	})
	t.Run("body over 1 MiB is a 413 JSON error", func(t *testing.T) {
		big := `{"pad":"` + strings.Repeat("x", 1<<20+10) + `"}`
		requireErrorBody(t, e.do(t, "POST", "/v2/whoami", big), 413)
	})
	t.Run("request id is echoed", func(t *testing.T) {
		r := e.do(t, "GET", "/v2/whoami", nil, "X-Request-Id", "abc-123")
		assert.Equal(t, "abc-123", r.Header.Get("X-Request-Id"))
	})
	t.Run("healthz and readyz need no key", func(t *testing.T) {
		r := e.do(t, "GET", "/healthz", nil, "Authorization", "")
		require.Equal(t, 200, r.Status)
		r = e.do(t, "GET", "/readyz", nil, "Authorization", "")
		require.Equal(t, 200, r.Status, "body: %s", r.Body)
		checks := r.Object(t)["checks"].(map[string]any)
		assert.Equal(t, "up", checks["postgres"])
		assert.Equal(t, "up", checks["temporal"])
	})
	t.Run("metrics (admin address) count requests by route and status", func(t *testing.T) {
		e.do(t, "GET", "/v2/whoami", nil)
		r := e.doURL(t, "GET", e.admin+"/metrics", nil, "Authorization", "")
		require.Equal(t, 200, r.Status)
		assert.Contains(t, string(r.Body), `tokenscope_http_requests_total{method="GET",route="/v2/whoami",status="200"}`)
		assert.Contains(t, string(r.Body), `tokenscope_http_request_duration_seconds_bucket{method="GET",route="/v2/whoami"`)
	})
	t.Run("metrics count workflow starts and outcomes", func(t *testing.T) {
		r := e.do(t, "POST", "/v2/wallet/sol/MetricsWallet1111111111111111111111111111/calculate-pnl", map[string]any{})
		require.Equal(t, 200, r.Status, "body: %s", r.Body)
		want := []string{
			`tokenscope_workflow_starts_total{result="ok",type="CalculatePnLJob"} 1`,
			`tokenscope_workflow_outcomes_total{outcome="completed",type="CalculatePnLJob"} 1`,
		}
		require.Eventually(t, func() bool {
			body := string(e.doURL(t, "GET", e.admin+"/metrics", nil, "Authorization", "").Body)
			for _, w := range want {
				if !strings.Contains(body, w) {
					return false
				}
			}
			return true
		}, 20*time.Second, 100*time.Millisecond, "metrics lack %v", want)
	})
	t.Run("dex address serves health and authenticates", func(t *testing.T) {
		require.Equal(t, 200, e.doDex(t, "GET", "/healthz", nil, "Authorization", "").Status)
		requireErrorBody(t, e.doDex(t, "GET", "/v1/token/sol/multi?tokenAddresses=x", nil, "Authorization", ""), 401)
	})
}
