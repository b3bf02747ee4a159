package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/tokenscope/tokenscope/domain/account"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/text"
)

// requestState is what the middleware records about one request for the handlers, the error
// handler and the access log: one allocation, stored once in the fiber.Ctx locals.
type requestState struct {
	id        string
	principal account.Principal
}

// stateKey is the fiber.Ctx locals key of the *requestState.
type stateKey struct{}

func stateOf(c *fiber.Ctx) *requestState {
	st, _ := c.Locals(stateKey{}).(*requestState)
	return st
}

// Authenticator turns a presented API key into a principal.
type Authenticator interface {
	Authenticate(ctx context.Context, presented string) (account.Principal, error)
}

func requestID(c *fiber.Ctx) string {
	if st := stateOf(c); st != nil {
		return st.id
	}
	return ""
}

func routeOf(c *fiber.Ctx) string {
	if r := c.Route(); r != nil && r.Path != "" && r.Path != "/" {
		return r.Path
	}
	return "unmatched"
}

// withRequestID accepts a sane incoming X-Request-Id or makes one, and echoes it.
func withRequestID(c *fiber.Ctx) error {
	st := &requestState{id: acceptRequestID(c.Get(fiber.HeaderXRequestID))}
	c.Locals(stateKey{}, st)
	c.Set(fiber.HeaderXRequestID, st.id)
	return c.Next()
}

// acceptRequestID keeps an incoming request id that is sane, or makes a new one.
func acceptRequestID(id string) string {
	if id == "" || len(id) > 128 || strings.ContainsAny(id, " \t\r\n") {
		return newRequestID()
	}
	return strings.Clone(id) // the header aliases a buffer fasthttp reuses
}

// Request ids are 24 hex digits: 32 random bits chosen at start-up, then 64 bits that are a
// bijective scramble of a per-process counter, so ids never repeat within a process, do not
// reveal how many requests it served, and cost no system call.
var (
	idPrefix, idOffset = func() (uint32, uint64) {
		var b [12]byte
		_, _ = rand.Read(b[:]) // crypto/rand.Read does not fail on supported platforms
		return binary.LittleEndian.Uint32(b[:4]), binary.LittleEndian.Uint64(b[4:])
	}()
	idCounter atomic.Uint64
)

func newRequestID() string {
	var b [24]byte
	binary.BigEndian.PutUint32(b[12:16], idPrefix)
	binary.BigEndian.PutUint64(b[16:24], scramble(idOffset+idCounter.Add(1)))
	hex.Encode(b[:], b[12:])
	return string(b[:])
}

// scramble is SplitMix64's finaliser: each step (xor with a right shift, multiplication by an
// odd constant) is invertible, so distinct inputs give distinct outputs.
func scramble(x uint64) uint64 {
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// withRecover turns a panic into a logged 500 instead of a dropped connection.
func withRecover(log *slog.Logger) fiber.Handler {
	return func(c *fiber.Ctx) (err error) {
		defer func() {
			if r := recover(); r != nil {
				log.Error("panic", "requestId", requestID(c), "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		return c.Next()
	}
}

// withAccessLog logs one line per request and records metrics. The Authorization and
// X-API-KEY headers are never logged.
func withAccessLog(log *slog.Logger, m *Metrics) fiber.Handler {
	return func(c *fiber.Ctx) error {
		start := time.Now()
		err := c.Next()
		if err != nil {
			if herr := c.App().ErrorHandler(c, err); herr != nil {
				_ = c.SendStatus(fiber.StatusInternalServerError)
			}
		}
		status := c.Response().StatusCode()
		end := time.Now()
		elapsed := end.Sub(start)
		route := routeOf(c)
		if m != nil {
			m.observe(c.Method(), route, status, elapsed)
		}
		level := slog.LevelInfo
		switch {
		case status == fiber.StatusServiceUnavailable && route == "/readyz":
			// "Not ready yet" is the readiness check's answer (at start-up, or while a dependency is
			// down), not a failed request: orchestrators poll it, and each 503 is no error.
			level = slog.LevelDebug
		case status >= 500:
			level = slog.LevelError
		}
		ctx := c.UserContext()
		if !log.Enabled(ctx, level) {
			return nil
		}
		// What log.Log(ctx, level, "http", key, value, …) writes, built as typed attributes (no
		// boxing) and without Logger.Log's runtime.Callers: the handler is not set to add the
		// source location, which would point here anyway.
		r := slog.NewRecord(end, level, "http", 0)
		r.AddAttrs(slog.String("requestId", requestID(c)), slog.String("method", c.Method()), slog.String("route", route),
			slog.String("path", c.Path()), slog.Int("status", status),
			slog.Float64("durationMs", float64(elapsed.Microseconds())/1000), slog.Int("bytes", responseBytes(c)))
		_ = log.Handler().Handle(ctx, r)
		return nil
	}
}

// withTimeout bounds the time a handler's context lives. A streamed route (POST /v2/ingest)
// gets no total deadline: its body may stream for as long as it keeps coming, and the ingest
// handler's idle timeout ends a stalled one.
func withTimeout(d time.Duration) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if d <= 0 || streamedPaths[c.Path()] {
			return c.Next()
		}
		ctx, cancel := context.WithTimeout(c.UserContext(), d)
		defer cancel()
		c.SetUserContext(ctx)
		return c.Next()
	}
}

// presentedKey reads the key from `Authorization: Bearer <key>` or `X-API-KEY: <key>`
// (real clients of this API send the latter; when both are present the API key header wins).
// The key is a copy: c.Get aliases a buffer fasthttp reuses for the next request, and the key
// cache keeps the key's prefix as a map key, which the next request would rewrite in place.
func presentedKey(c *fiber.Ctx) string {
	if k := strings.TrimSpace(c.Get("X-API-KEY")); k != "" {
		return strings.Clone(k)
	}
	h := strings.TrimSpace(c.Get(fiber.HeaderAuthorization))
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.Clone(strings.TrimSpace(h[7:]))
	}
	return ""
}

// withAuth authenticates every request it guards. A client address whose failures have emptied
// its bucket (failureGate) is refused 429 before its key is looked up.
func withAuth(auth Authenticator, failures *failureGate) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if err := failures.check(c); err != nil {
			return err
		}
		key := presentedKey(c)
		if key == "" {
			c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="tokenscope"`)
			return failures.failed(c, fault.Unauthorized("missing API key: send Authorization: Bearer <key> or X-API-KEY: <key>"))
		}
		p, err := auth.Authenticate(c.UserContext(), key)
		if err != nil {
			if fault.Is(err, fault.KindUnauthorized) {
				c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="tokenscope", error="invalid_token"`)
				return failures.failed(c, err)
			}
			return err
		}
		if st := stateOf(c); st != nil {
			st.principal = p
		} else {
			c.Locals(stateKey{}, &requestState{principal: p})
		}
		return c.Next()
	}
}

// need guards a route with a scope. Being the first handler that runs with the route matched,
// it also refuses path values that are not text (see withText): path escapes are not decoded,
// so only raw bytes a client wrote into the request line can be NUL or invalid UTF-8.
func need(s account.Scope) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if err := principal(c).Require(s); err != nil {
			return err
		}
		for _, name := range c.Route().Params {
			if err := text.Check(name, c.Params(name)); err != nil {
				return err
			}
		}
		return c.Next()
	}
}

// withText refuses, before any handler decodes the request, text Postgres cannot hold (a NUL or
// invalid UTF-8, see domain/text): in a query value, named by its key, and a NUL anywhere in a
// JSON body, named by its path (text.CheckJSON). Handlers and use cases may then take every
// string as storable. The streamed ingest body is checked line by line by its codec.
func withText(c *fiber.Ctx) error {
	var err error
	if !asciiQuery(c.Request().URI().QueryString()) {
		err = checkQueryText(c)
	}
	if err != nil {
		return err
	}
	// c.Body() undoes a Content-Encoding, as the handlers see the body; a request without a
	// body (every read) skips it. The streamed route is tested first: asking for its body would
	// read the whole stream.
	if !streamedPaths[c.Path()] && len(c.Request().Body()) > 0 {
		if err := text.CheckJSON(c.Body()); err != nil {
			return err
		}
	}
	return c.Next()
}

// checkQueryText refuses the first query key or value that is not storable text.
func checkQueryText(c *fiber.Ctx) error {
	var err error
	c.Context().QueryArgs().VisitAll(func(k, v []byte) {
		if err != nil || text.StorableBytes(k) && text.StorableBytes(v) {
			return
		}
		name := strings.TrimSuffix(string(k), "[]")
		if err = text.Check(text.Shown(name), name); err == nil {
			err = text.Check(name, string(v))
		}
	})
	return err
}

// asciiQuery reports whether every key and value of the raw query q decodes to ASCII without a
// NUL, so is storable text, as nearly every query does: its bytes are ASCII other than NUL and
// each %XX escape stands for such a byte ('+' stands for a space). withText then need not parse
// the query.
func asciiQuery(q []byte) bool {
	for i, b := range q {
		if b == 0 || b >= utf8.RuneSelf {
			return false
		}
		if b == '%' && i+2 < len(q) {
			hi, lo := unhex(q[i+1]), unhex(q[i+2])
			if hi < 16 && lo < 16 && (hi >= 8 || hi|lo == 0) {
				return false
			}
		}
	}
	return true
}

// unhex is the value of a hex digit, or 16 for another byte.
func unhex(b byte) byte {
	switch {
	case '0' <= b && b <= '9':
		return b - '0'
	case 'a' <= b && b <= 'f':
		return b - 'a' + 10
	case 'A' <= b && b <= 'F':
		return b - 'A' + 10
	}
	return 16
}

// principal is the authenticated caller; routes behind withAuth always have one.
func principal(c *fiber.Ctx) account.Principal {
	if st := stateOf(c); st != nil {
		return st.principal
	}
	return account.Principal{}
}

// streamedPaths may send bodies above BodyLimit; their handlers read the stream themselves
// and must bound what they accept.
var streamedPaths = map[string]bool{"/v2/ingest": true}

// drainLimit is the largest refused body still read to its end before the 413 is sent.
const drainLimit = 8 << 20

// withBodyLimit enforces BodyLimit on every other route. The server streams request bodies (so
// the ingest route can take large NDJSON uploads), which means fasthttp no longer rejects big
// bodies itself: this reads at most max+1 bytes and answers 413. A request refused before its
// body was read closes the connection, so the unread bytes are never parsed as a next request.
func withBodyLimit(max int) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if streamedPaths[c.Path()] {
			return c.Next()
		}
		req := c.Request()
		if cl := req.Header.ContentLength(); cl > max {
			// Answering before the client has finished sending makes many clients see a reset
			// instead of the 413, so a moderately large body is read and discarded first; a
			// huge one is cut off.
			if req.IsBodyStream() && cl <= drainLimit {
				_, _ = io.Copy(io.Discard, io.LimitReader(c.Context().RequestBodyStream(), int64(cl)))
			}
			c.Set(fiber.HeaderConnection, "close")
			return fault.TooLarge("request body exceeds 1 MiB")
		}
		if req.IsBodyStream() {
			buf, err := io.ReadAll(io.LimitReader(c.Context().RequestBodyStream(), int64(max)+1))
			if err != nil {
				c.Set(fiber.HeaderConnection, "close")
				return errUnreadableBody()
			}
			if len(buf) > max {
				c.Set(fiber.HeaderConnection, "close")
				return fault.TooLarge("request body exceeds 1 MiB")
			}
			req.SetBody(buf)
		} else if len(req.Body()) > max {
			return fault.TooLarge("request body exceeds 1 MiB")
		}
		enc, err := requestEncoding(c)
		if err != nil {
			return err
		}
		if enc != "" {
			if err := decodeBody(c, enc, max); err != nil {
				return err
			}
		}
		return c.Next()
	}
}

// errUnreadableBody is the fault of a request body that cannot be read to its end: a malformed
// chunk, a connection closed before Content-Length bytes, the read timeout. fasthttp's error is
// not shown (its text may quote the request).
func errUnreadableBody() *fault.Error {
	return fault.Invalid("body", "", "could not read the request body: it broke off or its chunked framing is malformed")
}

// responseBytes is the body size for the access log. A streamed body (the job stream) is not
// measured: Response.Body() would drain the stream, blocking until it ends.
func responseBytes(c *fiber.Ctx) int {
	if c.Response().IsBodyStream() {
		return -1
	}
	return len(c.Response().Body())
}
