package candle_test

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/domain/candle"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/fault"
)

func ms(s string) int64 {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UnixMilli()
}

func res(t *testing.T, s string) candle.Resolution {
	t.Helper()
	r, err := candle.ParseResolution("resolution", s)
	require.NoError(t, err)
	return r
}

func TestParseResolution(t *testing.T) {
	require.Len(t, candle.ResolutionNames(), 18)
	for _, n := range candle.ResolutionNames() {
		r := res(t, n)
		require.Equal(t, n, r.String())
	}
	for _, bad := range []string{"1S", "2m", "1y", "60", "1H"} {
		_, err := candle.ParseResolution("resolution", bad)
		var fe *fault.Error
		require.ErrorAs(t, err, &fe, bad)
		require.Equal(t, "resolution", fe.Param)
		require.Contains(t, fe.Allowed, "1M")
	}
	_, err := candle.ParseResolution("resolution", "")
	require.True(t, fault.Is(err, fault.KindInvalid))
}

func TestStartAndShift(t *testing.T) {
	at := ms("2026-03-11T14:37:42Z") + 250 // a Wednesday
	cases := []struct {
		res, start, next string
	}{
		{"1s", "2026-03-11T14:37:42Z", "2026-03-11T14:37:43Z"},
		{"15s", "2026-03-11T14:37:30Z", "2026-03-11T14:37:45Z"},
		{"1m", "2026-03-11T14:37:00Z", "2026-03-11T14:38:00Z"},
		{"5m", "2026-03-11T14:35:00Z", "2026-03-11T14:40:00Z"},
		{"1h", "2026-03-11T14:00:00Z", "2026-03-11T15:00:00Z"},
		{"4h", "2026-03-11T12:00:00Z", "2026-03-11T16:00:00Z"},
		{"1d", "2026-03-11T00:00:00Z", "2026-03-12T00:00:00Z"},
		{"1w", "2026-03-09T00:00:00Z", "2026-03-16T00:00:00Z"}, // Monday
		{"1M", "2026-03-01T00:00:00Z", "2026-04-01T00:00:00Z"},
	}
	for _, c := range cases {
		t.Run(c.res, func(t *testing.T) {
			r := res(t, c.res)
			s := r.Start(at)
			require.Equal(t, ms(c.start), s)
			require.Equal(t, ms(c.next), r.Shift(s, 1))
			require.Equal(t, s, r.Shift(r.Shift(s, -3), 3))
			// Every part of the resolution's step lies inside one interval.
			require.Zero(t, (r.Shift(s, 1)-s)%r.Step())
			require.Zero(t, s%r.Step())
		})
	}
	// 3d intervals are epoch-aligned, 1M back across a year boundary.
	require.Equal(t, ms("2026-01-01T00:00:00Z"), res(t, "1M").Shift(ms("2026-03-01T00:00:00Z"), -2))
	require.Equal(t, ms("2025-12-01T00:00:00Z"), res(t, "1M").Shift(ms("2026-03-01T00:00:00Z"), -3))
	require.Zero(t, res(t, "3d").Start(at)%(3*24*3600*1000))
}

func d(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func part(start int64, o, h, l, c, v string, n int64) candle.Candle {
	return candle.Candle{Start: start, Open: d(o), High: d(h), Low: d(l), Close: d(c), Volume: d(v), VolumeInToken: d(v), Trades: n}
}

func TestMerge(t *testing.T) {
	base := ms("2026-03-11T14:00:00Z")
	m := int64(60_000)
	parts := []candle.Candle{
		part(base, "10", "12", "9", "11", "5", 2),
		part(base+2*m, "11.5", "15", "11", "14", "3", 1),
		// minute 4 has no part: a gap inside the 5m candle changes nothing
		part(base+4*m, "13", "13", "8", "8.5", "2", 3),
		// the next 5m interval is empty; then one more
		part(base+10*m, "7", "7.5", "7", "7.5", "1", 1),
	}
	got := candle.Merge(parts, res(t, "5m"))
	require.Len(t, got, 2, "no candle for the empty 5m interval")
	want := part(base, "10", "15", "8", "8.5", "10", 6)
	requireCandle(t, want, got[0])
	requireCandle(t, part(base+10*m, "7", "7.5", "7", "7.5", "1", 1), got[1])
	require.Empty(t, candle.Merge(nil, res(t, "1m")))
	// Parts at the resolution itself pass through.
	require.Len(t, candle.Merge(parts, res(t, "1m")), 4)
}

func requireCandle(t *testing.T, want, got candle.Candle) {
	t.Helper()
	require.Equal(t, want.Start, got.Start)
	for _, p := range [][2]decimal.Decimal{{want.Open, got.Open}, {want.High, got.High}, {want.Low, got.Low},
		{want.Close, got.Close}, {want.Volume, got.Volume}, {want.VolumeInToken, got.VolumeInToken}} {
		require.True(t, p[0].Equal(p[1]), "want %s got %s (%+v)", p[0], p[1], got)
	}
	require.Equal(t, want.Trades, got.Trades)
}

func TestWindowOf(t *testing.T) {
	r := res(t, "1m")
	now := ms("2026-03-11T14:37:42Z")
	p := func(v int64) *int64 { return &v }
	m := int64(60_000)
	cur := ms("2026-03-11T14:37:00Z")
	// Neither: the limit intervals ending with now's.
	require.Equal(t, candle.Window{From: cur - 2*m, To: cur + m}, candle.WindowOf(r, nil, nil, now, 3))
	// to only: ending with to's interval.
	require.Equal(t, candle.Window{From: cur - 11*m, To: cur - 9*m}, candle.WindowOf(r, nil, p(cur-10*m+5), now, 2))
	// from only: starting with from's interval.
	require.Equal(t, candle.Window{From: cur - 30*m, To: cur - 27*m}, candle.WindowOf(r, p(cur-30*m+1), nil, now, 3))
	// both: from bounds the start, limit still caps the length from the end.
	require.Equal(t, candle.Window{From: cur - 2*m, To: cur + m}, candle.WindowOf(r, p(cur-2*m), p(now), now, 100))
	require.Equal(t, candle.Window{From: cur - 4*m, To: cur + m}, candle.WindowOf(r, p(cur-50*m), p(now), now, 5))
	require.True(t, candle.WindowOf(r, p(now), p(now-5*m), now, 5).Empty())
}

func TestSourceOf(t *testing.T) {
	tok := candle.Subject{Kind: candle.Token, Chain: chain.Sol, Address: "T"}
	pool := candle.Subject{Kind: candle.Pool, Chain: chain.Sol, Address: "P"}
	cases := []struct {
		subj  candle.Subject
		res   string
		price candle.PriceType
		want  candle.Source
	}{
		{tok, "1s", candle.USD, candle.Trades},
		{tok, "30s", candle.USD, candle.Trades},
		{tok, "1m", candle.USD, candle.MinuteBuckets},
		{tok, "30m", candle.USD, candle.MinuteBuckets},
		{tok, "1h", candle.USD, candle.HourBuckets},
		{tok, "1w", candle.USD, candle.HourBuckets},
		{tok, "1M", candle.USD, candle.HourBuckets},
		{tok, "1h", candle.Native, candle.Trades},
		{pool, "1h", candle.USD, candle.Trades},
	}
	for _, c := range cases {
		require.Equal(t, c.want, candle.SourceOf(c.subj, res(t, c.res), c.price), "%v %s %s", c.subj.Kind, c.res, c.price)
	}
}

func TestParsePairAndPriceType(t *testing.T) {
	s, err := candle.ParsePair("pair", chain.Sol, "Zeta-Alpha")
	require.NoError(t, err)
	require.Equal(t, "Alpha", s.Address)
	require.Equal(t, "Zeta", s.Quote)
	for _, bad := range []string{"Alpha", "Alpha-", "-Zeta", "A-B-C", "Same-Same"} {
		_, err := candle.ParsePair("pair", chain.Sol, bad)
		var fe *fault.Error
		require.ErrorAs(t, err, &fe, bad)
		require.Equal(t, "pair", fe.Param)
	}
	p, err := candle.ParsePriceType("priceType", "")
	require.NoError(t, err)
	require.Equal(t, candle.USD, p)
	p, err = candle.ParsePriceType("priceType", "Native")
	require.NoError(t, err)
	require.Equal(t, candle.Native, p)
	_, err = candle.ParsePriceType("priceType", "eur")
	var fe *fault.Error
	require.ErrorAs(t, err, &fe)
	require.Equal(t, "priceType", fe.Param)
}
