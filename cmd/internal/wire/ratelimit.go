package wire

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/tokenscope/tokenscope/adapters/httpapi"
	"github.com/tokenscope/tokenscope/adapters/ratelimiter"
	"github.com/tokenscope/tokenscope/app/config"
	"github.com/tokenscope/tokenscope/domain/ratelimit"
)

// rateLimit builds the per-key limit of the HTTP APIs: in Redis, shared by every replica, when
// REDIS_URL is set, in this process otherwise. With Redis it also returns the readiness check
// that keeps the replica unready until Redis has answered, and release closes the client.
func rateLimit(cfg config.Config, log *slog.Logger) (rl httpapi.RateLimit, checks []httpapi.Check, release func(), err error) {
	release = func() {}
	if cfg.RateLimitPerMinute > 0 {
		if rl.Default, err = ratelimit.New("RATE_LIMIT_PER_MINUTE", cfg.RateLimitPerMinute, cfg.RateLimitBurst); err != nil {
			return rl, nil, release, err
		}
	}
	if cfg.RedisURL == "" {
		rl.Limiter = ratelimiter.NewLocal()
		return rl, nil, release, nil
	}
	opt, err := redis.ParseURL(cfg.RedisURL)
	if err != nil {
		return rl, nil, release, fmt.Errorf("REDIS_URL: %w", err)
	}
	// A request waits on the limiter, so a Redis that stops answering must cost little before
	// the request passes unlimited: no retries, short timeouts (unless the URL sets its own; an
	// answering Redis takes well under a millisecond).
	if opt.DialTimeout == 0 {
		opt.DialTimeout = 500 * time.Millisecond
	}
	if opt.ReadTimeout == 0 {
		opt.ReadTimeout = 250 * time.Millisecond
	}
	if opt.WriteTimeout == 0 {
		opt.WriteTimeout = 250 * time.Millisecond
	}
	if opt.MaxRetries == 0 {
		opt.MaxRetries = -1
	}
	if opt.DialerRetries == 0 {
		opt.DialerRetries = 1
	}
	// go-redis logs every failed dial on its own; the middleware's throttled warning says it once.
	redis.SetLogger(redisLog{log})
	rdb := redis.NewClient(opt)
	lim := ratelimiter.NewRedis(rdb, cfg.RedisPrefix+":ratelimit:")
	rl.Limiter = lim
	return rl, []httpapi.Check{{Name: "redis", Ping: lim.Ping}}, func() { _ = rdb.Close() }, nil
}

// redisLog sends go-redis's own messages to the process log at debug level.
type redisLog struct{ log *slog.Logger }

func (l redisLog) Printf(ctx context.Context, format string, v ...any) {
	l.log.DebugContext(ctx, "redis: "+fmt.Sprintf(format, v...))
}
