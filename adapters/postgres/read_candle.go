package postgres

import (
	"context"
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/adapters/postgres/internal/dbsqlc"
	"github.com/tokenscope/tokenscope/domain/ohlcv"
	"github.com/tokenscope/tokenscope/ports"
)

// CandleStore reads candle parts from the trades and the engine's time buckets
// (queries/ohlcv.sql). It implements ports.CandleStore.
type CandleStore struct {
	pool ReadDB
	q    *dbsqlc.Queries
}

var _ ports.CandleStore = (*CandleStore)(nil)

// NewCandleStore reads through pool.
func NewCandleStore(pool ReadDB) *CandleStore {
	return &CandleStore{pool: pool, q: dbsqlc.New()}
}

// candleRow is the shape every candle query returns (sqlc gives each its own struct).
type candleRow struct {
	PartMs                 int64
	Open, Close, High, Low decimal.Decimal
	Volume, VolumeInToken  decimal.Decimal
	Trades                 int64
}

func toCandles[R any](rows []R, conv func(R) candleRow) []ohlcv.Candle {
	out := make([]ohlcv.Candle, len(rows))
	for i, r := range rows {
		c := conv(r)
		out[i] = ohlcv.Candle{Start: c.PartMs, Open: c.Open, High: c.High, Low: c.Low, Close: c.Close,
			Volume: c.Volume, VolumeInToken: c.VolumeInToken, Trades: c.Trades}
	}
	return out
}

// Candles implements ports.CandleStore.
func (s *CandleStore) Candles(ctx context.Context, p ports.CandleParts) ([]ohlcv.Candle, error) {
	ch, addr, native := string(p.Subject.Chain), p.Subject.Address, p.Price == ohlcv.Native
	var (
		out []ohlcv.Candle
		err error
	)
	switch {
	case p.Source != ohlcv.Trades:
		var rows []dbsqlc.CandleTokenBucketsRow
		rows, err = s.q.CandleTokenBuckets(ctx, s.pool, dbsqlc.CandleTokenBucketsParams{StepMs: p.Step, Chain: ch,
			Address: addr, ResMs: p.Source.BucketMs(), FromMs: p.From, ToMs: p.To})
		out = toCandles(rows, func(r dbsqlc.CandleTokenBucketsRow) candleRow { return candleRow(r) })
	case p.Subject.Kind == ohlcv.Token:
		var rows []dbsqlc.CandleTokenTradesRow
		rows, err = s.q.CandleTokenTrades(ctx, s.pool, dbsqlc.CandleTokenTradesParams{StepMs: p.Step, Native: native,
			Chain: ch, Address: addr, FromMs: p.From, ToMs: p.To})
		out = toCandles(rows, func(r dbsqlc.CandleTokenTradesRow) candleRow { return candleRow(r) })
	case p.Subject.Kind == ohlcv.Pool:
		var rows []dbsqlc.CandlePoolTradesRow
		rows, err = s.q.CandlePoolTrades(ctx, s.pool, dbsqlc.CandlePoolTradesParams{StepMs: p.Step, Native: native,
			Chain: ch, Address: addr, FromMs: p.From, ToMs: p.To})
		out = toCandles(rows, func(r dbsqlc.CandlePoolTradesRow) candleRow { return candleRow(r) })
	default:
		var rows []dbsqlc.CandlePairTradesRow
		rows, err = s.q.CandlePairTrades(ctx, s.pool, dbsqlc.CandlePairTradesParams{StepMs: p.Step, Base: addr,
			Native: native, Chain: ch, Quote: p.Subject.Quote, FromMs: p.From, ToMs: p.To})
		out = toCandles(rows, func(r dbsqlc.CandlePairTradesRow) candleRow { return candleRow(r) })
	}
	if err != nil {
		return nil, interpretError(fmt.Errorf("read candles: %w", err), "candles", addr)
	}
	return out, nil
}
