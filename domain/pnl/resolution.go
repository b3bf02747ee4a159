package pnl

import (
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/domain/fault"
)

// Resolution is the public SDK's PnlResolution, the period a pnl-by-token answer covers: All is
// the wallet's whole history; 1d, 7d and 30d are the last 1, 7 and 30 UTC calendar days, today
// included (Start), and a position's figures over one are Position.Since.
type Resolution string

const (
	Resolution1d  Resolution = "1d"
	Resolution7d  Resolution = "7d"
	Resolution30d Resolution = "30d"
	ResolutionAll Resolution = "all"
)

// Resolutions lists the accepted values in the SDK's order.
var Resolutions = []Resolution{Resolution1d, Resolution7d, Resolution30d, ResolutionAll}

// ParseResolution accepts one of Resolutions (case-insensitive); empty means All.
func ParseResolution(param, s string) (Resolution, error) {
	r := Resolution(strings.ToLower(strings.TrimSpace(s)))
	if r == "" {
		return ResolutionAll, nil
	}
	allowed := make([]string, len(Resolutions))
	for i, v := range Resolutions {
		if v == r {
			return r, nil
		}
		allowed[i] = string(v)
	}
	return "", fault.InvalidParam(param, s, allowed...)
}

// days is the length of a period in UTC calendar days; All has none.
func (r Resolution) days() int64 {
	switch r {
	case Resolution1d:
		return 1
	case Resolution7d:
		return 7
	case Resolution30d:
		return 30
	}
	return 0
}

// DayMs is a UTC calendar day in Unix ms.
const DayMs = int64(24 * time.Hour / time.Millisecond)

// Day is the start (Unix ms, a UTC midnight) of the UTC day that holds ms.
func Day(ms int64) int64 {
	d := ms % DayMs
	if d < 0 {
		d += DayMs
	}
	return ms - d
}

// Start is when r's period starts for an answer given at nowMs: the UTC midnight that begins
// the day r.days()−1 days before now's (today's for 1d). All has no start (false).
func (r Resolution) Start(nowMs int64) (int64, bool) {
	n := r.days()
	if n == 0 {
		return 0, false
	}
	return Day(nowMs) - (n-1)*DayMs, true
}

// DayProfit is a pair's realized profit over one UTC day in which it traded (Day, a UTC
// midnight in Unix ms): the realized profit of that day's sells, average cost as for Position.
type DayProfit struct {
	Day    int64
	Profit decimal.Decimal
}

// DayCounts counts, among the UTC days from start on (every day when all), those on which the
// wallet's realized profit summed over days (its pairs' DayProfit) is above zero (profitable) and
// below zero (losing). A day of trades that realized nothing counts as neither.
func DayCounts(days [][]DayProfit, start int64, all bool) (profitable, losing int64) {
	sums := make(map[int64]decimal.Decimal)
	for _, pair := range days {
		for _, d := range pair {
			if all || d.Day >= start {
				sums[d.Day] = sums[d.Day].Add(d.Profit)
			}
		}
	}
	for _, s := range sums {
		switch s.Sign() {
		case 1:
			profitable++
		case -1:
			losing++
		}
	}
	return profitable, losing
}
