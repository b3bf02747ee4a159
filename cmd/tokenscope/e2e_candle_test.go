package main

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/ndjson"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/domain/trade"
)

// candleRow is one TokenCandle as the test expects it: decimals as strings, the rest as text of
// the JSON integers.
type candleRow struct {
	at                          time.Time
	open, high, low, close, vol string
	trades                      int64
	volumeInToken               string
}

// postTrades sends trades to /v2/ingest as NDJSON.
func postTrades(t *testing.T, e *env, trades ...chainevent.Trade) {
	t.Helper()
	var b strings.Builder
	for _, tr := range trades {
		line, err := ndjson.Marshal(tr)
		require.NoError(t, err)
		b.Write(line)
		b.WriteByte('\n')
	}
	r := e.do(t, "POST", "/v2/ingest", b.String(), "Content-Type", "application/x-ndjson")
	require.Equal(t, 200, r.Status, "%s", r.Body)
}

// getCandles asks path with query and checks every field's JSON type against the reference
// (strings for prices and volumes, integers for timestamp and trades).
func getCandles(t *testing.T, e *env, path, query string) []candleRow {
	t.Helper()
	list, ok := okJSON(t, e.do(t, "GET", path+"?"+query, nil)).([]any)
	require.True(t, ok, "a bare array")
	out := make([]candleRow, 0, len(list))
	for _, item := range list {
		m := item.(map[string]any)
		str := func(k string) string {
			s, ok := m[k].(string)
			require.True(t, ok, "%s is a string: %v", k, m[k])
			return s
		}
		integer := func(k string) int64 {
			n, ok := m[k].(json.Number)
			require.True(t, ok, "%s is a number: %v", k, m[k])
			v, err := strconv.ParseInt(n.String(), 10, 64)
			require.NoError(t, err, "%s is an integer", k)
			return v
		}
		out = append(out, candleRow{at: time.UnixMilli(integer("timestamp")).UTC(), open: str("open"), high: str("high"),
			low: str("low"), close: str("close"), vol: str("volume"), trades: integer("trades"),
			volumeInToken: str("volumeInTokenAmount")})
	}
	return out
}

// TestCandles ingests a hand-made trade list and compares the candles with hand-worked OHLCV:
// a gap (no candle for an empty interval), a FAILED trade (never counted), a late trade that
// lands inside an earlier candle (becomes its open and low), USD and native prices, resolutions
// read from the trades (15s), the minute buckets (1m, 5m) and the hour buckets (1h), and the
// same numbers for the pool and the pair (either order).
func TestCandles(t *testing.T) {
	e := newEnv(t)
	const tok, pool = "CndTok", "CndPool"
	_, err := e.rt.App.Ingest.Ingest(t.Context(), []chainevent.Event{edgeToken(tok)})
	require.NoError(t, err)
	t0 := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	failed := mktTrade("CndFail", "CndW2", tok, pool, trade.Buy, "100", "50", at(80), 103)
	failed.Status = trade.Failed
	postTrades(t, e,
		mktTrade("CndS1", "CndW1", tok, pool, trade.Buy, "10", "2", at(5), 100),   // 10:00:05 $20
		mktTrade("CndS2", "CndW2", tok, pool, trade.Sell, "5", "3", at(40), 101),  // 10:00:40 $15
		mktTrade("CndS3", "CndW1", tok, pool, trade.Buy, "4", "2.5", at(70), 102), // 10:01:10 $10
		failed, // 10:01:20, never counted
		// 10:02 has no trade: no candle
		mktTrade("CndS5", "CndW3", tok, pool, trade.Buy, "2", "4", at(210), 105)) // 10:03:30 $8
	from, to := strconv.FormatInt(t0.Unix(), 10), strconv.FormatInt(at(240).Unix(), 10)
	window := "&from=" + from + "&to=" + to
	tokenPath := "/v2/token/sol/" + tok + "/candles"

	require.Equal(t, []candleRow{
		{t0, "2", "3", "2", "3", "35", 2, "15"},
		{at(60), "2.5", "2.5", "2.5", "2.5", "10", 1, "4"},
		{at(180), "4", "4", "4", "4", "8", 1, "2"},
	}, getCandles(t, e, tokenPath, "resolution=1m"+window), "before the late trade")

	// A late trade (10:00:01, ingested after 10:03:30) opens the 10:00 candle and is its low.
	postTrades(t, e, mktTrade("CndLate", "CndW4", tok, pool, trade.Sell, "1", "1.5", at(1), 99)) // $1.5
	oneMinute := []candleRow{
		{t0, "1.5", "3", "1.5", "3", "36.5", 3, "16"},
		{at(60), "2.5", "2.5", "2.5", "2.5", "10", 1, "4"},
		{at(180), "4", "4", "4", "4", "8", 1, "2"},
	}
	require.Equal(t, oneMinute, getCandles(t, e, tokenPath, "resolution=1m"+window))
	require.Equal(t, oneMinute, getCandles(t, e, tokenPath, "resolution=1m&priceType=usd&from="+from+"000&to="+to+"999"),
		"milliseconds read like seconds")
	require.Equal(t, []candleRow{{t0, "1.5", "4", "1.5", "4", "54.5", 5, "22"}},
		getCandles(t, e, tokenPath, "resolution=5m"+window))
	require.Equal(t, []candleRow{{t0, "1.5", "4", "1.5", "4", "54.5", 5, "22"}},
		getCandles(t, e, tokenPath, "resolution=1h"+window))
	require.Equal(t, []candleRow{
		{t0, "1.5", "2", "1.5", "2", "21.5", 2, "11"},
		{at(30), "3", "3", "3", "3", "15", 1, "5"},
		{at(60), "2.5", "2.5", "2.5", "2.5", "10", 1, "4"},
		{at(210), "4", "4", "4", "4", "8", 1, "2"},
	}, getCandles(t, e, tokenPath, "resolution=15s"+window))
	native := []candleRow{
		{t0, "0.015", "0.03", "0.015", "0.03", "0.365", 3, "16"},
		{at(60), "0.025", "0.025", "0.025", "0.025", "0.1", 1, "4"},
		{at(180), "0.04", "0.04", "0.04", "0.04", "0.08", 1, "2"},
	}
	require.Equal(t, native, getCandles(t, e, tokenPath, "resolution=1m&priceType=native"+window))

	// limit caps the intervals from the end of the window; from alone starts it.
	require.Equal(t, oneMinute[2:], getCandles(t, e, tokenPath, "resolution=1m&limit=2"+window))
	require.Equal(t, oneMinute[:2], getCandles(t, e, tokenPath, "resolution=1m&limit=3&from="+from))

	// The pool and the pair (written in either order) hold the same trades.
	require.Equal(t, oneMinute, getCandles(t, e, "/v2/token/sol/pool/"+pool+"/candles", "resolution=1m"+window))
	require.Equal(t, native, getCandles(t, e, "/v2/token/sol/pool/"+pool+"/candles", "resolution=1m&priceType=native"+window))
	for _, pair := range []string{tok + "-" + mktSol, mktSol + "-" + tok} {
		require.Equal(t, oneMinute, getCandles(t, e, "/v2/token/sol/pair/"+url.PathEscape(pair)+"/candles", "resolution=1m"+window))
	}
	require.Empty(t, getCandles(t, e, tokenPath, "resolution=1m&from="+strconv.FormatInt(at(120).Unix(), 10)+
		"&to="+strconv.FormatInt(at(150).Unix(), 10)), "an empty interval has no candle")

	t.Run("pair trades in either direction, priced in the base", func(t *testing.T) {
		// PairA against PairB (A's price 2), then PairB against PairA (A's side-token price 3).
		ab := mktTrade("PrS1", "CndW1", "PairA", "PrPool", trade.Buy, "10", "2", at(5), 300) // A: 10 @ $2 = $20
		ab.SideTokenAddress = "PairB"
		ba := mktTrade("PrS2", "CndW2", "PairB", "PrPool", trade.Sell, "50", "0.6", at(30), 301) // B: 50 @ $0.6 = $30
		ba.SideTokenAddress, ba.SideTokenAmount, ba.SideTokenAmountInUSD, ba.SideTokenPriceInUSD = "PairA", dd("10"), dd("30"), dd("3")
		ba.SideTokenAmountInNative, ba.SideTokenPriceInNative = dd("0.3"), dd("0.03")
		other := mktTrade("PrS3", "CndW3", "PairA", "PrPool", trade.Buy, "1", "9", at(40), 302) // A against SOL: not the pair
		postTrades(t, e, ab, ba, other)
		for _, pair := range []string{"PairB-PairA", "PairA-PairB"} {
			path := "/v2/token/sol/pair/" + pair + "/candles"
			require.Equal(t, []candleRow{{t0, "2", "3", "2", "3", "50", 2, "20"}}, getCandles(t, e, path, "resolution=1m"+window))
			require.Equal(t, []candleRow{{t0, "0.02", "0.03", "0.02", "0.03", "0.5", 2, "20"}},
				getCandles(t, e, path, "resolution=1m&priceType=native"+window))
		}
	})

	t.Run("current candle moves with ingest", func(t *testing.T) {
		now := time.Now().UTC()
		cur := "/v2/token/sol/CndNow/candles"
		require.Empty(t, getCandles(t, e, cur, "resolution=1M&limit=1"))
		postTrades(t, e, mktTrade("CndNow1", "CndW1", "CndNow", pool, trade.Buy, "1", "5", now, 200))
		got := getCandles(t, e, cur, "resolution=1M&limit=1")
		require.Len(t, got, 1)
		require.Equal(t, candleRow{time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC), "5", "5", "5", "5", "5", 1, "1"}, got[0])
		postTrades(t, e, mktTrade("CndNow2", "CndW2", "CndNow", pool, trade.Sell, "2", "7", now, 201))
		got = getCandles(t, e, cur, "resolution=1M&limit=1")
		require.Len(t, got, 1)
		require.Equal(t, candleRow{got[0].at, "5", "7", "5", "7", "19", 2, "3"}, got[0])
	})
}

// TestCandlesBadParameters: each bad parameter is a 400 naming it.
func TestCandlesBadParameters(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct{ path, param string }{
		{"/v2/token/sol/T/candles", "resolution"},
		{"/v2/token/sol/T/candles?resolution=2m", "resolution"},
		{"/v2/token/sol/T/candles?resolution=1S", "resolution"},
		{"/v2/token/sol/T/candles?resolution=1m&priceType=eur", "priceType"},
		{"/v2/token/sol/T/candles?resolution=1m&from=yesterday", "from"},
		{"/v2/token/sol/T/candles?resolution=1m&to=-5", "to"},
		{"/v2/token/sol/T/candles?resolution=1m&from=2000000000&to=1000000000", "from"},
		{"/v2/token/sol/T/candles?resolution=1m&limit=0", "limit"},
		{"/v2/token/sol/T/candles?resolution=1m&limit=1001", "limit"},
		{"/v2/token/doge/T/candles?resolution=1m", "chain"},
		{"/v2/token/sol/pool/P/candles?resolution=1x", "resolution"},
		{"/v2/token/sol/pair/OnlyOne/candles?resolution=1m", "pair"},
		{"/v2/token/sol/pair/A-A/candles?resolution=1m", "pair"},
	} {
		r := e.do(t, "GET", c.path, nil)
		require.Equal(t, 400, r.Status, "%s: %s", c.path, r.Body)
		require.Equal(t, c.param, field(r.Object(t)["details"], "parameter"), "%s: %s", c.path, r.Body)
	}
	// Read scope, like the other read operations.
	r := e.do(t, "GET", "/v2/token/sol/T/candles?resolution=1m", nil, "Authorization", "")
	require.Equal(t, 401, r.Status, "%s", r.Body)
}
