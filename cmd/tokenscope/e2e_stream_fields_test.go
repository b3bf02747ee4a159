package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/centrifugal/centrifuge-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/domain/account"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/domain/trade"
)

// headerClient connects as the public client built with an API key alone does (an empty token
// in the URL's `token` parameter and in the connect command), plus the key in an upgrade header.
func headerClient(t *testing.T, base string, header http.Header, channels []string) *inbox {
	t.Helper()
	c := centrifuge.NewJsonClient(streamURL(base, ""), centrifuge.Config{Name: "go", Header: header,
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
	return box
}

// waitFor returns the first message on ch (an array's elements each count) that match accepts,
// waiting up to 10 s for it.
func (b *inbox) waitFor(t *testing.T, ch string, match func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b.mu.Lock()
		for _, v := range b.got[ch] {
			list, ok := v.([]any)
			if !ok {
				list = []any{v}
			}
			for _, el := range list {
				if m, ok := el.(map[string]any); ok && match(m) {
					b.mu.Unlock()
					return m
				}
			}
		}
		b.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatalf("no matching message on %s; got %v", ch, b.got[ch])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// num reads a JSON number of a REST body (json.Number) or of a stream message (float64).
func num(t *testing.T, v any) int64 {
	t.Helper()
	switch x := v.(type) {
	case json.Number:
		n, err := x.Int64()
		require.NoError(t, err)
		return n
	case float64:
		return int64(x)
	}
	t.Fatalf("%#v is not a number", v)
	return 0
}

// TestStreamsFieldsMatchREST: a client connected with its key in the X-API-KEY upgrade header
// (the token empty, as the public client built with an API key alone sends it) reads the fields
// the public client's types have: dex-new-token and the batch channels carry lf with the
// program address and protocol family REST serves in the token's extra; dex-wallet-token-pnl
// carries ot, lt (the newest trade of either side), ct (the close of a closed position) and
// hdts; dex-wallet-pnl-list carries ba, abpiu, sa; each equal to what REST serves for the same
// token and wallet.
func TestStreamsFieldsMatchREST(t *testing.T) {
	e := newEnv(t)
	key := e.keyFor(t, "stream-fields", account.ScopeRead)
	tok1, tok2, wallet, poolAddr := "FieldTok1", "FieldTok2", "FieldW1", "FieldPool1"
	channels := []string{"dex-new-token:sol", "dex-new-tokens:sol", "dex-new-tokens-metadata:sol",
		"dex-wallet-token-pnl:sol_" + wallet, "dex-wallet-pnl-list:sol_" + wallet}
	box := headerClient(t, e.base, http.Header{"X-Api-Key": []string{key}}, channels)

	launched := func(addr string) chainevent.TokenCreated {
		tc := edgeToken(addr)
		tc.Token.CreatedAt = ptr(time.Now().UnixMilli())
		tc.Token.LaunchpadTag = token.PumpFun
		tc.Token.Extra = token.Extra{LaunchFromProgramAddress: "FieldCurveProgram", LaunchFromProtocolFamily: "Pumpfun"}
		return tc
	}
	now := time.Now().Truncate(time.Millisecond)
	at := func(minutesAgo int) time.Time { return now.Add(-time.Duration(minutesAgo) * time.Minute) }
	// tok1: bought twice, then all sold (closed). tok2: bought, partly sold, bought again (open;
	// its newest trade is a buy, after its last sell).
	events := []chainevent.Event{launched(tok1), launched(tok2),
		mktTrade("FieldSig1", wallet, tok1, poolAddr, trade.Buy, "10", "2", at(9), 8001),
		mktTrade("FieldSig2", wallet, tok1, poolAddr, trade.Buy, "30", "4", at(8), 8002),
		mktTrade("FieldSig3", wallet, tok1, poolAddr, trade.Sell, "40", "5", at(7), 8003),
		mktTrade("FieldSig4", wallet, tok2, poolAddr, trade.Buy, "100", "1", at(6), 8004),
		mktTrade("FieldSig5", wallet, tok2, poolAddr, trade.Sell, "20", "2", at(5), 8005),
		mktTrade("FieldSig6", wallet, tok2, poolAddr, trade.Buy, "50", "3", at(4), 8006),
	}
	_, err := e.rt.App.Ingest.Ingest(t.Context(), events)
	require.NoError(t, err)

	t.Run("launch protocol", func(t *testing.T) {
		v := okJSON(t, e.do(t, "GET", "/v2/token/sol/multi?tokenAddresses="+tok1, nil))
		list, ok := v.([]any)
		require.True(t, ok, "%v", v)
		require.Len(t, list, 1)
		extra := field(list[0], "extra")
		require.NotEmpty(t, field(extra, "launchFromProgramAddress"))
		for _, ch := range channels[:3] {
			m := box.waitFor(t, ch, func(m map[string]any) bool { return m["a"] == tok1 })
			lf, ok := m["lf"].(map[string]any)
			require.True(t, ok, "%s: lf %v", ch, m["lf"])
			assert.Equal(t, field(extra, "launchFromProgramAddress"), lf["pa"], ch)
			assert.Equal(t, field(extra, "launchFromProtocolFamily"), lf["pf"], ch)
			assert.Equal(t, string(token.PumpFun), lf["pn"], ch)
		}
	})

	v := okJSON(t, e.do(t, "GET", fmt.Sprintf("/v2/wallet/sol/%s/pnl-by-token?tokenAddresses=%s,%s", wallet, tok1, tok2), nil))
	rest := map[string]any{}
	for _, it := range items(t, v, "data") {
		rest[field(it, "tokenAddress").(string)] = it
	}
	require.Len(t, rest, 2)
	// REST's trades of the wallet in a token, newest first.
	trades := func(tok string) []any {
		return items(t, okJSON(t, e.do(t, "GET", "/v2/trade/sol?walletAddress="+wallet+"&tokenAddress="+tok, nil)), "data")
	}

	t.Run("wallet token pnl", func(t *testing.T) {
		closed := box.waitFor(t, "dex-wallet-token-pnl:sol_"+wallet, func(m map[string]any) bool { return m["ta"] == tok1 })
		open := box.waitFor(t, "dex-wallet-token-pnl:sol_"+wallet, func(m map[string]any) bool { return m["ta"] == tok2 })
		assert.Equal(t, true, field(rest[tok1], "isClosed"))
		assert.Equal(t, false, field(rest[tok2], "isClosed"))
		for tok, m := range map[string]map[string]any{tok1: closed, tok2: open} {
			tr := trades(tok)
			newest, oldest := num(t, field(tr[0], "blockTimestamp")), num(t, field(tr[len(tr)-1], "blockTimestamp"))
			assert.Equal(t, newest, num(t, m["lt"]), "%s lt: the newest trade", tok)
			assert.Equal(t, oldest, num(t, m["ot"]), "%s ot: the first buy", tok)
			for k, restKey := range map[string]string{"ba": "buyAmount", "sa": "sellAmount", "abpiu": "avgBuyPriceInUsd",
				"aspiu": "avgSellPriceInUsd"} {
				assertDec(t, field(rest[tok], restKey).(string), m[k], tok+" "+k)
			}
		}
		assert.Equal(t, at(7).UnixMilli(), num(t, closed["ct"]), "close: the selling out")
		assert.Equal(t, (at(7).Sub(at(9))).Milliseconds(), num(t, closed["hdts"]), "held from the first buy to the close")
		assert.Equal(t, at(4).UnixMilli(), num(t, open["lt"]), "lt is the last buy, after the last sell")
		assert.NotContains(t, open, "ct")
		assert.Equal(t, num(t, open["t"])-at(6).UnixMilli(), num(t, open["hdts"]), "held from the first buy to the message")
	})

	t.Run("wallet pnl list", func(t *testing.T) {
		list := box.waitFor(t, "dex-wallet-pnl-list:sol_"+wallet, func(m map[string]any) bool { return m["r"] == "all" })
		sum := func(k string) string {
			return dd(field(rest[tok1], k).(string)).Add(dd(field(rest[tok2], k).(string))).String()
		}
		assertDec(t, sum("buyAmount"), list["ba"], "ba")
		assertDec(t, sum("sellAmount"), list["sa"], "sa")
		// (10×2 + 30×4 + 100×1 + 50×3) / (10 + 30 + 100 + 50) = 390 / 190.
		summary := field(v, "summary")
		assertDec(t, field(summary, "buyAmountInUsd").(string), list["baiu"], "baiu")
		assertDec(t, dd("390").DivRound(dd("190"), 18).String(), list["abpiu"], "abpiu")
		assertDec(t, field(summary, "totalProfitInUsd").(string), list["piu"], "piu")
	})
	assert.Empty(t, box.errs)
}
