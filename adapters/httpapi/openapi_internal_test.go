package httpapi

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"regexp"
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

// walkProperties calls f for every property of s and of the objects nested in it (through
// properties, items, anyOf and contentSchema), with a path naming it.
func walkProperties(path string, s map[string]any, f func(path string, p map[string]any)) {
	props, _ := s["properties"].(map[string]any)
	for name, v := range props {
		p := v.(map[string]any)
		f(path+"."+name, p)
		walkProperties(path+"."+name, p, f)
	}
	for _, k := range []string{"items", "contentSchema"} {
		if m, ok := s[k].(map[string]any); ok {
			walkProperties(path, m, f)
		}
	}
	if alts, ok := s["anyOf"].([]any); ok {
		for _, a := range alts {
			walkProperties(path, a.(map[string]any), f)
		}
	}
}

// holdsRecords: the property's value is a record or a list of records (their fields carry the
// examples).
func holdsRecords(p map[string]any) bool {
	if _, ok := p["$ref"]; ok {
		return true
	}
	if _, ok := p["properties"]; ok {
		return true
	}
	if _, ok := p["anyOf"]; ok {
		return true
	}
	if items, ok := p["items"].(map[string]any); ok {
		return holdsRecords(items)
	}
	return false
}

// TestOpenAPIFieldsDescribed: every field of every record, request body and response of
// /openapi.json has a description, every field holding a value (not a record) an example, every
// parameter an example, every response with a body an example and every group a description.
func TestOpenAPIFieldsDescribed(t *testing.T) {
	var doc map[string]any
	require.NoError(t, json.Unmarshal(openAPIDoc(), &doc))
	var missing []string
	check := func(path string, p map[string]any) {
		if d, _ := p["description"].(string); d == "" {
			missing = append(missing, path+": description")
		}
		if _, ok := p["example"]; !ok && !holdsRecords(p) {
			missing = append(missing, path+": example")
		}
	}
	for name, s := range doc["components"].(map[string]any)["schemas"].(map[string]any) {
		walkProperties(name, s.(map[string]any), check)
	}
	for name, r := range doc["components"].(map[string]any)["responses"].(map[string]any) {
		for mt, c := range r.(map[string]any)["content"].(map[string]any) {
			if _, ok := c.(map[string]any)["example"]; !ok {
				missing = append(missing, name+" "+mt+": example")
			}
		}
	}
	ops := 0
	for path, item := range doc["paths"].(map[string]any) {
		for method, o := range item.(map[string]any) {
			if method == "servers" {
				continue
			}
			ops++
			op := o.(map[string]any)
			id := op["operationId"].(string)
			if d, _ := op["description"].(string); d == "" {
				missing = append(missing, id+": description")
			}
			params, _ := op["parameters"].([]any)
			for _, p := range params {
				p := p.(map[string]any)
				_, ok := p["example"]
				if examples, many := p["examples"].(map[string]any); many {
					_, ok = examples["example"].(map[string]any)["value"]
				}
				if !ok {
					missing = append(missing, id+" parameter "+p["name"].(string)+": example")
				}
			}
			if body, ok := op["requestBody"].(map[string]any); ok {
				for mt, c := range body["content"].(map[string]any) {
					c := c.(map[string]any)
					walkProperties(id+" body", c["schema"].(map[string]any), check)
					if _, ok := c["example"]; !ok {
						missing = append(missing, id+" body "+mt+": example")
					}
				}
			}
			for code, r := range op["responses"].(map[string]any) {
				content, _ := r.(map[string]any)["content"].(map[string]any)
				for mt, c := range content {
					c := c.(map[string]any)
					walkProperties(id+" "+code, c["schema"].(map[string]any), check)
					if _, ok := c["example"]; !ok {
						missing = append(missing, method+" "+path+" "+code+" "+mt+": example")
					}
				}
			}
		}
	}
	for _, tag := range doc["tags"].([]any) {
		if d, _ := tag.(map[string]any)["description"].(string); d == "" {
			missing = append(missing, "tag "+tag.(map[string]any)["name"].(string)+": description")
		}
	}
	slices.Sort(missing)
	require.Empty(t, missing)
	require.GreaterOrEqual(t, ops, 30)
}

// TestOpenAPISpecDetails: the parts of the document the spec pins down: operation 12's message
// schema, the KYT inputs' format rules, rateLimit, the dex server and operation 2's sortDirection.
func TestOpenAPISpecDetails(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(openAPIDoc())
	require.NoError(t, err)

	stream := doc.Paths.Find("/v2/job/{id}/streaming").Get.Responses.Status(200).Value.Content.Get("text/event-stream")
	require.NotNil(t, stream)
	var raw map[string]any
	require.NoError(t, json.Unmarshal(openAPIDoc(), &raw))
	sse := raw["paths"].(map[string]any)["/v2/job/{id}/streaming"].(map[string]any)["get"].(map[string]any)["responses"].(map[string]any)["200"].(map[string]any)["content"].(map[string]any)["text/event-stream"].(map[string]any)
	require.Equal(t, map[string]any{"$ref": "#/components/schemas/JobMessage"}, sse["schema"].(map[string]any)["contentSchema"])
	msg := doc.Components.Schemas["JobMessage"].Value
	require.ElementsMatch(t, []string{"id", "status", "progress"}, msg.Required)
	require.Equal(t, []any{"pending", "running", "completed", "failed"}, msg.Properties["status"].Value.Enum)

	withdrawal := doc.Paths.Find("/v2/kyt/withdrawal").Post.RequestBody.Value.Content.Get("application/json").Schema.Value
	require.Equal(t, "date-time", withdrawal.Properties["attemptTimestamp"].Value.Format)
	transfer := doc.Paths.Find("/v2/kyt/transfer").Post.RequestBody.Value.Content.Get("application/json").Schema.Value
	addr := regexp.MustCompile(withdrawal.Properties["address"].Value.Pattern)
	ref := regexp.MustCompile(transfer.Properties["transferReference"].Value.Pattern)
	sig := "2HmQEvWk9w2uBwXdM5m3upDpS8q2jAoqRksMtvti8yrLN2BgEYHwNpYSdLR7UzgWspTakCBSr3vDBN3cDnd1uMwZ"
	for _, ok := range []string{"zfs4z2f5pPcTKCLtBLqLvU4VhqhofWGGkft1BuBHmek", "0x237bc1fd87e443601022bdd2d5d47ab44930f0ce",
		"bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2"} {
		require.True(t, addr.MatchString(ok), ok)
		require.True(t, ref.MatchString(sig+":"+ok), ok)
	}
	for _, bad := range []string{"", "0x123", "not an address", "bc1QAR0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"} {
		require.False(t, addr.MatchString(bad), bad)
	}
	for _, r := range []string{sig, "0x" + strings.Repeat("ab", 32), strings.Repeat("0f", 32) + ":1"} {
		require.True(t, ref.MatchString(r), r)
	}
	require.False(t, ref.MatchString("0x12:zfs4z2f5pPcTKCLtBLqLvU4VhqhofWGGkft1BuBHmek"))

	rl := doc.Components.Schemas["WebhookEndpoint"].Value.Properties["rateLimit"].Value
	require.Equal(t, "int32", rl.Format)
	require.NotNil(t, rl.Min)
	require.Zero(t, *rl.Min)

	// The docs page's client sends the required parameters' examples, and an optional one only
	// once ticked (x-disabled): an example cursor would be refused.
	for _, p := range doc.Paths.Find("/v2/trade/{chain}").Get.Parameters {
		if p.Value.Required {
			require.NotNil(t, p.Value.Example, p.Value.Name)
			continue
		}
		ex := p.Value.Examples["example"]
		require.NotNil(t, ex, p.Value.Name)
		require.Equal(t, true, ex.Value.Extensions["x-disabled"], p.Value.Name)
	}

	multi := doc.Paths.Find("/v1/token/{chain}/multi")
	require.Len(t, multi.Servers, 2)
	require.Equal(t, "{dex_base_url}", multi.Servers[1].URL)
	require.Contains(t, multi.Servers[1].Variables, "dex_base_url")
	for _, p := range multi.Get.Parameters {
		if p.Value.Name == "sortDirection" {
			require.Equal(t, []any{"ASC", "DESC"}, p.Value.Schema.Value.Enum)
		}
	}
}
