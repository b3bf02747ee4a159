package httpapi

import (
	"bytes"
	"net"
	"strings"
	"sync"
)

// fasthttp (v1.51, what Fiber v2.52 uses) reads a request with both Content-Length and
// Transfer-Encoding: chunked as chunked, takes the last of differing Content-Length headers,
// waits for a body that never comes after an unknown transfer coding, accepts bare-LF line ends
// and a NUL in a header value, and has no setting that refuses any of these. Behind a proxy
// that frames the request the other way, such leniency lets a client smuggle a request. So each
// connection of every address is read through strictConn, which parses each request's head and
// body framing before fasthttp (or the stream endpoint) sees a byte of it, and ends the
// connection at the first request framed ambiguously: fasthttp then answers 400 through the
// usual error path (guardTransport) and closes.

// FramingError is a request whose head or body framing is refused. Param names the header
// (Content-Length, Transfer-Encoding) or "request" for the head itself.
type FramingError struct {
	Param, Reason string
}

func (e *FramingError) Error() string { return "http framing: " + e.Reason }

// HTTPFraming marks the error for readers that cannot import this package (the stream
// listener's split, which hands such a connection to the API to be answered).
func (e *FramingError) HTTPFraming() {}

// StrictFraming wraps ln so that every connection it accepts refuses ambiguous HTTP/1.1 framing.
func StrictFraming(ln net.Listener) net.Listener { return &strictListener{Listener: ln} }

type strictListener struct{ net.Listener }

func (l *strictListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &strictConn{Conn: c}, nil
}

// The states of a connection's byte stream.
const (
	stHead        = iota // collecting a request head, held back until it has been checked
	stBody               // passing a Content-Length body
	stChunkSize          // reading a chunk-size line (passed through once complete)
	stChunkData          // passing chunk data
	stChunkCRLF          // the CRLF after a chunk's data
	stTrailer            // trailer lines after the last chunk
	stPassThrough        // an upgraded connection, or a head too long to check (refused downstream)
)

// maxChunkLine bounds a chunk-size line (its extensions included).
const maxChunkLine = 4096

// strictConn checks the requests read from a connection. Checked bytes wait in out until the
// reader takes them. A request line is passed on as soon as it is complete (it frames nothing,
// and the stream listener's split and fasthttp's read timeout need it early); the header lines
// are held until the blank line ends them and the head has passed. After a refusal the reader
// gets err on every read (first one byte that starts no valid request, if nothing of the head
// was passed on: fasthttp closes a kept-alive connection silently on an error with nothing read),
// so fasthttp fails the request with err.
type strictConn struct {
	net.Conn
	mu       sync.Mutex
	state    int
	buf      []byte // the head, or the chunk-size or trailer line, being collected
	released int    // bytes at the start of buf (the request line) already passed on
	need     int64  // bytes left in the current body or chunk
	out      []byte
	err      error
	raw      [8192]byte
}

func (c *strictConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.out) == 0 {
		if c.err != nil {
			return 0, c.err
		}
		n, err := c.Conn.Read(c.raw[:])
		if n > 0 {
			c.feed(c.raw[:n])
		}
		if err != nil && len(c.out) == 0 {
			if c.err != nil {
				continue // a refusal found in the last bytes: deliver it first
			}
			return 0, err
		}
		if err != nil {
			// Deliver what was checked; the read error comes back on the next call.
			break
		}
	}
	n := copy(p, c.out)
	c.out = c.out[n:]
	if len(c.out) == 0 {
		c.out = nil
	}
	return n, nil
}

// refuse ends the connection's requests with e.
func (c *strictConn) refuse(e *FramingError) {
	c.err = e
	if c.state != stHead || c.released == 0 {
		c.out = append(c.out, 'X')
	}
	c.buf, c.released = nil, 0
}

func (c *strictConn) feed(b []byte) {
	for len(b) > 0 && c.err == nil {
		switch c.state {
		case stPassThrough:
			c.out = append(c.out, b...)
			return
		case stBody, stChunkData:
			k := int64(len(b))
			if k > c.need {
				k = c.need
			}
			c.out = append(c.out, b[:k]...)
			b = b[k:]
			c.need -= k
			if c.need == 0 {
				if c.state == stBody {
					c.state = stHead
				} else {
					c.state = stChunkCRLF
				}
			}
		case stChunkCRLF:
			c.buf = append(c.buf, b[0])
			b = b[1:]
			if len(c.buf) == 2 {
				if string(c.buf) != "\r\n" {
					c.refuse(&FramingError{Param: "Transfer-Encoding", Reason: "a chunk's data is not followed by CRLF"})
					return
				}
				c.out = append(c.out, c.buf...)
				c.buf = c.buf[:0]
				c.state = stChunkSize
			}
		default: // stHead, stChunkSize, stTrailer: line-based
			i := bytes.IndexByte(b, '\n')
			if i < 0 {
				c.buf = append(c.buf, b...)
				b = nil
			} else {
				c.buf = append(c.buf, b[:i+1]...)
				b = b[i+1:]
			}
			c.line(i >= 0)
		}
	}
}

// line handles c.buf after a read in a line-based state; complete tells whether it ends in LF.
func (c *strictConn) line(complete bool) {
	switch c.state {
	case stHead:
		if len(c.buf) > HeaderLimit+4 {
			// fasthttp answers 431 and closes: its own limit, not checked here.
			c.out = append(c.out, c.buf[c.released:]...)
			c.buf, c.released = nil, 0
			c.state = stPassThrough
			return
		}
		if !complete {
			return
		}
		if !bytes.HasSuffix(c.buf, []byte("\n\r\n")) && !bytes.HasSuffix(c.buf, []byte("\n\n")) {
			// Blank lines before a request line are allowed (RFC 9112 2.2): pass them.
			if string(c.buf) == "\r\n" {
				c.out = append(c.out, c.buf...)
				c.buf = c.buf[:0]
			} else if c.buf[len(c.buf)-1] == '\n' && (len(c.buf) < 2 || c.buf[len(c.buf)-2] != '\r') {
				c.refuse(&FramingError{Param: "request", Reason: "a line of the request head ends in a bare LF; HTTP/1.1 lines end in CRLF"})
			} else if c.released == 0 {
				// The request line: passed on once it holds nothing a head may not.
				if bytes.IndexByte(c.buf, 0) >= 0 || bytes.IndexByte(c.buf[:len(c.buf)-2], '\r') >= 0 {
					c.refuse(&FramingError{Param: "request", Reason: "the request line holds a NUL or a bare CR"})
					return
				}
				c.out = append(c.out, c.buf...)
				c.released = len(c.buf)
			}
			return
		}
		c.head()
	case stChunkSize:
		if len(c.buf) > maxChunkLine {
			c.refuse(&FramingError{Param: "Transfer-Encoding", Reason: "a chunk-size line is too long"})
			return
		}
		if !complete {
			return
		}
		size, ok := chunkSize(c.buf)
		if !ok {
			c.refuse(&FramingError{Param: "Transfer-Encoding", Reason: "a chunk-size line does not parse (hexadecimal size, CRLF)"})
			return
		}
		c.out = append(c.out, c.buf...)
		c.buf = c.buf[:0]
		if size == 0 {
			c.state = stTrailer
		} else {
			c.state, c.need = stChunkData, size
		}
	case stTrailer:
		if len(c.buf) > HeaderLimit {
			c.refuse(&FramingError{Param: "Transfer-Encoding", Reason: "the trailer is too long"})
			return
		}
		if !complete {
			return
		}
		if !bytes.HasSuffix(c.buf, []byte("\r\n")) || bytes.IndexByte(c.buf, 0) >= 0 {
			c.refuse(&FramingError{Param: "Transfer-Encoding", Reason: "a trailer line ends in a bare LF or holds a NUL"})
			return
		}
		c.out = append(c.out, c.buf...)
		last := len(c.buf) == 2
		c.buf = c.buf[:0]
		if last {
			c.state = stHead
		}
	}
}

// chunkSize parses "hex[;ext]\r\n".
func chunkSize(line []byte) (int64, bool) {
	l, ok := bytes.CutSuffix(line, []byte("\r\n"))
	if !ok || bytes.IndexByte(l, '\n') >= 0 || bytes.IndexByte(l, '\r') >= 0 || bytes.IndexByte(l, 0) >= 0 {
		return 0, false
	}
	if i := bytes.IndexByte(l, ';'); i >= 0 {
		l = l[:i]
	}
	l = bytes.TrimRight(l, " \t")
	if len(l) == 0 || len(l) > 15 {
		return 0, false
	}
	var n int64
	for _, ch := range l {
		var d byte
		switch {
		case ch >= '0' && ch <= '9':
			d = ch - '0'
		case ch >= 'a' && ch <= 'f':
			d = ch - 'a' + 10
		case ch >= 'A' && ch <= 'F':
			d = ch - 'A' + 10
		default:
			return 0, false
		}
		n = n<<4 | int64(d)
	}
	return n, true
}

// head checks a complete request head (c.buf, ending in a blank line) and, when it passes,
// releases it and sets the state its body framing calls for.
func (c *strictConn) head() {
	h := c.buf
	if e := checkHead(h); e != nil {
		c.refuse(e)
		return
	}
	framing := headFraming(h)
	c.out = append(c.out, h[c.released:]...)
	c.buf, c.released = c.buf[:0], 0
	switch {
	case framing.upgrade:
		// A WebSocket upgrade: what follows is frames. The stream endpoint serves one request
		// per connection, and the API closes a connection after a request asking to upgrade
		// (guardTransport), so no further request is read unchecked.
		c.state = stPassThrough
	case framing.chunked:
		c.state = stChunkSize
	case framing.length > 0:
		c.state, c.need = stBody, framing.length
	default:
		c.state = stHead
	}
}

type framing struct {
	chunked, upgrade bool
	length           int64
}

// checkHead refuses a head with a bare LF or CR, a NUL, a folded or malformed header line,
// Content-Length and Transfer-Encoding together, Content-Lengths that differ or are not digits,
// or a transfer coding other than chunked.
func checkHead(h []byte) *FramingError {
	if bytes.IndexByte(h, 0) >= 0 {
		return &FramingError{Param: "request", Reason: "the request head holds a NUL byte"}
	}
	lines := strings.Split(strings.TrimSuffix(string(h), "\r\n\r\n"), "\r\n")
	for len(lines) > 0 && lines[0] == "" {
		lines = lines[1:] // blank lines before the request line
	}
	for _, l := range lines {
		if strings.ContainsAny(l, "\r\n") {
			return &FramingError{Param: "request", Reason: "a line of the request head ends in a bare LF or CR; HTTP/1.1 lines end in CRLF"}
		}
	}
	if !bytes.HasSuffix(h, []byte("\r\n\r\n")) || len(lines) == 0 {
		return &FramingError{Param: "request", Reason: "the request head does not end in CRLF CRLF"}
	}
	var lengths, codings []string
	for _, l := range lines[1:] {
		if l[0] == ' ' || l[0] == '\t' {
			return &FramingError{Param: "request", Reason: "a header line is folded (starts with white space)"}
		}
		name, value, ok := strings.Cut(l, ":")
		if !ok || name == "" || strings.ContainsAny(name, " \t") {
			return &FramingError{Param: "request", Reason: "a header line is not `name: value` (no white space before the colon)"}
		}
		switch {
		case strings.EqualFold(name, "Content-Length"):
			for _, v := range strings.Split(value, ",") {
				lengths = append(lengths, strings.Trim(v, " \t"))
			}
		case strings.EqualFold(name, "Transfer-Encoding"):
			for _, v := range strings.Split(value, ",") {
				if v = strings.Trim(v, " \t"); v != "" {
					codings = append(codings, strings.ToLower(v))
				}
			}
		}
	}
	if len(lengths) > 0 && len(codings) > 0 {
		return &FramingError{Param: "Transfer-Encoding", Reason: "a request may not carry both Content-Length and Transfer-Encoding"}
	}
	for _, v := range lengths {
		if v == "" || strings.Trim(v, "0123456789") != "" || len(v) > 18 {
			return &FramingError{Param: "Content-Length", Reason: "invalid Content-Length header: must be a number of bytes (digits only)"}
		}
		if strings.TrimLeft(v, "0") != strings.TrimLeft(lengths[0], "0") {
			return &FramingError{Param: "Content-Length", Reason: "differing Content-Length values"}
		}
	}
	if len(codings) > 0 && (len(codings) != 1 || codings[0] != "chunked") {
		return &FramingError{Param: "Transfer-Encoding", Reason: "unsupported transfer coding: only chunked is accepted"}
	}
	return nil
}

// headFraming reads the body framing of a head checkHead accepted.
func headFraming(h []byte) framing {
	var f framing
	for _, l := range strings.Split(string(h), "\r\n")[1:] {
		name, value, _ := strings.Cut(l, ":")
		value = strings.Trim(value, " \t")
		switch {
		case strings.EqualFold(name, "Transfer-Encoding"):
			f.chunked = true
		case strings.EqualFold(name, "Content-Length"):
			v, _, _ := strings.Cut(value, ",")
			for _, ch := range strings.Trim(v, " \t") {
				f.length = f.length*10 + int64(ch-'0')
			}
		case strings.EqualFold(name, "Upgrade") && value != "":
			f.upgrade = true
		}
	}
	return f
}
