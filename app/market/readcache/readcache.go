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
	reads    uint64                 // the id of the latest ranking read started
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
