package market

import (
	"context"
	"errors"
	"sync"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/ranking"
	"github.com/tokenscope/tokenscope/domain/token"
)

type hotKey struct {
	chain    chain.Chain
	duration ranking.Duration
}

// stamp is the market's versions a read of a ranking started under: the token details' and the
// stored ranking's. Both are nonzero for a cached read.
type stamp struct{ details, ranking uint64 }

// hotLoad is one read of a ranking's candidates. Its fields other than stamp and seq are written
// once, before done is closed, and only read after done is closed.
type hotLoad struct {
	done  chan struct{}
	cands []token.Detail
	err   error
	// stamp is what the versions were when the read started: it reflects every write announced
	// up to them, and answers any request that observes the same versions.
	stamp stamp
	// seq identifies this read among all reads of the cache (1, 2, 3, …): two answers with the
	// same seq were computed from the same candidates.
	seq uint64
	// abandoned is set when the read failed because the context of the request that ran it
	// ended; the requests that waited for it read again with their own contexts.
	abandoned bool
}

// hotCache holds the latest successful read of each ranking, used while the market's versions
// are still the ones it was read under, and the read in progress while there is one. A failed
// read is forgotten as soon as it ends, so the next request reads again. Entries exist only for
// the cacheable keys (v2 chains × durations), one each.
type hotCache struct {
	mu    sync.Mutex
	loads map[hotKey]*hotLoad
	reads uint64 // the seq of the latest read started
	// onWait, when set (by tests), is called each time a request starts waiting for a read
	// that another request runs.
	onWait func()
}

func newHotCache() *hotCache {
	return &hotCache{loads: map[hotKey]*hotLoad{}}
}

// errLoadPanicked is what the waiting requests get when the read they waited for panicked.
var errLoadPanicked = errors.New("hot token ranking: the shared read did not finish")

// get returns the candidates of k read under st (nonzero): the cached read's when it was made
// under st, the one in progress under st, or a new read by load. The result is shared and must
// not be modified. seq is the read's (see hotLoad); it is 0 with an error.
func (c *hotCache) get(ctx context.Context, k hotKey, st stamp, load func(context.Context) ([]token.Detail, error)) (cands []token.Detail, seq uint64, err error) {
	for {
		c.mu.Lock()
		l, ok := c.loads[k]
		if !ok || l.stamp != st {
			c.reads++
			l = &hotLoad{done: make(chan struct{}), stamp: st, seq: c.reads}
			c.loads[k] = l
			c.mu.Unlock()
			c.run(ctx, k, l, load)
			if l.err != nil {
				return nil, 0, l.err
			}
			return l.cands, l.seq, nil
		}
		select {
		case <-l.done:
			c.mu.Unlock()
			return l.cands, l.seq, nil // a finished read stays in loads only when it succeeded
		default:
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
			return l.cands, l.seq, nil
		}
		if l.abandoned && ctx.Err() == nil {
			// The request that read gave up, not the database: read again.
			continue
		}
		return nil, 0, l.err
	}
}

// fresh returns the seq of k's read when it has finished under st, else 0.
func (c *hotCache) fresh(k hotKey, st stamp) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	l, ok := c.loads[k]
	if !ok || l.stamp != st {
		return 0
	}
	select {
	case <-l.done:
		if l.err == nil {
			return l.seq
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
