// Package ranking is the hot-token ranking: its durations, the hotness score that orders it by
// default, and keyword matching. Sorting by a field, range filters and social filters live in
// domain/token. It may import only the standard library, github.com/shopspring/decimal and
// other domain packages.
package ranking

import (
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/token"
)

// Duration is the {duration} path segment of the ranking.
type Duration string

const (
	Duration1m  Duration = "1m"
	Duration5m  Duration = "5m"
	Duration1h  Duration = "1h"
	Duration4h  Duration = "4h"
	Duration24h Duration = "24h"
)

// AllDurations lists the durations shortest first; every chain offers all of them.
var AllDurations = []Duration{Duration1m, Duration5m, Duration1h, Duration4h, Duration24h}

// ParseDuration accepts one of AllDurations (case-insensitive).
func ParseDuration(param, s string) (Duration, error) {
	d := Duration(strings.ToLower(strings.TrimSpace(s)))
	for _, v := range AllDurations {
		if v == d {
			return v, nil // the constant: s may alias a reused request buffer (see chain.Parse)
		}
	}
	allowed := make([]string, len(AllDurations))
	for i, v := range AllDurations {
		allowed[i] = string(v)
	}
	return "", fault.InvalidParam(param, s, allowed...)
}

// Window is the statistics window of the same length.
func (d Duration) Window() token.Window { return token.Window(d) }

// Duration is the length of the duration.
func (d Duration) Duration() time.Duration { return d.Window().Duration() }

// Activity is what the score looks at in one window.
type Activity struct {
	Buyers    int64
	VolumeUSD decimal.Decimal
	Trades    int64
}

// Score parameters. The public API calls hot "the fastest growth in unique buyers and volume",
// so growth carries 90% of the weight and plain activity 10%.
const (
	// MinPrevBuyers and MinPrevVolumeUSD floor the previous window in the growth ratios, so a
	// token out of nowhere gets a large but finite growth and one $1 trade is not infinite growth.
	MinPrevBuyers    = 1
	MinPrevVolumeUSD = 100
	// ActivityHalfTrades is the trade count at which the activity term reaches half its weight.
	ActivityHalfTrades = 10
	// Scale is the number of decimal places the score keeps.
	Scale = 18
)

var (
	weightBuyers   = decimal.RequireFromString("0.5")
	weightVolume   = decimal.RequireFromString("0.4")
	weightActivity = decimal.RequireFromString("0.1")
)

// Score rates how hot a token is in the current window against the previous window of the same
// length:
//
//	buyerGrowth = max(0, cur.Buyers − prev.Buyers) / max(prev.Buyers, MinPrevBuyers)
//	volumeGrowth = max(0, cur.VolumeUSD − prev.VolumeUSD) / max(prev.VolumeUSD, MinPrevVolumeUSD)
//	activity    = cur.Trades / (cur.Trades + ActivityHalfTrades)          (0 ≤ activity < 1)
//	score       = 0.5 × buyerGrowth + 0.4 × volumeGrowth + 0.1 × activity
//
// rounded half-up to Scale places. Declines count as no growth rather than negative growth, so
// a cooling but still traded token stays above a dead one; a window without buyers, trades or
// volume scores exactly 0.
func Score(cur, prev Activity) decimal.Decimal {
	if cur.Buyers <= 0 && cur.Trades <= 0 && !cur.VolumeUSD.IsPositive() {
		return decimal.Zero
	}
	buyerGrowth := growth(decimal.NewFromInt(cur.Buyers), decimal.NewFromInt(prev.Buyers), decimal.NewFromInt(MinPrevBuyers))
	volumeGrowth := growth(cur.VolumeUSD, prev.VolumeUSD, decimal.NewFromInt(MinPrevVolumeUSD))
	activity := decimal.Zero
	if cur.Trades > 0 {
		activity = decimal.NewFromInt(cur.Trades).DivRound(decimal.NewFromInt(cur.Trades+ActivityHalfTrades), Scale)
	}
	return weightBuyers.Mul(buyerGrowth).
		Add(weightVolume.Mul(volumeGrowth)).
		Add(weightActivity.Mul(activity)).
		Round(Scale)
}

func growth(cur, prev, floor decimal.Decimal) decimal.Decimal {
	gain := cur.Sub(prev)
	if !gain.IsPositive() {
		return decimal.Zero
	}
	return gain.DivRound(decimal.Max(prev, floor), Scale)
}

// Keywords are the searchKeywords and excludeKeywords of a ranking request, matched
// case-insensitively as substrings of a token's name or symbol.
type Keywords struct {
	include []string
	exclude []string
}

// NewKeywords normalises the two lists; blank entries are dropped.
func NewKeywords(search, exclude []string) Keywords {
	return Keywords{include: normalise(search), exclude: normalise(exclude)}
}

func normalise(words []string) []string {
	var out []string
	for _, w := range words {
		if w = strings.ToLower(strings.TrimSpace(w)); w != "" {
			out = append(out, w)
		}
	}
	return out
}

// Matches reports whether t passes: with search keywords, at least one must occur in the name
// or symbol (any keyword, not all); no exclude keyword may occur in either.
func (k Keywords) Matches(t token.Token) bool {
	name, symbol := strings.ToLower(t.Name), strings.ToLower(t.Symbol)
	hit := func(w string) bool { return strings.Contains(name, w) || strings.Contains(symbol, w) }
	for _, w := range k.exclude {
		if hit(w) {
			return false
		}
	}
	if len(k.include) == 0 {
		return true
	}
	for _, w := range k.include {
		if hit(w) {
			return true
		}
	}
	return false
}
