package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// exchangeAll writes raw on one connection, which it leaves open for writing, and reads every
// response the server sends until it closes the connection.
func exchangeAll(t *testing.T, base, raw string) []resp {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	// A guard against a hang (a server waiting for a body that never comes), not a timing assertion.
	require.NoError(t, conn.SetDeadline(time.Now().Add(20*time.Second)))
	_, err = io.WriteString(conn, raw)
	require.NoError(t, err)
	br := bufio.NewReader(conn)
	var out []resp
	for {
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			var ne net.Error
			require.False(t, errorsAsTimeout(err, &ne), "the server neither answered nor closed the connection (%d answers so far)", len(out))
			return out
		}
		body, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		_ = res.Body.Close()
		out = append(out, resp{Status: res.StatusCode, Header: res.Header, Body: body})
		if res.Close {
			// The server said it closes: nothing more may come.
			_, err := br.ReadByte()
			require.Error(t, err, "bytes after an answer with Connection: close")
			return out
		}
	}
}

func errorsAsTimeout(err error, ne *net.Error) bool {
	if e, ok := err.(net.Error); ok {
		*ne = e
		return e.Timeout()
	}
	return false
}

// TestHTTPFramingIsStrict: on every address (main, dex, admin, and the stream's path) a request
// framed ambiguously is answered 400 with the API's error body naming the header and the
// connection is closed, so nothing sent after it runs: Content-Length with Transfer-Encoding,
// differing Content-Lengths, an unknown transfer coding, bare-LF line ends and a NUL in a header
// value, first on a connection or after a good request on a kept-alive one. Before, the first
// was read as chunked and the request after its terminator answered, the second took the last
// length, the third hung 8 s, the last two were served.
func TestHTTPFramingIsStrict(t *testing.T) {
	e := newEnv(t)
	const smuggled = "GET /healthz?smuggled=1 HTTP/1.1\r\nHost: t\r\n\r\n"
	cases := []struct {
		name, head, param string
	}{
		{"both Content-Length and chunked", "POST /v2/ingest HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + smuggled, "Transfer-Encoding"},
		{"chunked then Content-Length", "POST /v2/ingest HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n" + smuggled, "Transfer-Encoding"},
		{"differing Content-Lengths", "POST /v2/ingest HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\nContent-Length: 48\r\n\r\n" + smuggled, "Content-Length"},
		{"unknown transfer coding", "POST /v2/ingest HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n" + smuggled, "Transfer-Encoding"},
		{"gzip transfer coding", "POST /v2/ingest HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n" + smuggled, "Transfer-Encoding"},
		{"bare LF", "GET /healthz HTTP/1.1\nHost: t\n\n" + smuggled, "request"},
		{"NUL in a header value", "GET /healthz HTTP/1.1\r\nHost: t\r\nX-Note: a\x00b\r\n\r\n" + smuggled, "request"},
		{"white space before a colon", "POST /v2/ingest HTTP/1.1\r\nHost: t\r\nTransfer-Encoding : chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n" + smuggled, "request"},
	}
	addrs := map[string]string{"main": e.base, "dex": e.dex, "admin": e.admin}
	for name, base := range addrs {
		for _, tc := range cases {
			for _, after := range []bool{false, true} {
				label := name + "/" + tc.name
				raw := tc.head
				if after {
					label += "/after a good request"
					raw = "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n" + raw
				}
				t.Run(label, func(t *testing.T) {
					got := exchangeAll(t, base, raw)
					if after {
						require.NotEmpty(t, got)
						require.Equal(t, http.StatusOK, got[0].Status, "the good request is answered")
						got = got[1:]
					}
					// exchangeAll returns once the server has closed the connection.
					require.Len(t, got, 1, "one 400 and the connection closed: nothing after it runs")
					body := requireErrorBody(t, got[0], http.StatusBadRequest)
					details, _ := body["details"].(map[string]any)
					assert.Equal(t, tc.param, details["parameter"], "%s", got[0].Body)
				})
			}
		}
	}
	t.Run("stream path", func(t *testing.T) {
		got := exchangeAll(t, e.base, "GET /connection/websocket HTTP/1.1\r\nHost: t\r\nUpgrade: websocket\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"+smuggled)
		require.Len(t, got, 1)
		var body map[string]any
		require.NoError(t, json.Unmarshal(got[0].Body, &body))
		assert.Equal(t, http.StatusBadRequest, got[0].Status)
	})
	t.Run("well-framed requests still pass", func(t *testing.T) {
		got := exchangeAll(t, e.base, "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n"+
			"POST /v2/ingest HTTP/1.1\r\nHost: t\r\nX-API-KEY: "+e.key+"\r\nContent-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n\n\r\n0\r\nX-Trailer: ok\r\n\r\n"+
			"GET /healthz HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n"+
			"GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
		require.Len(t, got, 4)
		for i, r := range got {
			assert.Equal(t, http.StatusOK, r.Status, "request %d: %s", i+1, r.Body)
		}
	})
}
