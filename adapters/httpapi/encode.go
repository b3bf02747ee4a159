package httpapi

import (
	"bytes"
	"encoding/json"
	"sync"

	"github.com/gofiber/fiber/v2"
)

// Response encoding. Every JSON body is a DTO with json tags (dto_market.go, dto_token.go),
// sent by sendJSON (or c.JSON, whose encoder is the same encodeJSON), and written as
// encoding/json with HTML escaping off writes it, so messages such as "Bearer <key>" read as
// written. The DTOs of the read routes have generated encoders (dto_json_gen.go, from their
// types by encoders_gen_test.go: an appendJSON per struct), which write those bytes without
// reflection and, for decimals, without MarshalJSON's big.Int to string conversion (appendDecimal):
// on a page of 100 token records encoding/json costs about ten times as much
// (encode_bench_test.go). Adding a field to a DTO is one edit in its type, then regenerating.
// testdata/golden holds the bytes every read route must keep.

// jsonAppender is a DTO with a generated (or, for the token records' value types and keyed
// objects, dto_json.go, written) encoder.
type jsonAppender interface {
	appendJSON(b []byte) []byte
}

// appendItem writes *v, whose pointer is a jsonAppender (an item of a generated page).
func appendItem[T any](b []byte, v *T) []byte {
	return any(v).(jsonAppender).appendJSON(b)
}

// sendJSON sets the response body to v encoded, with the JSON content type: what c.JSON does
// for a DTO without a generated encoder. It writes into the response's own body buffer, which the server keeps with
// each connection's context (Fiber leaves fasthttp's ReduceMemoryUsage off), so once it has
// grown to the route's size the body is neither allocated nor copied.
func sendJSON(c *fiber.Ctx, v jsonAppender) error {
	return sendBody(c, v.appendJSON)
}

// sendBody sets the response body to what write appends, with the JSON content type.
// It returns nil, so a handler can end with it.
func sendBody(c *fiber.Ctx, write func([]byte) []byte) error {
	resp := c.Response()
	resp.SwapBody(write(resp.SwapBody(nil)[:0]))
	resp.Header.SetContentType(fiber.MIMEApplicationJSON)
	return nil
}

// encodeJSON is Fiber's JSONEncoder (c.JSON): encoding/json without HTML escaping.
func encodeJSON(v any) ([]byte, error) {
	e := encoders.Get().(*reflectEncoder)
	e.buf.Reset()
	err := e.enc.Encode(v)
	var out []byte
	if err == nil {
		// The buffer is reused, so the caller gets an exact-size copy (Fiber keeps the slice
		// as the response body).
		out = bytes.Clone(bytes.TrimSuffix(e.buf.Bytes(), []byte("\n")))
	}
	if e.buf.Cap() <= maxPooledEncoder {
		encoders.Put(e)
	}
	return out, err
}

// reflectEncoder is a reusable encoding/json encoder and its buffer.
type reflectEncoder struct {
	buf bytes.Buffer
	enc *json.Encoder
}

// maxPooledEncoder is the largest buffer kept for reuse; rare huge responses do not pin memory.
const maxPooledEncoder = 1 << 20

var encoders = sync.Pool{New: func() any {
	e := &reflectEncoder{}
	e.enc = json.NewEncoder(&e.buf)
	e.enc.SetEscapeHTML(false)
	return e
}}
