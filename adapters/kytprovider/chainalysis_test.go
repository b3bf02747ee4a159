package kytprovider_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/kytprovider"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/kyt"
)

func withdrawal(t *testing.T) kyt.Registration {
	t.Helper()
	reg, err := kyt.NewWithdrawal("acct", "k", kyt.WithdrawalRequest{Address: "D1Mc6j9xQWgR1o1Z7yU5nVVXFQiAYx7FG9AW1aVfwrUM",
		Asset: "SOL", AssetAmount: "5", AttemptTimestamp: "2024-01-15T10:30:00Z", Network: kyt.Solana}, time.Now())
	require.NoError(t, err)
	return reg
}

// fakeVendor speaks the registration API on loopback; the summary is processed from the
// second read on.
func fakeVendor(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var summaries atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/kyt/v2/users/acct/withdrawal-attempts", func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, "secret-key", r.Header.Get("Token"))
		var body map[string]any
		require.NoError(t, json.NewDecoder(r.Body).Decode(&body))
		assert.Equal(t, "5", body["assetAmount"])
		assert.NotEmpty(t, body["attemptIdentifier"])
		_, _ = w.Write([]byte(`{"externalId":"v-1","updatedAt":null}`))
	})
	mux.HandleFunc("GET /api/kyt/v2/withdrawal-attempts/v-1", func(w http.ResponseWriter, r *http.Request) {
		if summaries.Add(1) == 1 {
			_, _ = w.Write([]byte(`{"updatedAt":null,"usdAmount":null}`))
			return
		}
		_, _ = w.Write([]byte(`{"updatedAt":"2024-01-15 10:30:01","usdAmount":"722.5"}`))
	})
	mux.HandleFunc("GET /api/kyt/v2/withdrawal-attempts/v-1/alerts", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"alerts":[{"alertLevel":"MEDIUM","alertAmount":"1"},{"alertLevel":"HIGH","alertAmount":"2"}]}`))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, &summaries
}

func TestHTTPProvider(t *testing.T) {
	srv, _ := fakeVendor(t)
	p := kytprovider.NewHTTP(srv.URL, "secret-key")
	reg := withdrawal(t)

	_, err := p.Screen(context.Background(), reg)
	require.Error(t, err)
	assert.True(t, fault.Is(err, fault.KindUnavailable), "unprocessed is transient: %v", err)

	s, err := p.Screen(context.Background(), reg)
	require.NoError(t, err)
	assert.Equal(t, kyt.HighRisk, s.Rating, "the worst alert rates the registration")
	assert.Len(t, s.Alerts, 2)
	require.NotNil(t, s.USDAmount)
	assert.Equal(t, "722.5", s.USDAmount.String())
}

func TestHTTPProviderRefusals(t *testing.T) {
	for _, tc := range []struct {
		name       string
		status     int
		body       string
		retryAfter string
		kind       fault.Kind
		wait       time.Duration
	}{
		{"bad request is permanent", 400, `{"message":"invalid asset"}`, "", fault.KindInvalid, 0},
		{"access denied is permanent", 403, `{"status":403,"error":"Forbidden","message":"AccessDenied"}`, "", fault.KindForbidden, 0},
		{"quota 403 waits", 403, `{"message":"quota exhausted"}`, "", fault.KindUnavailable, 2 * time.Second},
		{"429 honours Retry-After", 429, `{}`, "5", fault.KindUnavailable, 5 * time.Second},
		{"503 is transient", 503, `{}`, "", fault.KindInternal, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.retryAfter != "" {
					w.Header().Set("Retry-After", tc.retryAfter)
				}
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			_, err := kytprovider.NewHTTP(srv.URL, "k").Screen(context.Background(), withdrawal(t))
			require.Error(t, err)
			assert.Equal(t, tc.kind, fault.KindOf(err))
			if fe, ok := fault.As(err); ok && tc.wait > 0 {
				assert.Equal(t, tc.wait, fe.RetryAfter)
			}
		})
	}
}

func TestBuiltin(t *testing.T) {
	flagged, err := kytprovider.ParseFlagged("D1Mc6j9xQWgR1o1Z7yU5nVVXFQiAYx7FG9AW1aVfwrUM=severe, 0xabc")
	require.NoError(t, err)
	assert.Equal(t, kyt.RiskHigh, flagged["0xabc"], "HIGH by default")
	s, err := kytprovider.Builtin{Flagged: flagged}.Screen(context.Background(), withdrawal(t))
	require.NoError(t, err)
	assert.Equal(t, kyt.SevereRisk, s.Rating)
	require.Len(t, s.Alerts, 1)
	assert.Equal(t, kyt.RiskSevere, s.Alerts[0].Level)
	_, err = kytprovider.ParseFlagged("x=EXTREME")
	assert.Error(t, err)
}
