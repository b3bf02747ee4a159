package httpapi

import (
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/domain/page"
	"github.com/tokenscope/tokenscope/domain/token"
)

// The encoding/json side of json_test.go's oracle. The handlers write the token records and the
// trade, snapshot and PnL pages with their appendJSON (dto_json.go) and never hand these DTOs
// to encoding/json, so what encoding/json needs to give the same bytes lives here: the
// MarshalJSON methods of the token records' value types and keyed objects (each keyed object
// builds the map it was rendered from before the key tables, so encoding/json sorts and encodes
// it), and toPage, the page DTO that appendPage writes without building.

func (s nullString) MarshalJSON() ([]byte, error) {
	if s == "" {
		return []byte("null"), nil
	}
	return encodeJSON(string(s))
}

func (n nullInt) MarshalJSON() ([]byte, error) {
	if !n.ok {
		return []byte("null"), nil
	}
	return strconv.AppendInt(nil, n.v, 10), nil
}

func (u utcTime) MarshalJSON() ([]byte, error) {
	if u.t == nil {
		return []byte("null"), nil
	}
	return encodeJSON(u.t.UTC().Format(time.RFC3339Nano))
}

func (l creatorList) MarshalJSON() ([]byte, error) {
	out := make([]creatorDTO, len(l))
	for i, c := range l {
		out[i] = creatorDTO(c)
	}
	return encodeJSON(out)
}

func (l liquidityList) MarshalJSON() ([]byte, error) {
	out := make([]liquidityDTO, len(l.pools))
	for i := range l.pools {
		out[i] = liquidityOut(&l.pools[i], l.chainName)
	}
	return encodeJSON(out)
}

func (v socialsView) MarshalJSON() ([]byte, error) {
	out := make(map[string]*string, len(token.SocialKeys))
	for _, k := range token.SocialKeys {
		out[k] = nullable(v.s.Get(k))
	}
	return encodeJSON(out)
}

func (v marketDataV2) MarshalJSON() ([]byte, error) {
	return encodeJSON(fieldMap(tokenKeys.marketDataV2, v.m))
}

func (v periodsV2) MarshalJSON() ([]byte, error) {
	out := make(map[token.Window]map[string]decimal.Decimal, len(token.AllWindows))
	for _, w := range token.AllWindows {
		s := v.stats[w]
		p := make(map[string]decimal.Decimal, len(tokenKeys.periodV2))
		for _, f := range tokenKeys.periodV2 {
			if f.field.isCount() {
				p[f.name] = decimal.NewFromInt(f.field.count(&s))
			} else {
				p[f.name] = f.field.decimal(&s)
			}
		}
		out[w] = p
	}
	return encodeJSON(out)
}

func (v multiStats) MarshalJSON() ([]byte, error) {
	out := make(map[string]any, len(tokenKeys.multiStats))
	for _, f := range tokenKeys.multiStats {
		if f.window < 0 {
			out[f.name] = v.d.Address
			continue
		}
		s := v.d.Period(token.AllWindows[f.window])
		if f.field.isCount() {
			out[f.name] = f.field.count(&s)
		} else {
			out[f.name] = f.field.decimal(&s)
		}
	}
	return encodeJSON(out)
}

func (v multiMarketData) MarshalJSON() ([]byte, error) {
	return encodeJSON(fieldMap(tokenKeys.multiMarketData, v.m))
}

func fieldMap(fs []mdField, m *token.MarketData) map[string]any {
	out := make(map[string]any, len(fs))
	for i := range fs {
		out[fs[i].name] = fs[i].value(m)
	}
	return out
}

// value is what f reads from m: a decimal.Decimal or an int64.
func (f *mdField) value(m *token.MarketData) any {
	switch {
	case f.count != nil:
		return f.count(m)
	case f.get != nil:
		return f.get(m)
	}
	return groupPart(m.Group(f.group), f.part)
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func toPage[A, B any](p page.Page[A], f func(A) B) pageDTO[B] {
	out := pageDTO[B]{Data: make([]B, len(p.Items)), StartCursor: p.StartCursor, EndCursor: p.EndCursor,
		HasNext: p.HasNext, HasPrev: p.HasPrev}
	for i, v := range p.Items {
		out.Data[i] = f(v)
	}
	return out
}
