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

// detailCache keeps the token details read, each with the market's version when its read
// started (ports.MarketVersions): it is reused while no change to that token has been announced
// since. Addresses that are no token are kept as such too (a ranked token without market data
// would otherwise be read by every request for its ranking).
type detailCache struct {
	mu sync.Mutex
	m  map[ports.TokenRef]keptDetail
}

type keptDetail struct {
	d     token.Detail
	known bool
	seq   uint64
}

func newDetailCache() *detailCache {
	return &detailCache{m: map[ports.TokenRef]keptDetail{}}
}

// get returns what is kept of a on c, valid or not.
func (c *detailCache) get(ch chain.Chain, a string) (keptDetail, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k, ok := c.m[ports.TokenRef{Chain: ch, Address: a}]
	return k, ok
}

// keep stores ds, the details of addrs on ch read from version seq (addresses without one are
// no token); an entry read from a later version is kept instead.
func (c *detailCache) keep(seq uint64, ch chain.Chain, addrs []string, ds []token.Detail) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m)+len(addrs) > detailCacheMax {
		clear(c.m)
	}
	put := func(a string, k keptDetail) {
		ref := ports.TokenRef{Chain: ch, Address: a}
		if old, ok := c.m[ref]; !ok || old.seq <= seq {
			c.m[ref] = k
		}
	}
	for _, a := range addrs {
		put(a, keptDetail{seq: seq})
	}
	for _, d := range ds {
		put(d.Address, keptDetail{d: d, known: true, seq: seq})
	}
}

// tokenDetails is TokenReader.TokenDetails through the detail cache when the service has one
// and the versions are known: only the addresses without a valid kept detail are read. The
// details' maps and slices may be shared with other answers and must not be modified.
func (s *Service) tokenDetails(ctx context.Context, c chain.Chain, addrs []string) ([]token.Detail, error) {
	var cur uint64
	if s.details != nil {
		cur = s.versions.Current()
	}
	if cur == 0 {
		return s.tokens.TokenDetails(ctx, c, addrs)
	}
	out := make([]token.Detail, 0, len(addrs))
	var missing []string
	for i, a := range addrs {
		k, ok := s.details.get(c, a)
		if !ok || s.versions.TokensVersion(c, addrs[i:i+1]) > k.seq {
			missing = append(missing, a)
		} else if k.known {
			out = append(out, k.d)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	ds, err := s.tokens.TokenDetails(ctx, c, missing)
	if err != nil {
		return nil, err
	}
	s.details.keep(cur, c, missing, ds)
	return append(out, ds...), nil
}

// TokensVersion is the version of the details of addrs on c right now (ports.MarketVersions),
// or 0 when nothing read is reused (no cache, or versions unknown): a caller may keep what it
// made of an answer about addrs read after observing a nonzero version while this still
// reports it.
func (s *Service) TokensVersion(c chain.Chain, addrs []string) uint64 {
	if s.details == nil {
		return 0
	}
	return s.versions.TokensVersion(c, addrs)
}

// Version is the market's latest version (ports.MarketVersions.Current), or 0 when nothing
// read is reused: while it stays the same, no TokensVersion changes, so a caller that found
// TokensVersion(c, addrs) at v after observing Version at s may take it as still v while
// Version reports s.
func (s *Service) Version() uint64 {
	if s.details == nil {
		return 0
	}
	return s.versions.Current()
}
