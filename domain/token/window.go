package token

import (
	"time"

	"github.com/shopspring/decimal"
)

// Window is a statistics period; its value is the period key of stats.periods and the suffix of
// the multi-detail stats fields.
type Window string

const (
	Window1m  Window = "1m"
	Window5m  Window = "5m"
	Window15m Window = "15m"
	Window30m Window = "30m"
	Window1h  Window = "1h"
	Window4h  Window = "4h"
	Window24h Window = "24h"
)

// AllWindows lists the periods shortest first.
var AllWindows = []Window{Window1m, Window5m, Window15m, Window30m, Window1h, Window4h, Window24h}

// Duration is the length of the window; 0 for an unknown window.
func (w Window) Duration() time.Duration {
	switch w {
	case Window1m:
		return time.Minute
	case Window5m:
		return 5 * time.Minute
	case Window15m:
		return 15 * time.Minute
	case Window30m:
		return 30 * time.Minute
	case Window1h:
		return time.Hour
	case Window4h:
		return 4 * time.Hour
	case Window24h:
		return 24 * time.Hour
	}
	return 0
}

// PeriodStats is one entry of stats.periods. Volumes without a currency are in token units.
type PeriodStats struct {
	Buys    int64
	Sells   int64
	Trades  int64
	Buyers  int64
	Sellers int64
	Traders int64

	BuyVolume        decimal.Decimal
	SellVolume       decimal.Decimal
	TotalVolume      decimal.Decimal
	BuyVolumeInUSD   decimal.Decimal
	SellVolumeInUSD  decimal.Decimal
	TotalVolumeInUSD decimal.Decimal

	OpenInUSD  decimal.Decimal
	CloseInUSD decimal.Decimal
	HighInUSD  decimal.Decimal
	LowInUSD   decimal.Decimal
	// PriceChangeRatioInUSD is (close − open) / open, 0 when open is 0.
	PriceChangeRatioInUSD decimal.Decimal
	CurrentLiquidityInUSD decimal.Decimal
}

// PoolLiquidity is one liquidity item of the multi-detail shape.
type PoolLiquidity struct {
	ProgramAddress string
	ProtocolFamily string
	Image          string
	Chain          string
	PoolAddress    string
	ProtocolName   string
	TokenAAddress  string
	TokenBAddress  string
	TVLInUSD       decimal.Decimal
	TVLInSol       decimal.Decimal
}

// Detail is everything the multi-detail, search (normal mode) and ranking operations render
// about one token.
type Detail struct {
	Token
	MarketData MarketData
	Stats      map[Window]PeriodStats
	Pools      []PoolLiquidity
}

// Period returns the stats of w, zeros when absent.
func (d Detail) Period(w Window) PeriodStats { return d.Stats[w] }
