package main

// End-to-end tests of the HTTP edge: which address serves what, requests refused before they
// reach the router (sent over raw TCP, since net/http would refuse to send most of them), and
// streamed bodies that break off.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/ndjson"
	"github.com/tokenscope/tokenscope/app/config"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/domain/token"
)

// edgeToken is a minimal valid token on sol.
func edgeToken(addr string) chainevent.TokenCreated {
	return chainevent.TokenCreated{Token: token.Token{Chain: chain.Sol, Address: addr, Decimals: 6, Name: "Edge " + addr,
		Symbol: "EDGE"}, TotalSupply: dd("1000"), CirculatingSupply: dd("1000")}
}

// rawRequest writes raw to the server at base (http://host:port) byte for byte, closes its
// sending side (so a request cut short ends there) and reads one response.
func rawRequest(t *testing.T, base, raw string) resp {
	t.Helper()
	return rawExchange(t, base, raw, true)
}

// rawExchange is rawRequest; with closeWrite false the connection stays open after raw, as
// with a client that stalls.
func rawExchange(t *testing.T, base, raw string, closeWrite bool) resp {
	t.Helper()
	// A server that refuses a request before reading all of it (a 431 at 16 KiB of headers)
	// answers and closes with bytes unread, and the kernel may then reset the connection
	// before the client has read the answer; the exchange is tried again in that case only.
	var lastErr error
	for range 5 {
		r, err := rawExchangeOnce(t, base, raw, closeWrite)
		if err == nil {
			return r
		}
		lastErr = err
	}
	require.NoError(t, lastErr, "connection reset before the answer, 5 times")
	return resp{}
}

func rawExchangeOnce(t *testing.T, base, raw string, closeWrite bool) (resp, error) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	// A guard against a hang, not a timing assertion.
	require.NoError(t, conn.SetDeadline(time.Now().Add(20*time.Second)))
	// Write errors are not checked: a server that has answered and closed early refuses the
	// rest of the request, and its answer is what is asserted.
	_, _ = io.WriteString(conn, raw)
	if closeWrite {
		_ = conn.(*net.TCPConn).CloseWrite()
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil && (errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)) {
		return resp{}, err
	}
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if errors.Is(err, syscall.ECONNRESET) {
		return resp{}, err
	}
	require.NoError(t, err)
	return resp{Status: res.StatusCode, Header: res.Header, Body: body}, nil
}

// TestMultiDetailOnBothAddresses: both multi-detail paths answer the same on the main and the
// dex address (the public client sends GET /v2/token/{chain}/multi to {dex_base_url}).
func TestMultiDetailOnBothAddresses(t *testing.T) {
	e := newEnv(t)
	const a, b = "EdgeMultiTokenA111111111111111111111111111", "EdgeMultiTokenB111111111111111111111111111"
	_, err := e.rt.App.Ingest.Ingest(t.Context(), []chainevent.Event{edgeToken(a), edgeToken(b)})
	require.NoError(t, err)
	list := url.QueryEscape(b + "," + a + ",EdgeUnknown")
	paths := []struct {
		path  string
		types map[string]string
	}{
		{"/v1/token/sol/multi?tokenAddresses=" + list, typesMulti},
		{"/v2/token/sol/multi?tokenAddresses=" + list, typesTokenV2},
	}
	for _, p := range paths {
		t.Run(p.path[:3], func(t *testing.T) {
			main, dex := e.do(t, "GET", p.path, nil), e.doDex(t, "GET", p.path, nil)
			for _, r := range []resp{main, dex} {
				v := okJSON(t, r)
				got, ok := v.([]any)
				require.True(t, ok, "bare array: %s", r.Body)
				assert.Equal(t, []string{b, a}, addresses(got, "address"))
				checkTypes(t, "token", got[0], p.types)
			}
			assert.JSONEq(t, string(main.Body), string(dex.Body), "same answer on both addresses")
		})
	}
	t.Run("bad input is the same 400 on both addresses", func(t *testing.T) {
		for _, base := range []string{e.base, e.dex} {
			// The v2 path takes the v2 chains only, the v1 path the ten of the spec.
			r := e.doURL(t, "GET", base+"/v2/token/base/multi?tokenAddresses="+a, nil)
			badRequest(t, r, "chain")
			assert.Equal(t, []any{"sol", "eth", "bsc"}, field(r.Object(t)["details"], "allowed_values"))
			okJSON(t, e.doURL(t, "GET", base+"/v1/token/base/multi?tokenAddresses="+a, nil))
			badRequest(t, e.doURL(t, "GET", base+"/v2/token/sol/multi", nil), "tokenAddresses")
			requireErrorBody(t, e.doURL(t, "GET", base+"/v2/token/sol/multi?tokenAddresses="+a, nil, "Authorization", ""), 401)
		}
	})
}

// TestHundredAddressesFitTheHeaders: the documented maximum of 100 addresses (44 characters,
// the length of a Solana address) fits with the other parameters and a long Authorization
// header; the server's header buffer used to be 4 KiB, which refused about 85 and more.
func TestHundredAddressesFitTheHeaders(t *testing.T) {
	e := newEnv(t)
	addrs := make([]string, 100)
	for i := range addrs {
		addrs[i] = fmt.Sprintf("EdgeHundred%033d", i)
		require.Len(t, addrs[i], 44)
	}
	_, err := e.rt.App.Ingest.Ingest(t.Context(), []chainevent.Event{edgeToken(addrs[7]), edgeToken(addrs[93])})
	require.NoError(t, err)
	// The public client escapes the commas (%2C): 4,697 bytes of addresses.
	query := "?tokenAddresses=" + url.QueryEscape(strings.Join(addrs, ",")) +
		"&sortBy=marketData.marketCapInUsd&sortDirection=desc&filterBy=" +
		url.QueryEscape(`[{"field":"marketData.marketCapInUsd","operator":"gte","value":"0"}]`)
	// X-API-KEY wins over Authorization, so the long bearer token (a JWT-sized one) is only ballast.
	headers := []string{"X-API-KEY", e.key, "Authorization", "Bearer " + strings.Repeat("J", 2048),
		"User-Agent", "chainstream-go-sdk/1.0 (edge test)", "Accept", "application/json", "Accept-Encoding", "identity"}
	for _, base := range []string{e.base, e.dex} {
		for _, path := range []string{"/v1/token/sol/multi", "/v2/token/sol/multi"} {
			r := e.doURL(t, "GET", base+path+query, nil, headers...)
			v := okJSON(t, r)
			assert.ElementsMatch(t, []string{addrs[7], addrs[93]}, addresses(v.([]any), "address"), path)
		}
	}
	// 101 addresses are still refused, by the parameter check rather than the header buffer.
	over := url.QueryEscape(strings.Join(append(addrs, "EdgeHundredOneMore"), ","))
	badRequest(t, e.doDex(t, "GET", "/v2/token/sol/multi?tokenAddresses="+over, nil), "tokenAddresses")
}

// TestRequestsRefusedBelowTheRouter: what fasthttp refuses before routing still gets the one
// JSON error body and an X-Request-Id, and never echoes the request (API key included).
func TestRequestsRefusedBelowTheRouter(t *testing.T) {
	e := newEnv(t)
	requireEdgeError := func(t *testing.T, r resp, status int) map[string]any {
		t.Helper()
		body := requireErrorBody(t, r, status)
		assert.NotEmpty(t, r.Header.Get("X-Request-Id"))
		assert.NotContains(t, string(r.Body), e.key, "the API key is never echoed")
		assert.NotContains(t, string(r.Body), "Bearer")
		return body
	}
	for _, base := range []string{e.base, e.dex} {
		t.Run("headers over the buffer are a 431", func(t *testing.T) {
			raw := "GET /v2/whoami HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer " + e.key + "\r\nX-Pad: " +
				strings.Repeat("p", 20<<10) + "\r\n\r\n"
			r := rawRequest(t, base, raw)
			body := requireEdgeError(t, r, 431)
			assert.Contains(t, body["message"], "16 KiB")
			assert.NotContains(t, string(r.Body), "ppp")
		})
		for _, cl := range []string{"12abc", "-5"} {
			t.Run("bad Content-Length "+cl+" is a 400 naming the header", func(t *testing.T) {
				raw := "POST /v2/whoami HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer " + e.key +
					"\r\nContent-Type: application/json\r\nContent-Length: " + cl + "\r\n\r\n{}"
				r := rawRequest(t, base, raw)
				body := requireEdgeError(t, r, 400)
				assert.Equal(t, "Content-Length", field(body["details"], "parameter"), "body: %s", r.Body)
				assert.NotContains(t, string(r.Body), cl, "the value is not echoed either")
				assert.NotContains(t, string(r.Body), "whoami")
			})
		}
		t.Run("an unknown method is a 400 naming the method", func(t *testing.T) {
			raw := "FOO /v2/whoami HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer " + e.key + "\r\nX-Request-Id: edge-foo-1\r\n\r\n"
			r := rawRequest(t, base, raw)
			body := requireEdgeError(t, r, 400)
			assert.Equal(t, "edge-foo-1", r.Header.Get("X-Request-Id"), "a sane request id is kept")
			assert.Equal(t, "method", field(body["details"], "parameter"))
			assert.Contains(t, field(body["details"], "allowed_values"), "GET")
		})
		t.Run("a malformed request line is a 400", func(t *testing.T) {
			requireEdgeError(t, rawRequest(t, base, "GET\r\n\r\n"), 400)
		})
	}
	t.Run("a request not sent within the read timeout is a 408", func(t *testing.T) {
		slow := newEnv(t, func(c *config.Config) { c.HTTPReadTimeout = 300 * time.Millisecond })
		for _, base := range []string{slow.base, slow.dex, slow.admin} {
			requireEdgeError(t, rawExchange(t, base, "GET /v2/whoami HTTP/1.1\r\nHost: t\r\n", false), 408)
		}
	})
}

// TestIngestMalformedChunkedBody: a chunked ingest body that breaks off is a 400 like on every
// other route, and the complete lines before the break are not applied.
func TestIngestMalformedChunkedBody(t *testing.T) {
	e := newEnv(t)
	line := func(addr string) string {
		b, err := ndjson.Marshal(edgeToken(addr))
		require.NoError(t, err)
		return string(b) + "\n"
	}
	chunk := func(s string) string { return fmt.Sprintf("%x\r\n%s\r\n", len(s), s) }
	post := func(body string) resp {
		return rawRequest(t, e.base, "POST /v2/ingest HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer "+e.key+
			"\r\nContent-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n\r\n"+body)
	}
	stored := func(addr string) []string {
		v := okJSON(t, e.do(t, "GET", "/v2/token/sol/multi?tokenAddresses="+addr, nil))
		return addresses(v.([]any), "address")
	}
	tests := []struct{ name, addr, tail string }{
		{"chunk size not hex", "EdgeIngestBroken1", "zz\r\nbroken\r\n0\r\n\r\n"},
		{"chunk without its CRLF", "EdgeIngestBroken2", "5\r\nabcdeXX0\r\n\r\n"},
		{"chunk cut mid-line", "EdgeIngestBroken3", "40\r\n{\"type\":\"token_created\""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := post(chunk(line(tc.addr)) + tc.tail)
			badRequest(t, r, "body")
			requireErrorBody(t, r, 400)
			assert.Empty(t, stored(tc.addr), "nothing of the refused body is applied")
		})
	}
	t.Run("a well-formed chunked body is applied", func(t *testing.T) {
		const addr = "EdgeIngestWhole1"
		r := post(chunk(line(addr)) + "0\r\n\r\n")
		require.Equal(t, 200, r.Status, "body: %s", r.Body)
		assert.Equal(t, []string{addr}, stored(addr))
	})
}

// TestIngestLongStream: a streamed ingest body has no total deadline, only an idle one. A
// chunked body trickled over longer than REQUEST_TIMEOUT, HTTP_READ_TIMEOUT and
// INGEST_IDLE_TIMEOUT together is applied whole; a body that stops sending is cut by the idle
// timeout as a 400 on the body, and nothing of its unfinished batch is applied.
func TestIngestLongStream(t *testing.T) {
	const idle = 2 * time.Second
	e := newEnv(t, func(c *config.Config) {
		c.RequestTimeout = 300 * time.Millisecond
		c.HTTPReadTimeout = 300 * time.Millisecond
		c.IngestIdleTimeout = idle
	})
	line := func(addr string) string {
		b, err := ndjson.Marshal(edgeToken(addr))
		require.NoError(t, err)
		return string(b) + "\n"
	}
	chunk := func(s string) string { return fmt.Sprintf("%x\r\n%s\r\n", len(s), s) }
	open := func() net.Conn {
		conn, err := net.Dial("tcp", strings.TrimPrefix(e.base, "http://"))
		require.NoError(t, err)
		t.Cleanup(func() { conn.Close() })
		// A guard against a hang, not a timing assertion.
		require.NoError(t, conn.SetDeadline(time.Now().Add(30*time.Second)))
		_, err = io.WriteString(conn, "POST /v2/ingest HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer "+e.key+
			"\r\nContent-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n\r\n")
		require.NoError(t, err)
		return conn
	}
	response := func(conn net.Conn) resp {
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err)
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return resp{Status: res.StatusCode, Header: res.Header, Body: body}
	}
	stored := func(addrs ...string) []string {
		v := okJSON(t, e.do(t, "GET", "/v2/token/sol/multi?tokenAddresses="+strings.Join(addrs, ","), nil))
		return addresses(v.([]any), "address")
	}

	t.Run("a body trickled past every total timeout is applied", func(t *testing.T) {
		conn := open()
		var want []string
		start := time.Now()
		// Sent until the stream has outlived REQUEST_TIMEOUT, HTTP_READ_TIMEOUT and the idle
		// timeout put together, with pauses far below the idle timeout.
		for i := 0; time.Since(start) < 300*time.Millisecond+300*time.Millisecond+idle+500*time.Millisecond; i++ {
			addr := fmt.Sprintf("EdgeIngestTrickle%03d", i)
			want = append(want, addr)
			_, err := io.WriteString(conn, chunk(line(addr)))
			require.NoError(t, err)
			time.Sleep(100 * time.Millisecond)
		}
		_, err := io.WriteString(conn, "0\r\n\r\n")
		require.NoError(t, err)
		r := response(conn)
		require.Equal(t, 200, r.Status, "body: %s", r.Body)
		assert.Equal(t, fmt.Sprint(len(want)), fmt.Sprint(r.Object(t)["events"]))
		assert.ElementsMatch(t, want, stored(want...))
	})
	t.Run("a body that stops sending is cut by the idle timeout", func(t *testing.T) {
		conn := open()
		const addr = "EdgeIngestStalled1"
		_, err := io.WriteString(conn, chunk(line(addr)))
		require.NoError(t, err)
		r := response(conn) // nothing more is sent
		badRequest(t, r, "body")
		requireErrorBody(t, r, 400)
		assert.Contains(t, r.Object(t)["message"], "INGEST_IDLE_TIMEOUT")
		assert.Empty(t, stored(addr), "the unfinished batch is not applied")
	})
}

// TestMetricsOnlyOnTheAdminAddress: /metrics left the API addresses for ADMIN_HTTP_ADDR.
func TestMetricsOnlyOnTheAdminAddress(t *testing.T) {
	e := newEnv(t)
	require.Equal(t, 200, e.do(t, "GET", "/v2/whoami", nil).Status)
	for _, base := range []string{e.base, e.dex} {
		requireErrorBody(t, e.doURL(t, "GET", base+"/metrics", nil), 404)
	}
	r := e.doURL(t, "GET", e.admin+"/metrics", nil, "Authorization", "")
	require.Equal(t, 200, r.Status, "body: %s", r.Body)
	assert.Contains(t, r.Header.Get("Content-Type"), "text/plain")
	assert.Contains(t, string(r.Body), `tokenscope_http_requests_total{method="GET",route="/v2/whoami",status="200"}`)
	assert.Contains(t, string(r.Body), "go_goroutines")
	require.Equal(t, 200, e.doURL(t, "GET", e.admin+"/readyz", nil, "Authorization", "").Status)
	requireErrorBody(t, e.doURL(t, "GET", e.admin+"/v2/whoami", nil), 404)
}
