package market_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/mock/gomock"

	"github.com/tokenscope/tokenscope/app/market"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/ranking"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/internal/fakeversions"
	"github.com/tokenscope/tokenscope/ports"
	"github.com/tokenscope/tokenscope/ports/portsmock"
)

func newReaders(t *testing.T) readers {
	ctrl := gomock.NewController(t)
	return readers{portsmock.NewMockTokenReader(ctrl), portsmock.NewMockTradeReader(ctrl), portsmock.NewMockPoolReader(ctrl),
		portsmock.NewMockRedPacketReader(ctrl), portsmock.NewMockPositionReader(ctrl)}
}

func newHotService(t *testing.T) (*market.Service, readers, *fakeversions.Versions) {
	r := newReaders(t)
	v := fakeversions.Following()
	return market.New(r, market.WithCache(v)), r, v
}

// hotFixture is a ranking of five tokens, best first: pop, bonk, wif, dog, ghost. ghost has no
// detail (the reader leaves unknown tokens out), so it never appears in an answer.
type hotFixture struct {
	entries []ports.HotEntry
	addrs   []string
	details []token.Detail // in the reader's own (address) order
}

func newHotFixture(t *testing.T) hotFixture {
	t.Helper()
	det := func(addr, name, price, holders string, tag token.Tag, twitter bool) token.Detail {
		links := map[string]string{}
		if twitter {
			links[token.SocialTwitter] = "https://x.com/" + addr
		}
		s, err := token.NewSocials(links)
		require.NoError(t, err)
		return token.Detail{
			Token:      token.Token{Chain: chain.Sol, Address: addr, Name: name, Symbol: name, LaunchpadTag: tag, Socials: s},
			MarketData: token.MarketData{PriceInUSD: dec(price), Holders: dec(holders)},
			Stats:      map[token.Window]token.PeriodStats{token.Window24h: {Trades: int64(len(addr))}},
		}
	}
	f := hotFixture{addrs: []string{"pop", "bonk", "wif", "dog", "ghost"}}
	for i, a := range f.addrs {
		f.entries = append(f.entries, ports.HotEntry{Address: a, Rank: int32(i + 1), Score: decimal.NewFromInt(int64(10 - i))})
	}
	f.details = []token.Detail{
		det("bonk", "Bonk", "2", "30", token.PumpFun, true),
		det("dog", "Dogwifcat", "0.5", "40", token.RaydiumLaunchpad, false),
		det("pop", "Popcat", "0.1", "10", "", false),
		det("wif", "Dogwifhat", "3", "20", token.RaydiumLaunchpad, true),
	}
	return f
}

// expect makes the reader answer the fixture's ranking of (c, d), and the details of its
// tokens on c, exactly times times.
func (f hotFixture) expect(r readers, c chain.Chain, d ranking.Duration, times int) {
	f.expectRanking(r, c, d, times)
	r.MockTokenReader.EXPECT().TokenDetails(gomock.Any(), c, f.addrs).Return(f.details, nil).Times(times)
}

// expectRanking makes the reader answer the fixture's ranking of (c, d) exactly times times.
func (f hotFixture) expectRanking(r readers, c chain.Chain, d ranking.Duration, times int) {
	r.MockTokenReader.EXPECT().HotTokens(gomock.Any(), c, d, market.HotScanDepth).Return(f.entries, nil).Times(times)
}

// hotList is HotTokens' answer as its list of details.
func hotList(s *market.Service, ctx context.Context, r market.HotRequest) ([]token.Detail, error) {
	a, err := s.HotTokens(ctx, r)
	return a.List(), err
}

func hotAddrs(ds []token.Detail) []string {
	out := []string{}
	for _, d := range ds {
		out = append(out, d.Address)
	}
	return out
}

// hotCases are requests with different filters and sorts over the fixture, with their answers.
func hotCases() []struct {
	name string
	req  market.HotRequest
	want []string
} {
	one, three := dec("1"), dec("3")
	base := market.HotRequest{Chain: chain.Sol, Duration: ranking.Duration1h}
	with := func(f func(*market.HotRequest)) market.HotRequest {
		r := base
		f(&r)
		return r
	}
	return []struct {
		name string
		req  market.HotRequest
		want []string
	}{
		{"rank order", base, []string{"pop", "bonk", "wif", "dog"}},
		{"tag", with(func(r *market.HotRequest) { r.Tag = token.RaydiumLaunchpad }), []string{"wif", "dog"}},
		{"launchpads", with(func(r *market.HotRequest) { r.Launchpads = []token.Tag{token.PumpFun, token.RaydiumLaunchpad} }),
			[]string{"bonk", "wif", "dog"}},
		{"twitter", with(func(r *market.HotRequest) { r.Socials = []token.SocialFilter{"has_twitter"} }), []string{"bonk", "wif"}},
		{"price range", with(func(r *market.HotRequest) {
			r.Ranges = []token.Filter{{Field: token.FieldPriceInUSD, Min: &one, Max: &three}}
		}), []string{"bonk", "wif"}},
		{"keywords", with(func(r *market.HotRequest) { r.Keywords = ranking.NewKeywords([]string{"dog"}, []string{"hat"}) }),
			[]string{"dog"}},
		{"price desc", with(func(r *market.HotRequest) { r.SortBy, r.Desc = token.FieldPriceInUSD, true }),
			[]string{"wif", "bonk", "dog", "pop"}},
		{"holders asc", with(func(r *market.HotRequest) { r.SortBy = token.FieldHolders }), []string{"pop", "wif", "bonk", "dog"}},
		{"beta by holders desc", with(func(r *market.HotRequest) {
			r.Launchpads, r.SortBy, r.Desc = []token.Tag{token.RaydiumLaunchpad}, token.FieldHolders, true
		}), []string{"dog", "wif"}},
		{"nothing matches", with(func(r *market.HotRequest) { r.Tag = token.BonkFun }), []string{}},
	}
}

func TestHotTokensFiltersManyRequestsFromOneRead(t *testing.T) {
	s, r, _ := newHotService(t)
	f := newHotFixture(t)
	f.expect(r, chain.Sol, ranking.Duration1h, 1)
	ctx := context.Background()
	for round := range 3 {
		for _, tc := range hotCases() {
			got, err := hotList(s, ctx, tc.req)
			require.NoError(t, err, tc.name)
			assert.Equal(t, tc.want, hotAddrs(got), "round %d: %s", round, tc.name)
		}
	}
	got, err := hotList(s, ctx, market.HotRequest{Chain: chain.Sol, Duration: ranking.Duration1h})
	require.NoError(t, err)
	require.Len(t, got, 4)
	assert.True(t, dec("3").Equal(got[2].MarketData.PriceInUSD), "the details are the reader's")
	assert.Equal(t, int64(3), got[2].Period(token.Window24h).Trades)

	// Another duration and another chain are other rankings, each read once; the tokens' details
	// on sol are those already read.
	f.expectRanking(r, chain.Sol, ranking.Duration24h, 1)
	f.expect(r, chain.Eth, ranking.Duration1h, 1)
	for range 2 {
		_, err := hotList(s, ctx, market.HotRequest{Chain: chain.Sol, Duration: ranking.Duration24h})
		require.NoError(t, err)
		_, err = hotList(s, ctx, market.HotRequest{Chain: chain.Eth, Duration: ranking.Duration1h, Tag: token.PumpFun})
		require.NoError(t, err)
	}
}

func TestHotTokensReadsAgainWhenAWriteIsAnnounced(t *testing.T) {
	s, r, versions := newHotService(t)
	ctx := context.Background()
	req := market.HotRequest{Chain: chain.Bsc, Duration: ranking.Duration5m}
	entry := func(a string, rank int32) ports.HotEntry {
		return ports.HotEntry{Address: a, Rank: rank, Score: dec("1")}
	}
	det := func(a string) token.Detail { return token.Detail{Token: token.Token{Chain: chain.Bsc, Address: a}} }
	gomock.InOrder(
		r.MockTokenReader.EXPECT().HotTokens(gomock.Any(), chain.Bsc, ranking.Duration5m, market.HotScanDepth).
			Return([]ports.HotEntry{entry("a", 1), entry("b", 2)}, nil),
		r.MockTokenReader.EXPECT().TokenDetails(gomock.Any(), chain.Bsc, []string{"a", "b"}).
			Return([]token.Detail{det("a"), det("b")}, nil),
		// The next refresh round swapped them; their details are those already read.
		r.MockTokenReader.EXPECT().HotTokens(gomock.Any(), chain.Bsc, ranking.Duration5m, market.HotScanDepth).
			Return([]ports.HotEntry{entry("b", 1), entry("a", 2)}, nil),
		// Then an ingest batch changed the details: both are read again.
		r.MockTokenReader.EXPECT().HotTokens(gomock.Any(), chain.Bsc, ranking.Duration5m, market.HotScanDepth).
			Return([]ports.HotEntry{entry("b", 1), entry("a", 2)}, nil),
		r.MockTokenReader.EXPECT().TokenDetails(gomock.Any(), chain.Bsc, []string{"b", "a"}).
			Return([]token.Detail{det("a"), {Token: token.Token{Chain: chain.Bsc, Address: "b", Name: "B"}}}, nil),
	)
	got, err := hotList(s, ctx, req)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, hotAddrs(got))

	got, err = hotList(s, ctx, req)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, hotAddrs(got), "cached while nothing is announced")

	versions.WriteRankings()
	got, err = hotList(s, ctx, req)
	require.NoError(t, err)
	assert.Equal(t, []string{"b", "a"}, hotAddrs(got), "read again once a ranking write is announced")
	got, err = hotList(s, ctx, req)
	require.NoError(t, err)
	assert.Equal(t, []string{"b", "a"}, hotAddrs(got), "the new read is cached in turn")

	versions.WriteDetails()
	got, err = hotList(s, ctx, req)
	require.NoError(t, err)
	assert.Equal(t, "B", got[0].Name, "read again once a detail write is announced")
	got, err = hotList(s, ctx, req)
	require.NoError(t, err)
	assert.Equal(t, "B", got[0].Name)
}

func TestHotTokensErrorsAreNotCached(t *testing.T) {
	s, r, _ := newHotService(t)
	f := newHotFixture(t)
	ctx := context.Background()
	req := market.HotRequest{Chain: chain.Sol, Duration: ranking.Duration4h}
	down := fault.Unavailable("database did not answer in time", 0, errors.New("timeout"))
	gomock.InOrder(
		r.MockTokenReader.EXPECT().HotTokens(gomock.Any(), chain.Sol, ranking.Duration4h, market.HotScanDepth).Return(nil, down),
		r.MockTokenReader.EXPECT().HotTokens(gomock.Any(), chain.Sol, ranking.Duration4h, market.HotScanDepth).Return(f.entries, nil),
		r.MockTokenReader.EXPECT().TokenDetails(gomock.Any(), chain.Sol, f.addrs).Return(nil, errors.New("connection reset")),
		r.MockTokenReader.EXPECT().HotTokens(gomock.Any(), chain.Sol, ranking.Duration4h, market.HotScanDepth).Return(f.entries, nil),
		r.MockTokenReader.EXPECT().TokenDetails(gomock.Any(), chain.Sol, f.addrs).Return(f.details, nil),
	)
	_, err := hotList(s, ctx, req)
	assert.True(t, fault.Is(err, fault.KindUnavailable), "the reader's error is returned as it is: %v", err)
	_, err = hotList(s, ctx, req)
	assert.EqualError(t, err, "connection reset", "the failed ranking read was not kept")
	for range 3 {
		got, err := hotList(s, ctx, req)
		require.NoError(t, err, "the failed detail read was not kept")
		assert.Equal(t, []string{"pop", "bonk", "wif", "dog"}, hotAddrs(got))
	}
}

func TestHotTokensSortingNeverReordersAnotherAnswer(t *testing.T) {
	s, r, _ := newHotService(t)
	f := newHotFixture(t)
	f.expect(r, chain.Sol, ranking.Duration1h, 1)
	ctx := context.Background()
	plain := market.HotRequest{Chain: chain.Sol, Duration: ranking.Duration1h}
	sorted := plain
	sorted.SortBy, sorted.Desc = token.FieldPriceInUSD, true
	rank := []string{"pop", "bonk", "wif", "dog"}

	first, err := hotList(s, ctx, plain)
	require.NoError(t, err)
	bySort, err := hotList(s, ctx, sorted)
	require.NoError(t, err)
	assert.Equal(t, []string{"wif", "bonk", "dog", "pop"}, hotAddrs(bySort))
	assert.Equal(t, rank, hotAddrs(first), "an answer given earlier is not reordered by a later sort")

	again, err := hotList(s, ctx, plain)
	require.NoError(t, err)
	assert.Equal(t, rank, hotAddrs(again), "the cached ranking is not reordered by a sort")

	// Callers own their slices: reordering or overwriting one changes no other answer.
	slices.Reverse(bySort)
	first[0] = token.Detail{Token: token.Token{Address: "scribbled"}}
	after, err := hotList(s, ctx, plain)
	require.NoError(t, err)
	assert.Equal(t, rank, hotAddrs(after))
	resorted, err := hotList(s, ctx, sorted)
	require.NoError(t, err)
	assert.Equal(t, []string{"wif", "bonk", "dog", "pop"}, hotAddrs(resorted))
}

// TestHotTokensSortMatchesTheDomainOrder checks the cache's sort of match positions against
// token.SortDetails over the same matches, ties included, for every ranking field.
func TestHotTokensSortMatchesTheDomainOrder(t *testing.T) {
	s, r, _ := newHotService(t)
	const n = 300
	entries := make([]ports.HotEntry, n)
	addrs := make([]string, n)
	details := make([]token.Detail, n)
	for i := range n {
		addrs[i] = benchAddr((i * 7919) % n) // rank order unrelated to address order
		entries[i] = ports.HotEntry{Address: addrs[i], Rank: int32(i + 1), Score: dec("1")}
		details[i] = benchDetail(chain.Sol, (i*7919)%n)
		// Few distinct prices, so many ties are broken by address.
		details[i].MarketData.PriceInUSD = dec([]string{"1", "1.0", "2", "0.5"}[i%4])
	}
	r.MockTokenReader.EXPECT().HotTokens(gomock.Any(), chain.Sol, ranking.Duration1h, market.HotScanDepth).Return(entries, nil)
	r.MockTokenReader.EXPECT().TokenDetails(gomock.Any(), chain.Sol, addrs).Return(details, nil)
	for _, field := range token.RankingFields {
		for _, desc := range []bool{false, true} {
			got, err := hotList(s, context.Background(), market.HotRequest{Chain: chain.Sol, Duration: ranking.Duration1h,
				SortBy: field, Desc: desc, Socials: []token.SocialFilter{"has_twitter"}})
			require.NoError(t, err)
			var want []token.Detail
			for _, d := range details {
				if (token.SocialFilter("has_twitter")).Matches(d.Token) {
					want = append(want, d)
				}
			}
			token.SortDetails(want, field, desc)
			require.Len(t, got, market.HotLimit, "100 of the 100 twitter tokens")
			assert.Equal(t, hotAddrs(want[:market.HotLimit]), hotAddrs(got), "%s desc=%v", field, desc)
		}
	}
}

func TestHotTokensWithoutCacheReadEveryTime(t *testing.T) {
	f := newHotFixture(t)
	r := newReaders(t)
	f.expect(r, chain.Sol, ranking.Duration1h, 4)
	// Versions 0: the process does not follow the writers (yet).
	for _, s := range []*market.Service{market.New(r), market.New(r, market.WithCache(&fakeversions.Versions{}))} {
		for range 2 {
			got, err := hotList(s, context.Background(), market.HotRequest{Chain: chain.Sol, Duration: ranking.Duration1h})
			require.NoError(t, err)
			assert.Equal(t, []string{"pop", "bonk", "wif", "dog"}, hotAddrs(got))
		}
	}
}

// TestHotTokensCachesOnlyRealRankings keeps memory bounded: a (chain, duration) that has no
// ranking (the HTTP adapter rejects it) is read through, never kept.
func TestHotTokensCachesOnlyRealRankings(t *testing.T) {
	s, r, _ := newHotService(t)
	f := newHotFixture(t)
	f.expectRanking(r, chain.Base, ranking.Duration1h, 2)
	f.expectRanking(r, chain.Sol, ranking.Duration("2h"), 2)
	// The details are kept: they are the same tokens' whichever ranking lists them.
	r.MockTokenReader.EXPECT().TokenDetails(gomock.Any(), chain.Base, f.addrs).Return(f.details, nil)
	r.MockTokenReader.EXPECT().TokenDetails(gomock.Any(), chain.Sol, f.addrs).Return(f.details, nil)
	for range 2 {
		_, err := hotList(s, context.Background(), market.HotRequest{Chain: chain.Base, Duration: ranking.Duration1h})
		require.NoError(t, err)
		_, err = hotList(s, context.Background(), market.HotRequest{Chain: chain.Sol, Duration: "2h"})
		require.NoError(t, err)
	}
}

// TestHotTokensOnlyTheirTokensInvalidateARanking: a change announced for tokens outside the
// ranking leaves its read in use; one for a ranked token makes the next request read the ranking
// again, and the details of that token alone.
func TestHotTokensOnlyTheirTokensInvalidateARanking(t *testing.T) {
	s, r, versions := newHotService(t)
	f := newHotFixture(t)
	ctx := context.Background()
	req := market.HotRequest{Chain: chain.Sol, Duration: ranking.Duration1h}
	changed := f.details[3] // wif
	changed.MarketData.PriceInUSD = dec("0.01")
	gomock.InOrder(
		r.MockTokenReader.EXPECT().HotTokens(gomock.Any(), chain.Sol, ranking.Duration1h, market.HotScanDepth).Return(f.entries, nil),
		r.MockTokenReader.EXPECT().TokenDetails(gomock.Any(), chain.Sol, f.addrs).Return(f.details, nil),
		r.MockTokenReader.EXPECT().HotTokens(gomock.Any(), chain.Sol, ranking.Duration1h, market.HotScanDepth).Return(f.entries, nil),
		r.MockTokenReader.EXPECT().TokenDetails(gomock.Any(), chain.Sol, []string{"wif"}).Return([]token.Detail{changed}, nil),
	)
	byPrice := req
	byPrice.SortBy, byPrice.Desc = token.FieldPriceInUSD, true
	got, err := hotList(s, ctx, byPrice)
	require.NoError(t, err)
	assert.Equal(t, []string{"wif", "bonk", "dog", "pop"}, hotAddrs(got))

	versions.WriteTokens("someothertoken")
	got, err = hotList(s, ctx, byPrice)
	require.NoError(t, err)
	assert.Equal(t, []string{"wif", "bonk", "dog", "pop"}, hotAddrs(got), "an unrelated token's change: the same read")

	versions.WriteTokens("wif")
	got, err = hotList(s, ctx, byPrice)
	require.NoError(t, err)
	assert.Equal(t, []string{"bonk", "dog", "pop", "wif"}, hotAddrs(got), "wif's new price")
}
