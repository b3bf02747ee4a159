package market

import (
	"context"
	"slices"
	"strings"

	"github.com/tokenscope/tokenscope/app/market/readcache"
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

// WithCache makes the service keep what it read (readcache) while the market's versions v say
// it is unchanged: the token details it read (operation 2, the ranking's candidates, search in
// normal mode), each multi-detail address list's details, and each hot-token ranking's candidates
// (its first HotScanDepth tokens with their details), filtered and sorted in memory per request,
// with the encoded bodies of the answers served from them. An answer reflects every change v
// reported before the request began; while v reports 0 (it does not follow the writers) every
// request reads.
func WithCache(v ports.MarketVersions) Option {
	return func(s *Service) { s.cache = readcache.New(v) }
}

// HotTokens returns the precomputed ranking of (chain, duration) after the request's filters,
// in rank order unless a sort field is given, at most HotLimit tokens.
func (s *Service) HotTokens(ctx context.Context, r HotRequest) (Tokens, error) {
	return s.cache.Ranking(ctx, r.Chain, r.Duration, func(ctx context.Context) ([]token.Detail, []string, error) {
		return s.hotCandidates(ctx, r.Chain, r.Duration)
	}, r.apply)
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
	ds, err := s.cache.Details(ctx, c, addrs, s.tokens.TokenDetails)
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
