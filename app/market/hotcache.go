package market

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/ranking"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/ports"
)

type hotKey struct {
	chain    chain.Chain
	duration ranking.Duration
}

// hotLoad is one read of a ranking's candidates. Its fields are written once, before done is
// closed, and only read after done is closed.
type hotLoad struct {
	done  chan struct{}
	cands []token.Detail
	err   error
	// version identifies this read among all reads of the cache (1, 2, 3, …): two answers
	// with the same version were computed from the same candidates.
	version uint64
	// expires is ttl after the read started: an answer is never built from data read longer
	// than ttl before the request (unless the request waited for that very read).
	expires time.Time
	// abandoned is set when the read failed because the context of the request that ran it
	// ended; the requests that waited for it read again with their own contexts.
	abandoned bool
}

// hotCache holds the latest successful read of each ranking until it expires, and the read in
// progress while there is one. A failed read is forgotten as soon as it ends, so the next
// request reads again. Entries exist only for the cacheable keys (v2 chains × durations), and
// expired ones are dropped whenever a read starts.
type hotCache struct {
	clock ports.Clock
	ttl   time.Duration

	mu    sync.Mutex
	loads map[hotKey]*hotLoad
	reads uint64 // the version of the latest read started
	// onWait, when set (by tests), is called each time a request starts waiting for a read
	// that another request runs.
	onWait func()
}

func newHotCache(clock ports.Clock, ttl time.Duration) *hotCache {
	return &hotCache{clock: clock, ttl: ttl, loads: map[hotKey]*hotLoad{}}
}

// errLoadPanicked is what the waiting requests get when the read they waited for panicked.
var errLoadPanicked = errors.New("hot token ranking: the shared read did not finish")

// get returns the cached candidates of k while they are fresh; otherwise it joins the read in
// progress or runs load itself. The result is shared and must not be modified. version is the
// read's (see hotLoad); it is 0 with an error.
func (c *hotCache) get(ctx context.Context, k hotKey, load func(context.Context) ([]token.Detail, error)) (cands []token.Detail, version uint64, err error) {
	for {
		c.mu.Lock()
		now := c.clock.Now()
		l, ok := c.loads[k]
		if ok {
			select {
			case <-l.done:
				if now.Before(l.expires) {
					c.mu.Unlock()
					return l.cands, l.version, nil
				}
				ok = false // expired: read again
			default: // in progress: wait for it below
			}
		}
		if !ok {
			c.dropExpired(now)
			c.reads++
			l = &hotLoad{done: make(chan struct{}), expires: now.Add(c.ttl), version: c.reads}
			c.loads[k] = l
			c.mu.Unlock()
			c.run(ctx, k, l, load)
			if l.err != nil {
				return nil, 0, l.err
			}
			return l.cands, l.version, nil
		}
		wait := c.onWait
		c.mu.Unlock()
		if wait != nil {
			wait()
		}
		select {
		case <-l.done:
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		}
		if l.err == nil {
			return l.cands, l.version, nil
		}
		if l.abandoned && ctx.Err() == nil {
			// The request that read gave up, not the database: read again.
			continue
		}
		return nil, 0, l.err
	}
}

// fresh returns the version of k's cached read while it is finished and fresh, else 0.
func (c *hotCache) fresh(k hotKey) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	l, ok := c.loads[k]
	if !ok || !c.clock.Now().Before(l.expires) {
		return 0
	}
	select {
	case <-l.done:
		if l.err == nil {
			return l.version
		}
	default:
	}
	return 0
}

// run executes load for l and publishes its outcome, also when load panics (the panic goes on
// in this request; the waiting ones get an error).
func (c *hotCache) run(ctx context.Context, k hotKey, l *hotLoad, load func(context.Context) ([]token.Detail, error)) {
	finished := false
	defer func() {
		if !finished {
			c.finish(k, l, nil, errLoadPanicked, true)
		}
	}()
	cands, err := load(ctx)
	finished = true
	c.finish(k, l, cands, err, err != nil && ctx.Err() != nil)
}

func (c *hotCache) finish(k hotKey, l *hotLoad, cands []token.Detail, err error, abandoned bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	l.cands, l.err, l.abandoned = cands, err, abandoned
	if err != nil && c.loads[k] == l {
		// Errors are never cached.
		delete(c.loads, k)
	}
	close(l.done)
}

// dropExpired forgets the finished reads that have expired, so a ranking nobody asks for any
// more does not keep its details alive. Called with mu held.
func (c *hotCache) dropExpired(now time.Time) {
	for k, l := range c.loads {
		select {
		case <-l.done:
			if !now.Before(l.expires) {
				delete(c.loads, k)
			}
		default:
		}
	}
}
