package httpapi

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/tokenscope/tokenscope/adapters/ndjson"
	"github.com/tokenscope/tokenscope/domain/fault"
)

// The values of POST /v2/ingest's wait parameter.
const (
	ingestWaitDerived = "derived"
	ingestWaitCommit  = "commit"
)

// ingestResponse reports what the committed batches changed.
type ingestResponse struct {
	Events    int `json:"events"`
	Inserted  int `json:"inserted"`
	Skipped   int `json:"skipped"`
	Trades    int `json:"trades"`
	Rederived int `json:"rederived"`
}

// ingest accepts an NDJSON body of chain events (POST /v2/ingest, scope ingest). The body is
// read as a stream and applied in batches, each committed with its derived state; the answer
// comes after the last batch commits. A malformed line fails the request with an error naming
// the line and field; batches before it stay committed, and re-sending the body is safe because
// every event is idempotent. A body that cannot be read to its end (a malformed chunk, a
// connection cut short) is a 400 on the body, with the same rule for earlier batches.
//
// The body has no total deadline (the route skips REQUEST_TIMEOUT, and HTTP_READ_TIMEOUT only
// covers what arrives before this handler runs): a client may stream for as long as it keeps
// sending. A pause longer than the idle timeout ends the request as a 400 on the body.
//
// wait=derived (the default) answers after the batches' trades are derived too: a read after the
// answer sees their positions, windows and market data. wait=commit answers once the batches are
// committed, their trades durable and served by operation 3, and leaves the derivations to the
// service's background flushes, within about a second while they keep up (a feed that wants
// throughput rather than read-your-writes; docs/engine.md, "Streams").
func (h *handlers) ingest(c *fiber.Ctx) error {
	stream := h.app.Ingest.Stream
	switch w := c.Query("wait", ingestWaitDerived); w {
	case ingestWaitDerived:
	case ingestWaitCommit:
		stream = h.app.Ingest.StreamCommitted
	default:
		return fault.Invalid("wait", w, "must be "+ingestWaitDerived+" (answer after the trades are derived; the default) or "+
			ingestWaitCommit+" (answer once the events are committed; derived data follows within a flush)")
	}
	enc, err := requestEncoding(c)
	if err != nil {
		return err
	}
	var body io.Reader = c.Context().RequestBodyStream()
	var idle *idleReader
	if body == nil {
		// The raw bytes: c.Body() would undo a Content-Encoding without bounds.
		body = bytes.NewReader(c.Request().Body())
	} else if conn := c.Context().Conn(); conn != nil {
		idle = &idleReader{r: body, conn: conn, idle: h.ingestIdle}
		body = idle
	}
	stalled := func() error {
		c.Set(fiber.HeaderConnection, "close")
		return fault.Invalid("body", "", "the request body stalled: no bytes arrived for "+h.ingestIdle.String()+
			" (INGEST_IDLE_TIMEOUT)")
	}
	br := &bodyReader{r: body, fault: errUnreadableBody}
	var in io.Reader = br
	var dr *bodyReader
	var expand *expansionReader
	if enc != "" {
		// The decoded stream is read as it comes, line by line, like a plain one.
		dec, err := decodingReader(br, enc)
		if err != nil {
			if idle != nil && idle.stalled.Load() {
				return stalled()
			}
			if br.failed.Load() {
				c.Set(fiber.HeaderConnection, "close")
				return errUnreadableBody()
			}
			return errUndecodableBody(enc)
		}
		expand = &expansionReader{r: dec, encoded: br}
		dr = &bodyReader{r: expand, fault: func() *fault.Error { return errUndecodableBody(enc) }}
		in = dr
	}
	res, err := stream(c.UserContext(), ndjson.NewDecoder(in), nil)
	if idle != nil && idle.stalled.Load() {
		return stalled()
	}
	if expand != nil && expand.exceeded.Load() {
		// The rest of the body is not read: it must not be parsed as a next request.
		c.Set(fiber.HeaderConnection, "close")
		return errExpandedBody()
	}
	if dr != nil && dr.failed.Load() && !br.failed.Load() {
		return errUndecodableBody(enc)
	}
	if br.failed.Load() {
		// Whatever the decoder made of the bytes before the break (often a cut-off line), the
		// cause is the body; its unread rest must not be parsed as a next request.
		c.Set(fiber.HeaderConnection, "close")
		return errUnreadableBody()
	}
	if err != nil {
		return err
	}
	return c.JSON(ingestResponse{Events: res.Events, Inserted: res.Inserted, Skipped: res.Skipped, Trades: res.Trades,
		Rederived: res.Rederived})
}

// An encoded ingest body may decode to at most ingestDecodedRatio times the encoded bytes read so
// far, plus ingestDecodedSlack. The route streams without a total size, so the bound is a ratio:
// NDJSON of chain events compresses about 5–35× with gzip, while a body made to expand (300 KB of
// gzip holding 300 MB of newlines, 1000×, took 16 s of CPU) goes past it within its first MiB.
const (
	ingestDecodedRatio = 100
	ingestDecodedSlack = 1 << 20
)

func errExpandedBody() *fault.Error {
	return &fault.Error{Kind: fault.KindTooLarge,
		Message: "the decoded request body exceeds 100 times its encoded size plus 1 MiB (the limit of an encoded POST /v2/ingest body)",
		Details: map[string]any{"maxDecodedRatio": ingestDecodedRatio, "maxDecodedSlackBytes": ingestDecodedSlack}}
}

// expansionReader reads the decoded body and fails once it has decoded more than the ratio
// allows over the encoded bytes read so far.
type expansionReader struct {
	r        io.Reader
	encoded  *bodyReader
	decoded  int64
	exceeded atomic.Bool
}

func (e *expansionReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	e.decoded += int64(n)
	if e.decoded > ingestDecodedRatio*e.encoded.read.Load()+ingestDecodedSlack {
		e.exceeded.Store(true)
		return 0, errExpandedBody()
	}
	return n, err
}

// bodyReader notes whether reading the request body failed (rather than ended), and replaces
// the transport's error with the body fault; read counts the bytes read. The decoder reads it
// in its own goroutine.
type bodyReader struct {
	r      io.Reader
	fault  func() *fault.Error
	failed atomic.Bool
	read   atomic.Int64
}

func (b *bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.read.Add(int64(n))
	if err != nil && !errors.Is(err, io.EOF) {
		b.failed.Store(true)
		return n, b.fault()
	}
	return n, err
}

// idleReader moves the connection's read deadline to idle from now before every read of the
// streamed body, so the body may take any time as long as no pause exceeds idle; stalled notes
// a read that failed because the deadline passed.
type idleReader struct {
	r       io.Reader
	conn    net.Conn
	idle    time.Duration
	stalled atomic.Bool
}

func (r *idleReader) Read(p []byte) (int, error) {
	deadline := time.Now().Add(r.idle)
	if err := r.conn.SetReadDeadline(deadline); err != nil {
		return 0, err
	}
	n, err := r.r.Read(p)
	var ne net.Error
	if err != nil && (errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() || !time.Now().Before(deadline)) &&
		!errors.Is(err, io.EOF) {
		r.stalled.Store(true)
	}
	return n, err
}
