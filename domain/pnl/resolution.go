package pnl

import (
	"strings"

	"github.com/tokenscope/tokenscope/domain/fault"
)

// Resolution is the public SDK's PnlResolution, the window a pnl-by-token answer covers. The
// positions tokenscope keeps are running totals over the wallet's whole history, so every
// resolution is answered with the whole history, which is what All names.
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
