// Package ratelimiter holds the two ports.RateLimiter adapters: Local, a token bucket per key in
// this process's memory (each replica counts alone), and Redis, the same bucket kept in Redis
// so every replica sharing it spends from one allowance. Both run the GCRA of domain/ratelimit.
package ratelimiter

import (
	"context"
	"hash/maphash"
	"sync"
	"time"

	"github.com/tokenscope/tokenscope/domain/ratelimit"
	"github.com/tokenscope/tokenscope/ports"
)

// shards splits the buckets so concurrent requests of different keys rarely share a lock.
const shards = 16

// minSweep is the bucket count of a shard past which full buckets are dropped (a full bucket and
// a missing one answer the same, so dropping it forgets nothing).
const minSweep = 4096

// Local is the in-process limiter.
type Local struct {
	seed  maphash.Seed
	base  time.Time // times are nanoseconds since base, on the monotonic clock
	now   func() int64
	shard [shards]localShard
}

type localShard struct {
	mu  sync.Mutex
	tat map[string]int64 // key -> theoretical arrival time
	// sweepAt is the size at which a new key sweeps the full buckets out: twice what a sweep
	// left, so a shard of busy keys is not scanned again on every new one.
	sweepAt int
}

var _ ports.RateLimiter = (*Local)(nil)

// NewLocal builds an empty in-process limiter.
func NewLocal() *Local {
	l := &Local{seed: maphash.MakeSeed(), base: time.Now()}
	l.now = func() int64 { return int64(time.Since(l.base)) }
	for i := range l.shard {
		l.shard[i].tat = map[string]int64{}
		l.shard[i].sweepAt = minSweep
	}
	return l
}

// Allow spends one request of key's bucket. It never fails.
func (l *Local) Allow(_ context.Context, key string, limit ratelimit.Limit) (ratelimit.Decision, error) {
	s := &l.shard[maphash.String(l.seed, key)%shards]
	s.mu.Lock()
	defer s.mu.Unlock()
	now := l.now()
	tat, seen := s.tat[key]
	next, d := limit.Spend(tat, now)
	if d.Allowed {
		if !seen && len(s.tat) >= s.sweepAt {
			for k, t := range s.tat {
				if t <= now {
					delete(s.tat, k)
				}
			}
			s.sweepAt = max(minSweep, 2*len(s.tat))
		}
		s.tat[key] = next
	}
	return d, nil
}
