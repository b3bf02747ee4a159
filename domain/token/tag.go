package token

import (
	"strings"

	"github.com/tokenscope/tokenscope/domain/fault"
)

// Tag is a launchpad (the ranking tag and launchpadPlatform vocabulary), named by the public
// API's launchpad id. The empty Tag means the token came from no known launchpad.
type Tag string

// The public API's launchpad ids (RankingTag, plus boop_fun, which its ranking filters take).
const (
	PumpFun                    Tag = "pump_fun"
	RaydiumLaunchpad           Tag = "raydium_launchpad"
	MeteoraDynamicBondingCurve Tag = "meteora_dynamic_bounding_curve"
	BonkFun                    Tag = "bonk_fun"
	MoonitFun                  Tag = "moonit_fun"
	BoopFun                    Tag = "boop_fun"
)

// AllTags lists the launchpads: the public API's RankingTag order, then boop_fun.
var AllTags = []Tag{PumpFun, RaydiumLaunchpad, MeteoraDynamicBondingCurve, BonkFun, MoonitFun, BoopFun}

// specWords are the spec's words for the first five launchpads ("a neutral word replaces each
// platform name"), in the order of the ids they stand for; they parse to those ids.
var specWords = []struct {
	word string
	tag  Tag
}{
	{"alpha_fun", PumpFun},
	{"beta_launchpad", RaydiumLaunchpad},
	{"gamma_dynamic_bounding_curve", MeteoraDynamicBondingCurve},
	{"delta_fun", BonkFun},
	{"epsilon_fun", MoonitFun},
}

// TagNames lists every accepted spelling, for error messages: the spec's words, then the ids.
func TagNames() []string {
	out := make([]string, 0, len(specWords)+len(AllTags))
	for _, w := range specWords {
		out = append(out, w.word)
	}
	for _, t := range AllTags {
		out = append(out, string(t))
	}
	return out
}

// lookupTag resolves an id or a spec word (case-insensitive) to its launchpad.
func lookupTag(s string) (Tag, bool) {
	k := strings.ToLower(strings.TrimSpace(s))
	for _, w := range specWords {
		if w.word == k {
			return w.tag, true
		}
	}
	for _, t := range AllTags {
		if string(t) == k {
			return t, true
		}
	}
	return "", false
}

// ParseTag accepts a launchpad id or the spec's word for it (case-insensitive) and returns the
// id, so alpha_fun and pump_fun select the same tokens.
func ParseTag(param, s string) (Tag, error) {
	if t, ok := lookupTag(s); ok {
		return t, nil
	}
	return "", fault.InvalidParam(param, s, TagNames()...)
}

// CanonicalTag maps a stored tag onto its launchpad id (rows written under a spec word read as
// the id); an unknown value is returned as it is.
func CanonicalTag(s string) Tag {
	if t, ok := lookupTag(s); ok {
		return t
	}
	return Tag(s)
}
