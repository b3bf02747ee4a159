package ratelimiter

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/tokenscope/tokenscope/domain/ratelimit"
	"github.com/tokenscope/tokenscope/ports"
)

// Redis is the limiter shared by every replica on one Redis: redis_rate's GCRA script, which
// reads the time from Redis itself, so replicas with skewed clocks still agree.
type Redis struct {
	rdb    *redis.Client
	lim    *redis_rate.Limiter
	prefix string
	// answered is set once Redis has answered a ping (see Ping).
	answered atomic.Bool
}

var _ ports.RateLimiter = (*Redis)(nil)

// NewRedis builds the limiter over rdb; prefix starts every key it writes (redis_rate adds its
// own "rate:" before it).
func NewRedis(rdb *redis.Client, prefix string) *Redis {
	return &Redis{rdb: rdb, lim: redis_rate.NewLimiter(rdb), prefix: prefix}
}

// Allow spends one request of key's bucket in Redis.
func (r *Redis) Allow(ctx context.Context, key string, limit ratelimit.Limit) (ratelimit.Decision, error) {
	res, err := r.lim.Allow(ctx, r.prefix+key, redis_rate.Limit{Rate: limit.PerMinute, Burst: limit.Capacity(), Period: ratelimit.Period})
	if err != nil {
		return ratelimit.Decision{}, fmt.Errorf("rate limit in redis: %w", err)
	}
	d := ratelimit.Decision{Allowed: res.Allowed > 0, Limit: limit.Capacity(), Remaining: res.Remaining,
		ResetAfter: max(res.ResetAfter, 0)}
	if !d.Allowed {
		d.RetryAfter = max(res.RetryAfter, 0)
	}
	return d, nil
}

// Ping is the readiness check of a process that limits through Redis: it fails until Redis has
// answered once, then passes for good. A Redis that is down at start keeps the replica out of
// rotation; one that fails later must not take every replica out at once (the middleware
// lets requests through and counts the failures instead).
func (r *Redis) Ping(ctx context.Context) error {
	if r.answered.Load() {
		return nil
	}
	if err := r.rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	r.answered.Store(true)
	return nil
}
