package httpapi

import (
	"bytes"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/gofiber/fiber/v2"
	"github.com/shopspring/decimal"
)

// Response encoding. Every JSON body the API sends, c.JSON's and the read routes', is one DTO
// (dto_market.go, dto_token.go) encoded by github.com/go-json-experiment/json, the encoding/json
// v2 of Go's jsonv2 experiment, with encoding/json's (v1) semantics and HTML escaping off, so
// the bytes are the ones encoding/json with SetEscapeHTML(false) writes and messages such as
// "Bearer <key>" read as written. A field added to a DTO is encoded from its struct tag.
//
// Two things are not left to reflection, for speed: decimal.Decimal values are written by
// appendDecimal (decimal.go) into the encoder's buffer instead of through MarshalJSON (a
// big.Int to string conversion and several allocations each), and the token records' keyed
// objects write their key tables (dto_token.go). encode_bench_test.go measures the choice
// against the other encoders; testdata/golden holds the bytes every route must keep.

// jsonOptions are the marshal options of every response.
var jsonOptions = json.JoinOptions(
	jsonv1.DefaultOptionsV1(),
	jsontext.EscapeForHTML(false),
	json.WithMarshalers(json.MarshalToFunc(writeDecimal)),
)

// writeDecimal writes d as decimal.Decimal's MarshalJSON does (appendDecimal).
func writeDecimal(enc *jsontext.Encoder, d decimal.Decimal) error {
	return enc.WriteValue(appendDecimal(enc.AvailableBuffer(), d))
}

// encodeJSON is Fiber's JSONEncoder (c.JSON).
func encodeJSON(v any) ([]byte, error) {
	return json.Marshal(v, jsonOptions)
}

// sendJSON sets the response body to v encoded, with the JSON content type: what c.JSON does,
// encoding into the response's own body buffer, which the server keeps with each connection's
// context (Fiber leaves fasthttp's ReduceMemoryUsage off), so the body is neither allocated nor
// copied once it has grown to the route's size.
func sendJSON(c *fiber.Ctx, v any) error {
	var err error
	sendBody(c, func(b []byte) []byte {
		b, err = appendJSON(b, v)
		return b
	})
	return err
}

// appendJSON appends v encoded to b.
func appendJSON(b []byte, v any) ([]byte, error) {
	buf := bytes.NewBuffer(b)
	err := json.MarshalWrite(buf, v, jsonOptions)
	return buf.Bytes(), err
}

// mustAppendJSON is appendJSON for the DTOs whose encoding cannot fail (strings, numbers,
// decimals and the types of dto_token.go, never a channel, function or cycle): the token lists
// rankcache.go keeps encoded.
func mustAppendJSON(b []byte, v any) []byte {
	b, err := appendJSON(b, v)
	if err != nil {
		panic("httpapi: encoding a response DTO: " + err.Error())
	}
	return b
}
