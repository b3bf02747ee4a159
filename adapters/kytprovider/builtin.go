// Package kytprovider holds the two ports.KYTProvider adapters: the built-in screener (the
// default: a configured list of flagged addresses) and an HTTP client for an external KYT
// vendor speaking the Chainalysis-style registration API. It may import domain and ports.
package kytprovider

import (
	"context"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/kyt"
	"github.com/tokenscope/tokenscope/ports"
)

// Builtin screens against a fixed map of flagged addresses.
type Builtin struct{ Flagged map[string]kyt.Risk }

var _ ports.KYTProvider = Builtin{}

// ParseFlagged reads KYT_FLAGGED_ADDRESSES: a comma list of address or address=LEVEL, LEVEL
// one of LOW, MEDIUM, HIGH, SEVERE (default HIGH).
func ParseFlagged(s string) (map[string]kyt.Risk, error) {
	out := map[string]kyt.Risk{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		addr, level, hasLevel := strings.Cut(part, "=")
		risk := kyt.RiskHigh
		if hasLevel {
			risk = kyt.Risk(strings.ToUpper(strings.TrimSpace(level)))
			switch risk {
			case kyt.RiskLow, kyt.RiskMedium, kyt.RiskHigh, kyt.RiskSevere:
			default:
				return nil, fault.InvalidParam("KYT_FLAGGED_ADDRESSES", level, "LOW", "MEDIUM", "HIGH", "SEVERE")
			}
		}
		out[strings.TrimSpace(addr)] = risk
	}
	return out, nil
}

// Screen rates the screened address (kyt.Screen) and reports a flagged hit as one direct alert
// over the registration's USD amount.
func (b Builtin) Screen(_ context.Context, reg kyt.Registration) (ports.KYTScreening, error) {
	addr := reg.ScreenedAddress()
	rating := kyt.Screen(addr, b.Flagged)
	s := ports.KYTScreening{Rating: rating}
	if rating != kyt.LowRisk && rating != kyt.UnknownRisk {
		amount := decimal.Zero
		if reg.USDAmount != nil {
			amount = *reg.USDAmount
		}
		s.Alerts = []kyt.Alert{{Level: riskOf(rating), Category: "flagged address", ExposureType: "DIRECT",
			AlertAmount: amount, Service: addr}}
	}
	return s, nil
}

func riskOf(r kyt.Rating) kyt.Risk {
	for _, k := range []kyt.Risk{kyt.RiskLow, kyt.RiskMedium, kyt.RiskHigh, kyt.RiskSevere} {
		if k.Rating() == r {
			return k
		}
	}
	return ""
}
