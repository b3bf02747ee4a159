package httpapi_test

import (
	"io"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLivePageFiles: /live and its files are served without a key, from this server only
// (every script and stylesheet the page names is one of its own files), under a policy that
// keeps the page to its origin; anything else under /live/assets is a 404.
func TestLivePageFiles(t *testing.T) {
	s := newServer(t, io.Discard)
	page := s.do(t, "GET", "/live")
	require.Equal(t, 200, page.status, "%s", page.body)
	assert.Equal(t, "text/html; charset=utf-8", page.header.Get("Content-Type"))
	csp := page.header.Get("Content-Security-Policy")
	assert.Contains(t, csp, "default-src 'self'")
	assert.Contains(t, csp, "script-src 'self';")
	assert.NotContains(t, string(page.body), s.key)

	all := regexp.MustCompile(`(?:src|href)="([^"]+)"`).FindAllStringSubmatch(string(page.body), -1)
	var refs []string
	for _, m := range all {
		if m[1] != "data:," { // the empty icon: no request, so no 401 for /favicon.ico
			refs = append(refs, m[1])
		}
	}
	require.Len(t, refs, 4, "the stylesheet, the two vendored bundles and the page's module")
	types := map[string]string{".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8"}
	for _, ref := range refs {
		require.Regexp(t, `^/live/assets/`, ref, "nothing from another origin")
		r := s.do(t, "GET", ref)
		require.Equal(t, 200, r.status, ref)
		assert.Equal(t, types[regexp.MustCompile(`\.[a-z]+$`).FindString(ref)], r.header.Get("Content-Type"), ref)
		assert.NotEmpty(t, r.body, ref)
	}
	// The module the page loads imports the feed; both are served.
	assert.Equal(t, 200, s.do(t, "GET", "/live/assets/feed.js").status)

	for _, path := range []string{
		"/live/assets/", "/live/assets/nope.js", "/live/assets/../live.go", "/live/assets/vendor/../live.js",
		"/live/assets/vendor/centrifuge.LICENSE.txt", "/live/assets/index.html/x",
	} {
		assert.Equal(t, 404, s.do(t, "GET", path).status, path)
	}
	// The API beside it still wants a key.
	assert.Equal(t, 401, s.do(t, "GET", "/v2/whoami").status)
}
