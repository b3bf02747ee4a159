package httpapi

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/require"
)

// servedRoutes lists "METHOD /openapi/path" for every route f serves (HEAD, which Fiber adds
// for every GET, left out).
func servedRoutes(f *fiber.App) []string {
	var out []string
	for _, r := range f.GetRoutes(true) {
		if r.Method == fiber.MethodHead {
			continue
		}
		out = append(out, r.Method+" "+openAPIPath(r.Path))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func documented(t *testing.T, dexOnly bool) []string {
	t.Helper()
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(openAPIDoc(), &doc))
	var out []string
	for p, item := range doc.Paths {
		_, onDex := item["servers"]
		for m := range item {
			if m == "servers" {
				continue
			}
			if dexOnly && !onDex && p != "/healthz" && p != "/readyz" {
				continue
			}
			out = append(out, strings.ToUpper(m)+" "+p)
		}
	}
	slices.Sort(out)
	return out
}

// TestOpenAPICoversRoutes fails when a route of the main API is missing from /openapi.json or
// the document names an operation no route serves; the dex address serves exactly the
// operations the document gives its server.
func TestOpenAPICoversRoutes(t *testing.T) {
	d := Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	undocumented := func(r string) bool { return slices.Contains(undocumentedRoutes, r) }
	require.Equal(t, documented(t, false), slices.DeleteFunc(servedRoutes(New(d)), undocumented),
		"documented vs served on the main address")
	require.Equal(t, documented(t, true), slices.DeleteFunc(servedRoutes(NewDex(d)), undocumented),
		"documented vs served on the dex address")
}

// TestOpenAPIDocumentIsValid loads the served document with kin-openapi and validates it as
// OpenAPI 3.1 (schemas, references, examples).
func TestOpenAPIDocumentIsValid(t *testing.T) {
	app := New(Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	res, err := app.Test(httptest.NewRequest("GET", "/openapi.json", nil), -1)
	require.NoError(t, err)
	require.Equal(t, 200, res.StatusCode, "served without a key")
	require.Equal(t, fiber.MIMEApplicationJSON, res.Header.Get("Content-Type"))
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	doc, err := openapi3.NewLoader().LoadFromData(body)
	require.NoError(t, err)
	require.True(t, doc.IsOpenAPI31OrLater())
	require.NoError(t, doc.Validate(context.Background()))
	require.Len(t, doc.Components.SecuritySchemes, 2)
}

// TestDocsPageIsSelfContained: /docs and its bundle are served without a key, the bundle
// compressed for clients that take gzip, and the page loads no script from another origin.
func TestDocsPageIsSelfContained(t *testing.T) {
	app := New(Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	res, err := app.Test(httptest.NewRequest("GET", "/docs", nil), -1)
	require.NoError(t, err)
	require.Equal(t, 200, res.StatusCode)
	page, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Contains(t, string(page), `<script src="`+docsAssetPath+`">`)
	require.NotContains(t, string(page), "http")
	require.Contains(t, string(page), "withDefaultFonts: false")

	req := httptest.NewRequest("GET", docsAssetPath, nil)
	req.Header.Set("Accept-Encoding", "gzip")
	res, err = app.Test(req, -1)
	require.NoError(t, err)
	require.Equal(t, 200, res.StatusCode)
	require.Equal(t, "gzip", res.Header.Get("Content-Encoding"))
	zr, err := gzip.NewReader(res.Body)
	require.NoError(t, err)
	unzipped, err := io.ReadAll(zr)
	require.NoError(t, err)
	require.Equal(t, scalarBundle, unzipped)

	res, err = app.Test(httptest.NewRequest("GET", docsAssetPath, nil), -1)
	require.NoError(t, err)
	plain, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Empty(t, res.Header.Get("Content-Encoding"))
	require.Equal(t, scalarBundle, plain)
}
