package token

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/domain/fault"
)

// Operator compares a field with a value in a filter condition.
type Operator string

const (
	OpGT  Operator = "gt"
	OpGTE Operator = "gte"
	OpLT  Operator = "lt"
	OpLTE Operator = "lte"
	OpEQ  Operator = "eq"
	OpNE  Operator = "ne"
)

var operators = []Operator{OpGT, OpGTE, OpLT, OpLTE, OpEQ, OpNE}

// Filter is one condition of filterBy (op 2) or rangeFilters (op 9). It is either a range
// (Min and/or Max, both inclusive; Op empty) or a comparison (Op and Value).
type Filter struct {
	Field Field
	Min   *decimal.Decimal
	Max   *decimal.Decimal
	Op    Operator
	Value decimal.Decimal
}

// MaxFilters bounds the conditions of one request.
const MaxFilters = 50

// ParseFilters reads a JSON array of conditions (a single JSON object is taken as a one-element
// array). Each element is {"field", "min"?, "max"?} or {"field", "operator", "value"}; bounds
// and values may be decimal strings or JSON numbers. Empty input means no filter. Every
// problem is an Invalid error naming param.
func ParseFilters(param, raw string, allowed []Field) ([]Filter, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil, nil
	}
	bad := func(format string, args ...any) error { return fault.Invalid(param, raw, fmt.Sprintf(format, args...)) }
	var elems []json.RawMessage
	if strings.HasPrefix(raw, "{") {
		elems = []json.RawMessage{json.RawMessage(raw)}
	} else if err := json.Unmarshal([]byte(raw), &elems); err != nil {
		return nil, bad("must be a JSON array of filter conditions")
	}
	if len(elems) > MaxFilters {
		return nil, bad("at most %d conditions", MaxFilters)
	}
	out := make([]Filter, 0, len(elems))
	for i, e := range elems {
		f, reason := parseFilter(e, allowed)
		if reason != "" {
			return nil, bad("condition %d: %s", i, reason)
		}
		out = append(out, f)
	}
	return out, nil
}

type rawFilter struct {
	Field    *string         `json:"field"`
	Min      json.RawMessage `json:"min"`
	Max      json.RawMessage `json:"max"`
	Operator *string         `json:"operator"`
	Value    json.RawMessage `json:"value"`
}

func parseFilter(e json.RawMessage, allowed []Field) (Filter, string) {
	dec := json.NewDecoder(bytes.NewReader(e))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	var r rawFilter
	if err := dec.Decode(&r); err != nil {
		return Filter{}, "must be an object with field and min/max or operator/value"
	}
	if r.Field == nil {
		return Filter{}, "field is required"
	}
	field, err := ParseField("field", *r.Field, allowed)
	if err != nil {
		return Filter{}, fmt.Sprintf("unknown field %q", *r.Field)
	}
	f := Filter{Field: field}
	hasRange := isSet(r.Min) || isSet(r.Max)
	if r.Operator != nil {
		if hasRange {
			return Filter{}, "use either min/max or operator/value, not both"
		}
		op := Operator(strings.ToLower(strings.TrimSpace(*r.Operator)))
		if !validOperator(op) {
			return Filter{}, fmt.Sprintf("unknown operator %q; allowed: gt, gte, lt, lte, eq, ne", *r.Operator)
		}
		if !isSet(r.Value) {
			return Filter{}, "value is required with operator"
		}
		v, ok := number(r.Value)
		if !ok {
			return Filter{}, "value must be a decimal number"
		}
		f.Op, f.Value = op, v
		return f, ""
	}
	if isSet(r.Value) {
		return Filter{}, "value needs an operator"
	}
	if !hasRange {
		return Filter{}, "needs min, max, or operator and value"
	}
	if isSet(r.Min) {
		v, ok := number(r.Min)
		if !ok {
			return Filter{}, "min must be a decimal number"
		}
		f.Min = &v
	}
	if isSet(r.Max) {
		v, ok := number(r.Max)
		if !ok {
			return Filter{}, "max must be a decimal number"
		}
		f.Max = &v
	}
	if f.Min != nil && f.Max != nil && f.Min.GreaterThan(*f.Max) {
		return Filter{}, "min is greater than max"
	}
	return f, ""
}

func isSet(r json.RawMessage) bool { return len(r) > 0 && string(r) != "null" }

// number accepts a JSON number or a string holding a decimal.
func number(r json.RawMessage) (decimal.Decimal, bool) {
	var s string
	if r[0] == '"' {
		if err := json.Unmarshal(r, &s); err != nil {
			return decimal.Decimal{}, false
		}
	} else {
		var n json.Number
		if err := json.Unmarshal(r, &n); err != nil {
			return decimal.Decimal{}, false
		}
		s = n.String()
	}
	d, err := decimal.NewFromString(strings.TrimSpace(s))
	if err != nil || d.Exponent() > maxExponent || d.Exponent() < -maxExponent {
		return decimal.Decimal{}, false
	}
	return d, true
}

// maxExponent keeps "1e999999999" out: comparing it would rescale to a billion-digit integer.
const maxExponent = 64

func validOperator(op Operator) bool {
	for _, o := range operators {
		if o == op {
			return true
		}
	}
	return false
}

// Matches reports whether d satisfies the condition. A token without data for the field
// satisfies none (as a comparison with SQL NULL).
func (f Filter) Matches(d Detail) bool {
	v, ok := Lookup(d, f.Field)
	if !ok {
		return false
	}
	switch f.Op {
	case OpGT:
		return v.GreaterThan(f.Value)
	case OpGTE:
		return v.GreaterThanOrEqual(f.Value)
	case OpLT:
		return v.LessThan(f.Value)
	case OpLTE:
		return v.LessThanOrEqual(f.Value)
	case OpEQ:
		return v.Equal(f.Value)
	case OpNE:
		return !v.Equal(f.Value)
	}
	if f.Min != nil && v.LessThan(*f.Min) {
		return false
	}
	if f.Max != nil && v.GreaterThan(*f.Max) {
		return false
	}
	return true
}

// MatchesAll reports whether d satisfies every condition (conditions are AND-ed).
func MatchesAll(fs []Filter, d Detail) bool {
	for _, f := range fs {
		if !f.Matches(d) {
			return false
		}
	}
	return true
}

// SocialFilter is one value of the ranking filters parameter.
type SocialFilter string

const HasSocialMedia SocialFilter = "has_social_media"

// socialFilterKeys maps each has_<x> filter to its socialMedias key; has_reddit reads the key the
// spec calls "the service".
var socialFilterKeys = map[SocialFilter]string{
	"has_twitter":   SocialTwitter,
	"has_telegram":  SocialTelegram,
	"has_website":   SocialWebsite,
	"has_tiktok":    SocialTiktok,
	"has_discord":   SocialDiscord,
	"has_facebook":  SocialFacebook,
	"has_github":    SocialGithub,
	"has_instagram": SocialInstagram,
	"has_linkedin":  SocialLinkedin,
	"has_medium":    SocialMedium,
	"has_reddit":    SocialTheService,
	"has_youtube":   SocialYoutube,
	"has_bitbucket": SocialBitbucket,
}

// SocialFilters lists the accepted values in the public API's order.
var SocialFilters = []SocialFilter{
	HasSocialMedia, "has_twitter", "has_telegram", "has_website", "has_tiktok", "has_discord",
	"has_facebook", "has_github", "has_instagram", "has_linkedin", "has_medium", "has_reddit",
	"has_youtube", "has_bitbucket",
}

// ParseSocialFilter accepts one of SocialFilters (case-insensitive).
func ParseSocialFilter(param, s string) (SocialFilter, error) {
	f := SocialFilter(strings.ToLower(strings.TrimSpace(s)))
	for _, v := range SocialFilters {
		if v == f {
			return f, nil
		}
	}
	allowed := make([]string, len(SocialFilters))
	for i, v := range SocialFilters {
		allowed[i] = string(v)
	}
	return "", fault.InvalidParam(param, s, allowed...)
}

// Matches reports whether t has the link the filter asks for; has_social_media wants any link.
func (f SocialFilter) Matches(t Token) bool {
	if f == HasSocialMedia {
		return t.Socials.Any()
	}
	key, ok := socialFilterKeys[f]
	return ok && t.Socials.Has(key)
}
