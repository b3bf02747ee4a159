package httpapi

import (
	"strconv"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/domain/token"
)

// The go-json-experiment candidate of BenchmarkEncode at its fastest: decimals written by
// appendDecimal into the encoder's buffer (a caller-specified marshaler), the token records'
// value types and keyed objects through json.MarshalerTo writing tokens, everything else from
// the struct tags with encoding/json's semantics and HTML escaping off. It gives the bytes the
// API sends except for invalid UTF-8, which it replaces by a literal U+FFFD where encoding/json
// writes the escape \ufffd.

// jsonV2Options are the candidate's marshal options.
var jsonV2Options = json.JoinOptions(
	jsonv1.DefaultOptionsV1(),
	jsontext.EscapeForHTML(false),
	json.WithMarshalers(json.MarshalToFunc(writeDecimal)),
)

// writeDecimal writes d as decimal.Decimal's MarshalJSON does (appendDecimal).
func writeDecimal(enc *jsontext.Encoder, d decimal.Decimal) error {
	return enc.WriteValue(appendDecimal(enc.AvailableBuffer(), d))
}

// tokenWriter writes a sequence of tokens and values to enc, keeping the first error.
type tokenWriter struct {
	enc *jsontext.Encoder
	err error
}

func (w *tokenWriter) token(t jsontext.Token) {
	if w.err == nil {
		w.err = w.enc.WriteToken(t)
	}
}

func (w *tokenWriter) name(s string) { w.token(jsontext.String(s)) }

func (w *tokenWriter) decimal(d decimal.Decimal) {
	if w.err == nil {
		w.err = writeDecimal(w.enc, d)
	}
}

// quotedInt writes n as a JSON string, as the ,string option and decimal.NewFromInt(n) do.
func (w *tokenWriter) quotedInt(n int64) {
	if w.err == nil {
		b := append(w.enc.AvailableBuffer(), '"')
		b = strconv.AppendInt(b, n, 10)
		w.err = w.enc.WriteValue(append(b, '"'))
	}
}

func (s nullString) MarshalJSONTo(enc *jsontext.Encoder) error {
	if s == "" {
		return enc.WriteToken(jsontext.Null)
	}
	return enc.WriteToken(jsontext.String(string(s)))
}

func (n nullInt) MarshalJSONTo(enc *jsontext.Encoder) error {
	if !n.ok {
		return enc.WriteToken(jsontext.Null)
	}
	return enc.WriteToken(jsontext.Int(n.v))
}

func (u utcTime) MarshalJSONTo(enc *jsontext.Encoder) error {
	if u.t == nil {
		return enc.WriteToken(jsontext.Null)
	}
	b := append(enc.AvailableBuffer(), '"')
	b = u.t.UTC().AppendFormat(b, time.RFC3339Nano)
	return enc.WriteValue(append(b, '"'))
}

func (l creatorList) MarshalJSONTo(enc *jsontext.Encoder) error {
	w := tokenWriter{enc: enc}
	w.token(jsontext.BeginArray)
	for i := range l {
		if w.err == nil {
			w.err = json.MarshalEncode(enc, (*creatorDTO)(&l[i]))
		}
	}
	w.token(jsontext.EndArray)
	return w.err
}

func (l liquidityList) MarshalJSONTo(enc *jsontext.Encoder) error {
	w := tokenWriter{enc: enc}
	w.token(jsontext.BeginArray)
	for i := range l.pools {
		if w.err == nil {
			dto := liquidityOut(&l.pools[i], l.chainName)
			w.err = json.MarshalEncode(enc, &dto)
		}
	}
	w.token(jsontext.EndArray)
	return w.err
}

// --- the keyed objects: each writes its key table (tokenKeys) in order ---

func (v socialsView) MarshalJSONTo(enc *jsontext.Encoder) error {
	w := tokenWriter{enc: enc}
	w.token(jsontext.BeginObject)
	for _, k := range tokenKeys.socials {
		w.name(k)
		if link := v.s.Get(k); link != "" {
			w.token(jsontext.String(link))
		} else {
			w.token(jsontext.Null)
		}
	}
	w.token(jsontext.EndObject)
	return w.err
}

func (v marketDataV2) MarshalJSONTo(enc *jsontext.Encoder) error {
	w := tokenWriter{enc: enc}
	w.token(jsontext.BeginObject)
	// A group's three keys are next to each other: one lookup serves them.
	var group token.HolderGroup
	var holding token.GroupHolding
	read := false
	for i := range tokenKeys.marketDataV2 {
		f := &tokenKeys.marketDataV2[i]
		w.name(f.name)
		if f.get != nil {
			w.decimal(f.get(v.m))
			continue
		}
		if !read || f.group != group {
			group, holding, read = f.group, v.m.Group(f.group), true
		}
		w.decimal(groupPart(holding, f.part))
	}
	w.token(jsontext.EndObject)
	return w.err
}

func (v periodsV2) MarshalJSONTo(enc *jsontext.Encoder) error {
	w := tokenWriter{enc: enc}
	w.token(jsontext.BeginObject)
	for _, win := range tokenKeys.windows {
		w.name(string(win))
		s := v.stats[win]
		w.token(jsontext.BeginObject)
		for j := range tokenKeys.periodV2 {
			f := &tokenKeys.periodV2[j]
			w.name(f.name)
			if f.field.isCount() {
				w.quotedInt(f.field.count(&s)) // decimal.NewFromInt(n)
			} else {
				w.decimal(f.field.decimal(&s))
			}
		}
		w.token(jsontext.EndObject)
	}
	w.token(jsontext.EndObject)
	return w.err
}

func (v multiStats) MarshalJSONTo(enc *jsontext.Encoder) error {
	var buf [maxWindows]token.PeriodStats
	stats := buf[:0]
	if len(token.AllWindows) > maxWindows {
		stats = make([]token.PeriodStats, 0, len(token.AllWindows))
	}
	for _, win := range token.AllWindows {
		stats = append(stats, v.d.Stats[win])
	}
	w := tokenWriter{enc: enc}
	w.token(jsontext.BeginObject)
	for i := range tokenKeys.multiStats {
		f := &tokenKeys.multiStats[i]
		w.name(f.name)
		switch {
		case f.window < 0:
			w.token(jsontext.String(v.d.Address))
		case f.field.isCount():
			w.token(jsontext.Int(f.field.count(&stats[f.window])))
		default:
			w.decimal(f.field.decimal(&stats[f.window]))
		}
	}
	w.token(jsontext.EndObject)
	return w.err
}

func (v multiMarketData) MarshalJSONTo(enc *jsontext.Encoder) error {
	w := tokenWriter{enc: enc}
	w.token(jsontext.BeginObject)
	for i := range tokenKeys.multiMarketData {
		f := &tokenKeys.multiMarketData[i]
		w.name(f.name)
		if f.count != nil {
			w.token(jsontext.Int(f.count(v.m)))
		} else {
			w.decimal(f.get(v.m))
		}
	}
	w.token(jsontext.EndObject)
	return w.err
}
