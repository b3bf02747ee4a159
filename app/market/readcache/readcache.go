// Package readcache is the API's one read cache: everything the market read use cases
// (app/market) keep between requests, and the one rule that decides when a kept read may answer.
// It holds, over the market's versions (ports.MarketVersions, bumped by the writers' commit
// announcements):
//
//   - token details, one per token (Details), for multi-token detail, the rankings' candidates and
//     search in normal mode;
//   - each hot-token ranking's candidates (Ranking): its first tokens with their details, read
//     once by concurrent requests;
//   - each multi-token detail address list's details (Multi);
//   - per ranking and address-list entry, the encoded bodies of the answers served from it
//     (Answer.Kept, Answer.Keep): the HTTP adapter fills an entry's slot once per distinct
//     request, with bytes from its own encoder, and later identical requests are sent those bytes.
//
// The freshness rule: an entry remembers the market's version s (Current) observed before its
// read started, and answers while nothing it depends on has a later version (the ranking's
// entries, the details of its tokens). So a request sees every write announced before it began;
// a write committed by this process is announced before its commit returns. An encoded body
// lives in its entry and goes with it: it needs no version of its own. While the versions read 0
// (the process is not following the writers) nothing is kept and every request reads.
//
// Refill: every database read made because nothing valid was kept goes through one function,
// refill (below), with the version s the read must reflect: the market's Current observed before
// the read. Reading the primary, any read started after observing s reflects every write
// announced up to s. A reader that may lag (a Postgres read replica) must wait in refill until it
// has applied every write announced up to s, and nowhere else: the ranking and multi entries read
// their details through Details, which refills, and their own reads refill too.
//
// Why here, a package under app/market rather than a decorator in adapters: what is cached is
// composed by the use cases (a ranking's entries joined with their tokens' details, an address
// list's details in input order), and the answers' bodies are kept per entry, so the cache sits
// between the use cases and the read ports, beside the one package that uses it. It imports
// domain and ports only, as app/ must.
package readcache

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/ranking"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/ports"
)

// Cache is the read cache of one API process. The zero value is not usable; a nil *Cache keeps
// nothing (every method reads).
type Cache struct {
	versions ports.MarketVersions
	details  *detailStore

	mu       sync.Mutex
	rankings map[rankingKey]*rankingLoad
	multis   map[string]*multiEntry // by appendMultiKey
	// onWait, when set (by tests), is called each time a request starts waiting for a ranking
	// read that another request runs.
	onWait func()

	// bodyBytes counts the encoded bodies kept in live entries (maxBodyBytes bounds it).
	bodyBytes atomic.Int64
}

// New keeps reads while v reports versions.
func New(v ports.MarketVersions) *Cache {
	return &Cache{versions: v, details: newDetailStore(), rankings: map[rankingKey]*rankingLoad{}, multis: map[string]*multiEntry{}}
}

// current is the market's version now, or 0 when nothing may be kept (no cache, versions
// unknown).
func (c *Cache) current() uint64 {
	if c == nil {
		return 0
	}
	return c.versions.Current()
}

// refill is every read the cache makes because nothing valid was kept (a miss, or an entry a
// write made stale): read must reflect every write announced up to seq, the market's version
// observed before it (see the package doc). Reading the primary it does by construction.
func refill[T any](ctx context.Context, seq uint64, read func(context.Context) (T, error)) (T, error) {
	_ = seq // the version a lagging reader would wait for
	return read(ctx)
}

// --- answers and their encoded bodies ---

// maxBodyBytes bounds the encoded bodies kept over all entries; past it a body is sent and not
// kept, and a new multi entry starts the address-list entries over.
const maxBodyBytes = 32 << 20

// bodies is an entry's slot for the encodings of the answers served from it, by the caller's key
// (the HTTP adapter uses the request's path and raw query: byte-identical requests parse alike).
// It dies with its entry.
type bodies struct {
	budget *atomic.Int64
	mu     sync.Mutex
	m      map[string][]byte
	bytes  int64
	dead   bool // the entry was dropped: keep nothing more
}

func newBodies(budget *atomic.Int64) *bodies { return &bodies{budget: budget} }

func (b *bodies) get(key []byte) []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.m[string(key)]
}

func (b *bodies) put(key []byte, body []byte) {
	n := int64(len(body))
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dead || b.m[string(key)] != nil {
		return
	}
	if b.budget.Add(n) > maxBodyBytes {
		b.budget.Add(-n)
		return
	}
	if b.m == nil {
		b.m = map[string][]byte{}
	}
	b.m[string(key)] = body
	b.bytes += n
}

// drop ends the slot when its entry is replaced or forgotten.
func (b *bodies) drop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.dead = true
	b.budget.Add(-b.bytes)
	b.m, b.bytes = nil, 0
}

// Answer is a list of token details (a ranking or multi-token detail answer) with, when it was
// served from a kept entry, that entry's slot for its encoding. The list is made on first use
// (List): an answer sent from a kept body never builds it.
type Answer struct {
	list   func() []token.Detail
	bodies *bodies // nil: read uncached, nothing is kept
}

// Uncached is an answer read without the cache.
func Uncached(ds []token.Detail) Answer {
	return Answer{list: func() []token.Detail { return ds }}
}

// List is the answer's details. The slice is the caller's own; the details' maps and slices
// may be shared with other answers and must not be modified.
func (a Answer) List() []token.Detail {
	if a.list == nil {
		return nil
	}
	return a.list()
}

// Kept returns the body kept for key (see bodies) in the entry the answer came from, or nil.
func (a Answer) Kept(key []byte) []byte {
	if a.bodies == nil {
		return nil
	}
	return a.bodies.get(key)
}

// Keep keeps body, the encoding of this answer for key, in its entry when it has one (a copy:
// the caller keeps body). A kept body is never modified.
func (a Answer) Keep(key []byte, body []byte) {
	if a.bodies != nil {
		a.bodies.put(key, append([]byte(nil), body...))
	}
}

// checked remembers the market's version at which an entry was last found valid: while Current
// still reports it, nothing has been announced since, so the entry is valid without checking
// its dependencies again (a ranking's are a thousand tokens).
type checked struct{ at atomic.Uint64 }

// validAt reports whether the entry is valid at cur (nonzero), asking check only when a change
// has been announced since it was last found valid.
func (k *checked) validAt(cur uint64, check func() bool) bool {
	if k.at.Load() == cur {
		return true
	}
	if !check() {
		return false
	}
	k.at.Store(cur)
	return true
}

// rankingKey names one stored ranking.
type rankingKey struct {
	chain    chain.Chain
	duration ranking.Duration
}

// --- rankings ---

// rankingLoad is one read of a ranking's candidates. seq and bodies are set when it starts; the
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
			l = &rankingLoad{done: make(chan struct{}), seq: cur, bodies: newBodies(&c.bodyBytes)}
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

// --- token details and address lists ---

// maxDetails bounds the token details kept (a detail is one to a few kilobytes); past it the
// store starts over.
const maxDetails = 20_000

// maxMultis bounds the address-list entries kept (their details are shared with the detail
// store); past it they start over.
const maxMultis = 4096

// detailStore keeps the token details read, each with the market's version when its read
// started: it is reused while no change to that token has been announced since. Addresses that
// are no token are kept as such too (a ranked token without market data would otherwise be read
// by every request for its ranking).
type detailStore struct {
	mu sync.Mutex
	m  map[ports.TokenRef]keptDetail
}

type keptDetail struct {
	d     token.Detail
	known bool
	seq   uint64
}

func newDetailStore() *detailStore {
	return &detailStore{m: map[ports.TokenRef]keptDetail{}}
}

func (s *detailStore) get(ch chain.Chain, a string) (keptDetail, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.m[ports.TokenRef{Chain: ch, Address: a}]
	return k, ok
}

// keep stores ds, the details of addrs on ch read from version seq (addresses without one are
// no token); an entry read from a later version is kept instead.
func (s *detailStore) keep(seq uint64, ch chain.Chain, addrs []string, ds []token.Detail) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.m)+len(addrs) > maxDetails {
		clear(s.m)
	}
	put := func(a string, k keptDetail) {
		ref := ports.TokenRef{Chain: ch, Address: a}
		if old, ok := s.m[ref]; !ok || old.seq <= seq {
			s.m[ref] = k
		}
	}
	for _, a := range addrs {
		put(a, keptDetail{seq: seq})
	}
	for _, d := range ds {
		put(d.Address, keptDetail{d: d, known: true, seq: seq})
	}
}

// ReadDetails is TokenReader.TokenDetails: every known token of addrs on ch, in any order.
type ReadDetails func(ctx context.Context, ch chain.Chain, addrs []string) ([]token.Detail, error)

// Details returns the known tokens of addrs on ch, in no particular order: the kept detail of
// each token no change to which has been announced since it was read, and the others by one
// call of read (through refill). The details' maps and slices may be shared with other answers
// and must not be modified.
func (c *Cache) Details(ctx context.Context, ch chain.Chain, addrs []string, read ReadDetails) ([]token.Detail, error) {
	cur := c.current()
	if cur == 0 {
		return read(ctx, ch, addrs)
	}
	out := make([]token.Detail, 0, len(addrs))
	var missing []string
	for i, a := range addrs {
		k, ok := c.details.get(ch, a)
		if !ok || c.versions.TokensVersion(ch, addrs[i:i+1]) > k.seq {
			missing = append(missing, a)
		} else if k.known {
			out = append(out, k.d)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	ds, err := refill(ctx, cur, func(ctx context.Context) ([]token.Detail, error) { return read(ctx, ch, missing) })
	if err != nil {
		return nil, err
	}
	c.details.keep(cur, ch, missing, ds)
	return append(out, ds...), nil
}

// multiEntry is the details of one address list, in its order (unknown tokens left out), read
// when the market was at seq.
type multiEntry struct {
	addrs  []string
	ds     []token.Detail
	seq    uint64
	ok     checked
	bodies *bodies
}

// Multi answers a request for the details of addrs on ch, which may repeat an address: apply
// makes the answer from the known tokens' details in the order of addrs, each once (it must not
// modify them). The details come from the kept entry of the same list, as given, while no change
// to any of its tokens has been announced since it was read, otherwise through Details with read
// (which may get repeated addresses).
func (c *Cache) Multi(ctx context.Context, ch chain.Chain, addrs []string, read ReadDetails,
	apply func([]token.Detail) []token.Detail) (Answer, error) {
	cur := c.current()
	if cur == 0 {
		ds, err := read(ctx, ch, addrs)
		if err != nil {
			return Answer{}, err
		}
		return Uncached(apply(inOrder(addrs, ds))), nil
	}
	var buf [keyBuffer]byte
	key := appendMultiKey(buf[:0], ch, addrs)
	c.mu.Lock()
	e, ok := c.multis[string(key)]
	c.mu.Unlock()
	if !ok || !e.ok.validAt(cur, func() bool { return c.versions.TokensVersion(ch, e.addrs) <= e.seq }) {
		ds, err := c.Details(ctx, ch, addrs, read)
		if err != nil {
			return Answer{}, err
		}
		e = &multiEntry{addrs: addrs, ds: inOrder(addrs, ds), seq: cur, bodies: newBodies(&c.bodyBytes)}
		e.ok.at.Store(cur) // nothing it depends on can be later than the version it was read at
		c.keepMulti(string(key), e)
	}
	return Answer{list: func() []token.Detail { return apply(e.ds) }, bodies: e.bodies}, nil
}

// keyBuffer fits the key of a list of a hundred addresses without allocating.
const keyBuffer = 8 << 10

// appendMultiKey appends the key of the list addrs on ch: the chain and the addresses, as
// given, separated by spaces.
func appendMultiKey(b []byte, ch chain.Chain, addrs []string) []byte {
	b = append(b, ch...)
	for _, a := range addrs {
		b = append(append(b, ' '), a...)
	}
	return b
}

// keepMulti keeps e for k, replacing an entry read from an older version; past maxMultis
// entries, or with the bodies near their bound, the address-list entries start over.
func (c *Cache) keepMulti(k string, e *multiEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.multis[k]; ok {
		if old.seq > e.seq {
			e.bodies.drop() // a request that read earlier finished later: e is not kept
			return
		}
		old.bodies.drop()
	}
	if len(c.multis) >= maxMultis || c.bodyBytes.Load() > maxBodyBytes*3/4 {
		for _, old := range c.multis {
			old.bodies.drop()
		}
		clear(c.multis)
	}
	c.multis[k] = e
}

// inOrder returns ds, the known tokens of addrs, in the order of addrs, each once (at the first
// position of a repeated address).
func inOrder(addrs []string, ds []token.Detail) []token.Detail {
	byAddr := make(map[string]int, len(ds))
	for i, d := range ds {
		byAddr[d.Address] = i
	}
	out := make([]token.Detail, 0, len(ds))
	for _, a := range addrs {
		if i, ok := byAddr[a]; ok {
			out = append(out, ds[i])
			delete(byAddr, a)
		}
	}
	return out
}
