package realtime

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// The API apps are Fiber (fasthttp), whose connections cannot be handed to a net/http
// WebSocket handler. Rather than a port of its own, the endpoint shares the API's listeners:
// Split reads each new connection's request line and hands the ones that open
// `GET /connection/websocket` to a net/http server running the library's handler, and every
// other connection to Fiber unchanged. A WebSocket client always opens a connection of its own
// for the upgrade, so one look per connection suffices; Fiber never sees the stream, and the
// stream never costs Fiber a request.

// Split returns the listener Fiber serves and the one the stream server serves, both fed by ln.
func Split(ln net.Listener) (api, ws net.Listener) {
	s := &split{ln: ln, api: make(chan net.Conn), ws: make(chan net.Conn), done: make(chan struct{})}
	go s.accept()
	return &child{s: s, ch: s.api}, &child{s: s, ch: s.ws}
}

type split struct {
	ln      net.Listener
	api, ws chan net.Conn
	done    chan struct{}
	once    sync.Once
	err     error
}

// classifyTimeout bounds how long a new connection may take to send its request line.
const classifyTimeout = 10 * time.Second

func (s *split) accept() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			s.err = err
			s.close()
			return
		}
		go s.classify(c)
	}
}

func (s *split) classify(c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(classifyTimeout))
	br := bufio.NewReaderSize(c, 4096)
	isWS, lineRead := false, false
	for n := 1; n <= br.Size(); n++ {
		b, err := br.Peek(n)
		var framing interface{ HTTPFraming() }
		if err != nil && errors.As(err, &framing) {
			// A request the listener underneath refused (httpapi.StrictFraming): the API
			// answers it with its error body and closes.
			isWS = false
			break
		}
		if err != nil {
			_ = c.Close()
			return
		}
		if !lineRead && b[n-1] == '\n' {
			lineRead, isWS = true, isStreamRequest(b)
			if !isWS {
				break
			}
		}
		// A stream request is handed over once its whole head has arrived (StrictFraming
		// passes its header lines only once they are checked), so that one refused goes to the
		// API too; a head beyond the buffer goes to the stream, whose server refuses it.
		if lineRead && bytes.HasSuffix(b, []byte("\r\n\r\n")) {
			break
		}
	}
	_ = c.SetReadDeadline(time.Time{})
	pc := &peekedConn{Conn: c, r: br}
	dst := s.api
	var conn net.Conn = pc
	if isWS {
		dst, conn = s.ws, newTapConn(pc)
	}
	select {
	case dst <- conn:
	case <-s.done:
		_ = c.Close()
	}
}

// isStreamRequest reports whether a request line opens the stream endpoint.
func isStreamRequest(line []byte) bool {
	rest, ok := bytes.CutPrefix(line, []byte("GET "+Path))
	return ok && len(rest) > 0 && (rest[0] == ' ' || rest[0] == '?')
}

func (s *split) close() {
	s.once.Do(func() {
		close(s.done)
		_ = s.ln.Close()
	})
}

type child struct {
	s  *split
	ch chan net.Conn
}

func (c *child) Accept() (net.Conn, error) {
	select {
	case conn := <-c.ch:
		return conn, nil
	case <-c.s.done:
		if c.s.err != nil {
			return nil, c.s.err
		}
		return nil, net.ErrClosed
	}
}

func (c *child) Close() error   { c.s.close(); return nil }
func (c *child) Addr() net.Addr { return c.s.ln.Addr() }

// peekedConn reads what classify peeked before the rest of the connection.
type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *peekedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// tapConn watches what a WebSocket client sends: past the upgrade request, it decodes the
// client's frames (masked, uncompressed: the server does not offer compression) and hands each
// newline-delimited JSON command to the connection's filters before the library reads it.
type tapConn struct {
	net.Conn
	filters *filters

	headerDone bool
	hdr        []byte // the request head until its blank line, then a frame header being read
	need       int    // payload bytes left in the current frame
	mask       [4]byte
	maskPos    int
	data       bool   // the current frame carries data (text, binary or continuation)
	line       []byte // the command being assembled
	skip       bool   // the command grew past the limit: ignore it up to its end
	finPending bool   // the current data frame ends its message
}

func newTapConn(c net.Conn) *tapConn { return &tapConn{Conn: c, filters: &filters{}} }

// maxCommand bounds a command the tap assembles (the library's default message size limit).
const maxCommand = 65536

func (t *tapConn) Read(p []byte) (int, error) {
	n, err := t.Conn.Read(p)
	if n > 0 {
		t.feed(p[:n])
	}
	return n, err
}

func (t *tapConn) feed(b []byte) {
	for len(b) > 0 {
		if !t.headerDone {
			i := bytes.IndexByte(b, '\n')
			if i < 0 {
				t.hdr = append(t.hdr, b...)
				if len(t.hdr) > 16384 {
					t.headerDone, t.hdr = true, nil // not HTTP; the server will refuse it
				}
				return
			}
			t.hdr = append(t.hdr, b[:i+1]...)
			b = b[i+1:]
			if bytes.HasSuffix(t.hdr, []byte("\r\n\r\n")) || bytes.HasSuffix(t.hdr, []byte("\n\n")) {
				t.headerDone, t.hdr = true, t.hdr[:0]
			}
			continue
		}
		if t.need == 0 {
			t.hdr = append(t.hdr, b[0])
			b = b[1:]
			t.frameHeader()
			continue
		}
		k := min(t.need, len(b))
		if t.data {
			t.payload(b[:k])
		}
		b = b[k:]
		t.need -= k
	}
}

// frameHeader parses t.hdr once it holds a whole frame header.
func (t *tapConn) frameHeader() {
	h := t.hdr
	if len(h) < 2 {
		return
	}
	size, l := 2, int(h[1]&0x7f)
	switch l {
	case 126:
		size += 2
	case 127:
		size += 8
	}
	masked := h[1]&0x80 != 0
	if masked {
		size += 4
	}
	if len(h) < size {
		return
	}
	length := uint64(l)
	switch l {
	case 126:
		length = uint64(binary.BigEndian.Uint16(h[2:4]))
	case 127:
		length = binary.BigEndian.Uint64(h[2:10])
	}
	if masked {
		copy(t.mask[:], h[size-4:size])
	} else {
		t.mask = [4]byte{}
	}
	op := h[0] & 0x0f
	fin := h[0]&0x80 != 0
	t.data = op <= 2
	t.maskPos = 0
	t.hdr = t.hdr[:0]
	if length > 1<<31 {
		length = 1 << 31
	}
	t.need = int(length)
	if t.data && fin && t.need == 0 {
		t.endMessage()
	}
	if t.data && fin {
		t.finPending = true
	} else if t.data {
		t.finPending = false
	}
}

func (t *tapConn) payload(b []byte) {
	for _, c := range b {
		c ^= t.mask[t.maskPos&3]
		t.maskPos++
		if c == '\n' {
			t.endLine()
			continue
		}
		if t.skip {
			continue
		}
		if len(t.line) >= maxCommand {
			t.skip, t.line = true, t.line[:0]
			continue
		}
		t.line = append(t.line, c)
	}
	if t.need == len(b) && t.finPending {
		t.endMessage()
	}
}

func (t *tapConn) endLine() {
	if !t.skip && len(t.line) > 0 {
		t.filters.command(t.line)
	}
	t.line, t.skip = t.line[:0], false
}

func (t *tapConn) endMessage() { t.endLine() }

// ConnContext gives each stream connection's requests the tap's filters.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if t, ok := c.(*tapConn); ok {
		return context.WithValue(ctx, filtersKey{}, t.filters)
	}
	return ctx
}

// Serve runs the stream endpoint on ln (from Split) until ctx ends.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	mux := http.NewServeMux()
	mux.Handle(Path, upgradeOnly(s.handler))
	srv := &http.Server{Handler: mux, ConnContext: ConnContext, ReadHeaderTimeout: classifyTimeout}
	// A connection is classified by its first request only: one that came here must not stay
	// open for more requests, which would then miss the API (a client that GETs the stream's
	// path without upgrading and reuses the connection). An upgrade hijacks the connection and
	// is unaffected.
	srv.SetKeepAlivesEnabled(false)
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	err := srv.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) || errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// upgradeOnly answers a request to the stream's path that is not a WebSocket upgrade with the
// API's error shape (400 naming the Upgrade header) and closes the connection.
func upgradeOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
			h.ServeHTTP(w, r)
			return
		}
		id := r.Header.Get("X-Request-Id")
		if id == "" || len(id) > 64 {
			b := make([]byte, 8)
			_, _ = rand.Read(b)
			id = hex.EncodeToString(b)
		}
		w.Header().Set("X-Request-Id", id)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Connection", "close")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]any{
			"code":      http.StatusBadRequest,
			"message":   Path + " is the realtime stream: it takes a WebSocket upgrade (Centrifuge JSON protocol)",
			"timestamp": time.Now().UTC().Format(time.RFC3339),
			"details":   map[string]any{"parameter": "Upgrade", "value": r.Header.Get("Upgrade"), "allowed_values": []string{"websocket"}},
			"requestId": id,
		})
	})
}
