package readcache

import (
	"context"
	"errors"
	"slices"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/ranking"
	"github.com/tokenscope/tokenscope/domain/token"
)

// rankingLoad is one read of a ranking's candidates. seq and id are set when it starts; the
// other fields are written once, before done is closed, and only read after done is closed.
type rankingLoad struct {
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
	// id identifies this read among all reads of the cache (1, 2, 3, …).
	id uint64
	// abandoned is set when the read failed because the context of the request that ran it
	// ended; the requests that waited for it read again with their own contexts.
	abandoned bool
	ok        checked
	bodies    *bodies
}

// errLoadPanicked is what the waiting requests get when the read they waited for panicked.
var errLoadPanicked = errors.New("hot token ranking: the shared read did not finish")

// Candidates reads a ranking's candidates: the details of its first tokens in rank order, and
// addrs, every ranked token (those without a detail included).
type Candidates func(ctx context.Context) (cands []token.Detail, addrs []string, err error)

// Ranking answers a request for the ranking of (ch, d): apply makes the answer from the
// ranking's candidates (it must not modify them). The candidates come from the kept read of the
// ranking while no change to the ranking or to the details of its tokens has been announced
// since it started, from the read in progress when no change to the ranking has been announced
// since it started (and none to its tokens by the time it ends), or from a new read by load;
// concurrent requests share one read. A failed read is forgotten as soon as it ends. Only the
// rankings that exist (every duration of every v2 chain) are kept; others are read each time.
func (c *Cache) Ranking(ctx context.Context, ch chain.Chain, d ranking.Duration, load Candidates,
	apply func([]token.Detail) []token.Detail) (Answer, error) {
	cur := c.current()
	if cur == 0 || !slices.Contains(chain.V2, ch) || !slices.Contains(ranking.AllDurations, d) {
		cands, _, err := load(ctx)
		if err != nil {
			return Answer{}, err
		}
		return Uncached(apply(cands)), nil
	}
	l, err := c.ranking(ctx, rankingKey{ch, d}, cur, load)
	if err != nil {
		return Answer{}, err
	}
	return Answer{list: func() []token.Detail { return apply(l.cands) }, bodies: l.bodies}, nil
}

// valid reports whether the finished, successful read l of k may answer a request at cur.
func (c *Cache) valid(k rankingKey, l *rankingLoad, cur uint64) bool {
	return l.ok.validAt(cur, func() bool {
		return c.versions.RankingVersion(k.chain, k.duration) <= l.seq && c.versions.TokensVersion(k.chain, l.addrs) <= l.seq
	})
}

func (c *Cache) ranking(ctx context.Context, k rankingKey, cur uint64, load Candidates) (*rankingLoad, error) {
	for {
		c.mu.Lock()
		l, ok := c.rankings[k]
		if ok {
			select {
			case <-l.done:
				// A finished read stays in rankings only when it succeeded.
				ok = c.valid(k, l, cur)
			default:
				ok = c.versions.RankingVersion(k.chain, k.duration) <= l.seq
			}
		}
		if !ok {
			if l != nil {
				l.bodies.drop()
			}
			c.reads++
			l = &rankingLoad{done: make(chan struct{}), seq: cur, id: c.reads, bodies: newBodies(&c.bodyBytes)}
			l.ok.at.Store(cur) // nothing it depends on can be later than the version it read at
			c.rankings[k] = l
			c.mu.Unlock()
			c.run(ctx, k, l, load)
			if l.err != nil {
				return nil, l.err
			}
			return l, nil
		}
		select {
		case <-l.done:
			c.mu.Unlock()
			return l, nil
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
			return nil, ctx.Err()
		}
		if l.err == nil {
			cur = max(cur, c.versions.Current())
			if c.valid(k, l, cur) {
				return l, nil
			}
			continue // one of its tokens changed while it read
		}
		if l.abandoned && ctx.Err() == nil {
			// The request that read gave up, not the database: read again.
			continue
		}
		return nil, l.err
	}
}

// run executes load for l through refill and publishes its outcome, also when load panics (the
// panic goes on in this request; the waiting ones get an error).
func (c *Cache) run(ctx context.Context, k rankingKey, l *rankingLoad, load Candidates) {
	finished := false
	defer func() {
		if !finished {
			c.finish(k, l, nil, nil, errLoadPanicked, true)
		}
	}()
	type read struct {
		cands []token.Detail
		addrs []string
	}
	r, err := refill(ctx, l.seq, func(ctx context.Context) (read, error) {
		cands, addrs, err := load(ctx)
		return read{cands, addrs}, err
	})
	finished = true
	c.finish(k, l, r.cands, r.addrs, err, err != nil && ctx.Err() != nil)
}

func (c *Cache) finish(k rankingKey, l *rankingLoad, cands []token.Detail, addrs []string, err error, abandoned bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	l.cands, l.addrs, l.err, l.abandoned = cands, addrs, err, abandoned
	if err != nil && c.rankings[k] == l {
		// Errors are never cached.
		delete(c.rankings, k)
	}
	close(l.done)
}
