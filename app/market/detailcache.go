package market

import (
	"context"
	"sync"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/ports"
)

// detailCacheMax bounds the token details kept (a detail is one to a few kilobytes); past it
// the cache starts over.
const detailCacheMax = 20_000

// detailCache keeps the token details read under one details version (ports.MarketVersions):
// a detail read after observing version v is reused by every request that observes v. A newer
// version empties it. Addresses that are no token are kept as such too (a ranked token without
// market data would otherwise be read by every request for its ranking).
type detailCache struct {
	mu      sync.Mutex
	version uint64
	m       map[ports.TokenRef]keptDetail
}

type keptDetail struct {
	d     token.Detail
	known bool
}

func newDetailCache() *detailCache {
	return &detailCache{m: map[ports.TokenRef]keptDetail{}}
}

// lookup appends to out the kept details of addrs on c read under version v and returns the
// addresses it has none for.
func (c *detailCache) lookup(v uint64, ch chain.Chain, addrs []string, out []token.Detail) ([]token.Detail, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v != c.version {
		return out, addrs
	}
	var missing []string
	for _, a := range addrs {
		if k, ok := c.m[ports.TokenRef{Chain: ch, Address: a}]; !ok {
			missing = append(missing, a)
		} else if k.known {
			out = append(out, k.d)
		}
	}
	return out, missing
}

// keep stores ds, the details of addrs on ch read under version v (addresses without one are no
// token); a read under an older version than the kept ones is dropped.
func (c *detailCache) keep(v uint64, ch chain.Chain, addrs []string, ds []token.Detail) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case v < c.version:
		return
	case v > c.version:
		c.version = v
		clear(c.m)
	}
	if len(c.m)+len(addrs) > detailCacheMax {
		clear(c.m)
	}
	for _, a := range addrs {
		c.m[ports.TokenRef{Chain: ch, Address: a}] = keptDetail{}
	}
	for _, d := range ds {
		c.m[ports.TokenRef{Chain: ch, Address: d.Address}] = keptDetail{d: d, known: true}
	}
}

// tokenDetails is TokenReader.TokenDetails through the detail cache when the service has one
// and the versions are known. The details' maps and slices may be shared with other answers and
// must not be modified.
func (s *Service) tokenDetails(ctx context.Context, c chain.Chain, addrs []string) ([]token.Detail, error) {
	var v uint64
	if s.details != nil {
		v = s.versions.DetailsVersion()
	}
	if v == 0 {
		return s.tokens.TokenDetails(ctx, c, addrs)
	}
	out, missing := s.details.lookup(v, c, addrs, make([]token.Detail, 0, len(addrs)))
	if len(missing) == 0 {
		return out, nil
	}
	ds, err := s.tokens.TokenDetails(ctx, c, missing)
	if err != nil {
		return nil, err
	}
	s.details.keep(v, c, missing, ds)
	return append(out, ds...), nil
}

// DetailsVersion is the details version a request would read token details under right now
// (ports.MarketVersions), or 0 when nothing read is reused (no cache, or versions unknown): a
// caller may keep what it made of an answer read after observing a nonzero version while this
// still reports it.
func (s *Service) DetailsVersion() uint64 {
	if s.details == nil {
		return 0
	}
	return s.versions.DetailsVersion()
}
