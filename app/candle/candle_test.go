package candle_test

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"
	"go.uber.org/mock/gomock"

	"github.com/tokenscope/tokenscope/app/candle"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/ohlcv"
	"github.com/tokenscope/tokenscope/internal/fakeclock"
	"github.com/tokenscope/tokenscope/ports"
	"github.com/tokenscope/tokenscope/ports/portsmock"
)

func one(start int64, price string, n int64) ohlcv.Candle {
	p := decimal.RequireFromString(price)
	return ohlcv.Candle{Start: start, Open: p, High: p, Low: p, Close: p, Volume: p, VolumeInToken: decimal.NewFromInt(n), Trades: n}
}

// The service asks the store for the window's parts from the source the subject, resolution
// and price type call for, and merges them into candles.
func TestCandlesAskTheStoreForTheWindowAndMerge(t *testing.T) {
	now := time.Date(2026, 3, 11, 14, 37, 42, 0, time.UTC)
	hour := time.Date(2026, 3, 11, 14, 0, 0, 0, time.UTC).UnixMilli()
	fourH, err := ohlcv.ParseResolution("resolution", "4h")
	require.NoError(t, err)
	tok := ohlcv.Subject{Kind: ohlcv.Token, Chain: chain.Sol, Address: "T"}
	pool := ohlcv.Subject{Kind: ohlcv.Pool, Chain: chain.Sol, Address: "P"}
	cases := []struct {
		name   string
		subj   ohlcv.Subject
		price  ohlcv.PriceType
		source ohlcv.Source
	}{
		{"token usd from hour buckets", tok, ohlcv.USD, ohlcv.HourBuckets},
		{"token native from trades", tok, ohlcv.Native, ohlcv.Trades},
		{"pool from trades", pool, ohlcv.USD, ohlcv.Trades},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			store := portsmock.NewMockCandleStore(gomock.NewController(t))
			four := int64(4 * time.Hour / time.Millisecond)
			curStart := time.Date(2026, 3, 11, 12, 0, 0, 0, time.UTC).UnixMilli()
			store.EXPECT().Candles(gomock.Any(), ports.CandleParts{Subject: c.subj, Source: c.source, Price: c.price,
				Step: four, From: curStart - four, To: curStart + four}).
				Return([]ohlcv.Candle{one(curStart-four, "1", 1), one(hour, "2", 3)}, nil)
			s := candle.New(store, fakeclock.At(now))
			got, err := s.Candles(t.Context(), candle.Query{Subject: c.subj, Res: fourH, Price: c.price, Limit: 2})
			require.NoError(t, err)
			require.Len(t, got, 2)
			require.Equal(t, curStart, got[1].Start, "a part is placed in its interval")
			require.Equal(t, int64(3), got[1].Trades)
		})
	}
}

// TestLatest: limit 1 without from and to reads the interval holding now only; no trade there
// is not a candle.
func TestLatest(t *testing.T) {
	now := time.Date(2026, 3, 11, 14, 37, 42, 0, time.UTC)
	m, err := ohlcv.ParseResolution("resolution", "1m")
	require.NoError(t, err)
	start := time.Date(2026, 3, 11, 14, 37, 0, 0, time.UTC).UnixMilli()
	tok := ohlcv.Subject{Kind: ohlcv.Token, Chain: chain.Sol, Address: "T"}
	store := portsmock.NewMockCandleStore(gomock.NewController(t))
	want := ports.CandleParts{Subject: tok, Source: ohlcv.MinuteBuckets, Price: ohlcv.USD, Step: 60_000, From: start, To: start + 60_000}
	store.EXPECT().Candles(gomock.Any(), want).Return([]ohlcv.Candle{}, nil)
	store.EXPECT().Candles(gomock.Any(), want).Return([]ohlcv.Candle{one(start, "7", 2)}, nil)
	s := candle.New(store, fakeclock.At(now))
	q := candle.Query{Subject: tok, Res: m, Price: ohlcv.USD, Limit: 1}
	got, err := s.Candles(t.Context(), q)
	require.NoError(t, err)
	require.Empty(t, got)
	got, err = s.Candles(t.Context(), q)
	require.NoError(t, err)
	require.Equal(t, []ohlcv.Candle{one(start, "7", 2)}, got)
}
