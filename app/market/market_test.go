package market_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/mock/gomock"

	"github.com/tokenscope/tokenscope/app/market"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/page"
	"github.com/tokenscope/tokenscope/domain/pnl"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/internal/fakeclock"
	"github.com/tokenscope/tokenscope/internal/fakeversions"
	"github.com/tokenscope/tokenscope/ports"
	"github.com/tokenscope/tokenscope/ports/portsmock"
)

type readers struct {
	*portsmock.MockTokenReader
	*portsmock.MockTradeReader
	*portsmock.MockPoolReader
	*portsmock.MockRedPacketReader
	*portsmock.MockPositionReader
}

func newService(t *testing.T) (*market.Service, readers) {
	ctrl := gomock.NewController(t)
	r := readers{portsmock.NewMockTokenReader(ctrl), portsmock.NewMockTradeReader(ctrl), portsmock.NewMockPoolReader(ctrl),
		portsmock.NewMockRedPacketReader(ctrl), portsmock.NewMockPositionReader(ctrl)}
	return market.New(r), r
}

func TestTypos(t *testing.T) {
	tests := []struct {
		q       string
		has     []string
		hasNot  []string
		wantLen int // -1: not checked
	}{
		// "bnok" → "bonk" by swapping n and o; "bnk" → "bonk" by inserting o; "bonkk" → "bonk" by deleting k;
		// "bpnk" → "bonk" by replacing p.
		{q: "bnok", has: []string{"bonk"}, hasNot: []string{"bnok"}, wantLen: -1},
		{q: "bnk", has: []string{"bonk", "bn", "nbk"}, wantLen: -1},
		{q: "bonkk", has: []string{"bonk"}, wantLen: -1},
		{q: "bpnk", has: []string{"bonk"}, wantLen: -1},
		{q: "ab", wantLen: 0},
		{q: "abcdefghijklm", wantLen: 0},
	}
	for _, tc := range tests {
		t.Run(tc.q, func(t *testing.T) {
			got := market.Typos(tc.q)
			require.NotNil(t, got)
			for _, h := range tc.has {
				assert.Contains(t, got, h)
			}
			for _, h := range tc.hasNot {
				assert.NotContains(t, got, h)
			}
			if tc.wantLen >= 0 {
				assert.Len(t, got, tc.wantLen)
			}
			sorted := slices.Clone(got)
			slices.Sort(sorted)
			assert.Len(t, slices.Compact(sorted), len(got), "no repeats")
		})
	}
}

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func TestPnLByTokenPagesKeepTheSummary(t *testing.T) {
	s, r := newService(t)
	// Three positions: A bought 10 for $10, now $2 each (+$10); B bought 10 for $30, now $1 (−$20);
	// C bought 5 for $5 and sold all for $5 (break-even, closed).
	pos := func(tok string, buyAmt, buyUSD, sellAmt, sellUSD, balance, cost, soldCost, realized string, sells int64) pnl.Position {
		return pnl.Position{Chain: chain.Sol, Wallet: "w", Token: tok, Buys: 1, Sells: sells, BuyAmount: dec(buyAmt),
			BuyAmountInUSD: dec(buyUSD), SellAmount: dec(sellAmt), SellAmountInUSD: dec(sellUSD), Balance: dec(balance),
			CostInUSD: dec(cost), SoldCostInUSD: dec(soldCost), RealizedProfitInUSD: dec(realized)}
	}
	priced := []ports.PricedPosition{
		{Position: pos("A", "10", "10", "0", "0", "10", "10", "0", "0", 0), PriceInUSD: dec("2"), Symbol: "AAA", Decimals: 6},
		{Position: pos("B", "10", "30", "0", "0", "10", "30", "0", "0", 0), PriceInUSD: dec("1")},
		{Position: pos("C", "5", "5", "5", "5", "0", "0", "5", "0", 1), PriceInUSD: dec("9")},
	}
	r.MockPositionReader.EXPECT().PricedPositions(gomock.Any(), chain.Sol, "w", []string{"C", "A", "B"}, gomock.Nil()).
		Return(priced, nil).Times(3)

	ctx := context.Background()
	p1, err := s.PnLByToken(ctx, chain.Sol, "w", []string{"C", "A", "B", "A"}, pnl.ResolutionAll, ports.PageRequest{Limit: 2, Direction: page.Next})
	require.NoError(t, err)
	addrs := func(p page.Page[market.PnLEntry]) []string {
		var out []string
		for _, e := range p.Items {
			out = append(out, e.TokenAddress)
		}
		return out
	}
	assert.Equal(t, []string{"A", "B"}, addrs(p1.Page))
	assert.True(t, p1.Page.HasNext)
	assert.False(t, p1.Page.HasPrev)
	assert.Equal(t, "AAA", p1.Page.Items[0].Symbol)
	// A: value 20 − cost 10 = +10. B: 10 − 30 = −20. C: closed, 0.
	assert.True(t, dec("10").Equal(p1.Page.Items[0].TotalProfitInUSD))
	assert.True(t, dec("-20").Equal(p1.Page.Items[1].TotalProfitInUSD))
	sum := p1.Summary
	assert.Equal(t, int64(3), sum.Tokens)
	assert.Equal(t, int64(1), sum.Wins)
	assert.Equal(t, int64(1), sum.Losses)
	assert.True(t, dec("-10").Equal(sum.TotalProfitInUSD), "10 − 20 + 0")
	assert.True(t, dec("0.5").Equal(sum.WinRate))

	p2, err := s.PnLByToken(ctx, chain.Sol, "w", []string{"C", "A", "B", "A"}, pnl.ResolutionAll, ports.PageRequest{Limit: 2, Direction: page.Next, Cursor: *p1.Page.EndCursor})
	require.NoError(t, err)
	assert.Equal(t, []string{"C"}, addrs(p2.Page))
	assert.False(t, p2.Page.HasNext)
	assert.True(t, p2.Page.HasPrev)
	assert.True(t, p2.Page.Items[0].IsClosed)
	assert.Equal(t, sum, p2.Summary, "every page carries the summary of all requested tokens")

	back, err := s.PnLByToken(ctx, chain.Sol, "w", []string{"C", "A", "B", "A"}, pnl.ResolutionAll, ports.PageRequest{Limit: 2, Direction: page.Prev, Cursor: *p2.Page.StartCursor})
	require.NoError(t, err)
	assert.Equal(t, []string{"A", "B"}, addrs(back.Page))
	assert.False(t, back.Page.HasPrev)
	assert.True(t, back.Page.HasNext)

	_, err = s.PnLByToken(ctx, chain.Sol, "w", []string{"A"}, pnl.ResolutionAll, ports.PageRequest{Limit: 2, Cursor: page.Encode("trade", "1")})
	assert.True(t, fault.Is(err, fault.KindInvalid))
}

func TestMultiKeepsInputOrderFiltersAndSorts(t *testing.T) {
	s, r := newService(t)
	d := func(addr, price string) token.Detail {
		return token.Detail{Token: token.Token{Chain: chain.Eth, Address: addr}, MarketData: token.MarketData{PriceInUSD: dec(price)}}
	}
	// ethereum is stored as eth; the reader returns in its own order and skips the unknown "x".
	r.MockTokenReader.EXPECT().TokenDetails(gomock.Any(), chain.Eth, []string{"b", "x", "a", "c"}).
		Return([]token.Detail{d("a", "1"), d("b", "3"), d("c", "2")}, nil).Times(3)
	ctx := context.Background()
	addrs := func(ds []token.Detail) []string {
		var out []string
		for _, x := range ds {
			out = append(out, x.Address)
		}
		return out
	}
	got, err := multiList(s, ctx, market.MultiRequest{Chain: chain.Ethereum, Addresses: []string{"b", "x", "a", "b", "c"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"b", "a", "c"}, addrs(got))

	got, err = multiList(s, ctx, market.MultiRequest{Chain: chain.Ethereum, Addresses: []string{"b", "x", "a", "c"},
		SortBy: token.FieldPriceInUSD, Desc: false})
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "c", "b"}, addrs(got))

	two := dec("2")
	got, err = multiList(s, ctx, market.MultiRequest{Chain: chain.Ethereum, Addresses: []string{"b", "x", "a", "c"},
		Filters: []token.Filter{{Field: token.FieldPriceInUSD, Min: &two}}})
	require.NoError(t, err)
	assert.Equal(t, []string{"b", "c"}, addrs(got))
}

// TestMultiReusesDetailsUntilAWriteIsAnnounced: with the cache, each token's detail (or its
// absence) is read once per details version, a request reads only the tokens it has none for,
// and every answer is the uncached one.
func TestMultiReusesDetailsUntilAWriteIsAnnounced(t *testing.T) {
	r := newReaders(t)
	versions := fakeversions.Following()
	s := market.New(r, market.WithCache(versions))
	d := func(addr, price string) token.Detail {
		return token.Detail{Token: token.Token{Chain: chain.Eth, Address: addr}, MarketData: token.MarketData{PriceInUSD: dec(price)}}
	}
	gomock.InOrder(
		r.MockTokenReader.EXPECT().TokenDetails(gomock.Any(), chain.Eth, []string{"b", "x", "a"}).
			Return([]token.Detail{d("a", "1"), d("b", "3")}, nil),
		r.MockTokenReader.EXPECT().TokenDetails(gomock.Any(), chain.Eth, []string{"c"}).Return([]token.Detail{d("c", "2")}, nil),
		// A write announced: read again, with the new price.
		r.MockTokenReader.EXPECT().TokenDetails(gomock.Any(), chain.Eth, []string{"c", "a"}).
			Return([]token.Detail{d("a", "5"), d("c", "2")}, nil),
	)
	ctx := context.Background()
	addrs := func(ds []token.Detail) []string {
		var out []string
		for _, x := range ds {
			out = append(out, x.Address+"="+x.MarketData.PriceInUSD.String())
		}
		return out
	}
	got, err := multiList(s, ctx, market.MultiRequest{Chain: chain.Ethereum, Addresses: []string{"b", "x", "a"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"b=3", "a=1"}, addrs(got))
	got, err = multiList(s, ctx, market.MultiRequest{Chain: chain.Ethereum, Addresses: []string{"c", "x", "a", "b"},
		SortBy: token.FieldPriceInUSD, Desc: true})
	require.NoError(t, err)
	assert.Equal(t, []string{"b=3", "c=2", "a=1"}, addrs(got), "only c was read")
	got, err = multiList(s, ctx, market.MultiRequest{Chain: chain.Ethereum, Addresses: []string{"a", "x"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"a=1"}, addrs(got), "nothing read")

	versions.WriteDetails()
	got, err = multiList(s, ctx, market.MultiRequest{Chain: chain.Ethereum, Addresses: []string{"c", "a"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"c=2", "a=5"}, addrs(got))
	got, err = multiList(s, ctx, market.MultiRequest{Chain: chain.Ethereum, Addresses: []string{"a"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"a=5"}, addrs(got))

	// A change announced for c alone: only c is read again.
	r.MockTokenReader.EXPECT().TokenDetails(gomock.Any(), chain.Eth, []string{"c"}).Return([]token.Detail{d("c", "7")}, nil)
	versions.WriteTokens("c")
	got, err = multiList(s, ctx, market.MultiRequest{Chain: chain.Ethereum, Addresses: []string{"a", "c"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"a=5", "c=7"}, addrs(got))
}

func TestParseSearchSort(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want ports.SearchSort
		bad  bool
	}{
		{"", ports.SearchByRelevance, false},
		{"marketCapInUsd", ports.SearchByMarketCapInUSD, false},
		{"H24TRANSACTIONS", ports.SearchByH24Trades, false},
		{"volume", "", true},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := market.ParseSearchSort(tc.in)
			if tc.bad {
				fe, ok := fault.As(err)
				require.True(t, ok)
				assert.Equal(t, "sortBy", fe.Param)
				assert.Len(t, fe.Allowed, 7)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestPnLByTokenOverAPeriod: the period's start is read from the clock, each position is valued
// since its position there, and one neither traded in the period nor held is left out.
func TestPnLByTokenOverAPeriod(t *testing.T) {
	ctrl := gomock.NewController(t)
	positions := portsmock.NewMockPositionReader(ctrl)
	r := readers{portsmock.NewMockTokenReader(ctrl), portsmock.NewMockTradeReader(ctrl), portsmock.NewMockPoolReader(ctrl),
		portsmock.NewMockRedPacketReader(ctrl), positions}
	now := time.Date(2024, 5, 10, 13, 45, 0, 0, time.UTC)
	s := market.New(r, market.WithClock(fakeclock.At(now)))
	weekStart := time.Date(2024, 5, 4, 0, 0, 0, 0, time.UTC).UnixMilli()
	// A: bought 10 for $10 before the week, 10 more for $30 in it; now $3 each.
	// B: bought and sold before the week, closed: nothing in the period.
	a := pnl.Position{Chain: chain.Sol, Wallet: "w", Token: "A", Buys: 2, BuyAmount: dec("20"), BuyAmountInUSD: dec("40"),
		Balance: dec("20"), CostInUSD: dec("40")}
	aStart := pnl.Position{Chain: chain.Sol, Wallet: "w", Token: "A", Buys: 1, BuyAmount: dec("10"), BuyAmountInUSD: dec("10"),
		Balance: dec("10"), CostInUSD: dec("10")}
	b := pnl.Position{Chain: chain.Sol, Wallet: "w", Token: "B", Buys: 1, Sells: 1, BuyAmount: dec("5"), BuyAmountInUSD: dec("5"),
		SellAmount: dec("5"), SellAmountInUSD: dec("9"), SoldCostInUSD: dec("5"), RealizedProfitInUSD: dec("4")}
	positions.EXPECT().PricedPositions(gomock.Any(), chain.Sol, "w", []string{"A", "B"}, []int64{weekStart}).Return(
		[]ports.PricedPosition{{Position: a, At: []pnl.Position{aStart}, PriceInUSD: dec("3")},
			{Position: b, At: []pnl.Position{b}, PriceInUSD: dec("2")}}, nil)
	res, err := s.PnLByToken(context.Background(), chain.Sol, "w", []string{"A", "B"}, pnl.Resolution7d, ports.PageRequest{})
	require.NoError(t, err)
	require.Len(t, res.Page.Items, 1, "B is left out")
	e := res.Page.Items[0]
	assert.Equal(t, int64(1), e.Buys)
	assert.Equal(t, "30", e.BuyAmountInUSD.String(), "the week's buy only")
	assert.Equal(t, "20", e.UnrealizedProfitInUSD.String(), "20 × 3 − 40: all that is held, at the current price")
	assert.Equal(t, "0.6666666666666667", e.TotalProfitRatio.Round(16).String(), "20 / 30 bought in the week")
	assert.Equal(t, int64(1), res.Summary.Tokens)
}

// multiList is Multi's answer as its list of details.
func multiList(s *market.Service, ctx context.Context, r market.MultiRequest) ([]token.Detail, error) {
	a, err := s.Multi(ctx, r)
	return a.List(), err
}
