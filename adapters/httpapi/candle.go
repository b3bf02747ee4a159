package httpapi

import (
	"github.com/gofiber/fiber/v2"
	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/app/candle"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/ohlcv"
	"github.com/tokenscope/tokenscope/domain/page"
)

// tokenCandles is GET /v2/token/{chain}/{tokenAddress}/candles.
func (h *handlers) tokenCandles(c *fiber.Ctx) error {
	return h.candles(c, ohlcv.Token, "tokenAddress")
}

// poolCandles is GET /v2/token/{chain}/pool/{poolAddress}/candles.
func (h *handlers) poolCandles(c *fiber.Ctx) error {
	return h.candles(c, ohlcv.Pool, "poolAddress")
}

// pairCandles is GET /v2/token/{chain}/pair/{pair}/candles (TOKEN_A-TOKEN_B, sorted here).
func (h *handlers) pairCandles(c *fiber.Ctx) error {
	return h.candles(c, ohlcv.Pair, "pair")
}

// candles parses the reference's parameters (resolution, priceType, from, to, limit) and
// answers a bare array of TokenCandle objects, oldest first. limit=1 without from and to is
// the current candle.
func (h *handlers) candles(c *fiber.Ctx, kind ohlcv.Kind, param string) error {
	ch, err := chain.Parse("chain", c.Params("chain"))
	if err != nil {
		return err
	}
	subj := ohlcv.Subject{Kind: kind, Chain: ch, Address: c.Params(param)}
	if kind == ohlcv.Pair {
		if subj, err = ohlcv.ParsePair(param, ch, subj.Address); err != nil {
			return err
		}
	}
	q := candle.Query{Subject: subj}
	if q.Res, err = ohlcv.ParseResolution("resolution", queryString(c, "resolution")); err != nil {
		return err
	}
	if q.Price, err = ohlcv.ParsePriceType("priceType", queryString(c, "priceType")); err != nil {
		return err
	}
	if q.From, err = secondsOrMillis(c, "from", false); err != nil {
		return err
	}
	if q.To, err = secondsOrMillis(c, "to", true); err != nil {
		return err
	}
	if q.From != nil && q.To != nil && *q.From > *q.To {
		return fault.Invalid("from", queryString(c, "from"), "must not be after to").WithCode(fault.CodeInvalidTimestamp)
	}
	if q.Limit, err = page.ParseLimit(queryString(c, "limit"), ohlcv.DefaultLimit, ohlcv.MaxLimit); err != nil {
		return err
	}
	list, err := h.app.Candles.Candles(c.UserContext(), q)
	if err != nil {
		return err
	}
	return sendBody(c, func(b []byte) []byte { return encodeCandles(b, list) })
}

// encodeCandles appends the TokenCandle array of list ([] when empty).
func encodeCandles(b []byte, list []ohlcv.Candle) []byte {
	return appendArray(b, list, func(k *ohlcv.Candle, b []byte) []byte {
		d := candleOut(*k)
		return d.appendJSON(b)
	})
}

// candleDTO is one TokenCandle: prices and volumes as decimal strings, timestamp (the
// interval's start, Unix ms) and trades as integers.
type candleDTO struct {
	Open          decimal.Decimal `json:"open"`
	High          decimal.Decimal `json:"high"`
	Low           decimal.Decimal `json:"low"`
	Close         decimal.Decimal `json:"close"`
	Volume        decimal.Decimal `json:"volume"`
	Timestamp     int64           `json:"timestamp"`
	Trades        int64           `json:"trades"`
	VolumeInToken decimal.Decimal `json:"volumeInTokenAmount"`
}

func candleOut(k ohlcv.Candle) candleDTO {
	return candleDTO{Open: k.Open, High: k.High, Low: k.Low, Close: k.Close, Volume: k.Volume, Timestamp: k.Start,
		Trades: k.Trades, VolumeInToken: k.VolumeInToken}
}
