package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/mock/gomock"

	"github.com/tokenscope/tokenscope/adapters/httpapi"
	"github.com/tokenscope/tokenscope/adapters/ratelimiter"
	"github.com/tokenscope/tokenscope/domain/account"
	"github.com/tokenscope/tokenscope/domain/ratelimit"
	"github.com/tokenscope/tokenscope/ports/portsmock"
)

var defaultLimit = ratelimit.Limit{PerMinute: 120, Burst: 30}

// limitedServer is the API with a mocked limiter and defaultLimit as the default.
func limitedServer(t *testing.T) (*server, *portsmock.MockRateLimiter) {
	lim := portsmock.NewMockRateLimiter(gomock.NewController(t))
	s := newServer(t, io.Discard, func(d *httpapi.Deps) {
		d.RateLimit = httpapi.RateLimit{Limiter: lim, Default: defaultLimit}
	})
	return s, lim
}

// keyID is the key id of a full key (tsk_<id>_<secret>).
func keyID(full string) string {
	return regexp.MustCompile(`^tsk_([0-9a-f]+)_`).FindStringSubmatch(full)[1]
}

func metricValue(t *testing.T, s *server, name string) string {
	t.Helper()
	text := string((&server{app: s.admin}).do(t, "GET", "/metrics").body)
	m := regexp.MustCompile(`(?m)^` + name + ` (\S+)$`).FindStringSubmatch(text)
	require.NotNil(t, m, "%s on /metrics", name)
	return m[1]
}

func TestRateLimitHeadersOnAllowedRequests(t *testing.T) {
	s, lim := limitedServer(t)
	id := keyID(s.key)
	lim.EXPECT().Allow(gomock.Any(), id, defaultLimit).Return(ratelimit.Decision{
		Allowed: true, Limit: 150, Remaining: 149, ResetAfter: 500 * time.Millisecond}, nil)
	r := s.get(t, "/v2/whoami")
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	assert.Equal(t, "150", r.header.Get("RateLimit-Limit"))
	assert.Equal(t, "149", r.header.Get("RateLimit-Remaining"))
	assert.Equal(t, "1", r.header.Get("RateLimit-Reset"), "seconds, rounded up")
	assert.Empty(t, r.header.Get("Retry-After"))

	// The dex address's multi-detail route is limited the same way.
	lim.EXPECT().Allow(gomock.Any(), id, defaultLimit).Return(ratelimit.Decision{
		Allowed: true, Limit: 150, Remaining: 7, ResetAfter: 61 * time.Second}, nil)
	r = (&server{app: s.dex}).do(t, "GET", tokenEndpoints[3].path, "X-API-KEY", s.key)
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	assert.Equal(t, "150", r.header.Get("RateLimit-Limit"))
	assert.Equal(t, "7", r.header.Get("RateLimit-Remaining"))
	assert.Equal(t, "61", r.header.Get("RateLimit-Reset"))
}

func TestRateLimitRefusesWith429(t *testing.T) {
	s, lim := limitedServer(t)
	lim.EXPECT().Allow(gomock.Any(), keyID(s.key), defaultLimit).Return(ratelimit.Decision{
		Allowed: false, Limit: 150, Remaining: 0, RetryAfter: 1200 * time.Millisecond, ResetAfter: 75 * time.Second}, nil).Times(2)
	for range 2 {
		r := s.get(t, "/v2/ranking/sol/hotTokens/1h")
		require.Equal(t, http.StatusTooManyRequests, r.status)
		assert.Equal(t, "2", r.header.Get("Retry-After"), "1.2s rounded up")
		assert.Equal(t, "150", r.header.Get("RateLimit-Limit"))
		assert.Equal(t, "0", r.header.Get("RateLimit-Remaining"))
		assert.Equal(t, "75", r.header.Get("RateLimit-Reset"))
		assert.Equal(t, fiber.MIMEApplicationJSON, r.header.Get("Content-Type"))
		var body httpapi.ErrorBody
		require.NoError(t, json.Unmarshal(r.body, &body))
		assert.Equal(t, 429, body.Code)
		assert.Contains(t, body.Message, "120 requests per minute, burst 30")
		assert.EqualValues(t, 120, body.Details["requestsPerMinute"])
		assert.EqualValues(t, 30, body.Details["burst"])
		assert.NotEmpty(t, body.RequestID)
	}
	assert.Equal(t, "2", metricValue(t, s, "tokenscope_ratelimit_rejected_total"))
	assert.Equal(t, "0", metricValue(t, s, "tokenscope_ratelimit_errors_total"))
}

func TestRateLimitUsesTheKeysOwnLimit(t *testing.T) {
	s, lim := limitedServer(t)
	own := ratelimit.Limit{PerMinute: 5, Burst: 1}
	full, key, err := s.keys.CreateLimited(context.Background(), fixtureAccount, "slow", account.AllScopes, own, nil)
	require.NoError(t, err)
	lim.EXPECT().Allow(gomock.Any(), key.ID, own).Return(ratelimit.Decision{Allowed: true, Limit: 6, Remaining: 5}, nil)
	r := s.do(t, "GET", "/v2/whoami", "Authorization", "Bearer "+full)
	require.Equal(t, http.StatusOK, r.status)
	assert.Equal(t, "6", r.header.Get("RateLimit-Limit"))
}

func TestRateLimitFailingLimiterLetsRequestsThrough(t *testing.T) {
	s, lim := limitedServer(t)
	lim.EXPECT().Allow(gomock.Any(), gomock.Any(), gomock.Any()).Return(ratelimit.Decision{}, errors.New("redis: connection refused")).Times(3)
	for range 3 {
		r := s.get(t, "/v2/whoami")
		require.Equal(t, http.StatusOK, r.status)
		assert.Empty(t, r.header.Get("RateLimit-Limit"), "no headers when nothing was counted")
	}
	assert.Equal(t, "3", metricValue(t, s, "tokenscope_ratelimit_errors_total"))
	assert.Equal(t, "0", metricValue(t, s, "tokenscope_ratelimit_rejected_total"))
}

func TestRateLimitSkipsUnauthenticatedRequests(t *testing.T) {
	s, _ := limitedServer(t) // the mock fails the test on any Allow call
	for _, r := range []result{
		s.do(t, "GET", "/v2/whoami"),
		s.do(t, "GET", "/v2/whoami", "X-API-KEY", "tsk_00000000_nope"),
		s.do(t, "GET", "/healthz"),
		s.do(t, "GET", "/readyz"),
	} {
		assert.NotEqual(t, http.StatusTooManyRequests, r.status)
		for _, h := range []string{"RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"} {
			assert.Empty(t, r.header.Get(h))
		}
	}
}

func TestRateLimitZeroDefaultLeavesKeysUnlimited(t *testing.T) {
	lim := portsmock.NewMockRateLimiter(gomock.NewController(t))
	s := newServer(t, io.Discard, func(d *httpapi.Deps) { d.RateLimit = httpapi.RateLimit{Limiter: lim} })
	r := s.get(t, "/v2/whoami")
	require.Equal(t, http.StatusOK, r.status)
	assert.Empty(t, r.header.Get("RateLimit-Limit"))
}

// The real in-process limiter behind the real middleware: capacity, then 429.
func TestRateLimitInProcess(t *testing.T) {
	s := newServer(t, io.Discard, func(d *httpapi.Deps) {
		d.RateLimit = httpapi.RateLimit{Limiter: ratelimiter.NewLocal(), Default: ratelimit.Limit{PerMinute: 1, Burst: 2}}
	})
	for i := range 3 {
		r := s.get(t, "/v2/whoami")
		require.Equal(t, http.StatusOK, r.status, "request %d", i+1)
		assert.Equal(t, "3", r.header.Get("RateLimit-Limit"))
		assert.Equal(t, strconv.Itoa(2-i), r.header.Get("RateLimit-Remaining"))
	}
	r := s.get(t, "/v2/whoami")
	require.Equal(t, http.StatusTooManyRequests, r.status)
	retry, err := strconv.Atoi(r.header.Get("Retry-After"))
	require.NoError(t, err)
	assert.True(t, retry >= 1 && retry <= 60, "Retry-After %d: one request a minute", retry)
}

// BenchmarkRateLimit is the middleware's cost: whoami (the cheapest authenticated route, where
// the limiter weighs most), the hot-token ranking and the multi-detail read
// with the in-process limiter (a limit never reached) against the same server without one.
//
//	go test -run XXX -bench RateLimit -benchmem -count 6 ./adapters/httpapi/
func BenchmarkRateLimit(b *testing.B) {
	for _, e := range []endpoint{{"whoami", "/v2/whoami"}, tokenEndpoints[0], tokenEndpoints[3]} {
		for _, v := range []struct {
			name string
			rl   httpapi.RateLimit
		}{
			{"nolimit", httpapi.RateLimit{}},
			{"inprocess", httpapi.RateLimit{Limiter: ratelimiter.NewLocal(),
				Default: ratelimit.Limit{PerMinute: ratelimit.MaxPerMinute, Burst: ratelimit.MaxBurst}}},
		} {
			s := newServer(b, devNull(b), func(d *httpapi.Deps) { d.RateLimit = v.rl })
			body := reference(b, s, e.path)
			b.Run(e.name+"/"+v.name, func(b *testing.B) {
				h := s.app.Handler()
				ctx := newRequestCtx(e.path, s.key)
				b.ReportAllocs()
				for b.Loop() {
					ctx.Response.Reset()
					ctx.ResetUserValues()
					h(ctx)
				}
				mustStatus(b, ctx.Response.StatusCode(), ctx.Response.Body(), fiber.StatusOK)
				if len(ctx.Response.Body()) != len(body) {
					b.Fatalf("%s sent a different body", v.name)
				}
			})
		}
	}
}

// TestFailedAuthenticationsAreLimitedPerClient: 5,000 random well-formed keys from one client
// (the flood) cost a store lookup each only until the client's failure bucket is empty;
// then it gets 429 with Retry-After, without a lookup, as a key past its limit does. The same
// unknown key repeated costs one lookup. Before: 5,000 lookups and 5,000 401s.
func TestFailedAuthenticationsAreLimitedPerClient(t *testing.T) {
	failures := ratelimit.Limit{PerMinute: 30, Burst: 20}
	s := newServer(t, io.Discard, func(d *httpapi.Deps) {
		d.RateLimit = httpapi.RateLimit{Limiter: ratelimiter.NewLocal(), Default: ratelimit.Limit{PerMinute: ratelimit.MaxPerMinute}}
		d.FailedAuthLimit = failures
	})
	statuses := map[int]int{}
	var retry string
	for i := range 5000 {
		key := fmt.Sprintf("tsk_%012x_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", rand.Int64N(1<<47)+int64(i))
		r := s.do(t, "GET", "/v2/whoami", "X-API-KEY", key)
		statuses[r.status]++
		if r.status == http.StatusTooManyRequests {
			retry = r.header.Get("Retry-After")
		}
	}
	lookups := s.store.lookups.Load()
	t.Logf("5,000 random keys: %d store lookups, statuses %v", lookups, statuses)
	assert.Equal(t, failures.Capacity(), statuses[http.StatusUnauthorized], "401 until the client's failure bucket is empty")
	assert.Equal(t, 5000-failures.Capacity(), statuses[http.StatusTooManyRequests])
	assert.LessOrEqual(t, lookups, int64(failures.Capacity()+1), "no lookup once the client is limited (the one that found the bucket empty aside)")
	n, err := strconv.Atoi(retry)
	require.NoError(t, err, "a 429 says when to retry")
	assert.True(t, n >= 1 && n <= 2, "Retry-After %d: one failure every 2 s", n)
}

// TestUnknownKeyRepeatedCostsOneLookup: the same unknown key sent again and again reaches the
// store once (the negative cache); its answers stay 401 below the failure limit.
func TestUnknownKeyRepeatedCostsOneLookup(t *testing.T) {
	s := newServer(t, io.Discard)
	before := s.store.lookups.Load()
	for range 100 {
		r := s.do(t, "GET", "/v2/whoami", "X-API-KEY", "tsk_00000000abcd_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
		require.Equal(t, http.StatusUnauthorized, r.status)
	}
	assert.Equal(t, int64(1), s.store.lookups.Load()-before)
}
