package stream_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/app/market"
	"github.com/tokenscope/tokenscope/app/market/readcache"
	"github.com/tokenscope/tokenscope/app/stream"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/domain/pnl"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/domain/trade"
	"github.com/tokenscope/tokenscope/internal/fakeclock"
)

func TestParse(t *testing.T) {
	for name, want := range map[string]stream.Channel{
		"dex-trade:sol_Tok":                                     {Chain: chain.Sol, Address: "Tok"},
		"dex-new-token:bsc":                                     {Chain: chain.Bsc},
		"dex-candle-in-native:eth_0xabc_1M":                     {Chain: chain.Eth, Address: "0xabc", Resolution: "1M"},
		"dex-pair-candle:sol_A-B_15s":                           {Chain: chain.Sol, Address: "A-B", Resolution: "15s"},
		"dex-ranking-token-general_stat_num-list:sol_us_stocks": {Chain: chain.Sol, Board: "us_stocks"},
		"dex-ranking-list:sol_new_pump_fun":                     {Chain: chain.Sol, Board: "new", Dex: "pump_fun"},
		"dex-ranking-token-bounding-curve-list:sol_new":         {Chain: chain.Sol, Board: "new"},
	} {
		got, err := stream.Parse(name)
		require.NoError(t, err, name)
		assert.Equal(t, want.Chain, got.Chain, name)
		assert.Equal(t, want.Address, got.Address, name)
		assert.Equal(t, want.Resolution, got.Resolution, name)
		assert.Equal(t, want.Board, got.Board, name)
		assert.Equal(t, want.Dex, got.Dex, name)
	}
	for _, bad := range []string{"dex-trade", "dex-trade:sol", "dex-trade:doge_Tok", "pred:evt:x:act", "dex-new-token:sol_x",
		"dex-candle:sol_Tok_2m", "dex-candle:sol_Tok", "dex-ranking-list:sol_hot", "dex-ranking-token-bounding-curve-list:sol_trending"} {
		_, err := stream.Parse(bad)
		assert.Error(t, err, bad)
	}
}

// hub records what the publisher sends.
type hub struct {
	mu        sync.Mutex
	reach     map[string]bool
	local     []string
	published map[string][][]byte
	delivered map[string][][]byte
	announced [][]byte
	// tags are the last publication's tags per channel.
	tags map[string]map[string]string
}

func newHub(local ...string) *hub {
	h := &hub{reach: map[string]bool{}, local: local, published: map[string][][]byte{}, delivered: map[string][][]byte{}}
	for _, c := range local {
		h.reach[c] = true
	}
	return h
}

func (h *hub) Publish(ch string, data []byte, tags map[string]string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.published[ch] = append(h.published[ch], data)
	if h.tags == nil {
		h.tags = map[string]map[string]string{}
	}
	h.tags[ch] = tags
	return nil
}

func (h *hub) Deliver(ch string, data []byte, _ map[string]string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.delivered[ch] = append(h.delivered[ch], data)
	return nil
}

func (h *hub) Reaches(ch string) bool  { return h.reach[ch] }
func (h *hub) LocalChannels() []string { return h.local }

func (h *hub) Announce(data []byte) error {
	h.mu.Lock()
	h.announced = append(h.announced, data)
	h.mu.Unlock()
	return nil
}

func (h *hub) count(m map[string][][]byte, ch string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(m[ch])
}

func (h *hub) last(m map[string][][]byte, ch string) map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	var v map[string]any
	if l := m[ch]; len(l) > 0 {
		_ = json.Unmarshal(l[len(l)-1], &v)
	}
	return v
}

// mkt answers token state with one detail per asked address, and wallet PnL with periods.
type mkt struct {
	calls   int
	periods []market.PnLPeriod
}

func (m *mkt) Multi(_ context.Context, r market.MultiRequest) (market.Tokens, error) {
	m.calls++
	var out []token.Detail
	for _, a := range r.Addresses {
		out = append(out, token.Detail{Token: token.Token{Address: a, Chain: r.Chain},
			MarketData: token.MarketData{PriceInUSD: decimal.RequireFromString("1.5"), Holders: decimal.NewFromInt(7)}})
	}
	return readcache.Uncached(out), nil
}

func (m *mkt) PnLPeriods(context.Context, chain.Chain, string, []string) ([]market.PnLPeriod, error) {
	return m.periods, nil
}

func (m *mkt) HotTokens(context.Context, market.HotRequest) (market.Tokens, error) {
	return readcache.Uncached(nil), nil
}

func tr(sig, tok string, status trade.Status) trade.Trade {
	return trade.Trade{Chain: chain.Sol, TransactionSignature: sig, Wallet: "W", PoolAddress: "P", Side: trade.Sell,
		Status: status, TokenAddress: tok, SideTokenAddress: "So1", TokenAmount: decimal.RequireFromString("3"),
		SideTokenAmount: decimal.RequireFromString("0.1"), BlockTimestamp: 1_700_000_000_123}
}

// TestPublisher: trades publish per trade on the channels that may reach a subscriber, failed
// trades never; after the flush the touched token's state is delivered to this node's
// subscribers of the token channels only, once per tick however many flushes came.
func TestPublisher(t *testing.T) {
	h := newHub("dex-trade:sol_T1", "dex-token-holding:sol_T1", "dex-token-stats:sol_T2")
	m := &mkt{}
	p := stream.New(h, m, fakeclock.At(time.UnixMilli(1_700_000_000_000)), slog.New(slog.NewTextHandler(io.Discard, nil))).WithTick(10 * time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	p.Committed(chainevent.Batch{Trades: []trade.Trade{tr("S1", "T1", trade.Succeeded), tr("S2", "T1", trade.Failed), tr("S3", "T3", trade.Succeeded)}})
	p.Derived()
	require.Eventually(t, func() bool { return h.count(h.published, "dex-trade:sol_T1") == 1 }, 5*time.Second, 5*time.Millisecond)
	msg := h.last(h.published, "dex-trade:sol_T1")
	assert.Equal(t, "S1", msg["h"])
	assert.Equal(t, "sell", msg["k"])
	assert.Equal(t, "So1", msg["btma"], "selling the token, the wallet receives the side token")
	assert.Equal(t, "0.1", msg["ba"])
	assert.Equal(t, float64(1_700_000_000_123), msg["t"])
	assert.Zero(t, h.count(h.published, "dex-trade:sol_T3"), "no subscriber anywhere")
	h.mu.Lock()
	tg := h.tags["dex-trade:sol_T1"]
	h.mu.Unlock()
	assert.Equal(t, "1700000000000", tg[stream.CommittedTag], "the batch's commit time, for latency")
	assert.Equal(t, "S1", tg["h"], "the message's keys, for filters")

	// The announcement reaches the node through the hub; here the test hands it back.
	require.Eventually(t, func() bool { h.mu.Lock(); defer h.mu.Unlock(); return len(h.announced) == 1 }, 5*time.Second, 5*time.Millisecond)
	p.Announced(h.announced[0])
	p.Announced(h.announced[0])
	require.Eventually(t, func() bool { return h.count(h.delivered, "dex-token-holding:sol_T1") >= 1 }, 5*time.Second, 5*time.Millisecond)
	holding := h.last(h.delivered, "dex-token-holding:sol_T1")
	assert.Equal(t, "T1", holding["a"])
	assert.Equal(t, float64(7), holding["h"])
	assert.Equal(t, float64(1_700_000_000_000), holding["ts"])
	assert.Zero(t, h.count(h.delivered, "dex-token-stats:sol_T2"), "T2 was not touched")
	// A marker: T2 touched and announced after T1's announcements. Ticks deliver in order, so once
	// T2's state arrived, a tick that repeated T1's would have delivered it before.
	p.Committed(chainevent.Batch{Trades: []trade.Trade{tr("S4", "T2", trade.Succeeded)}})
	p.Derived()
	require.Eventually(t, func() bool { h.mu.Lock(); defer h.mu.Unlock(); return len(h.announced) == 2 }, 5*time.Second, 5*time.Millisecond)
	p.Announced(h.announced[1])
	require.Eventually(t, func() bool { return h.count(h.delivered, "dex-token-stats:sol_T2") >= 1 }, 5*time.Second, 5*time.Millisecond)
	assert.Equal(t, 1, h.count(h.delivered, "dex-token-holding:sol_T1"), "two announcements, one tick: one message")
}

// TestCommittedNeverBlocks: with the publisher not running, batches beyond the queue are dropped
// and counted, and Committed returns at once.
func TestCommittedNeverBlocks(t *testing.T) {
	p := stream.New(newHub(), &mkt{}, fakeclock.At(time.UnixMilli(1_700_000_000_000)), slog.New(slog.NewTextHandler(io.Discard, nil)))
	for range 1000 {
		p.Committed(chainevent.Batch{})
		p.Derived()
	}
	assert.Equal(t, int64(1000-256), p.Dropped())
}

// TestNewTokenKeys: the keys the client asserts unchecked (STR!/NUM!) are left out when unknown,
// never null or of another type; the list channels carry the batch's launches as one array.
func TestNewTokenKeys(t *testing.T) {
	h := newHub("dex-new-token:sol", "dex-new-tokens:sol")
	p := stream.New(h, &mkt{}, fakeclock.At(time.UnixMilli(1_700_000_000_000)), slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	created := int64(1_690_000_000_000)
	p.Committed(chainevent.Batch{TokensCreated: []chainevent.TokenCreated{
		{Token: token.Token{Chain: chain.Sol, Address: "N1", Name: "One", Symbol: "ONE", Decimals: 6}},
		{Token: token.Token{Chain: chain.Sol, Address: "N2", Name: "Two", Symbol: "TWO", ImageURL: "https://x/2.png", CreatedAt: &created}},
	}})
	require.Eventually(t, func() bool { return h.count(h.published, "dex-new-token:sol") == 2 }, 5*time.Second, 5*time.Millisecond)
	h.mu.Lock()
	var first, second map[string]any
	require.NoError(t, json.Unmarshal(h.published["dex-new-token:sol"][0], &first))
	require.NoError(t, json.Unmarshal(h.published["dex-new-token:sol"][1], &second))
	var list []map[string]any
	require.NoError(t, json.Unmarshal(h.published["dex-new-tokens:sol"][0], &list))
	h.mu.Unlock()
	for _, k := range []string{"iu", "de", "cgi", "sm", "lf", "mt"} {
		assert.NotContains(t, first, k)
	}
	assert.Equal(t, float64(6), first["dec"])
	assert.IsType(t, float64(0), first["cts"], "cts is a number even when the launch time is unknown")
	assert.Equal(t, "https://x/2.png", second["iu"])
	assert.Equal(t, float64(created), second["cts"])
	assert.Len(t, list, 2)
}

// TestWalletPnLPerPeriod: the PnL list carries each resolution's own summary and day counts
// (pd, ld), and the token PnL
// message the whole history with the 7d/30d counts of the token's period entries.
func TestWalletPnLPerPeriod(t *testing.T) {
	h := newHub("dex-wallet-pnl-list:sol_W", "dex-wallet-token-pnl:sol_W")
	entry := func(buys, sells int64, total string) market.PnLEntry {
		return market.PnLEntry{Entry: pnl.Entry{WalletAddress: "W", TokenAddress: "T1", Buys: buys, Sells: sells,
			TotalProfitInUSD: decimal.RequireFromString(total)}}
	}
	period := func(r pnl.Resolution, e market.PnLEntry, pd, ld int64) market.PnLPeriod {
		es := []market.PnLEntry{e}
		if e.Buys+e.Sells == 0 {
			es = nil
		}
		return market.PnLPeriod{Resolution: r, Entries: es, Summary: pnl.Summary{Buys: e.Buys, Sells: e.Sells,
			TotalProfitInUSD: e.TotalProfitInUSD, Tokens: int64(len(es))}, ProfitableDays: pd, LosingDays: ld}
	}
	m := &mkt{periods: []market.PnLPeriod{period(pnl.Resolution1d, entry(0, 0, "0"), 0, 0), period(pnl.Resolution7d, entry(1, 2, "820"), 2, 1),
		period(pnl.Resolution30d, entry(2, 3, "900"), 3, 2), period(pnl.ResolutionAll, entry(3, 4, "920"), 4, 2)}}
	p := stream.New(h, m, fakeclock.At(time.UnixMilli(1_700_000_000_000)), slog.New(slog.NewTextHandler(io.Discard, nil))).WithTick(10 * time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	p.Committed(chainevent.Batch{Trades: []trade.Trade{tr("S1", "T1", trade.Succeeded)}})
	p.Derived()
	require.Eventually(t, func() bool { h.mu.Lock(); defer h.mu.Unlock(); return len(h.announced) == 1 }, 5*time.Second, 5*time.Millisecond)
	p.Announced(h.announced[0])
	require.Eventually(t, func() bool {
		return h.count(h.delivered, "dex-wallet-pnl-list:sol_W") >= 1 && h.count(h.delivered, "dex-wallet-token-pnl:sol_W") >= 1
	}, 5*time.Second, 5*time.Millisecond)
	h.mu.Lock()
	raw := h.delivered["dex-wallet-pnl-list:sol_W"][0]
	h.mu.Unlock()
	var list []map[string]any
	require.NoError(t, json.Unmarshal(raw, &list))
	require.Len(t, list, 4)
	got := map[any][]any{}
	for _, e := range list {
		got[e["r"]] = []any{e["piu"], e["bs"], e["ss"], e["ts"], e["pd"], e["ld"]}
	}
	assert.Equal(t, map[any][]any{"1d": {"0", 0.0, 0.0, 0.0, 0.0, 0.0}, "7d": {"820", 1.0, 2.0, 1.0, 2.0, 1.0},
		"30d": {"900", 2.0, 3.0, 1.0, 3.0, 2.0}, "all": {"920", 3.0, 4.0, 1.0, 4.0, 2.0}}, got)
	tok := h.last(h.delivered, "dex-wallet-token-pnl:sol_W")
	assert.Equal(t, "920", tok["trpiu"], "the whole history")
	assert.Equal(t, []any{3.0, 4.0, 1.0, 2.0, 2.0, 3.0}, []any{tok["bs"], tok["ss"], tok["bs7d"], tok["ss7d"], tok["bs30d"], tok["ss30d"]})
}
