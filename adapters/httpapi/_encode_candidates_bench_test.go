// The encoders BenchmarkEncode was decided by (encode_bench_test.go), beside the generated ones.
// They are not requirements of the module. The go command skips this file (its name starts
// with "_"), so build, vet and go mod tidy never see it; `make bench-encoders` adds it to the
// package as encode_candidates_bench_test.go (-overlay) and builds over a copy of go.mod that
// requires the candidates (-modfile).

package httpapi

import (
	"bytes"
	"time"

	"github.com/bytedance/sonic"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
	gojson "github.com/goccy/go-json"
	jsoniter "github.com/json-iterator/go"
	"github.com/shopspring/decimal"
)

func init() {
	sonicAPI := sonic.Config{SortMapKeys: true, ValidateString: true, NoEncoderNewline: true}.Froze()
	iterAPI := jsoniter.Config{SortMapKeys: true, ValidateJsonRawMessage: true}.Froze()
	marshal := func(m func(any) ([]byte, error)) func(b []byte, v any) []byte {
		return func(b []byte, v any) []byte {
			out, err := m(v)
			if err != nil {
				panic(err)
			}
			return append(b, out...)
		}
	}
	encoderCandidates = append(encoderCandidates,
		encoderCandidate{"go-json-experiment", func(b []byte, v any) []byte {
			buf := bytes.NewBuffer(b)
			if err := json.MarshalWrite(buf, v, jsonV2Options); err != nil {
				panic(err)
			}
			return buf.Bytes()
		}},
		encoderCandidate{"goccy", marshal(func(v any) ([]byte, error) { return gojson.MarshalNoEscape(v) })},
		encoderCandidate{"sonic", marshal(sonicAPI.Marshal)},
		encoderCandidate{"jsoniter", marshal(iterAPI.Marshal)},
	)
}

// The go-json-experiment candidate at its fastest: decimals written by
// appendDecimal into the encoder's buffer (a caller-specified marshaler), the token records'
// value types through json.MarshalerTo writing tokens, their keyed objects through their
// generated encoders, everything else from the struct tags with encoding/json's semantics and
// HTML escaping off. It gives the bytes the
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

// --- the keyed objects: their generated encoders, written as one value (they are written
// sorted by key, which the struct tags cannot say), as the drop-ins get them through MarshalJSON.

func (v *socialsDTO) MarshalJSONTo(enc *jsontext.Encoder) error {
	return enc.WriteValue(v.appendJSON(enc.AvailableBuffer()))
}

func (v *marketDataDTO) MarshalJSONTo(enc *jsontext.Encoder) error {
	return enc.WriteValue(v.appendJSON(enc.AvailableBuffer()))
}

func (v *periodsDTO) MarshalJSONTo(enc *jsontext.Encoder) error {
	return enc.WriteValue(v.appendJSON(enc.AvailableBuffer()))
}

func (v *multiStatsDTO) MarshalJSONTo(enc *jsontext.Encoder) error {
	return enc.WriteValue(v.appendJSON(enc.AvailableBuffer()))
}

func (v *multiMarketDTO) MarshalJSONTo(enc *jsontext.Encoder) error {
	return enc.WriteValue(v.appendJSON(enc.AvailableBuffer()))
}
