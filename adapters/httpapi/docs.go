package httpapi

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"strings"
	"sync"

	"github.com/gofiber/fiber/v2"
)

// GET /docs is the API reference page: Scalar's API reference (npm @scalar/api-reference,
// version in docsui/package.json, bundle refreshed by docsui/refresh.sh) rendering
// /openapi.json, with its "test request" client calling this same address. Everything comes
// from this binary: the bundle is embedded and served at /docs/scalar.js, the page turns off
// the web fonts Scalar would load from its CDN, its telemetry and its AI agent, and no proxy is
// configured (the page calls its own origin).

//go:embed docsui/scalar-standalone.js
var scalarBundle []byte

// docsAssetPath is the bundle's address: a static file of the page, not an API operation, so
// the OpenAPI document leaves it out (undocumentedRoutes).
const docsAssetPath = "/docs/scalar.js"

// undocumentedRoutes are routes the document deliberately does not list (the favicon on every
// address).
var undocumentedRoutes = []string{"GET " + docsAssetPath, "GET " + liveAssetPath, "GET /favicon.ico"}

// docsScript starts Scalar on the page; the page's policy names its hash, so it is the only
// inline script that runs. Groups come in the document's tag order (the spec's numbering);
// within a group the operations follow operationOrder (numbered ones 1..14 first). Scalar's
// sidebar footer links to its hosted services (its site, its hosted client, its MCP generator):
// the client and MCP buttons are turned off, and the script removes every other footer link to
// another origin (customCss hides them until then).
var docsScript = `
const order = ` + mustJSON(operationOrder()) + `;
const rank = (o) => { const i = order.indexOf(o.method.toUpperCase() + ' ' + o.path); return i < 0 ? order.length : i; };
Scalar.createApiReference('#app', {
  url: '/openapi.json',
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  showDeveloperTools: 'never',
  hideClientButton: true,
  mcp: { disabled: true },
  defaultOpenAllTags: true,
  persistAuth: false,
  authentication: { preferredSecurityScheme: 'bearerAuth' },
  operationsSorter: (a, b) => rank(a) - rank(b),
  customCss: '.darklight-reference a[target="_blank"] { display: none; }',
});
const dropForeignLinks = () => {
  for (const a of document.querySelectorAll('.darklight-reference a[href]')) {
    if (new URL(a.href, location.href).origin !== location.origin) a.remove();
  }
};
new MutationObserver(dropForeignLinks).observe(document.body, { childList: true, subtree: true });
`

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// docsPolicy keeps the page, where users paste their keys, to its own origin: its bundle and
// docsScript, styles (Scalar sets them inline), images and fonts from this server or inline
// data, requests (the document, the "test request" client) to this server only, and no
// framing by another page.
var docsPolicy = "default-src 'self'; script-src 'self' 'sha256-" + sha256Base64(docsScript) + "'; " +
	"style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; " +
	"worker-src 'self' blob:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

func sha256Base64(s string) string {
	sum := sha256.Sum256([]byte(s))
	return base64.StdEncoding.EncodeToString(sum[:])
}

var docsHTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>tokenscope API reference</title>
</head>
<body>
<div id="app"></div>
<script src="` + docsAssetPath + `"></script>
<script>` + docsScript + `</script>
</body>
</html>
`

func docsPage(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderContentSecurityPolicy, docsPolicy)
	c.Set(fiber.HeaderReferrerPolicy, "no-referrer")
	return c.SendString(docsHTML)
}

// scalarGzip is the bundle gzipped once, for the clients that accept it (about a quarter of the size).
var scalarGzip = sync.OnceValue(func() []byte {
	var b bytes.Buffer
	w, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	_, _ = w.Write(scalarBundle)
	_ = w.Close()
	return b.Bytes()
})

func docsAsset(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentType, "text/javascript; charset=utf-8")
	c.Set(fiber.HeaderCacheControl, "public, max-age=3600")
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Vary(fiber.HeaderAcceptEncoding)
	if strings.Contains(c.Get(fiber.HeaderAcceptEncoding), "gzip") {
		c.Set(fiber.HeaderContentEncoding, "gzip")
		return c.Send(scalarGzip())
	}
	return c.Send(scalarBundle)
}
