package httpapi

import (
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/ratelimit"
	"github.com/tokenscope/tokenscope/ports"
)

// RateLimit is the per-key limit of authenticated requests.
type RateLimit struct {
	// Limiter spends requests; nil turns limits off.
	Limiter ports.RateLimiter
	// Default applies to keys without a limit of their own; zero leaves those keys unlimited.
	Default ratelimit.Limit
}

// The headers every limited response carries (draft-ietf-httpapi-ratelimit-headers):
// the bucket's capacity, what it still allows at once, and the seconds until it is full.
var (
	headerLimit     = []byte("RateLimit-Limit")
	headerRemaining = []byte("RateLimit-Remaining")
	headerReset     = []byte("RateLimit-Reset")
)

// limiterWarnEvery spaces the warnings of a failing limiter (one per request would flood the log).
const limiterWarnEvery = 10 * time.Second

// withRateLimit spends one request of the caller's key (it runs after withAuth) and refuses it
// with 429 once the key's bucket is empty. A limiter that fails (Redis down) lets the request
// through unlimited, without headers, and counts the failure: the limiter protects the service
// from one greedy key, and failing closed would turn a Redis outage into an outage of the API.
func withRateLimit(rl RateLimit, m *Metrics, log *slog.Logger) fiber.Handler {
	if rl.Limiter == nil {
		return func(c *fiber.Ctx) error { return c.Next() }
	}
	var lastWarn atomic.Int64
	return func(c *fiber.Ctx) error {
		p := principal(c)
		limit := p.Limit.Or(rl.Default)
		if limit.IsZero() {
			return c.Next()
		}
		d, err := rl.Limiter.Allow(c.UserContext(), p.KeyID, limit)
		if err != nil {
			m.limiterFailed()
			if now := time.Now().UnixNano(); now-lastWarn.Load() >= int64(limiterWarnEvery) {
				lastWarn.Store(now)
				log.Warn("rate limiter unavailable: requests pass unlimited", "requestId", requestID(c), "err", err)
			}
			return c.Next()
		}
		var buf [20]byte
		h := &c.Response().Header
		h.SetBytesKV(headerLimit, strconv.AppendInt(buf[:0], int64(d.Limit), 10))
		h.SetBytesKV(headerRemaining, strconv.AppendInt(buf[:0], int64(d.Remaining), 10))
		h.SetBytesKV(headerReset, strconv.AppendInt(buf[:0], int64(ceilSeconds(d.ResetAfter)), 10))
		if !d.Allowed {
			m.rateLimited()
			return ratelimit.Refused(limit, d)
		}
		return c.Next()
	}
}

// ceilSeconds rounds up, so a client that waits that long finds the request allowed.
func ceilSeconds(d time.Duration) int {
	return int((d + time.Second - 1) / time.Second)
}

// failureGate limits the requests one client address gets refused with 401: each spends one
// request of the address's bucket (FailedAuthLimit, in the key limiter's store, so replicas
// sharing Redis share it). Once the bucket is empty the address is refused 429 until the time
// the limiter gave, without its key being looked up: a flood of made-up keys costs the database
// one lookup per allowed failure, not one per request. Requests with a valid key do not spend
// it, but an address refused this way is refused whatever key it sends, as one client.
type failureGate struct {
	limiter ports.RateLimiter
	limit   ratelimit.Limit
	metrics *Metrics

	mu      sync.Mutex
	blocked map[string]time.Time // client address -> refused until
}

// blockedLimit bounds the blocked addresses kept; past it the oldest are forgotten wholesale
// (their next failure blocks them again).
const blockedLimit = 10_000

func newFailureGate(d Deps) *failureGate {
	if d.RateLimit.Limiter == nil || d.FailedAuthLimit.IsZero() {
		return nil
	}
	return &failureGate{limiter: d.RateLimit.Limiter, limit: d.FailedAuthLimit, metrics: d.Metrics, blocked: map[string]time.Time{}}
}

// check refuses a blocked address.
func (g *failureGate) check(c *fiber.Ctx) error {
	if g == nil {
		return nil
	}
	ip := c.IP()
	now := time.Now()
	g.mu.Lock()
	until, ok := g.blocked[ip]
	if ok && !now.Before(until) {
		delete(g.blocked, ip)
		ok = false
	}
	g.mu.Unlock()
	if !ok {
		return nil
	}
	return g.refuse(c, until.Sub(now))
}

// failed spends one failure of the client's address: err (its 401) while the bucket allows it,
// else a 429, and the address is blocked until the bucket allows one again.
func (g *failureGate) failed(c *fiber.Ctx, err error) error {
	if g == nil {
		return err
	}
	ip := c.IP()
	d, lerr := g.limiter.Allow(c.UserContext(), "unauthenticated:"+ip, g.limit)
	if lerr != nil || d.Allowed {
		return err // a limiter that cannot decide lets the 401 through, as it does requests
	}
	g.mu.Lock()
	if len(g.blocked) >= blockedLimit {
		clear(g.blocked)
	}
	g.blocked[ip] = time.Now().Add(d.RetryAfter)
	g.mu.Unlock()
	return g.refuse(c, d.RetryAfter)
}

func (g *failureGate) refuse(c *fiber.Ctx, wait time.Duration) error {
	g.metrics.rateLimited()
	c.Response().Header.Del(fiber.HeaderWWWAuthenticate)
	e := fault.RateLimited("too many requests with a missing or invalid API key from this address ("+g.limit.String()+
		"); retry after the Retry-After header's seconds", wait)
	e.Details = map[string]any{"limit": "unauthenticated", "requestsPerMinute": g.limit.PerMinute, "burst": g.limit.Burst}
	return e
}
