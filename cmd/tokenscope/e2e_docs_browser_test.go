package main

// The browser tier: headless Chromium (internal/browsertest) against the running service's
// GET /docs. The page must load from this service alone, list every operation of
// /openapi.json, and its "Test Request" client must call the API with a key typed into it.

import (
	"encoding/json"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/internal/browsertest"
)

// requestLog records the URLs the page requested and the statuses it got.
type requestLog struct {
	mu       sync.Mutex
	urls     []string
	statuses map[string][]int64 // URL → statuses
}

func (l *requestLog) listen(ev any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch e := ev.(type) {
	case *network.EventRequestWillBeSent:
		l.urls = append(l.urls, e.Request.URL)
	case *network.EventResponseReceived:
		l.statuses[e.Response.URL] = append(l.statuses[e.Response.URL], e.Response.Status)
	}
}

func (l *requestLog) snapshot() ([]string, map[string][]int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := map[string][]int64{}
	for k, v := range l.statuses {
		st[k] = slices.Clone(v)
	}
	return slices.Clone(l.urls), st
}

func TestDocsPageInBrowser(t *testing.T) {
	e := newEnv(t)
	// The operations the page must list: every operation's summary in the served document.
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	res := e.do(t, "GET", "/openapi.json", nil, "Authorization", "")
	require.Equal(t, 200, res.Status)
	require.NoError(t, json.Unmarshal(res.Body, &doc))
	var summaries []string
	for _, item := range doc.Paths {
		for m, raw := range item {
			if m == "servers" {
				continue
			}
			var op struct{ Summary string }
			require.NoError(t, json.Unmarshal(raw, &op))
			summaries = append(summaries, op.Summary)
		}
	}
	require.GreaterOrEqual(t, len(summaries), 30)

	ctx := browsertest.New(t, 3*time.Minute)
	log := &requestLog{statuses: map[string][]int64{}}
	require.NoError(t, chromedp.Listen(ctx, log.listen))
	defer func() {
		if t.Failed() {
			browsertest.Screenshot(t, ctx, "docs-failed.png")
		}
	}()

	// The page loads and lists every operation (the sidebar, every tag open).
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(e.base+"/docs"),
		chromedp.WaitVisible(`[data-sidebar-id="api-1/tag/account/GET/v2/whoami"]`)))
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
	require.NoError(t, err)
	for _, s := range summaries {
		require.Contains(t, text, s, "the page lists operation %q", s)
	}
	require.Contains(t, text, "Getting started")
	browsertest.Screenshot(t, ctx, "docs.png")

	// The sidebar lists the spec's operations in its numbering, 1 to 14, and its footer links to
	// no hosted service: no link on the page leads to another origin.
	sidebar, err := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('[data-sidebar-id]')].map(e => e.innerText).join('\n')`))
	require.NoError(t, err)
	last := -1
	for n := 1; n <= 14; n++ {
		i := strings.Index("\n"+sidebar, "\n"+strconv.Itoa(n)+". ")
		require.GreaterOrEqual(t, i, 0, "operation %d in the sidebar:\n%s", n, sidebar)
		require.Greater(t, i, last, "operation %d after operation %d in the sidebar:\n%s", n, n-1, sidebar)
		last = i
	}
	foreign, err := chromedp.Run(ctx, chromedp.Poll[[]string](`(() => {
		const links = [...document.querySelectorAll('a[href]')].map(a => a.href);
		return links.length ? links.filter(h => new URL(h).origin !== location.origin && !h.startsWith('blob:')) : null;
	})()`, chromedp.WithPollingTimeout(10*time.Second)))
	require.NoError(t, err)
	require.Empty(t, foreign, "links to other origins")
	footer, err := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('.darklight-reference')].map(e => e.innerText).join('\n')`))
	require.NoError(t, err)
	for _, hosted := range []string{"Powered by", "MCP", "Open API Client"} {
		require.NotContains(t, footer, hosted, "the sidebar footer offers a hosted service")
	}

	// "Test Request" on whoami, a key typed into the client's bearer field, Send.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(e.base+"/docs#tag/account/GET/v2/whoami"),
		chromedp.WaitVisible(`[id="api-1/tag/account/GET/v2/whoami"]`)))
	clicked, err := chromedp.Run(ctx, chromedp.Poll[bool](`(() => {
		const sec = document.getElementById('api-1/tag/account/GET/v2/whoami');
		const b = sec && [...sec.querySelectorAll('button')].find(b => b.innerText.includes('Test Request'));
		if (!b) return false;
		b.click();
		return true;
	})()`, chromedp.WithPollingTimeout(30*time.Second)))
	require.NoError(t, err)
	require.True(t, clicked)
	token := `[role="dialog"] input[placeholder="Token"]`
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(token), chromedp.SendKeys(token, e.key)))
	sent, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => {
		const d = document.querySelector('[role="dialog"]');
		const b = [...d.querySelectorAll('button')].find(b => b.innerText.trim().startsWith('Send'));
		if (!b) return false;
		b.click();
		return true;
	})()`))
	require.NoError(t, err)
	require.True(t, sent, "the client has a Send button")
	// The client shows the answer: the key's account.
	shown, err := chromedp.Run(ctx, chromedp.Poll[bool](
		`document.querySelector('[role="dialog"]').innerText.includes('"accountId": "e2e"')`,
		chromedp.WithPollingTimeout(30*time.Second)))
	require.NoError(t, err)
	require.True(t, shown)
	browsertest.Screenshot(t, ctx, "docs-try-it.png")

	// Every request went to this service, and the tried call was a 200.
	urls, statuses := log.snapshot()
	base, err := url.Parse(e.base)
	require.NoError(t, err)
	for _, u := range urls {
		if strings.HasPrefix(u, "data:") || strings.HasPrefix(u, "blob:") {
			continue
		}
		p, err := url.Parse(u)
		require.NoError(t, err)
		require.Equal(t, base.Host, p.Host, "the page fetched %s from another host", u)
	}
	require.Contains(t, statuses[e.base+"/v2/whoami"], int64(200), "requests: %v", statuses)

	// "Test Request" on operation 2 sends its required tokenAddresses (the document's example)
	// and gets a 200.
	const multi = `api-1/tag/tokens/GET/v1/token/{chain}/multi`
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(e.base+"/docs#tag/tokens/GET/v1/token/{chain}/multi"),
		chromedp.WaitVisible(`[id="`+multi+`"]`)))
	clicked, err = chromedp.Run(ctx, chromedp.Poll[bool](`(() => {
		const sec = document.getElementById('`+multi+`');
		const b = sec && [...sec.querySelectorAll('button')].find(b => b.innerText.includes('Test Request'));
		if (!b) return false;
		b.click();
		return true;
	})()`, chromedp.WithPollingTimeout(30*time.Second)))
	require.NoError(t, err)
	require.True(t, clicked)
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(token)))
	if typed, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('`+token+`').value`)); err == nil && typed == "" {
		require.NoError(t, chromedp.Do(ctx, chromedp.SendKeys(token, e.key)))
	}
	sent, err = chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => {
		const d = document.querySelector('[role="dialog"]');
		const b = [...d.querySelectorAll('button')].find(b => b.innerText.trim().startsWith('Send'));
		if (!b) return false;
		b.click();
		return true;
	})()`))
	require.NoError(t, err)
	require.True(t, sent)
	var multiURL string
	require.Eventually(t, func() bool {
		_, statuses := log.snapshot()
		for u, st := range statuses {
			if strings.HasPrefix(u, e.base+"/v1/token/sol/multi?") && slices.Contains(st, int64(200)) {
				multiURL = u
				return true
			}
		}
		return false
	}, 30*time.Second, 100*time.Millisecond, "operation 2 answered 200 to the page's client")
	q, err := url.Parse(multiURL)
	require.NoError(t, err)
	require.NotEmpty(t, q.Query()["tokenAddresses"], "the required parameter was sent: %s", multiURL)
	t.Logf("operation 2 as the page sent it: %s", multiURL)
	browsertest.Screenshot(t, ctx, "docs-try-multi.png")
}
