package stats

import (
	"cmp"
	"math"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/domain/trade"
)

// Resolution is the length of a time bucket in milliseconds.
type Resolution int64

// The bucket resolutions the engine keeps: every window is a sum of at most 59 seconds, 59
// minutes and 25 hours of them (Cover).
const (
	Second Resolution = 1000
	Minute Resolution = 60 * Second
	Hour   Resolution = 60 * Minute
)

// Resolutions lists the bucket resolutions, finest first.
var Resolutions = []Resolution{Second, Minute, Hour}

// BucketStart is the start (Unix ms) of the bucket of resolution r that holds block time ms.
func BucketStart(ms int64, r Resolution) int64 { return floorTo(ms, int64(r)) }

// Mark is a trade's place in trade.Compare order and its USD price: a bucket's open or close.
type Mark struct {
	At        int64
	Height    int64
	Signature string
	Index     int32
	Price     decimal.Decimal
}

// MarkOf is t's mark.
func MarkOf(t *trade.Trade) Mark {
	return Mark{At: t.BlockTimestamp, Height: t.BlockHeight, Signature: t.TransactionSignature, Index: t.InstructionIndex,
		Price: t.TokenPriceInUSD}
}

// CompareMarks orders marks as trade.Compare orders their trades.
func CompareMarks(a, b Mark) int {
	return cmp.Or(cmp.Compare(a.At, b.At), cmp.Compare(a.Height, b.Height), strings.Compare(a.Signature, b.Signature),
		cmp.Compare(a.Index, b.Index))
}

// Bucket is what the successful trades of one token with a block time in [Start, Start + Res)
// sum to, plus the distinct-wallet counts: LastBuyers is how many wallets made their latest buy of
// the token (so far) in the bucket, likewise LastSellers for sells and LastTraders for either.
// Summed over the buckets from a time on, those count the distinct wallets that bought, sold or
// traded from that time on. Open, Close, High and Low are meaningful when Trades() > 0.
type Bucket struct {
	Start int64
	Res   Resolution

	Buys, Sells                          int64
	BuyVolume, SellVolume                decimal.Decimal
	BuyVolumeInUSD, SellVolumeInUSD      decimal.Decimal
	Open, Close                          Mark
	High, Low                            decimal.Decimal
	LastBuyers, LastSellers, LastTraders int64
}

// Trades is the number of trades in the bucket.
func (b *Bucket) Trades() int64 { return b.Buys + b.Sells }

// AddTrade adds the successful trade t (of the bucket's token and time) to the sums and prices;
// the distinct-wallet counts are the caller's (they depend on the wallet's other trades). It is
// Merge of the trade's own one-trade bucket, without building that bucket: the ingest engine
// calls it three times per trade, and adding the other side's zero amounts (which changes no
// sum) was a third of its decimal additions.
func (b *Bucket) AddTrade(t *trade.Trade) {
	had := b.Trades() > 0
	switch t.Side {
	case trade.Buy:
		b.Buys++
		b.BuyVolume = b.BuyVolume.Add(t.TokenAmount)
		b.BuyVolumeInUSD = b.BuyVolumeInUSD.Add(t.TokenAmountInUSD)
	case trade.Sell:
		b.Sells++
		b.SellVolume = b.SellVolume.Add(t.TokenAmount)
		b.SellVolumeInUSD = b.SellVolumeInUSD.Add(t.TokenAmountInUSD)
	default:
		return // not a trade of either side: Merge adds nothing for it
	}
	m := MarkOf(t)
	if !had {
		b.Open, b.Close, b.High, b.Low = m, m, m.Price, m.Price
		return
	}
	if CompareMarks(m, b.Open) < 0 {
		b.Open = m
	}
	if CompareMarks(m, b.Close) > 0 {
		b.Close = m
	}
	b.High = decimal.Max(b.High, m.Price)
	b.Low = decimal.Min(b.Low, m.Price)
}

// Merge adds o to b: sums and counts add, open is the earlier open, close the later close, high
// and low the extremes. A side without trades contributes only its counts.
func (b *Bucket) Merge(o Bucket) {
	had := b.Trades() > 0
	b.LastBuyers += o.LastBuyers
	b.LastSellers += o.LastSellers
	b.LastTraders += o.LastTraders
	if o.Trades() == 0 {
		return
	}
	b.Buys += o.Buys
	b.Sells += o.Sells
	b.BuyVolume = b.BuyVolume.Add(o.BuyVolume)
	b.SellVolume = b.SellVolume.Add(o.SellVolume)
	b.BuyVolumeInUSD = b.BuyVolumeInUSD.Add(o.BuyVolumeInUSD)
	b.SellVolumeInUSD = b.SellVolumeInUSD.Add(o.SellVolumeInUSD)
	if !had {
		b.Open, b.Close, b.High, b.Low = o.Open, o.Close, o.High, o.Low
		return
	}
	if CompareMarks(o.Open, b.Open) < 0 {
		b.Open = o.Open
	}
	if CompareMarks(o.Close, b.Close) > 0 {
		b.Close = o.Close
	}
	b.High = decimal.Max(b.High, o.High)
	b.Low = decimal.Min(b.Low, o.Low)
}

// Span is the buckets of one resolution with a start in [From, To).
type Span struct {
	Res      Resolution
	From, To int64
}

// Open is the To of a span with no end: its buckets reach every later trade, including those
// stamped after now.
const Open = math.MaxInt64

// Cover lists the spans whose buckets hold exactly the trades from start (a whole second) on:
// seconds up to the next whole minute, minutes up to the next whole hour, then hours without end
// (at most 59 + 59 + 25 buckets for a 24h window, whatever the trading rate).
func Cover(start int64) []Span {
	m := -floorTo(-start, int64(Minute)) // start rounded up to a minute
	h := -floorTo(-m, int64(Hour))       // then up to an hour
	var out []Span
	if start < m {
		out = append(out, Span{Second, start, m})
	}
	if m < h {
		out = append(out, Span{Minute, m, h})
	}
	return append(out, Span{Hour, h, Open})
}

// In reports whether bucket b is one of the span's.
func (s Span) In(b *Bucket) bool { return b.Res == s.Res && b.Start >= s.From && b.Start < s.To }

// WindowSum is the merge of the buckets Cover(WindowStart(now, w)) selects among a token's buckets
// (they may hold any others, which are ignored): its Period equals Window over the trades the
// buckets were built from.
func WindowSum(buckets []Bucket, now time.Time, w token.Window) Bucket {
	spans := Cover(WindowStart(now, w))
	var sum Bucket
	for i := range buckets {
		for _, sp := range spans {
			if sp.In(&buckets[i]) {
				sum.Merge(buckets[i])
				break
			}
		}
	}
	return sum
}

// WindowDelta is the part of a batch's bucket changes (deltas: of one token, buckets of any
// resolutions, trades added and activity moved) that window w holds at now: the merge of the
// deltas of w's finest resolution (Second for windows up to an hour, Minute for longer ones,
// the step of WindowStart) that start at or after WindowStart(now, w). Added to the window
// stored as of now (Bucket.Merge), it gives the window over the stored trades and the batch's.
func WindowDelta(deltas []Bucket, now time.Time, w token.Window) Bucket {
	res, start := windowStep(w), WindowStart(now, w)
	var sum Bucket
	for i := range deltas {
		if deltas[i].Res == res && deltas[i].Start >= start {
			sum.Merge(deltas[i])
		}
	}
	return sum
}

// Period is the window statistics of a window's merged buckets (WindowSum), with liquidity.
func (b Bucket) Period(liquidityUSD decimal.Decimal) token.PeriodStats {
	s := token.PeriodStats{CurrentLiquidityInUSD: liquidityUSD, Buys: b.Buys, Sells: b.Sells, Trades: b.Trades(),
		Buyers: b.LastBuyers, Sellers: b.LastSellers, Traders: b.LastTraders,
		BuyVolume: b.BuyVolume, SellVolume: b.SellVolume, TotalVolume: b.BuyVolume.Add(b.SellVolume),
		BuyVolumeInUSD: b.BuyVolumeInUSD, SellVolumeInUSD: b.SellVolumeInUSD,
		TotalVolumeInUSD: b.BuyVolumeInUSD.Add(b.SellVolumeInUSD)}
	if b.Trades() > 0 {
		s.OpenInUSD, s.CloseInUSD, s.HighInUSD, s.LowInUSD = b.Open.Price, b.Close.Price, b.High, b.Low
		s.PriceChangeRatioInUSD = div(s.CloseInUSD.Sub(s.OpenInUSD), s.OpenInUSD)
	}
	return s
}

// LastActivity is when one wallet last bought, sold and traded one token (Unix ms; 0 for never),
// over its successful trades.
type LastActivity struct{ Buy, Sell, Trade int64 }

// Note moves the times forward to the successful trade t's.
func (a *LastActivity) Note(t trade.Trade) {
	if !t.Succeeded() {
		return
	}
	switch t.Side {
	case trade.Buy:
		a.Buy = max(a.Buy, t.BlockTimestamp)
	case trade.Sell:
		a.Sell = max(a.Sell, t.BlockTimestamp)
	}
	a.Trade = max(a.Trade, t.BlockTimestamp)
}

// Activity is a distinct-wallet count change: add Delta to the counter of kind (buyers, sellers
// or traders) of the buckets holding At.
type Activity struct {
	At    int64
	Kind  ActivityKind
	Delta int64
}

// ActivityKind names a distinct-wallet counter of a bucket.
type ActivityKind int

// The counters.
const (
	Buyers ActivityKind = iota
	Sellers
	Traders
)

// Moves lists the counter changes when a wallet's last activity goes from old to updated: each
// time that moved leaves its bucket (−1, unless it was 0, never) and enters its new one (+1).
// Block times are positive, so 0 never names a trade.
func (a LastActivity) Moves(updated LastActivity) []Activity {
	var out []Activity
	move := func(kind ActivityKind, from, to int64) {
		if from == to {
			return
		}
		if from != 0 {
			out = append(out, Activity{At: from, Kind: kind, Delta: -1})
		}
		out = append(out, Activity{At: to, Kind: kind, Delta: 1})
	}
	move(Buyers, a.Buy, updated.Buy)
	move(Sellers, a.Sell, updated.Sell)
	move(Traders, a.Trade, updated.Trade)
	return out
}

// Apply adds the counter change to the bucket.
func (b *Bucket) Apply(m Activity) {
	switch m.Kind {
	case Buyers:
		b.LastBuyers += m.Delta
	case Sellers:
		b.LastSellers += m.Delta
	case Traders:
		b.LastTraders += m.Delta
	}
}
