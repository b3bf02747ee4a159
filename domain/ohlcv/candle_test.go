package ohlcv_test

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/ohlcv"
)

func ms(s string) int64 {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UnixMilli()
}

func res(t *testing.T, s string) ohlcv.Resolution {
	t.Helper()
	r, err := ohlcv.ParseResolution("resolution", s)
	require.NoError(t, err)
	return r
}

func TestParseResolution(t *testing.T) {
	require.Len(t, ohlcv.ResolutionNames(), 18)
	for _, n := range ohlcv.ResolutionNames() {
		r := res(t, n)
		require.Equal(t, n, r.String())
	}
	for _, bad := range []string{"1S", "2m", "1y", "60", "1H"} {
		_, err := ohlcv.ParseResolution("resolution", bad)
		var fe *fault.Error
		require.ErrorAs(t, err, &fe, bad)
		require.Equal(t, "resolution", fe.Param)
		require.Contains(t, fe.Allowed, "1M")
	}
	_, err := ohlcv.ParseResolution("resolution", "")
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

func part(start int64, o, h, l, c, v string, n int64) ohlcv.Candle {
	return ohlcv.Candle{Start: start, Open: d(o), High: d(h), Low: d(l), Close: d(c), Volume: d(v), VolumeInToken: d(v), Trades: n}
}

func TestMerge(t *testing.T) {
	base := ms("2026-03-11T14:00:00Z")
	m := int64(60_000)
	parts := []ohlcv.Candle{
		part(base, "10", "12", "9", "11", "5", 2),
		part(base+2*m, "11.5", "15", "11", "14", "3", 1),
		// minute 4 has no part: a gap inside the 5m candle changes nothing
		part(base+4*m, "13", "13", "8", "8.5", "2", 3),
		// the next 5m interval is empty; then one more
		part(base+10*m, "7", "7.5", "7", "7.5", "1", 1),
	}
	got := ohlcv.Merge(parts, res(t, "5m"))
	require.Len(t, got, 2, "no candle for the empty 5m interval")
	want := part(base, "10", "15", "8", "8.5", "10", 6)
	requireCandle(t, want, got[0])
	requireCandle(t, part(base+10*m, "7", "7.5", "7", "7.5", "1", 1), got[1])
	require.Empty(t, ohlcv.Merge(nil, res(t, "1m")))
	// Parts at the resolution itself pass through.
	require.Len(t, ohlcv.Merge(parts, res(t, "1m")), 4)
}

func requireCandle(t *testing.T, want, got ohlcv.Candle) {
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
	require.Equal(t, ohlcv.Window{From: cur - 2*m, To: cur + m}, ohlcv.WindowOf(r, nil, nil, now, 3))
	// to only: ending with to's interval.
	require.Equal(t, ohlcv.Window{From: cur - 11*m, To: cur - 9*m}, ohlcv.WindowOf(r, nil, p(cur-10*m+5), now, 2))
	// from only: starting with from's interval.
	require.Equal(t, ohlcv.Window{From: cur - 30*m, To: cur - 27*m}, ohlcv.WindowOf(r, p(cur-30*m+1), nil, now, 3))
	// both: from bounds the start, limit still caps the length from the end.
	require.Equal(t, ohlcv.Window{From: cur - 2*m, To: cur + m}, ohlcv.WindowOf(r, p(cur-2*m), p(now), now, 100))
	require.Equal(t, ohlcv.Window{From: cur - 4*m, To: cur + m}, ohlcv.WindowOf(r, p(cur-50*m), p(now), now, 5))
	require.True(t, ohlcv.WindowOf(r, p(now), p(now-5*m), now, 5).Empty())
}

func TestSourceOf(t *testing.T) {
	tok := ohlcv.Subject{Kind: ohlcv.Token, Chain: chain.Sol, Address: "T"}
	pool := ohlcv.Subject{Kind: ohlcv.Pool, Chain: chain.Sol, Address: "P"}
	cases := []struct {
		subj  ohlcv.Subject
		res   string
		price ohlcv.PriceType
		want  ohlcv.Source
	}{
		{tok, "1s", ohlcv.USD, ohlcv.Trades},
		{tok, "30s", ohlcv.USD, ohlcv.Trades},
		{tok, "1m", ohlcv.USD, ohlcv.MinuteBuckets},
		{tok, "30m", ohlcv.USD, ohlcv.MinuteBuckets},
		{tok, "1h", ohlcv.USD, ohlcv.HourBuckets},
		{tok, "1w", ohlcv.USD, ohlcv.HourBuckets},
		{tok, "1M", ohlcv.USD, ohlcv.HourBuckets},
		{tok, "1h", ohlcv.Native, ohlcv.Trades},
		{pool, "1h", ohlcv.USD, ohlcv.Trades},
	}
	for _, c := range cases {
		require.Equal(t, c.want, ohlcv.SourceOf(c.subj, res(t, c.res), c.price), "%v %s %s", c.subj.Kind, c.res, c.price)
	}
}

func TestParsePairAndPriceType(t *testing.T) {
	s, err := ohlcv.ParsePair("pair", chain.Sol, "Zeta-Alpha")
	require.NoError(t, err)
	require.Equal(t, "Alpha", s.Address)
	require.Equal(t, "Zeta", s.Quote)
	for _, bad := range []string{"Alpha", "Alpha-", "-Zeta", "A-B-C", "Same-Same"} {
		_, err := ohlcv.ParsePair("pair", chain.Sol, bad)
		var fe *fault.Error
		require.ErrorAs(t, err, &fe, bad)
		require.Equal(t, "pair", fe.Param)
	}
	p, err := ohlcv.ParsePriceType("priceType", "")
	require.NoError(t, err)
	require.Equal(t, ohlcv.USD, p)
	p, err = ohlcv.ParsePriceType("priceType", "Native")
	require.NoError(t, err)
	require.Equal(t, ohlcv.Native, p)
	_, err = ohlcv.ParsePriceType("priceType", "eur")
	var fe *fault.Error
	require.ErrorAs(t, err, &fe)
	require.Equal(t, "priceType", fe.Param)
}
