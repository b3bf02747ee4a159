package httpapi

import (
	"embed"
	"io/fs"
	"path"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// liveFiles is the /live page: its HTML, CSS and script, and the browser bundles of the npm
// packages it uses (live/static/vendor, refreshed by `make live-assets`). Everything the page
// loads comes from here; it never reaches a CDN.
//
//go:embed live/static
var liveFiles embed.FS

// liveStatic is liveFiles rooted at live/static.
var liveStatic = func() fs.FS {
	sub, err := fs.Sub(liveFiles, "live/static")
	if err != nil {
		panic(err) // the embed pattern above guarantees the folder
	}
	return sub
}()

// livePolicy keeps the page to its own origin: scripts, styles and images from this server, and
// connections (REST and the WebSocket stream) to it only: in CSP Level 3, which Chromium and
// Firefox implement, 'self' in connect-src also matches ws: and wss: to the page's own host
// (TestLivePage's stream runs under it). The chart library sets element styles from script,
// which 'unsafe-inline' for styles allows.
const livePolicy = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

// liveAssetPath is the route of the page's files (the document lists /live, not its files).
const liveAssetPath = "/live/assets/*"

// liveTypes are the content types of the page's files, by extension.
var liveTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
}

// livePage serves the page. It needs no key: the page asks the visitor for one and sends it
// with each request it makes, so no key is ever written into what the server sends.
func livePage(c *fiber.Ctx) error {
	return sendLiveFile(c, "index.html")
}

// liveAsset serves one of the page's files under /live/assets/.
func liveAsset(c *fiber.Ctx) error {
	name := c.Params("*")
	if name == "" || strings.Contains(name, "..") || path.Clean(name) != name {
		return fiber.ErrNotFound
	}
	return sendLiveFile(c, name)
}

func sendLiveFile(c *fiber.Ctx, name string) error {
	ctype, ok := liveTypes[path.Ext(name)]
	if !ok {
		return fiber.ErrNotFound
	}
	body, err := fs.ReadFile(liveStatic, name)
	if err != nil {
		return fiber.ErrNotFound
	}
	c.Set(fiber.HeaderContentType, ctype)
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderContentSecurityPolicy, livePolicy)
	c.Set(fiber.HeaderReferrerPolicy, "no-referrer")
	return c.Send(body)
}
