// Package candle is the OHLCV candle use case (GET …/candles for tokens, pools and pairs, and
// the current candle a stream publishes). Candles are computed from committed data at every
// read, so the current candle moves as trades are ingested and no cache can go stale. It
// imports domain and ports only.
package candle

import (
	"context"
	"fmt"

	"github.com/tokenscope/tokenscope/domain/ohlcv"
	"github.com/tokenscope/tokenscope/ports"
)

// Service reads candles.
type Service struct {
	store ports.CandleStore
	clock ports.Clock
}

// New builds the service over its store; clock gives "now" for requests without a to.
func New(store ports.CandleStore, clock ports.Clock) *Service {
	return &Service{store: store, clock: clock}
}

// Query is one validated candle request. From and To are Unix ms (nil when absent); Limit is
// the number of intervals covered (1..ohlcv.MaxLimit).
type Query struct {
	Subject  ohlcv.Subject
	Res      ohlcv.Resolution
	Price    ohlcv.PriceType
	From, To *int64
	Limit    int
}

// Candles returns the candles of the request's window (ohlcv.WindowOf), oldest first; an
// interval without a successful trade has none.
func (s *Service) Candles(ctx context.Context, q Query) ([]ohlcv.Candle, error) {
	w := ohlcv.WindowOf(q.Res, q.From, q.To, s.clock.Now().UnixMilli(), q.Limit)
	if w.Empty() {
		return []ohlcv.Candle{}, nil
	}
	parts, err := s.store.Candles(ctx, ports.CandleParts{Subject: q.Subject, Price: q.Price,
		Source: ohlcv.SourceOf(q.Subject, q.Res, q.Price), Step: q.Res.Step(), From: w.From, To: w.To})
	if err != nil {
		return nil, fmt.Errorf("candles of %s: %w", q.Subject.Address, err)
	}
	out := ohlcv.Merge(parts, q.Res)
	if out == nil {
		out = []ohlcv.Candle{}
	}
	return out, nil
}
