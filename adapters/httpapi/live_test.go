package httpapi_test

import (
	"io"
	"regexp"
	"strings"
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

// TestPagesSendSecurityHeaders: /docs (where users paste keys) and /live each send a policy
// that keeps them to their own origin, with connections (REST and the WebSocket stream) to
// their own host only, no framing by other pages, and nosniff. Before, /docs sent none of
// them and /live allowed a WebSocket to any host.
func TestPagesSendSecurityHeaders(t *testing.T) {
	s := newServer(t, io.Discard)
	for _, path := range []string{"/docs", "/live"} {
		t.Run(path, func(t *testing.T) {
			r := s.do(t, "GET", path)
			require.Equal(t, 200, r.status)
			assert.Equal(t, "nosniff", r.header.Get("X-Content-Type-Options"))
			directives := map[string]string{}
			for _, d := range strings.Split(r.header.Get("Content-Security-Policy"), ";") {
				name, value, _ := strings.Cut(strings.TrimSpace(d), " ")
				directives[name] = value
			}
			assert.Equal(t, "'self'", directives["default-src"])
			assert.Equal(t, "'self'", directives["connect-src"], "REST and the stream to the page's own host only")
			assert.Equal(t, "'none'", directives["frame-ancestors"])
			for name, value := range directives {
				for _, source := range strings.Fields(value) {
					ok := strings.HasPrefix(source, "'") || source == "data:" || source == "blob:"
					assert.True(t, ok, "%s allows %s: only the page's own origin (and inline data) may be named", name, source)
				}
			}
		})
	}
	for _, path := range []string{"/docs/scalar.js", "/openapi.json"} {
		assert.Equal(t, "nosniff", s.do(t, "GET", path).header.Get("X-Content-Type-Options"), path)
	}
}
