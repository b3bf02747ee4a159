package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/centrifugal/centrifuge-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/ndjson"
	"github.com/tokenscope/tokenscope/app/config"
	"github.com/tokenscope/tokenscope/domain/account"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/domain/pool"
	"github.com/tokenscope/tokenscope/domain/trade"
)

// streamURL is the WebSocket URL the public client builds: the endpoint path with the token as
// the `token` query parameter (reference section 1.1).
func streamURL(base, key string) string {
	return "ws://" + strings.TrimPrefix(base, "http://") + "/connection/websocket?token=" + url.QueryEscape(key)
}

// inbox collects the publications of one client, by channel.
type inbox struct {
	mu   sync.Mutex
	got  map[string][]any
	errs []string
}

func (b *inbox) add(ch string, data []byte) {
	var v any
	err := json.Unmarshal(data, &v)
	b.mu.Lock()
	defer b.mu.Unlock()
	if err != nil {
		b.errs = append(b.errs, ch+": "+err.Error())
		return
	}
	b.got[ch] = append(b.got[ch], v)
}

func (b *inbox) first(ch string) (any, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if l := b.got[ch]; len(l) > 0 {
		return l[0], true
	}
	return nil, false
}

// sdkClient connects exactly as the public Go client does: NewJsonClient, the token in the URL
// and in the connect command, name "go", 30 s timeouts; every subscription asks for fossil delta.
func sdkClient(t *testing.T, base, key string, channels []string) (*centrifuge.Client, *inbox) {
	t.Helper()
	c := centrifuge.NewJsonClient(streamURL(base, key), centrifuge.Config{Token: key, Name: "go",
		ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second, HandshakeTimeout: 30 * time.Second})
	t.Cleanup(c.Close)
	box := &inbox{got: map[string][]any{}}
	subscribed := make(chan string, len(channels))
	for _, ch := range channels {
		sub, err := c.NewSubscription(ch, centrifuge.SubscriptionConfig{Delta: centrifuge.DeltaTypeFossil})
		require.NoError(t, err)
		sub.OnPublication(func(e centrifuge.PublicationEvent) { box.add(ch, e.Data) })
		sub.OnSubscribed(func(centrifuge.SubscribedEvent) { subscribed <- ch })
		require.NoError(t, sub.Subscribe())
	}
	require.NoError(t, c.Connect())
	deadline := time.After(20 * time.Second)
	for range channels {
		select {
		case <-subscribed:
		case <-deadline:
			t.Fatalf("not every channel was subscribed")
		}
	}
	return c, box
}

// jsonType names a decoded JSON value's type as the reference's tables do.
func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case float64:
		return "number"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

// TestStreamsSDKClient: a client connected as the public Go client subscribes to every channel
// kind; after a token launch, a pool snapshot and a trade are ingested, each channel receives a
// message of the reference's shape and key types, the candle channels the trade's bar.
func TestStreamsSDKClient(t *testing.T) {
	e := newEnv(t)
	key := e.keyFor(t, "streams", account.ScopeRead)
	tok, wallet, poolAddr := "StreamTok1", "StreamW1", "StreamPool1"
	ch := func(prefix, suffix string) string { return prefix + ":sol" + suffix }
	// channel -> key -> JSON type (the reference's str/dec as string, num as number).
	want := map[string]map[string]string{
		ch("dex-trade", "_"+tok):                                   {"a": "string", "t": "number", "k": "string", "ba": "string", "baiu": "string", "btma": "string", "bwa": "string", "sa": "string", "stma": "string", "h": "string"},
		ch("dex-wallet-trade", "_"+wallet):                         {"a": "string", "t": "number", "k": "string", "bwa": "string", "h": "string"},
		ch("dex-new-token", ""):                                    {"a": "string", "n": "string", "s": "string", "cts": "number", "dec": "number"},
		ch("dex-new-tokens", ""):                                   {"0.a": "string", "0.n": "string", "0.s": "string", "0.cts": "number"},
		ch("dex-new-tokens-metadata", ""):                          {"0.a": "string", "0.n": "string", "0.s": "string", "0.cts": "number"},
		ch("dex-pool-balance", "_"+poolAddr):                       {"a": "string", "taa": "string", "taliu": "string", "tba": "string", "tbliu": "string"},
		ch("dex-token-stats", "_"+tok):                             {"a": "string", "t": "number", "p": "string", "b1m": "number", "s1m": "number", "bviu1m": "string"},
		ch("dex-token-holding", "_"+tok):                           {"a": "string", "ts": "number", "h": "number", "t10a": "string"},
		ch("dex-token-supply", "_"+tok):                            {"a": "string", "ts": "number", "s": "string", "mc": "string"},
		ch("dex-token-general-stat-num", "_"+tok):                  {"a": "string", "t": "string", "v": "string", "ts": "number"},
		ch("dex-token-liquidity", "_"+tok):                         {"a": "string", "liu": "string", "lin": "string", "ts": "number"},
		ch("dex-token-total-liquidity", "_"+tok):                   {"a": "string", "liu": "string", "pc": "number", "ts": "number"},
		ch("dex-wallet-balance", "_"+wallet):                       {"a": "string", "ta": "string", "b": "string", "t": "number"},
		ch("dex-wallet-token-pnl", "_"+wallet):                     {"a": "string", "ta": "string", "t": "number", "bs": "number", "upiu": "string", "rpiu": "string"},
		ch("dex-wallet-pnl-list", "_"+wallet):                      {"0.a": "string", "0.piu": "string", "0.r": "string", "0.ts": "number"},
		ch("dex-ranking-token-stats-list", "_trending"):            {"": "array"},
		ch("dex-ranking-token-holding-list", "_trending"):          {"": "array"},
		ch("dex-ranking-token-supply-list", "_trending"):           {"": "array"},
		ch("dex-ranking-token-general_stat_num-list", "_trending"): {"": "array"},
		ch("dex-ranking-token-bounding-curve-list", "_new"):        {"": "array"},
		ch("dex-ranking-list", "_new"):                             {"": "array"},
		ch("dex-ranking-list", "_trending_pump_fun"):               {"": "array"},
	}
	// Candle channels (2.2): a, r strings; o c h l v decimals as strings; t (the bar's start,
	// Unix seconds) and n (its trade count) numbers.
	candleKeys := map[string]string{"a": "string", "o": "string", "c": "string", "h": "string", "l": "string",
		"v": "string", "r": "string", "t": "number", "n": "number"}
	candles := []string{ch("dex-candle", "_"+tok+"_1m"), ch("dex-candle-in-native", "_"+tok+"_1m"),
		ch("dex-pool-candle", "_"+poolAddr+"_5m"), ch("dex-pool-candle-in-native", "_"+poolAddr+"_1h"),
		ch("dex-pair-candle", "_"+tok+"-"+mktSol+"_1h"), ch("dex-pair-candle-in-native", "_"+mktSol+"-"+tok+"_1d")}
	for _, c := range candles {
		want[c] = candleKeys
	}
	var channels []string
	for c := range want {
		channels = append(channels, c)
	}
	_, box := sdkClient(t, e.dex, key, channels)

	now := time.Now()
	snap := chainevent.PoolSnapshot{Snapshot: pool.Snapshot{Chain: chain.Sol, PoolAddress: poolAddr, BlockHeight: 7001,
		BlockTimestamp: now.UnixMilli(), SnapshotTime: now.UnixMilli(),
		TokenA:      pool.Side{TokenAddress: tok, Decimals: 6, AmountInNative: dd("5"), AmountInUSD: dd("500"), PriceNative: dd("0.05"), PriceUSD: dd("5"), VaultAmount: "100"},
		TokenB:      pool.Side{TokenAddress: "So111", Decimals: 9, AmountInNative: dd("5"), AmountInUSD: dd("500"), PriceNative: dd("1"), PriceUSD: dd("100"), VaultAmount: "5"},
		TVLInNative: dd("10"), TVLInUSD: dd("1000")}}
	_, err := e.rt.App.Ingest.Ingest(t.Context(), []chainevent.Event{edgeToken(tok), snap})
	require.NoError(t, err)
	// The trade arrives as a client of the API sends it: POST /v2/ingest.
	b, err := ndjson.Marshal(mktTrade("StreamSig1", wallet, tok, poolAddr, trade.Buy, "10", "2", now, 7002))
	require.NoError(t, err)
	r := e.do(t, "POST", "/v2/ingest", string(b)+"\n", "Content-Type", "application/x-ndjson")
	require.Equal(t, 200, r.Status, "%s", r.Body)

	// A generous deadline for arrival; the bench measures latency.
	deadline := time.Now().Add(10 * time.Second)
	for c, keys := range want {
		var msg any
		for {
			var ok bool
			if msg, ok = box.first(c); ok || time.Now().After(deadline) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if !assert.NotNil(t, msg, "no message on %s", c) {
			continue
		}
		for k, typ := range keys {
			v := msg
			if k != "" {
				for _, part := range strings.Split(k, ".") {
					switch x := v.(type) {
					case map[string]any:
						v = x[part]
					case []any:
						if len(x) == 0 {
							v = nil
						} else {
							v = x[0]
						}
					}
				}
			}
			assert.Equal(t, typ, jsonType(v), "%s key %q in %v", c, k, msg)
		}
	}
	trade, _ := box.first(ch("dex-trade", "_"+tok))
	assert.Equal(t, "StreamSig1", field(trade, "h"))
	assert.Equal(t, "buy", field(trade, "k"))
	// The one trade is each bar: 10 tokens at $2 (native 0.02) for 0.2 SOL at $100, a value of
	// $20 (0.2 native). A pair's base is its bytewise smaller address, here SOL's.
	for _, c := range candles {
		m, ok := box.first(c)
		if !ok {
			continue // reported above
		}
		price, value := "2", "20"
		if strings.Contains(c, "-in-native") {
			price, value = "0.02", "0.2"
		}
		if strings.Contains(c, "dex-pair-candle") {
			price = map[string]string{"2": "100", "0.02": "1"}[price]
		}
		for _, k := range []string{"o", "c", "h", "l"} {
			assert.Equal(t, price, field(m, k), "%s %s", c, k)
		}
		assert.Equal(t, value, field(m, "v"), c)
		assert.EqualValues(t, 1, field(m, "n"), c)
		assert.Equal(t, c[strings.LastIndex(c, "_")+1:], field(m, "r"), c)
	}
	assert.Empty(t, box.errs)
}

// TestStreamsAuth: a missing or unknown key is refused with 3500 "invalid token", a key without
// the read scope with 3507 "permission denied"; both are terminal for the client. The key is
// read from the connect command, the upgrade's `token` parameter, or its X-API-KEY or
// Authorization: Bearer header, with the same rules. The public client built with an API key
// alone sends an empty token and no header: nothing identifies it, so it is refused.
func TestStreamsAuth(t *testing.T) {
	e := newEnv(t)
	read := e.keyFor(t, "streams-read", account.ScopeRead)
	kytOnly := e.keyFor(t, "streams-kyt", account.ScopeKYT)
	for name, tc := range map[string]struct {
		key    string
		header http.Header
		code   uint32
	}{
		"missing":              {"", nil, 3500},
		"unknown":              {"ts_nope_0000000000000000000000000000", nil, 3500},
		"no scope":             {kytOnly, nil, 3507},
		"X-API-KEY header":     {"", http.Header{"X-Api-Key": {read}}, 0},
		"bearer header":        {"", http.Header{"Authorization": {"Bearer " + read}}, 0},
		"header without scope": {"", http.Header{"X-Api-Key": {kytOnly}}, 3507},
		"unknown header key":   {"", http.Header{"X-Api-Key": {"ts_nope_0000000000000000000000000000"}}, 3500},
	} {
		t.Run(name, func(t *testing.T) {
			c := centrifuge.NewJsonClient(streamURL(e.base, tc.key), centrifuge.Config{Token: tc.key, Name: "go", Header: tc.header})
			defer c.Close()
			got := make(chan uint32, 4)
			c.OnDisconnected(func(ev centrifuge.DisconnectedEvent) { got <- ev.Code })
			c.OnConnected(func(centrifuge.ConnectedEvent) { got <- 0 })
			require.NoError(t, c.Connect())
			select {
			case code := <-got:
				assert.Equal(t, tc.code, code)
			case <-time.After(10 * time.Second):
				t.Fatal("neither connected nor refused")
			}
		})
	}
}

// TestStreamsTwoNodes: two API processes share one Redis; a trade ingested through one reaches a
// subscriber of each.
func TestStreamsTwoNodes(t *testing.T) {
	prefix := fmt.Sprintf("ts-e2e-%d", time.Now().UnixNano())
	withRedis := func(c *config.Config) { c.RedisURL, c.RedisPrefix = "redis://127.0.0.1:6379", prefix }
	a, b := newEnv(t, withRedis), newEnv(t, withRedis)
	tok := "TwoNodeTok"
	channel := "dex-trade:sol_" + tok
	_, boxA := sdkClient(t, a.base, a.keyFor(t, "streams-a", account.ScopeRead), []string{channel})
	_, boxB := sdkClient(t, b.dex, b.keyFor(t, "streams-b", account.ScopeRead), []string{channel})
	_, err := a.rt.App.Ingest.Ingest(t.Context(), []chainevent.Event{edgeToken(tok)})
	require.NoError(t, err)
	body, err := ndjson.Marshal(mktTrade("TwoNodeSig", "TwoNodeW", tok, "TwoNodePool", trade.Sell, "3", "2", time.Now(), 8001))
	require.NoError(t, err)
	r := a.do(t, "POST", "/v2/ingest", string(body)+"\n", "Content-Type", "application/x-ndjson")
	require.Equal(t, 200, r.Status, "%s", r.Body)
	for name, box := range map[string]*inbox{"node a": boxA, "node b": boxB} {
		require.Eventually(t, func() bool { _, ok := box.first(channel); return ok }, 10*time.Second, 20*time.Millisecond, name)
		m, _ := box.first(channel)
		assert.Equal(t, "TwoNodeSig", field(m, "h"), name)
		assert.Equal(t, "sell", field(m, "k"), name)
	}
}

// TestStreamsImportThroughRedis: `tokenscope import` in a process of its own, with REDIS_URL set,
// reaches the subscribers of an API process on the same Redis: its trades per trade, and the
// coalesced channels after its flush.
func TestStreamsImportThroughRedis(t *testing.T) {
	prefix := fmt.Sprintf("ts-e2e-import-%d", time.Now().UnixNano())
	e := newEnv(t, func(c *config.Config) { c.RedisURL, c.RedisPrefix = "redis://127.0.0.1:6379", prefix })
	tok := "ImportStreamTok"
	tradeCh, supplyCh := "dex-trade:sol_"+tok, "dex-token-supply:sol_"+tok
	_, box := sdkClient(t, e.base, e.keyFor(t, "streams-import", account.ScopeRead), []string{tradeCh, supplyCh})

	var lines []string
	for _, ev := range []chainevent.Event{edgeToken(tok), mktTrade("ImportStreamSig", "ImportW", tok, "ImportPool", trade.Buy, "4", "2", time.Now(), 9001)} {
		b, err := ndjson.Marshal(ev)
		require.NoError(t, err)
		lines = append(lines, string(b))
	}
	file := filepath.Join(t.TempDir(), "events.ndjson")
	require.NoError(t, os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	cmd := exec.Command(os.Args[0], "import", file)
	cmd.Env = append(os.Environ(), runMainEnv+"=1", "DATABASE_URL="+e.rt.Cfg.DatabaseURL, "LOG_LEVEL=warn", "DB_MAX_CONNS=4",
		"REDIS_URL=redis://127.0.0.1:6379", "REDIS_PREFIX="+prefix)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)

	for _, c := range []string{tradeCh, supplyCh} {
		require.Eventually(t, func() bool { _, ok := box.first(c); return ok }, 10*time.Second, 20*time.Millisecond, c)
	}
	m, _ := box.first(tradeCh)
	assert.Equal(t, "ImportStreamSig", field(m, "h"))
	s, _ := box.first(supplyCh)
	assert.Equal(t, "1000", field(s, "s"), "the supply the import committed")
}

// TestStreamsSimulatorThroughRedis: `tokenscope simulate` (the compose demo profile's market) in a
// process of its own, with REDIS_URL set, reaches the subscribers of an API process on the same
// Redis: the tokens it launches arrive on the new-token channels.
func TestStreamsSimulatorThroughRedis(t *testing.T) {
	prefix := fmt.Sprintf("ts-e2e-sim-%d", time.Now().UnixNano())
	e := newEnv(t, func(c *config.Config) { c.RedisURL, c.RedisPrefix = "redis://127.0.0.1:6379", prefix })
	channels := []string{"dex-new-token:sol", "dex-new-token:eth", "dex-new-token:bsc"}
	_, box := sdkClient(t, e.base, e.keyFor(t, "streams-sim", account.ScopeRead), channels)

	cmd := exec.Command(os.Args[0], "simulate", "--tokens", "6", "--wallets", "10", "--trades", "60", "--seed", "17")
	cmd.Env = append(os.Environ(), runMainEnv+"=1", "DATABASE_URL="+e.rt.Cfg.DatabaseURL, "LOG_LEVEL=warn", "DB_MAX_CONNS=4",
		"REDIS_URL=redis://127.0.0.1:6379", "REDIS_PREFIX="+prefix)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)

	require.Eventually(t, func() bool {
		for _, c := range channels {
			if _, ok := box.first(c); ok {
				return true
			}
		}
		return false
	}, 10*time.Second, 20*time.Millisecond, "no new token from the simulator on %v", channels)
	for _, c := range channels {
		if m, ok := box.first(c); ok {
			assert.NotEmpty(t, field(m, "a"), c)
		}
	}
}
