package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/ndjson"
	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/domain/account"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/domain/ranking"
	"github.com/tokenscope/tokenscope/internal/browsertest"
	"github.com/tokenscope/tokenscope/ports"
)

// TestLivePage opens /live in headless Chromium with a read-only key, on a token that is on
// the chain's hot list, and checks that a trade POSTed to /v2/ingest while the page is open
// shows up on it: on the token's trade tape, in the trade count of its hot-list row and as the
// close of the chart's current bar. The page takes live data from the WebSocket stream when the
// server has /connection/websocket, and polls the REST operations otherwise; its chart history
// comes from the candles operation, or from the tape's trades without it. The test checks it
// picked the right ones, and then runs the page again with polling forced, so both feeds stay
// covered.
func TestLivePage(t *testing.T) {
	e := newEnv(t)
	// Which feed the page picks by itself: the stream when the server serves its endpoint.
	auto := "websocket"
	if streamStatus(t, e) == http.StatusNotFound {
		auto = "polling"
	}
	t.Run("its own choice", func(t *testing.T) { checkLivePage(t, e, "", auto) })
	t.Run("polling", func(t *testing.T) { checkLivePage(t, e, "poll", "polling") })
}

// streamStatus is the status of a plain GET of the stream's path (no upgrade), on a connection
// of its own: a server that serves the stream hands the whole connection to it, so a kept-alive
// connection would carry the test's next API requests there.
func streamStatus(t *testing.T, e *env) int {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	res, err := client.Get(e.base + "/connection/websocket")
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	return res.StatusCode
}

// checkLivePage opens the page with ?feed=feedParam (none: the page's choice) and checks that
// it took its live data from wantFeed and showed a trade ingested while it was open.
func checkLivePage(t *testing.T, e *env, feedParam, wantFeed string) {
	ctx := context.Background()
	tok := fmt.Sprintf("LivePageTok%d", time.Now().UnixNano())
	created := edgeToken(tok)
	created.Token.Symbol = "LIVE"
	now := time.Now()
	first := mktTrade("LivePageSig0"+tok, "LiveW1", tok, "LivePool", "BUY", "10", "2", now.Add(-30*time.Second), 500)
	_, err := e.rt.App.Ingest.Ingest(ctx, []chainevent.Event{created, first})
	require.NoError(t, err)
	// The hot list is the ranking the refresh loop stores; this test stores it itself.
	require.NoError(t, postgres.NewIngestStore(e.rt.Pool).ReplaceHotTokens(ctx, chain.Sol, ranking.Duration1h,
		[]ports.HotEntry{{Address: tok, Rank: 1, Score: dd("1")}}, now))

	// And where the chart's bars come from.
	wantChart := "candles"
	if e.do(t, "GET", "/v2/token/sol/"+tok+"/candles?resolution=1m", nil).Status == 404 {
		wantChart = "trades"
	}

	b := newBrowser(t, 3*time.Minute)
	key := e.keyFor(t, "live", account.ScopeRead)
	query := url.Values{"key": {key}}
	if feedParam != "" {
		query.Set("feed", feedParam)
	}
	page := e.base + "/live?" + query.Encode() + "#chain=sol&d=1h&token=" + url.QueryEscape(tok)
	hotTrades := `#hot-rows tr[data-a="` + tok + `"] td[data-f="trades"]`
	// Generous bounds against a hang, not timing assertions.
	step := func(what string, timeout time.Duration, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sctx, cancel := context.WithTimeout(b.ctx, timeout)
		defer cancel()
		if err := chromedp.Do(sctx, steps...); err != nil {
			path := browsertest.Screenshot(t, b.ctx, "live-page-"+wantFeed+"-failed.png")
			t.Fatalf("%s: %v (screenshot %s; console problems %q)", what, err, path, b.problems())
		}
	}
	step("open the page", 30*time.Second,
		chromedp.Navigate(page),
		chromedp.WaitVisible(`#feed[data-kind="`+wantFeed+`"]`),
		chromedp.WaitVisible(hotTrades),
		chromedp.WaitVisible(`#tape tr[data-h="LivePageSig0`+tok+`"]`),
		chromedp.WaitVisible(`#chart[data-source="`+wantChart+`"] canvas`),
		chromedp.Poll[chromedp.Void](`document.querySelector('#chart').dataset.lastClose === "2"`),
	)
	before, err := chromedp.Run(b.ctx, chromedp.Text(hotTrades))
	require.NoError(t, err)
	require.Equal(t, "1", strings.TrimSpace(before), "the hot row counts the trade stored before the page opened")
	address, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`location.href`))
	require.NoError(t, err)
	require.NotContains(t, address, key, "the page drops ?key= from the address bar")

	second := mktTrade("LivePageSig1"+tok, "LiveW2", tok, "LivePool", "SELL", "4", "2.5", time.Now(), 501)
	line, err := ndjson.Marshal(second)
	require.NoError(t, err)
	r := e.do(t, "POST", "/v2/ingest", string(line)+"\n", "Content-Type", "application/x-ndjson")
	require.Equal(t, 200, r.Status, "%s", r.Body)

	step("the ingested trade reaches the page", 30*time.Second,
		chromedp.WaitVisible(`#tape tr[data-h="LivePageSig1`+tok+`"]`),
		chromedp.Poll[chromedp.Void](`document.querySelector('`+hotTrades+`').textContent === "2"`),
		chromedp.Poll[chromedp.Void](`document.querySelector('#chart').dataset.lastClose === "2.5"`),
		// The dex-candle channel (or its polled stand-in) sends the current bar, not only the tape.
		chromedp.Poll[chromedp.Void](`document.querySelector('#chart').dataset.liveBar === "candle channel"`),
		chromedp.Poll[chromedp.Void](`document.querySelector('#chart').dataset.lastClose === "2.5"`),
	)
	side, err := chromedp.Run(b.ctx, chromedp.Text(`#tape tr[data-h="LivePageSig1`+tok+`"] td:nth-child(2)`))
	require.NoError(t, err)
	require.Equal(t, "sell", strings.TrimSpace(side))
	top, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.querySelector('#tape tr').dataset.h`))
	require.NoError(t, err)
	require.Equal(t, "LivePageSig1"+tok, top, "the newest trade heads the tape")

	// One price format and one amount format everywhere: the tape's cells, and the chart's axis
	// writes a price as the tape does.
	cells, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#tape tr[data-h="LivePageSig1`+tok+`"] td')].slice(2, 5).map((td) => td.textContent)`))
	require.NoError(t, err)
	require.Equal(t, []string{"2.5", "4", "10"}, cells, "price, amount and USD of the ingested trade")
	axis, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]string](`(() => { const f = document.querySelector('#chart').view.candles.priceFormatter();
		return [2.5, 0.0000021, 1234.56789].map((p) => f.format(p)); })()`))
	require.NoError(t, err)
	require.Equal(t, []string{"2.5", "0.0000021", "1,234.5679"}, axis, "the axis formats prices as the tape does, small ones included")

	// The price axis: no label below 0 and no two labels alike (one hiding the other), for these
	// bars, for a price that crashed to near 0 (the margin under the lowest price used to run the
	// axis down to about -0.4) and for a token whose single bar is a tiny price.
	sc := readPriceScale(t, b, "true")
	checkPriceScale(t, sc, "prices 2 to 2.5")
	browsertest.Screenshot(t, b.ctx, "live-page-"+wantFeed+".png")
	_, err = chromedp.Run(b.ctx, chromedp.Evaluate[bool](`(() => { const v = document.querySelector('#chart').view;
		const time = Math.floor(Date.now() / 1000); const p = 0.0000021;
		v.setBars([{ time: time - 60, open: 1, high: 1, low: 0.9, close: 0.9, value: 5 }, { time, open: 0.9, high: 0.9, low: p, close: p, value: 5 }]);
		return true; })()`))
	require.NoError(t, err)
	sc = readPriceScale(t, b, `v.candles.coordinateToPrice(0) < 1.5`)
	checkPriceScale(t, sc, "a crash from 1 to 0.0000021")
	browsertest.Screenshot(t, b.ctx, "live-page-"+wantFeed+"-crash.png")
	_, err = chromedp.Run(b.ctx, chromedp.Evaluate[bool](`(() => { const v = document.querySelector('#chart').view;
		const time = Math.floor(Date.now() / 1000); const p = 0.0000021;
		v.setBars([{ time, open: p, high: p, low: p, close: p, value: 5 }]); return true; })()`))
	require.NoError(t, err)
	sc = readPriceScale(t, b, `v.candles.coordinateToPrice(0) < 0.001`)
	checkPriceScale(t, sc, "a single bar at 0.0000021")
	require.True(t, sc.Bottom < 0.0000021 && sc.Top > 0.0000021, "the bar's price is in the axis's range %v", sc)
	browsertest.Screenshot(t, b.ctx, "live-page-"+wantFeed+"-small-price.png")

	// Closed, the token's half of the page says what to do.
	step("close the token", 10*time.Second,
		chromedp.Click(`#close-token`),
		chromedp.WaitVisible(`#pick`),
		chromedp.WaitNotVisible(`#token`),
	)
	pick, err := chromedp.Run(b.ctx, chromedp.Text(`#pick`))
	require.NoError(t, err)
	require.Contains(t, pick, "Pick a token in the hot list")
	require.Empty(t, b.problems(), "the page threw or broke its content policy")
	t.Logf("feed %s, chart from %s", wantFeed, wantChart)
}

// priceScale is what the chart's price axis shows: the prices at its top and bottom edges, and
// the label of the price every 24 pixels down it (the axis draws on a canvas; these are the
// labels its formatter gives along it).
type priceScale struct {
	Top, Bottom float64
	Labels      []string
}

// readPriceScale reads the axis once ready (a JS condition on v, the chart's handles) holds.
func readPriceScale(t *testing.T, b *browser, ready string) priceScale {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	sc, err := chromedp.Run(ctx, chromedp.Poll[priceScale](`(() => {
		const el = document.querySelector('#chart'); const v = el.view;
		if (!(`+ready+`)) return null;
		const h = el.clientHeight - v.chart.timeScale().height();
		const f = v.candles.priceFormatter(); const labels = [];
		for (let y = 0; y <= h; y += 24) labels.push(f.format(v.candles.coordinateToPrice(y)));
		return { Top: v.candles.coordinateToPrice(0), Bottom: v.candles.coordinateToPrice(h), Labels: labels };
	})()`))
	require.NoError(t, err)
	return sc
}

func checkPriceScale(t *testing.T, sc priceScale, what string) {
	t.Helper()
	require.Greater(t, sc.Top, 0.0, what)
	require.GreaterOrEqual(t, sc.Bottom, -sc.Top*1e-9, "%s: the axis reaches below a price of 0 (%v)", what, sc)
	seen := map[string]bool{}
	for _, l := range sc.Labels {
		require.Regexp(t, `^[0-9][0-9,]*(\.[0-9]+)?$`, l, "%s: a plain, non-negative price label", what)
		require.False(t, seen[l], "%s: label %q twice on the axis %v", what, l, sc.Labels)
		seen[l] = true
	}
	require.GreaterOrEqual(t, len(sc.Labels), 5, what)
}
