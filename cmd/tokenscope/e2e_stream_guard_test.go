package main

import (
	"context"
	"net/http"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/centrifugal/centrifuge-go"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/app/config"
	"github.com/tokenscope/tokenscope/domain/account"
	"github.com/tokenscope/tokenscope/domain/ratelimit"
)

// disconnects starts a client the way sdkClient does, subscribed to one channel, and returns the
// disconnect events it reports.
func disconnects(t *testing.T, base, key string) <-chan centrifuge.DisconnectedEvent {
	t.Helper()
	c, _ := sdkClient(t, base, key, []string{"dex-new-token:sol"})
	ch := make(chan centrifuge.DisconnectedEvent, 4)
	c.OnDisconnected(func(e centrifuge.DisconnectedEvent) { ch <- e })
	return ch
}

// awaitDisconnect waits (at most limit, so a broken server fails rather than hangs the test) for
// the client's disconnect and returns it with the time it took.
func awaitDisconnect(t *testing.T, ch <-chan centrifuge.DisconnectedEvent, from time.Time, limit time.Duration) (centrifuge.DisconnectedEvent, time.Duration) {
	t.Helper()
	select {
	case e := <-ch:
		return e, time.Since(from)
	case <-time.After(limit):
		t.Fatalf("the stream was still open %s later", limit)
	}
	return centrifuge.DisconnectedEvent{}, 0
}

// TestStreamClosesWhenItsKeyIsRevoked: a key revoked by another process (`apikey revoke`, as an
// operator does) closes the key's open stream with 3500 "invalid token", which the public client
// does not retry. Before, publications kept arriving for as long as the connection lasted.
func TestStreamClosesWhenItsKeyIsRevoked(t *testing.T) {
	e := newEnv(t)
	key := e.keyFor(t, "revoked-stream", account.ScopeRead)
	events := disconnects(t, e.base, key)
	revoked := time.Now()
	runTool(t, e.rt.Cfg.DatabaseURL, "apikey", "revoke", account.PrefixOf(key))
	d, took := awaitDisconnect(t, events, revoked, 60*time.Second)
	t.Logf("stream closed %.1fs after the revocation: %d %s", took.Seconds(), d.Code, d.Reason)
	require.Equal(t, uint32(3500), d.Code, d.Reason)
}

// TestStreamClosesWhenItsKeyExpires: a key created with an end closes its stream at that end.
func TestStreamClosesWhenItsKeyExpires(t *testing.T) {
	e := newEnv(t)
	end := time.Now().Add(5 * time.Second)
	key, _, err := e.rt.App.Keys.CreateLimited(context.Background(), "expiring-stream", "e2e", []account.Scope{account.ScopeRead}, ratelimit.Limit{}, &end)
	require.NoError(t, err)
	events := disconnects(t, e.base, key)
	d, took := awaitDisconnect(t, events, end, 60*time.Second)
	t.Logf("stream closed %.1fs after the key's end: %d %s", took.Seconds(), d.Code, d.Reason)
	require.Equal(t, uint32(3500), d.Code, d.Reason)
	require.False(t, time.Now().Before(end), "closed before the key's end")
}

// connectRaw connects a public Go client without waiting for success and returns the codes of
// its connecting (a retried refusal) and disconnected (a final one) events; connected gets a
// value once it is connected.
func connectRaw(t *testing.T, base, key string) (connecting, disconnected <-chan uint32, connected <-chan struct{}) {
	t.Helper()
	c := centrifuge.NewJsonClient(streamURL(base, key), centrifuge.Config{Token: key, Name: "go",
		ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second, HandshakeTimeout: 30 * time.Second})
	t.Cleanup(c.Close)
	cn, dc, ok := make(chan uint32, 16), make(chan uint32, 4), make(chan struct{}, 1)
	c.OnConnecting(func(e centrifuge.ConnectingEvent) {
		select {
		case cn <- e.Code:
		default:
		}
	})
	c.OnDisconnected(func(e centrifuge.DisconnectedEvent) { dc <- e.Code })
	c.OnConnected(func(centrifuge.ConnectedEvent) { ok <- struct{}{} })
	require.NoError(t, c.Connect())
	return cn, dc, ok
}

// awaitCode waits for a code other than those in skip (at most 30 s).
func awaitCode(t *testing.T, ch <-chan uint32, skip ...uint32) uint32 {
	t.Helper()
	for deadline := time.After(30 * time.Second); ; {
		select {
		case code := <-ch:
			if !slices.Contains(skip, code) {
				return code
			}
		case <-deadline:
			t.Fatal("no event within 30 s")
			return 0
		}
	}
}

// TestStreamConnectSpendsTheKeyBucket: a WebSocket connect spends one request of its key's
// bucket like a REST call; with the bucket empty a connect is refused with 3013 "too many
// requests" (counted on /metrics; the public Go client, still connecting, retries it later with
// backoff and does not report it) and the key's REST calls get 429. Before, a key whose bucket
// was empty opened connections freely.
func TestStreamConnectSpendsTheKeyBucket(t *testing.T) {
	e := newEnv(t)
	limit, err := ratelimit.New("rate", 1, 1) // a bucket of 2, refilled once a minute
	require.NoError(t, err)
	key, _, err := e.rt.App.Keys.CreateLimited(context.Background(), "stream-bucket", "e2e", []account.Scope{account.ScopeRead}, limit, nil)
	require.NoError(t, err)

	sdkClient(t, e.base, key, []string{"dex-new-token:sol"}) // spends 1 of 2
	r := e.do(t, "GET", "/v2/whoami", nil, "X-API-KEY", key)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	require.Equal(t, "0", r.Header.Get("RateLimit-Remaining"), "the connect spent one request of the bucket")

	_, _, connected := connectRaw(t, e.base, key)
	refused := regexp.MustCompile(`(?m)^tokenscope_stream_connects_refused_total\{code="3013"\} [1-9]`)
	eventually(t, 30*time.Second, "a connect refused with 3013", func() bool {
		return refused.Match(e.doURL(t, "GET", e.admin+"/metrics", nil, "Authorization", "").Body)
	})
	select {
	case <-connected:
		t.Fatal("a connect on an empty bucket was accepted")
	default:
	}
	requireErrorBody(t, e.do(t, "GET", "/v2/whoami", nil, "X-API-KEY", key), http.StatusTooManyRequests)
}

// TestStreamConnectionsPerKeyCapped: STREAM_CONNECTIONS_PER_KEY bounds one key's open
// connections on a process; one more is refused with 3504 "connection limit", which the public
// client reports as its disconnect reason and does not retry. A closed connection frees its
// place. Another key is not affected.
func TestStreamConnectionsPerKeyCapped(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.StreamConnectionsPerKey = 2 })
	key := e.keyFor(t, "stream-cap", account.ScopeRead)
	first, _ := sdkClient(t, e.base, key, []string{"dex-new-token:sol"})
	sdkClient(t, e.dex, key, []string{"dex-new-token:sol"}) // the cap counts both addresses
	_, disconnected, _ := connectRaw(t, e.base, key)
	require.Equal(t, uint32(3504), awaitCode(t, disconnected), "the third connection of a key capped at 2")

	sdkClient(t, e.base, e.keyFor(t, "stream-cap-other", account.ScopeRead), []string{"dex-new-token:sol"})
	first.Close()
	// The place is free once the server has seen the close, which the client does not wait for:
	// a connect just before that may still be refused.
	for attempt := 1; ; attempt++ {
		_, disconnected, connected := connectRaw(t, e.base, key)
		select {
		case <-connected:
			return
		case code := <-disconnected:
			require.Equal(t, uint32(3504), code)
			require.Less(t, attempt, 50, "a closed connection never freed its place")
			time.Sleep(100 * time.Millisecond)
		case <-time.After(30 * time.Second):
			t.Fatal("neither connected nor refused within 30 s")
		}
	}
}
