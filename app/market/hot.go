package market

import (
	"context"
	"slices"
	"strings"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/ranking"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/ports"
)

// HotScanDepth is how many ranked tokens the ranking's filters look through; the public API
// caps the list it returns, so filters apply to the head of the ranking.
const HotScanDepth = 1000

// HotLimit is the most tokens the ranking returns.
const HotLimit = 100

// HotRequest is a validated hot-token ranking request.
type HotRequest struct {
	Chain    chain.Chain
	Duration ranking.Duration
	// SortBy is empty for the ranking's own order (hotness score).
	SortBy     token.Field
	Desc       bool
	Tag        token.Tag
	Ranges     []token.Filter
	Socials    []token.SocialFilter
	Launchpads []token.Tag
	Keywords   ranking.Keywords
}

// WithCache makes the service reuse what it read while the market's versions say it is
// unchanged: the token details it read (operation 2, and the ranking's candidates), and each
// hot-token ranking's candidates (its first HotScanDepth tokens with their details), filtered
// and sorted in memory per request. A read is reused while v reports no change, since it
// started, to anything it depends on (the tokens it holds, the stored ranking), so an answer
// reflects every change v reported before the request began; concurrent requests for a ranking
// that is not kept share one read. While v reports 0 (it does not follow the writers) every
// request reads.
func WithCache(v ports.MarketVersions) Option {
	return func(s *Service) {
		s.versions = v
		s.hot = newHotCache(v)
		s.details = newDetailCache()
	}
}

// HotTokens returns the precomputed ranking of (chain, duration) after the request's filters,
// in rank order unless a sort field is given, at most HotLimit tokens. The slice is the
// caller's own; the details' maps and slices (stats, pools, groups, socials) may be shared with
// other requests' answers and must not be modified.
func (s *Service) HotTokens(ctx context.Context, r HotRequest) ([]token.Detail, error) {
	ds, _, err := s.HotTokensVersion(ctx, r)
	return ds, err
}

// HotTokensVersion is HotTokens that also says which cached read of the ranking the answer was
// computed from: the same request answered with the same nonzero version has the same answer,
// so a caller may keep what it made of an answer (its encoding, say) under (request, version)
// and reuse it while HotVersion still reports that version. Version 0 means the answer was read
// uncached and must not be reused.
func (s *Service) HotTokensVersion(ctx context.Context, r HotRequest) ([]token.Detail, uint64, error) {
	var cands []token.Detail
	var version uint64
	var err error
	if cur := s.hotCurrent(r.Chain, r.Duration); cur != 0 {
		cands, version, err = s.hot.get(ctx, hotKey{r.Chain, r.Duration}, cur, func(ctx context.Context) ([]token.Detail, []string, error) {
			return s.hotCandidates(ctx, r.Chain, r.Duration)
		})
	} else {
		cands, _, err = s.hotCandidates(ctx, r.Chain, r.Duration)
	}
	if err != nil {
		return nil, 0, err
	}
	return r.apply(cands), version, nil
}

// HotVersion is the version HotTokensVersion would answer (chain, duration) from right now
// without reading, or 0 when no read under the current versions is kept (or the cache is off).
func (s *Service) HotVersion(c chain.Chain, d ranking.Duration) uint64 {
	if s.hotCurrent(c, d) == 0 {
		return 0
	}
	return s.hot.fresh(hotKey{c, d})
}

// hotCurrent is the market's current version for a request for (c, d), or 0 when the ranking is
// not cached (no cache, a key outside the cache, or versions unknown).
func (s *Service) hotCurrent(c chain.Chain, d ranking.Duration) uint64 {
	if s.hot == nil || !cacheable(c, d) {
		return 0
	}
	return s.versions.Current()
}

// cacheable bounds the cache to the rankings that exist: every duration of every v2 chain.
// Other keys (which the HTTP adapter rejects) are read uncached rather than kept.
func cacheable(c chain.Chain, d ranking.Duration) bool {
	return slices.Contains(chain.V2, c) && slices.Contains(ranking.AllDurations, d)
}

// hotCandidates reads the first HotScanDepth tokens of the ranking with their details, in rank
// order; ranked tokens without a detail are left out. addrs are all the ranked tokens. The
// result is shared by every request served from the cache and is never modified after it is
// returned.
func (s *Service) hotCandidates(ctx context.Context, c chain.Chain, d ranking.Duration) (cands []token.Detail, addrs []string, err error) {
	entries, err := s.tokens.HotTokens(ctx, c, d, HotScanDepth)
	if err != nil {
		return nil, nil, err
	}
	addrs = make([]string, len(entries))
	for i, e := range entries {
		addrs[i] = e.Address
	}
	ds, err := s.tokenDetails(ctx, c, addrs)
	if err != nil {
		return nil, nil, err
	}
	byAddr := make(map[string]int, len(ds))
	for i, d := range ds {
		byAddr[d.Address] = i
	}
	out := make([]token.Detail, 0, len(ds))
	for _, e := range entries {
		if i, ok := byAddr[e.Address]; ok {
			out = append(out, ds[i])
		}
	}
	return out, addrs, nil
}

// apply filters the ranked candidates into a new slice, in rank order or sorted when asked, at
// most HotLimit long; cands itself is only read. A sort orders the matches' positions and copies
// out only the first HotLimit details (a detail is about a kilobyte, and copying all of up to
// HotScanDepth matches twice, as sorting the details themselves would, was most of a sorted
// request's time). The order is token.SortDetails': the field's value, then the address.
func (r HotRequest) apply(cands []token.Detail) []token.Detail {
	if r.SortBy == "" {
		out := make([]token.Detail, 0, min(len(cands), HotLimit))
		for i := range cands {
			if r.matches(&cands[i]) {
				out = append(out, cands[i])
				if len(out) == HotLimit {
					break
				}
			}
		}
		return out
	}
	type match struct {
		key token.SortKey
		i   int
	}
	var ms []match
	for i := range cands {
		if r.matches(&cands[i]) {
			ms = append(ms, match{key: token.KeyOf(cands[i], r.SortBy), i: i})
		}
	}
	slices.SortStableFunc(ms, func(a, b match) int {
		if c := a.key.Compare(b.key, r.Desc); c != 0 {
			return c
		}
		return strings.Compare(cands[a.i].Address, cands[b.i].Address)
	})
	out := make([]token.Detail, min(len(ms), HotLimit))
	for k := range out {
		out[k] = cands[ms[k].i]
	}
	return out
}

func (r HotRequest) matches(d *token.Detail) bool {
	if r.Tag != "" && d.LaunchpadTag != r.Tag {
		return false
	}
	if len(r.Launchpads) > 0 && !slices.Contains(r.Launchpads, d.LaunchpadTag) {
		return false
	}
	for _, f := range r.Socials {
		if !f.Matches(d.Token) {
			return false
		}
	}
	return token.MatchesAll(r.Ranges, *d) && r.Keywords.Matches(d.Token)
}
