package ports

import (
	"context"

	"github.com/tokenscope/tokenscope/domain/ohlcv"
)

// CandleParts is what one candle read asks a store for: the parts of Subject's successful
// trades with a block time in [From, To), each summing Step milliseconds (Step-aligned on the
// Unix epoch), read from Source, with prices and volume in Price.
type CandleParts struct {
	Subject  ohlcv.Subject
	Source   ohlcv.Source
	Price    ohlcv.PriceType
	Step     int64
	From, To int64
}

// CandleStore reads OHLCV parts from committed data.
type CandleStore interface {
	// Candles returns the parts with at least one trade, ascending by Start (the part's start);
	// the use case merges them into candles (ohlcv.Merge).
	Candles(ctx context.Context, q CandleParts) ([]ohlcv.Candle, error)
}
