// Package ohlcv is OHLCV candles: the resolutions of the candle operations and how their
// intervals align, the subject a candle describes (token, pool or pair), the price unit, the
// request window, and the merge of finer parts (time buckets or per-step trade sums) into
// candles. It may import only the standard library, github.com/shopspring/decimal and other
// domain packages.
package ohlcv

import (
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/fault"
)

const (
	second = int64(1000)
	minute = 60 * second
	hour   = 60 * minute
	day    = 24 * hour
	week   = 7 * day
	// mondayOffset moves the epoch (a Thursday) onto the first Monday, 1970-01-05: weeks start
	// on Monday 00:00 UTC.
	mondayOffset = 4 * day
)

// Resolution is one candle length of the reference's Resolution enum. Lengths up to 3d are
// fixed and aligned on the Unix epoch (UTC), 1w starts on Monday 00:00 UTC and 1M on the first
// of the month 00:00 UTC.
type Resolution struct {
	name string
	ms   int64 // the fixed length; 0 for 1M
}

var resolutions = []Resolution{
	{"1s", second}, {"15s", 15 * second}, {"30s", 30 * second},
	{"1m", minute}, {"3m", 3 * minute}, {"5m", 5 * minute}, {"15m", 15 * minute}, {"30m", 30 * minute},
	{"1h", hour}, {"2h", 2 * hour}, {"4h", 4 * hour}, {"6h", 6 * hour}, {"8h", 8 * hour}, {"12h", 12 * hour},
	{"1d", day}, {"3d", 3 * day}, {"1w", week}, {"1M", 0},
}

// ResolutionNames lists the accepted resolution names, shortest first.
func ResolutionNames() []string {
	out := make([]string, len(resolutions))
	for i, r := range resolutions {
		out[i] = r.name
	}
	return out
}

// ParseResolution accepts one of the 18 names, case-sensitively (m is a minute, M a month).
func ParseResolution(param, s string) (Resolution, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Resolution{}, fault.Missing(param)
	}
	for _, r := range resolutions {
		if r.name == s {
			return r, nil
		}
	}
	return Resolution{}, fault.InvalidParam(param, s, ResolutionNames()...)
}

// String is the resolution's name (as a request or a stream channel spells it).
func (r Resolution) String() string { return r.name }

// Start is the start (Unix ms) of the interval holding ms.
func (r Resolution) Start(ms int64) int64 {
	switch {
	case r.ms == 0:
		t := time.UnixMilli(ms).UTC()
		return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	case r.ms == week:
		return floorTo(ms-mondayOffset, week) + mondayOffset
	default:
		return floorTo(ms, r.ms)
	}
}

// Shift is the start of the interval n intervals after the one starting at start (before it
// when n is negative).
func (r Resolution) Shift(start int64, n int) int64 {
	if r.ms == 0 {
		return time.UnixMilli(start).UTC().AddDate(0, n, 0).UnixMilli()
	}
	return start + int64(n)*r.ms
}

// Step is the length (ms) of the parts a store sums trades or buckets into for r: each part
// lies inside one interval of r, so merging parts by interval gives the candles. It is r's
// length, except for the calendar-aligned 1w and 1M, which are made of whole days.
func (r Resolution) Step() int64 {
	if r.ms == 0 || r.ms == week {
		return day
	}
	return r.ms
}

// Source is where a store reads a candle's parts from.
type Source int

const (
	// Trades sums the stored successful trades.
	Trades Source = iota
	// MinuteBuckets and HourBuckets sum the engine's per-token time buckets (USD only).
	MinuteBuckets
	HourBuckets
)

// BucketMs is the bucket resolution (ms) a bucket source reads; 0 for Trades.
func (s Source) BucketMs() int64 {
	switch s {
	case MinuteBuckets:
		return minute
	case HourBuckets:
		return hour
	}
	return 0
}

// SourceOf picks the cheapest source that gives exact candles. The engine keeps minute and hour
// buckets of every token for all time, with USD prices only; second buckets are kept for two
// hours of block time around ingest (a late trade older than that has none), so sub-minute
// resolutions, native prices, pools and pairs are summed from the trades.
func SourceOf(s Subject, r Resolution, p PriceType) Source {
	if s.Kind != Token || p != USD {
		return Trades
	}
	switch {
	case r.ms == 0 || r.ms%hour == 0:
		return HourBuckets
	case r.ms%minute == 0:
		return MinuteBuckets
	}
	return Trades
}

// PriceType is the unit of prices and volume: USD or the chain's native token.
type PriceType string

const (
	USD    PriceType = "usd"
	Native PriceType = "native"
)

// ParsePriceType accepts usd (the default when s is empty) or native, in any case.
func ParsePriceType(param, s string) (PriceType, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "usd":
		return USD, nil
	case "native":
		return Native, nil
	}
	return "", fault.InvalidParam(param, s, string(USD), string(Native))
}

// Kind is what a candle describes.
type Kind int

const (
	// Token: every trade of the token, priced in the token.
	Token Kind = iota
	// Pool: every trade in the pool, priced in the token each trade reports.
	Pool
	// Pair: the trades of Base against Quote in either direction, priced in Base.
	Pair
)

// Subject names the trades a candle series is made of.
type Subject struct {
	Kind  Kind
	Chain chain.Chain
	// Address is the token or the pool; for a pair, the base token (Base).
	Address string
	// Quote is a pair's other token; empty otherwise.
	Quote string
}

// ParsePair reads TOKEN_A-TOKEN_B and sorts the two addresses bytewise: the smaller is the
// base whose price the candles carry, whatever order the caller wrote.
func ParsePair(param string, c chain.Chain, s string) (Subject, error) {
	s = strings.TrimSpace(s)
	a, b, ok := strings.Cut(s, "-")
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	if !ok || a == "" || b == "" || strings.Contains(b, "-") {
		return Subject{}, fault.Invalid(param, s, "must be two token addresses joined by '-' (TOKEN_A-TOKEN_B)")
	}
	if a == b {
		return Subject{}, fault.Invalid(param, s, "must name two different tokens")
	}
	if b < a {
		a, b = b, a
	}
	return Subject{Kind: Pair, Chain: c, Address: a, Quote: b}, nil
}

// Candle is one interval's OHLCV. Prices and Volume are in the request's price type; Volume
// is the traded value, VolumeInToken the traded quantity of the subject's token (the base of a
// pair).
type Candle struct {
	Start                  int64 // Unix ms
	Open, High, Low, Close decimal.Decimal
	Volume, VolumeInToken  decimal.Decimal
	Trades                 int64
}

// Merge folds parts (ascending by Start, non-overlapping, each with at least one trade) into
// the candles of r: open of the first part, close of the last, the extremes, the sums.
// Intervals without a part get no candle.
func Merge(parts []Candle, r Resolution) []Candle {
	var out []Candle
	for _, p := range parts {
		s := r.Start(p.Start)
		if n := len(out); n > 0 && out[n-1].Start == s {
			c := &out[n-1]
			c.Close = p.Close
			c.High = decimal.Max(c.High, p.High)
			c.Low = decimal.Min(c.Low, p.Low)
			c.Volume = c.Volume.Add(p.Volume)
			c.VolumeInToken = c.VolumeInToken.Add(p.VolumeInToken)
			c.Trades += p.Trades
			continue
		}
		p.Start = s
		out = append(out, p)
	}
	return out
}

// DefaultLimit and MaxLimit bound the intervals one request covers.
const (
	DefaultLimit = 100
	MaxLimit     = 1000
)

// Window is the block-time range [From, To) (Unix ms) that a request covers: whole intervals,
// at most limit of them.
type Window struct{ From, To int64 }

// WindowOf settles the request range. from and to are Unix ms (nil when absent); the interval
// holding each is included. With to (or neither) the window is the limit intervals ending with
// the one holding to (now by default), not reaching before from; with from only, the limit
// intervals starting with the one holding from.
func WindowOf(r Resolution, from, to *int64, now int64, limit int) Window {
	if from != nil && to == nil {
		s := r.Start(*from)
		return Window{From: s, To: r.Shift(s, limit)}
	}
	end := now
	if to != nil {
		end = *to
	}
	last := r.Start(end)
	w := Window{From: r.Shift(last, -(limit - 1)), To: r.Shift(last, 1)}
	if from != nil {
		w.From = max(w.From, r.Start(*from))
	}
	return w
}

// Empty reports whether the window holds no time (from after to).
func (w Window) Empty() bool { return w.From >= w.To }

func floorTo(ms, step int64) int64 {
	q := ms / step
	if ms%step != 0 && ms < 0 {
		q--
	}
	return q * step
}
