package stats_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/stats"
	"github.com/tokenscope/tokenscope/domain/stats/reference"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/domain/trade"
)

// bucketsOf builds every resolution's buckets from trades the straightforward way: each trade
// added to its bucket, each wallet's last buy, sell and trade counted in the buckets holding them.
func bucketsOf(trades []trade.Trade) []stats.Bucket {
	type key struct {
		res   stats.Resolution
		start int64
	}
	byKey := map[key]*stats.Bucket{}
	at := func(ms int64, r stats.Resolution) *stats.Bucket {
		k := key{r, stats.BucketStart(ms, r)}
		if byKey[k] == nil {
			byKey[k] = &stats.Bucket{Start: k.start, Res: r}
		}
		return byKey[k]
	}
	last := map[string]stats.LastActivity{}
	for _, t := range trades {
		if !t.Succeeded() {
			continue
		}
		a := last[t.Wallet]
		a.Note(t)
		last[t.Wallet] = a
		for _, r := range stats.Resolutions {
			at(t.BlockTimestamp, r).AddTrade(&t)
		}
	}
	for _, a := range last {
		for _, m := range (stats.LastActivity{}).Moves(a) {
			for _, r := range stats.Resolutions {
				at(m.At, r).Apply(m)
			}
		}
	}
	out := make([]stats.Bucket, 0, len(byKey))
	for _, b := range byKey {
		out = append(out, *b)
	}
	return out
}

func TestWindowStart(t *testing.T) {
	// The first whole second after now − w.
	assert.Equal(t, nowMs-299_000, stats.WindowStart(time.UnixMilli(nowMs), token.Window5m))
	assert.Equal(t, nowMs-299_000, stats.WindowStart(time.UnixMilli(nowMs+999), token.Window5m))
	assert.Equal(t, nowMs-298_000, stats.WindowStart(time.UnixMilli(nowMs+1000), token.Window5m))
	assert.Equal(t, int64(1000), stats.WindowStart(time.UnixMilli(60_000), token.Window1m))
	// 4h and 24h: the first whole minute after now − w.
	day := int64(24 * 3_600_000)
	assert.Equal(t, 3*day-day+60_000, stats.WindowStart(time.UnixMilli(3*day), token.Window24h))
	assert.Equal(t, 3*day-day+60_000, stats.WindowStart(time.UnixMilli(3*day+59_999), token.Window24h))
	assert.Equal(t, 3*day-4*3_600_000+60_000, stats.WindowStart(time.UnixMilli(3*day+1), token.Window4h))
}

func TestCover(t *testing.T) {
	start := int64(3*3_600_000 + 5*60_000 + 7_000) // 03:05:07
	assert.Equal(t, []stats.Span{
		{Res: stats.Second, From: start, To: 3*3_600_000 + 6*60_000},
		{Res: stats.Minute, From: 3*3_600_000 + 6*60_000, To: 4 * 3_600_000},
		{Res: stats.Hour, From: 4 * 3_600_000, To: stats.Open},
	}, stats.Cover(start))
	// On a whole hour only hours are needed; on a whole minute no seconds.
	assert.Equal(t, []stats.Span{{Res: stats.Hour, From: 3_600_000, To: stats.Open}}, stats.Cover(3_600_000))
	assert.Equal(t, []stats.Span{{Res: stats.Minute, From: 60_000, To: 3_600_000}, {Res: stats.Hour, From: 3_600_000, To: stats.Open}},
		stats.Cover(60_000))
}

// TestWindowSumEqualsWindow: random trades of one token (shuffled, FAILED ones, the same
// wallets over and over, some stamped after now) give the same statistics from their buckets as
// from the trades themselves, for every window and many clock times.
func TestWindowSumEqualsWindow(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		now := time.UnixMilli(nowMs + r.Int64N(3_600_000))
		trades := randomTrades(r, now, 1+r.IntN(300), 12)
		buckets := bucketsOf(trades)
		for _, w := range token.AllWindows {
			liq := decimal.NewFromInt(42)
			want := reference.Window(trades, now, w, liq)
			got := stats.WindowSum(buckets, now, w).Period(liq)
			requireSameWindow(t, want, got, "seed %d %s", seed, w)
		}
	}
}

// TestWindowDeltaAddsToTheStoredWindow: random trades of one token arrive in two parts; the
// window stored after the first part (its WindowSum), merged with the second part's bucket
// changes (trades added, each wallet's last activity moved) as WindowDelta selects them, is the
// window over all the trades, for every window, both parts in any order of time.
func TestWindowDeltaAddsToTheStoredWindow(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		r := rand.New(rand.NewPCG(seed, 8))
		now := time.UnixMilli(nowMs + r.Int64N(3_600_000))
		trades := randomTrades(r, now, 1+r.IntN(200), 8)
		cut := r.IntN(len(trades) + 1)
		first, second := trades[:cut], trades[cut:]
		// The second part's changes, as a batch makes them: from each wallet's last activity
		// over the first part.
		last := map[string]stats.LastActivity{}
		for _, tr := range first {
			a := last[tr.Wallet]
			a.Note(tr)
			last[tr.Wallet] = a
		}
		byKey := map[[2]int64]*stats.Bucket{}
		at := func(ms int64, res stats.Resolution) *stats.Bucket {
			k := [2]int64{int64(res), stats.BucketStart(ms, res)}
			if byKey[k] == nil {
				byKey[k] = &stats.Bucket{Start: k[1], Res: res}
			}
			return byKey[k]
		}
		for _, tr := range second {
			if !tr.Succeeded() {
				continue
			}
			old := last[tr.Wallet]
			a := old
			a.Note(tr)
			last[tr.Wallet] = a
			for _, res := range stats.Resolutions {
				at(tr.BlockTimestamp, res).AddTrade(&tr)
				for _, m := range old.Moves(a) {
					at(m.At, res).Apply(m)
				}
			}
		}
		var deltas []stats.Bucket
		for _, b := range byKey {
			deltas = append(deltas, *b)
		}
		stored := bucketsOf(first)
		for _, w := range token.AllWindows {
			liq := decimal.NewFromInt(7)
			sum := stats.WindowSum(stored, now, w)
			sum.Merge(stats.WindowDelta(deltas, now, w))
			requireSameWindow(t, reference.Window(trades, now, w, liq), sum.Period(liq), "seed %d %s", seed, w)
		}
	}
}

// randomTrades are n trades of one token by wallets wallets: mostly within a day of now, a fifth
// in its last two minutes, a few after it, several in the same millisecond, a tenth FAILED.
func randomTrades(r *rand.Rand, now time.Time, n, wallets int) []trade.Trade {
	var trades []trade.Trade
	for i := 0; i < n; i++ {
		side := trade.Buy
		if r.IntN(2) == 0 {
			side = trade.Sell
		}
		ts := now.UnixMilli() - r.Int64N(26*3_600_000) + 60_000
		if r.IntN(5) == 0 {
			ts = now.UnixMilli() - r.Int64N(120)*1000
		}
		tr := trade.Trade{Chain: chain.Sol, TokenAddress: "T", TransactionSignature: fmt.Sprintf("s%03d", r.IntN(1000)),
			InstructionIndex: int32(i), BlockHeight: ts / 400, BlockTimestamp: ts, Side: side, Status: trade.Succeeded,
			Wallet: fmt.Sprintf("w%d", r.IntN(wallets)), TokenAmount: decimal.NewFromInt(1 + r.Int64N(1000)),
			TokenAmountInUSD: decimal.NewFromInt(r.Int64N(500)).Shift(-1),
			TokenPriceInUSD:  decimal.NewFromInt(1 + r.Int64N(50)).Shift(-2)}
		if r.IntN(10) == 0 {
			tr.Status = trade.Failed
		}
		trades = append(trades, tr)
	}
	return trades
}

// requireSameWindow fails unless got has every figure of want.
func requireSameWindow(t *testing.T, want, got token.PeriodStats, msg string, args ...any) {
	t.Helper()
	require.Equal(t, []int64{want.Buys, want.Sells, want.Trades, want.Buyers, want.Sellers, want.Traders},
		[]int64{got.Buys, got.Sells, got.Trades, got.Buyers, got.Sellers, got.Traders}, fmt.Sprintf(msg+" counts", args...))
	for name, pair := range map[string][2]decimal.Decimal{
		"buyVol": {want.BuyVolume, got.BuyVolume}, "sellVol": {want.SellVolume, got.SellVolume},
		"totalVol": {want.TotalVolume, got.TotalVolume}, "buyUSD": {want.BuyVolumeInUSD, got.BuyVolumeInUSD},
		"sellUSD": {want.SellVolumeInUSD, got.SellVolumeInUSD}, "totalUSD": {want.TotalVolumeInUSD, got.TotalVolumeInUSD},
		"open": {want.OpenInUSD, got.OpenInUSD}, "close": {want.CloseInUSD, got.CloseInUSD},
		"high": {want.HighInUSD, got.HighInUSD}, "low": {want.LowInUSD, got.LowInUSD},
		"change": {want.PriceChangeRatioInUSD, got.PriceChangeRatioInUSD}, "liq": {want.CurrentLiquidityInUSD, got.CurrentLiquidityInUSD},
	} {
		require.True(t, pair[0].Equal(pair[1]), fmt.Sprintf(msg+" %s: want %s got %s", append(args, name, pair[0], pair[1])...))
	}
}
