package market

import (
	"context"
	"errors"
	"sync"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/ranking"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/ports"
)

type hotKey struct {
	chain    chain.Chain
	duration ranking.Duration
}

// hotLoad is one read of a ranking's candidates. seq and id are set when it starts; the other
// fields are written once, before done is closed, and only read after done is closed.
type hotLoad struct {
	done  chan struct{}
	cands []token.Detail
	// addrs are the ranking's entries, those without a detail included: the tokens whose
	// details the candidates depend on.
	addrs []string
	err   error
	// seq is the market's current version when the read started: it reflects every change
	// announced up to it, and stays valid while neither the ranking nor any of addrs has a later
	// version.
	seq uint64
	// id identifies this read among all reads of the cache (1, 2, 3, …): two answers with the
	// same id were computed from the same candidates.
	id uint64
	// abandoned is set when the read failed because the context of the request that ran it
	// ended; the requests that waited for it read again with their own contexts.
	abandoned bool
}

// hotCache holds the latest successful read of each ranking, used while no change to the
// ranking or to the details of its tokens has been announced since it started, and the read in
// progress while there is one. A failed read is forgotten as soon as it ends, so the next request
// reads again. Entries exist only for the cacheable keys (v2 chains × durations), one each.
type hotCache struct {
	versions ports.MarketVersions

	mu    sync.Mutex
	loads map[hotKey]*hotLoad
	reads uint64 // the id of the latest read started
	// onWait, when set (by tests), is called each time a request starts waiting for a read
	// that another request runs.
	onWait func()
}

func newHotCache(v ports.MarketVersions) *hotCache {
	return &hotCache{versions: v, loads: map[hotKey]*hotLoad{}}
}

// valid reports whether the finished, successful read l of k may answer a request now.
func (c *hotCache) valid(k hotKey, l *hotLoad) bool {
	return c.versions.RankingVersion(k.chain, k.duration) <= l.seq && c.versions.TokensVersion(k.chain, l.addrs) <= l.seq
}

// errLoadPanicked is what the waiting requests get when the read they waited for panicked.
var errLoadPanicked = errors.New("hot token ranking: the shared read did not finish")

// get returns the candidates of k: the kept read's while it is valid, the one in progress when
// no change to the ranking has been announced since it started (and none to its tokens by the
// time it ends), or a new read by load. cur is the market's current version (nonzero). The
// result is shared and must not be modified. id is the read's (see hotLoad); it is 0 with an
// error.
func (c *hotCache) get(ctx context.Context, k hotKey, cur uint64, load func(context.Context) ([]token.Detail, []string, error)) (cands []token.Detail, id uint64, err error) {
	for {
		c.mu.Lock()
		l, ok := c.loads[k]
		if ok {
			select {
			case <-l.done:
				// A finished read stays in loads only when it succeeded.
				ok = c.valid(k, l)
			default:
				ok = c.versions.RankingVersion(k.chain, k.duration) <= l.seq
			}
		}
		if !ok {
			c.reads++
			l = &hotLoad{done: make(chan struct{}), seq: cur, id: c.reads}
			c.loads[k] = l
			c.mu.Unlock()
			c.run(ctx, k, l, load)
			if l.err != nil {
				return nil, 0, l.err
			}
			return l.cands, l.id, nil
		}
		select {
		case <-l.done:
			c.mu.Unlock()
			return l.cands, l.id, nil
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
			if c.valid(k, l) {
				return l.cands, l.id, nil
			}
			cur = max(cur, c.versions.Current())
			continue // one of its tokens changed while it read
		}
		if l.abandoned && ctx.Err() == nil {
			// The request that read gave up, not the database: read again.
			continue
		}
		return nil, 0, l.err
	}
}

// fresh returns the id of k's read when it has finished and is valid, else 0.
func (c *hotCache) fresh(k hotKey) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	l, ok := c.loads[k]
	if !ok {
		return 0
	}
	select {
	case <-l.done:
		if l.err == nil && c.valid(k, l) {
			return l.id
		}
	default:
	}
	return 0
}

// run executes load for l and publishes its outcome, also when load panics (the panic goes on
// in this request; the waiting ones get an error).
func (c *hotCache) run(ctx context.Context, k hotKey, l *hotLoad, load func(context.Context) ([]token.Detail, []string, error)) {
	finished := false
	defer func() {
		if !finished {
			c.finish(k, l, nil, nil, errLoadPanicked, true)
		}
	}()
	cands, addrs, err := load(ctx)
	finished = true
	c.finish(k, l, cands, addrs, err, err != nil && ctx.Err() != nil)
}

func (c *hotCache) finish(k hotKey, l *hotLoad, cands []token.Detail, addrs []string, err error, abandoned bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	l.cands, l.addrs, l.err, l.abandoned = cands, addrs, err, abandoned
	if err != nil && c.loads[k] == l {
		// Errors are never cached.
		delete(c.loads, k)
	}
	close(l.done)
}
