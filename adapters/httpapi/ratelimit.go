package httpapi

import (
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"

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
