package main

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tokenscope/tokenscope/internal/browsertest"
)

// browser is one headless Chromium tab (internal/browsertest) and what its pages wrote to the
// console.
type browser struct {
	ctx context.Context // the tab's chromedp context, bounded by newBrowser's timeout

	mu      sync.Mutex
	console []chromedp.ConsoleMessage
}

// newBrowser starts Chromium through internal/browsertest (a missing browser fails the test)
// and reads its console from the start; everything stops when the test ends.
func newBrowser(t *testing.T, timeout time.Duration) *browser {
	t.Helper()
	b := &browser{ctx: browsertest.New(t, timeout)}
	messages := chromedp.Console(b.ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.console = append(b.console, m)
			b.mu.Unlock()
		}
	}()
	return b
}

// problems are the console messages that mean the page is broken: uncaught exceptions, and
// the browser's security messages (a Content-Security-Policy refusal, a blocked load).
func (b *browser) problems() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, m := range b.console {
		if m.IsException() || m.Source == "security" || strings.Contains(m.Text, "Content Security Policy") {
			out = append(out, m.String())
		}
	}
	return out
}
