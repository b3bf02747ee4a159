package wire

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/ratelimiter"
	"github.com/tokenscope/tokenscope/app/config"
	"github.com/tokenscope/tokenscope/domain/ratelimit"
)

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func TestRateLimitPerProcessWithoutRedisURL(t *testing.T) {
	rl, checks, release, err := rateLimit(config.Config{RateLimitPerMinute: 600, RateLimitBurst: 100}, quietLog())
	require.NoError(t, err)
	defer release()
	assert.IsType(t, &ratelimiter.Local{}, rl.Limiter)
	assert.Equal(t, ratelimit.Limit{PerMinute: 600, Burst: 100}, rl.Default)
	assert.Empty(t, checks, "nothing outside the process to wait for")

	rl, _, _, err = rateLimit(config.Config{}, quietLog())
	require.NoError(t, err)
	assert.True(t, rl.Default.IsZero(), "RATE_LIMIT_PER_MINUTE=0: keys without their own limit are unlimited")
}

// With REDIS_URL the limiter is Redis's, and its readiness check fails while Redis does not
// answer (no silent fall back to per-process limits) and passes once it has.
func TestRateLimitInRedisGatesReadiness(t *testing.T) {
	ctx := context.Background()
	rl, checks, release, err := rateLimit(config.Config{RedisURL: "redis://127.0.0.1:1/0", RedisPrefix: "test", RateLimitPerMinute: 60}, quietLog())
	require.NoError(t, err)
	defer release()
	assert.IsType(t, &ratelimiter.Redis{}, rl.Limiter)
	require.Len(t, checks, 1)
	assert.Equal(t, "redis", checks[0].Name)
	assert.Error(t, checks[0].Ping(ctx), "Redis unreachable: not ready")
	_, err = rl.Limiter.Allow(ctx, "k", rl.Default)
	assert.Error(t, err, "the middleware lets such requests through and counts them")

	_, checks, release2, err := rateLimit(config.Config{RedisURL: "redis://127.0.0.1:6379/0", RedisPrefix: "test", RateLimitPerMinute: 60}, quietLog())
	require.NoError(t, err)
	defer release2()
	require.NoError(t, checks[0].Ping(ctx), "Redis must run on 127.0.0.1:6379 (.ci/run starts it)")

	_, _, _, err = rateLimit(config.Config{RedisURL: "http://nope"}, quietLog())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "REDIS_URL")
}
