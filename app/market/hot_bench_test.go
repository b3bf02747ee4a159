package market_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/app/market"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/page"
	"github.com/tokenscope/tokenscope/domain/ranking"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/internal/fakeversions"
	"github.com/tokenscope/tokenscope/ports"
)

// fakeHotReader answers the ranking with n entries and builds n full details on every
// TokenDetails call, parsing every decimal from text as the Postgres adapter decodes its rows
// (7 windows of 11 decimals, the market data, two pools), so a benchmark pays what a request
// paid for the read before the ranking was cached. The other read ports are not used.
type fakeHotReader struct {
	ports.TradeReader
	ports.PoolReader
	ports.RedPacketReader
	ports.PositionReader
	n int
}

func (f *fakeHotReader) SearchTokens(context.Context, ports.TokenSearch) (page.Page[token.Detail], error) {
	panic("not used")
}

func (f *fakeHotReader) HotTokens(_ context.Context, _ chain.Chain, _ ranking.Duration, max int) ([]ports.HotEntry, error) {
	out := make([]ports.HotEntry, min(f.n, max))
	for i := range out {
		out[i] = ports.HotEntry{Address: benchAddr(i), Rank: int32(i + 1), Score: decimal.NewFromInt(int64(f.n - i))}
	}
	return out, nil
}

func (f *fakeHotReader) TokenDetails(_ context.Context, c chain.Chain, addrs []string) ([]token.Detail, error) {
	out := make([]token.Detail, 0, len(addrs))
	for _, a := range addrs {
		i, err := strconv.Atoi(a[len("tok"):])
		if err != nil {
			return nil, err
		}
		out = append(out, benchDetail(c, i))
	}
	return out, nil
}

func benchAddr(i int) string { return fmt.Sprintf("tok%05d", i) }

func num(format string, args ...any) decimal.Decimal {
	return decimal.RequireFromString(fmt.Sprintf(format, args...))
}

// benchDetail is token i: every fourth one launched on pump_fun, every third with a twitter
// link, prices spread over 0.0001..10.
func benchDetail(c chain.Chain, i int) token.Detail {
	links := map[string]string{}
	if i%3 == 0 {
		links[token.SocialTwitter] = "https://x.com/t" + strconv.Itoa(i)
	}
	socials, _ := token.NewSocials(links)
	tag := token.Tag("")
	if i%4 == 0 {
		tag = token.PumpFun
	}
	d := token.Detail{
		Token: token.Token{Address: benchAddr(i), Chain: c, Decimals: 6, Name: "Token " + strconv.Itoa(i),
			Symbol: "T" + strconv.Itoa(i), Socials: socials, LaunchpadTag: tag, Creators: []token.Creator{}},
		MarketData: token.MarketData{
			PriceInUSD: num("%d.%04d", i%10, i%10000), PriceInSol: num("0.%08d", i), TotalSupply: num("1000000000"),
			CirculatingSupply: num("999000000.5"), MarketCapInUSD: num("%d.25", i*1000), MarketCapInSol: num("%d.5", i*7),
			FDVInUSD: num("%d.75", i*1100), FDVInSol: num("%d.125", i*8), Holders: decimal.NewFromInt(int64(i % 977)),
			MaxPoolTVLInUSD: num("%d.1", i*30), MaxPoolTVLInSol: num("%d.2", i), TotalTVLInUSD: num("%d.3", i*40),
			TotalTVLInSol: num("%d.4", i*2), CompletionRatio: num("0.%d", i%100),
			Top10:  token.TopHolding{TotalHoldings: num("%d.5", i*100), HoldingsRatio: num("0.%03d", i%1000)},
			Top100: token.TopHolding{TotalHoldings: num("%d.5", i*300), HoldingsRatio: num("0.%03d", (i+7)%1000)},
		},
		Stats: make(map[token.Window]token.PeriodStats, len(token.AllWindows)),
	}
	for k, w := range token.AllWindows {
		d.Stats[w] = token.PeriodStats{Buys: int64(i + k), Sells: int64(i), Trades: int64(2*i + k), Buyers: 3, Sellers: 2, Traders: 5,
			BuyVolume: num("%d.123456", i+k), SellVolume: num("%d.654321", i), TotalVolume: num("%d.777777", 2*i+k),
			BuyVolumeInUSD: num("%d.11", i*k), SellVolumeInUSD: num("%d.22", i), TotalVolumeInUSD: num("%d.33", i*k+i),
			OpenInUSD: num("1.%04d", i%10000), CloseInUSD: num("1.%04d", (i+k)%10000), HighInUSD: num("2.%04d", i%10000),
			LowInUSD: num("0.%04d", i%10000), PriceChangeRatioInUSD: num("0.0%d", k), CurrentLiquidityInUSD: num("%d.9", i*40)}
	}
	for p := range 2 {
		d.Pools = append(d.Pools, token.PoolLiquidity{Chain: string(c), PoolAddress: fmt.Sprintf("pool%d-%d", i, p),
			ProtocolFamily: "Raydium", TokenAAddress: d.Address, TokenBAddress: "So11111111111111111111111111111111111111112",
			TVLInUSD: num("%d.5", i*20), TVLInSol: num("%d.25", i)})
	}
	return d
}

// benchRequests are what clients of the ranking send: the plain ranking, a tag, a sort, and
// ranges with a social filter and a sort.
func benchRequests() map[string]market.HotRequest {
	lo := decimal.RequireFromString("1")
	return map[string]market.HotRequest{
		"rank": {Chain: chain.Sol, Duration: ranking.Duration1h},
		"tag":  {Chain: chain.Sol, Duration: ranking.Duration1h, Tag: token.PumpFun},
		"sort": {Chain: chain.Sol, Duration: ranking.Duration1h, SortBy: token.FieldMarketCapInUSD, Desc: true},
		"filter_sort": {Chain: chain.Sol, Duration: ranking.Duration1h, SortBy: token.FieldHolders, Desc: false,
			Ranges: []token.Filter{{Field: token.FieldPriceInUSD, Min: &lo}}, Socials: []token.SocialFilter{"has_twitter"}},
	}
}

// BenchmarkHotTokens is one ranking request over a ranking of 1,000 tokens (HotScanDepth) in
// the service as cmd/tokenscope builds it, with no write announced during the benchmark: the
// candidates are read once and every request filters and sorts them.
func BenchmarkHotTokens(b *testing.B) {
	benchHot(b, func(r market.Readers) *market.Service {
		return market.New(r, market.WithCache(fakeversions.Following()))
	})
}

func benchHot(b *testing.B, newService func(market.Readers) *market.Service) {
	for _, name := range []string{"rank", "tag", "sort", "filter_sort"} {
		req := benchRequests()[name]
		b.Run(name, func(b *testing.B) {
			s := newService(&fakeHotReader{n: market.HotScanDepth})
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				a, err := s.HotTokens(ctx, req)
				ds := a.List()
				if err != nil || len(ds) == 0 {
					b.Fatal(len(ds), err)
				}
			}
		})
	}
}

// BenchmarkHotTokensUncached is BenchmarkHotTokens with the cache off (versions unknown, or
// market.New without options): every request reads and decodes the 1,000 details.
func BenchmarkHotTokensUncached(b *testing.B) {
	benchHot(b, func(r market.Readers) *market.Service { return market.New(r) })
}
