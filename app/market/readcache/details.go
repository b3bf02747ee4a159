package readcache

import (
	"context"
	"sync"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/ports"
)

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
