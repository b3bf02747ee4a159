package realtime_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/realtime"
	"github.com/tokenscope/tokenscope/domain/account"
	"github.com/tokenscope/tokenscope/domain/fault"
)

// keys accepts "good" with the read scope.
type keys struct{}

func (keys) Authenticate(_ context.Context, k string) (account.Principal, error) {
	if k == "good" {
		return account.Principal{AccountID: "acct", Scopes: []account.Scope{account.ScopeRead}}, nil
	}
	return account.Principal{}, fault.Unauthorized("unknown key")
}

func (k keys) Recheck(ctx context.Context, key string, _ time.Duration) (account.Principal, error) {
	return k.Authenticate(ctx, key)
}

// serve runs a node on a loopback listener split like the API's; the other half answers 418.
func serve(t *testing.T, cfg realtime.Config) (*realtime.Server, string, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	s, err := realtime.New(cfg, keys{}, slog.New(slog.NewTextHandler(io.Discard, nil)), reg)
	require.NoError(t, err)
	require.NoError(t, s.Run())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	api, ws := realtime.Split(ln)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ws) }()
	other := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) })}
	go func() { _ = other.Serve(api) }()
	t.Cleanup(func() {
		cancel()
		_ = other.Close()
		<-done
		sctx, c := context.WithTimeout(context.Background(), 5*time.Second)
		defer c()
		_ = s.Shutdown(sctx)
	})
	return s, ln.Addr().String(), reg
}

// rawClient speaks the client protocol by hand, as the public client's frames are written
// (reference section 1.2), so the subscribe command can carry its `filter` string.
type rawClient struct {
	t    *testing.T
	conn *websocket.Conn
}

func dialRaw(t *testing.T, addr string, dialer *websocket.Dialer) *rawClient {
	t.Helper()
	if dialer == nil {
		dialer = websocket.DefaultDialer
	}
	conn, _, err := dialer.Dial("ws://"+addr+realtime.Path+"?token=good", nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	c := &rawClient{t: t, conn: conn}
	c.send(`{"id":1,"connect":{"token":"good","name":"go"}}`)
	require.Contains(t, c.read(), `"connect"`)
	return c
}

func (c *rawClient) send(frame string) {
	require.NoError(c.t, c.conn.WriteMessage(websocket.TextMessage, []byte(frame)))
}

func (c *rawClient) read() string {
	c.t.Helper()
	require.NoError(c.t, c.conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	for {
		_, b, err := c.conn.ReadMessage()
		require.NoError(c.t, err)
		if s := string(b); s != "{}" { // a server ping
			return s
		}
	}
}

func (c *rawClient) subscribe(id int, channel, filter string) string {
	cmd := map[string]any{"id": id, "subscribe": map[string]any{"channel": channel, "delta": "fossil", "filter": filter}}
	b, _ := json.Marshal(cmd)
	c.send(string(b))
	return c.read()
}

// TestFilterFromTheSubscribeCommand: the `filter` string of the subscribe command narrows what
// the subscription receives to publications whose tags satisfy it; a filter outside the
// supported subset is refused with a bad-request error naming it.
func TestFilterFromTheSubscribeCommand(t *testing.T) {
	s, addr, _ := serve(t, realtime.Config{})
	c := dialRaw(t, addr, nil)
	reply := c.subscribe(2, "dex-trade:sol_Tok", "meta.baiu > 100 && meta.k == \"buy\"")
	require.Contains(t, reply, `"subscribe"`, reply)
	for _, p := range []struct{ h, baiu, k string }{{"small", "50", "buy"}, {"sold", "500", "sell"}, {"big", "500.5", "buy"}} {
		data := fmt.Sprintf(`{"h":%q,"baiu":%q,"k":%q}`, p.h, p.baiu, p.k)
		require.NoError(t, s.Publish("dex-trade:sol_Tok", []byte(data), map[string]string{"h": p.h, "baiu": p.baiu, "k": p.k}))
	}
	push := c.read()
	assert.Contains(t, push, `"h":"big"`, "the first publication through the filter")
	assert.NotContains(t, push, "small")

	bad := c.subscribe(3, "dex-trade:sol_Other", "size(meta.h) > 2")
	assert.Contains(t, bad, `"code":107`, bad)
	assert.Contains(t, bad, "bad filter", bad)
	unknown := c.subscribe(4, "dex-nope:sol_Tok", "")
	assert.Contains(t, unknown, `"code":102`, unknown)
}

// TestSlowConsumerIsDisconnected: a subscriber that stops reading is closed with 3008 "slow"
// once its queue overflows, while publishing goes on unblocked.
func TestSlowConsumerIsDisconnected(t *testing.T) {
	s, addr, reg := serve(t, realtime.Config{QueueBytes: 64 << 10})
	dialer := &websocket.Dialer{NetDial: func(network, a string) (net.Conn, error) {
		conn, err := net.Dial(network, a)
		if err == nil {
			_ = conn.(*net.TCPConn).SetReadBuffer(4096)
		}
		return conn, err
	}}
	c := dialRaw(t, addr, dialer)
	require.Contains(t, c.subscribe(2, "dex-trade:sol_Slow", ""), `"subscribe"`)
	// The client reads nothing from here on.
	payload := []byte(`{"h":"` + strings.Repeat("x", 8000) + `"}`)
	for range 2000 {
		require.NoError(t, s.Publish("dex-trade:sol_Slow", payload, nil))
	}
	require.Eventually(t, func() bool { return counter(t, reg, "tokenscope_stream_disconnects_total", "3008") >= 1 },
		10*time.Second, 20*time.Millisecond, "the slow client was closed as slow")
	assert.Equal(t, 0, s.NumClients())
}

func counter(t *testing.T, reg *prometheus.Registry, name, code string) float64 {
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "code" && l.GetValue() == code {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// TestOtherRequestsPassTheSplit: a request for another path on the shared listener reaches the
// API's server unchanged.
func TestOtherRequestsPassTheSplit(t *testing.T) {
	_, addr, _ := serve(t, realtime.Config{})
	r, err := http.Get("http://" + addr + "/v2/whoami")
	require.NoError(t, err)
	_ = r.Body.Close()
	assert.Equal(t, http.StatusTeapot, r.StatusCode)
}

func TestCompileFilter(t *testing.T) {
	for expr, want := range map[string]string{
		`meta.v > 1000`:                    `{"key":"v","cmp":"gt","val":"1000"}`,
		`1000 <= meta.v`:                   `{"key":"v","cmp":"gte","val":"1000"}`,
		`meta.sm.tw != ""`:                 `{"op":"not","nodes":[{"key":"sm.tw","cmp":"eq"}]}`,
		`meta.n == "USDC" || meta.p < 0.5`: `{"op":"or","nodes":[{"key":"n","cmp":"eq","val":"USDC"},{"key":"p","cmp":"lt","val":"0.5"}]}`,
		`meta.a in ["x", "y"]`:             `{"key":"a","cmp":"in","vals":["x","y"]}`,
		`meta.n.startsWith("Bo")`:          `{"key":"n","cmp":"sw","val":"Bo"}`,
		`has(meta.iu)`:                     `{"key":"iu","cmp":"ex"}`,
		`h == 3`:                           `{"op":"and","nodes":[{"key":"h","cmp":"gte","val":"3"},{"key":"h","cmp":"lte","val":"3"}]}`,
	} {
		n, err := realtime.CompileFilter(expr)
		require.NoError(t, err, expr)
		got, err := json.Marshal(n)
		require.NoError(t, err)
		assert.JSONEq(t, want, string(got), expr)
	}
	for _, bad := range []string{`meta.v >`, `meta.v + 1 > 2`, `size(meta.h) > 2`, `meta.n > "a"`, `meta.a == meta.b`} {
		_, err := realtime.CompileFilter(bad)
		assert.Error(t, err, bad)
	}
}

// TestPlainGetOfTheStreamPathIsAnErrorAndClosesTheConnection: a request to the stream's path
// without a WebSocket upgrade is a 400 naming the Upgrade header, and its connection is closed
// so that a client reusing it for API requests gets a fresh connection that reaches the API.
func TestPlainGetOfTheStreamPathIsAnErrorAndClosesTheConnection(t *testing.T) {
	_, addr, _ := serve(t, realtime.Config{})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	defer client.CloseIdleConnections()
	r, err := client.Get("http://" + addr + realtime.Path)
	require.NoError(t, err)
	var body map[string]any
	require.NoError(t, json.NewDecoder(r.Body).Decode(&body))
	_ = r.Body.Close()
	assert.Equal(t, http.StatusBadRequest, r.StatusCode)
	assert.True(t, r.Close, "the connection is not kept for more requests")
	assert.Equal(t, "Upgrade", body["details"].(map[string]any)["parameter"])
	for range 3 {
		r, err = client.Get("http://" + addr + "/v2/whoami")
		require.NoError(t, err)
		_ = r.Body.Close()
		assert.Equal(t, http.StatusTeapot, r.StatusCode, "API requests after it reach the API")
	}
}
