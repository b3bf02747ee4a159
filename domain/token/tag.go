package token

import (
	"strings"

	"github.com/tokenscope/tokenscope/domain/fault"
)

// Tag is a launchpad tag (the ranking tag and launchpadPlatform vocabulary). The empty Tag means
// the token came from no known launchpad.
type Tag string

const (
	AlphaFun                  Tag = "alpha_fun"
	BetaLaunchpad             Tag = "beta_launchpad"
	GammaDynamicBoundingCurve Tag = "gamma_dynamic_bounding_curve"
	DeltaFun                  Tag = "delta_fun"
	EpsilonFun                Tag = "epsilon_fun"
)

// AllTags lists the tags in the spec's order.
var AllTags = []Tag{AlphaFun, BetaLaunchpad, GammaDynamicBoundingCurve, DeltaFun, EpsilonFun}

// ParseTag accepts one of AllTags (case-insensitive).
func ParseTag(param, s string) (Tag, error) {
	t := Tag(strings.ToLower(strings.TrimSpace(s)))
	for _, v := range AllTags {
		if v == t {
			return t, nil
		}
	}
	allowed := make([]string, len(AllTags))
	for i, v := range AllTags {
		allowed[i] = string(v)
	}
	return "", fault.InvalidParam(param, s, allowed...)
}
