package ratelimiter_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/ratelimiter"
	"github.com/tokenscope/tokenscope/domain/ratelimit"
	"github.com/tokenscope/tokenscope/ports"
)

// redisAddr is the Redis the tests use; .ci/run starts it. Its absence fails the tests.
const redisAddr = "127.0.0.1:6379"

// newRedis is a Redis limiter under a key prefix no other test (or run) shares.
func newRedis(t *testing.T) (*ratelimiter.Redis, *redis.Client, string) {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: redisAddr})
	t.Cleanup(func() { _ = rdb.Close() })
	require.NoError(t, rdb.Ping(context.Background()).Err(), "Redis must run on %s (start it as .ci/run does)", redisAddr)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	prefix := "test:" + t.Name() + ":" + hex.EncodeToString(b) + ":"
	return ratelimiter.NewRedis(rdb, prefix), rdb, prefix
}

// limiters are the implementations every behaviour test runs against.
func limiters(t *testing.T) map[string]ports.RateLimiter {
	r, _, _ := newRedis(t)
	return map[string]ports.RateLimiter{"local": ratelimiter.NewLocal(), "redis": r}
}

// The shared behaviour: a slow limit (one request a minute) so no refill happens while the
// test runs, whatever the machine's speed.
func TestLimiterSpendsCapacityThenRefuses(t *testing.T) {
	for name, lim := range limiters(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			l := ratelimit.Limit{PerMinute: 2, Burst: 3}
			for i := range 5 {
				d, err := lim.Allow(ctx, "k1", l)
				require.NoError(t, err)
				require.True(t, d.Allowed, "request %d", i+1)
				assert.Equal(t, 5, d.Limit)
				assert.Equal(t, 4-i, d.Remaining, "request %d", i+1)
				assert.Greater(t, d.ResetAfter, time.Duration(0))
			}
			d, err := lim.Allow(ctx, "k1", l)
			require.NoError(t, err)
			assert.False(t, d.Allowed)
			assert.Equal(t, 0, d.Remaining)
			assert.Greater(t, d.RetryAfter, time.Duration(0))
			assert.LessOrEqual(t, d.RetryAfter, 30*time.Second, "one request's worth of time at 2 a minute")
			assert.LessOrEqual(t, d.ResetAfter, 150*time.Second, "a full bucket of 5 at 30s each")

			// Another key has its own bucket.
			d, err = lim.Allow(ctx, "k2", l)
			require.NoError(t, err)
			assert.True(t, d.Allowed)
			assert.Equal(t, 4, d.Remaining)
		})
	}
}

func TestLimiterConcurrentRequestsSpendExactlyTheCapacity(t *testing.T) {
	for name, lim := range limiters(t) {
		t.Run(name, func(t *testing.T) {
			l := ratelimit.Limit{PerMinute: 1, Burst: 49}
			var allowed atomic.Int64
			var wg sync.WaitGroup
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range 20 {
						d, err := lim.Allow(context.Background(), "shared", l)
						assert.NoError(t, err)
						if d.Allowed {
							allowed.Add(1)
						}
					}
				}()
			}
			wg.Wait()
			assert.Equal(t, int64(50), allowed.Load(), "160 requests against a bucket of 50")
		})
	}
}

func TestLocalRefillsWithTime(t *testing.T) {
	var now atomic.Int64
	now.Store(int64(time.Hour))
	lim := ratelimiter.NewLocalAt(now.Load)
	l := ratelimit.Limit{PerMinute: 60, Burst: 0}
	ctx := context.Background()
	for range 60 {
		d, _ := lim.Allow(ctx, "k", l)
		require.True(t, d.Allowed)
	}
	d, _ := lim.Allow(ctx, "k", l)
	require.False(t, d.Allowed)
	assert.Equal(t, time.Second, d.RetryAfter)
	now.Add(int64(time.Second))
	d, _ = lim.Allow(ctx, "k", l)
	assert.True(t, d.Allowed, "one second later one more request")
	d, _ = lim.Allow(ctx, "k", l)
	assert.False(t, d.Allowed)
}

func TestLocalForgetsFullBucketsOnly(t *testing.T) {
	var now atomic.Int64
	now.Store(int64(time.Hour))
	lim := ratelimiter.NewLocalAt(now.Load)
	ctx := context.Background()
	l := ratelimit.Limit{PerMinute: 1, Burst: 0}
	// Enough keys to pass the sweep size in every shard each spend their one request; a minute
	// later (their buckets full again) a busy key spends its request and as many new keys
	// arrive, which sweeps the full buckets away but keeps the busy key's empty one.
	const n = 100_000
	for i := range n {
		_, _ = lim.Allow(ctx, "old"+strconv.Itoa(i), l)
	}
	require.Equal(t, n, lim.Len())
	now.Add(int64(time.Minute))
	d, _ := lim.Allow(ctx, "busy", l)
	require.True(t, d.Allowed)
	for i := range n {
		d, _ := lim.Allow(ctx, "new"+strconv.Itoa(i), l)
		require.True(t, d.Allowed)
	}
	assert.Less(t, lim.Len(), 2*n, "the old keys' full buckets were dropped")
	d, _ = lim.Allow(ctx, "busy", l)
	assert.False(t, d.Allowed, "the busy key's spent bucket survived the sweeps")
	d, _ = lim.Allow(ctx, "old1", l)
	assert.True(t, d.Allowed, "a forgotten key starts full, as it would have been")
}

func TestRedisKeepsStateUnderItsPrefix(t *testing.T) {
	lim, rdb, prefix := newRedis(t)
	ctx := context.Background()
	_, err := lim.Allow(ctx, "abc", ratelimit.Limit{PerMinute: 10, Burst: 0})
	require.NoError(t, err)
	keys, err := rdb.Keys(ctx, "*"+prefix+"*").Result()
	require.NoError(t, err)
	assert.Equal(t, []string{"rate:" + prefix + "abc"}, keys)
	ttl, err := rdb.PTTL(ctx, keys[0]).Result()
	require.NoError(t, err)
	assert.Greater(t, ttl, time.Duration(0), "the bucket expires once it would be full")
	require.NoError(t, lim.Ping(ctx))
}

func TestRedisDownIsAnErrorAndUnready(t *testing.T) {
	// Nothing listens on port 1.
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: time.Second})
	t.Cleanup(func() { _ = rdb.Close() })
	lim := ratelimiter.NewRedis(rdb, "test:down:")
	_, err := lim.Allow(context.Background(), "k", ratelimit.Limit{PerMinute: 10})
	require.Error(t, err)
	assert.Error(t, lim.Ping(context.Background()))
}

// BenchmarkLocalAllow is the in-process limiter alone: one key, and keys spread over the
// shards, from every core.
func BenchmarkLocalAllow(b *testing.B) {
	l := ratelimit.Limit{PerMinute: ratelimit.MaxPerMinute, Burst: ratelimit.MaxBurst}
	b.Run("onekey", func(b *testing.B) {
		lim := ratelimiter.NewLocal()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				_, _ = lim.Allow(context.Background(), "k", l)
			}
		})
	})
	b.Run("manykeys", func(b *testing.B) {
		lim := ratelimiter.NewLocal()
		keys := make([]string, 64)
		for i := range keys {
			keys[i] = "key" + strconv.Itoa(i)
		}
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				_, _ = lim.Allow(context.Background(), keys[i%len(keys)], l)
				i++
			}
		})
	})
}

// BenchmarkRedisAllow is one round trip of the GCRA script to the local Redis.
func BenchmarkRedisAllow(b *testing.B) {
	rdb := redis.NewClient(&redis.Options{Addr: redisAddr})
	b.Cleanup(func() { _ = rdb.Close() })
	if err := rdb.Ping(context.Background()).Err(); err != nil {
		b.Fatalf("Redis must run on %s: %v", redisAddr, err)
	}
	lim := ratelimiter.NewRedis(rdb, "bench:"+strconv.FormatInt(time.Now().UnixNano(), 36)+":")
	l := ratelimit.Limit{PerMinute: ratelimit.MaxPerMinute, Burst: ratelimit.MaxBurst}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := lim.Allow(context.Background(), "k", l); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
