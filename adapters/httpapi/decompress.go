package httpapi

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"io"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/tokenscope/tokenscope/domain/fault"
)

// contentEncodings are the request body encodings the API undoes itself (HTTP's "deflate" is
// the zlib format). Fiber's c.Body() would undo them too, but without any bound on the decoded
// size: a 1 MiB body of zeros compressed by gzip decodes to about 1 GiB.
var contentEncodings = []string{"identity", "gzip", "deflate"}

// requestEncoding is the request's Content-Encoding, lower-cased, "" for none or identity.
// Several codings, or one outside contentEncodings, is a 400 naming the header.
func requestEncoding(c *fiber.Ctx) (string, error) {
	enc := strings.ToLower(strings.TrimSpace(string(c.Request().Header.Peek(fiber.HeaderContentEncoding))))
	switch enc {
	case "", "identity":
		return "", nil
	case "gzip", "x-gzip":
		return "gzip", nil
	case "deflate":
		return "deflate", nil
	}
	return "", &fault.Error{Kind: fault.KindInvalid, Code: fault.CodeInvalidParameter, Param: fiber.HeaderContentEncoding,
		Value: text50(enc), Allowed: contentEncodings,
		Message: "unsupported Content-Encoding; allowed: " + strings.Join(contentEncodings, ", ")}
}

// decodingReader undoes enc over r ("" returns r).
func decodingReader(r io.Reader, enc string) (io.Reader, error) {
	switch enc {
	case "gzip":
		return gzip.NewReader(r)
	case "deflate":
		return zlib.NewReader(r)
	}
	return r, nil
}

// decodeBody replaces an encoded body with its decoded bytes, at most max of them (413 past
// that), and drops the header so that nothing decodes it again.
func decodeBody(c *fiber.Ctx, enc string, max int) error {
	req := c.Request()
	r, err := decodingReader(bytes.NewReader(req.Body()), enc)
	if err == nil {
		var buf []byte
		buf, err = io.ReadAll(io.LimitReader(r, int64(max)+1))
		if err == nil {
			if len(buf) > max {
				return fault.TooLarge("request body exceeds 1 MiB once decoded")
			}
			req.SetBody(buf)
			req.Header.Del(fiber.HeaderContentEncoding)
			return nil
		}
	}
	return errUndecodableBody(enc)
}

func errUndecodableBody(enc string) *fault.Error {
	return fault.Invalid("body", "", "the body is not valid "+enc+" data (Content-Encoding: "+enc+")")
}

// text50 cuts a header value for an error's details.
func text50(s string) string {
	if len(s) > 50 {
		return s[:50]
	}
	return s
}
