package main

// Every response the end-to-end tests receive through env.do/doDex/doURL is validated against
// the served OpenAPI document (GET /openapi.json) with kin-openapi's openapi3filter, as
// OpenAPI 3.1 (JSON Schema 2020-12): status, headers and body, 2xx and 4xx alike. A response
// the document does not describe fails the test that received it.

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/stretchr/testify/require"
)

var (
	specOnce sync.Once
	spec     *openapi3.T
	specErr  error
)

func init() {
	// Bodies the document gives as plain text: the job stream and the ingest request.
	openapi3filter.RegisterBodyDecoder("text/event-stream", openapi3filter.PlainBodyDecoder)
	openapi3filter.RegisterBodyDecoder("application/x-ndjson", openapi3filter.PlainBodyDecoder)
	openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.PlainBodyDecoder)
}

// servedSpec loads the document from the first env that asks (every env serves the same one).
func servedSpec(t *testing.T, base string) *openapi3.T {
	t.Helper()
	specOnce.Do(func() {
		res, err := http.Get(base + "/openapi.json")
		if err != nil {
			specErr = err
			return
		}
		defer res.Body.Close()
		raw, err := io.ReadAll(res.Body)
		if err != nil {
			specErr = err
			return
		}
		spec, specErr = openapi3.NewLoader().LoadFromData(raw)
		if specErr == nil {
			specErr = spec.Validate(context.Background())
		}
	})
	if specErr != nil {
		t.Fatalf("load /openapi.json: %v", specErr)
	}
	return spec
}

// findRoute matches a request path against the document's path templates (a literal segment
// beats a parameter); ok is false for a path the document does not have (tests of unknown
// routes, malformed paths).
func findRoute(doc *openapi3.T, method, path string) (*routers.Route, map[string]string, bool) {
	segs := strings.Split(path, "/")
	var best *routers.Route
	var bestParams map[string]string
	bestLiterals := -1
	for tmpl, item := range doc.Paths.Map() {
		ts := strings.Split(tmpl, "/")
		if len(ts) != len(segs) {
			continue
		}
		params, literals, ok := map[string]string{}, 0, true
		for i, s := range ts {
			if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
				if segs[i] == "" {
					ok = false
					break
				}
				v, err := url.PathUnescape(segs[i])
				if err != nil {
					v = segs[i]
				}
				params[s[1:len(s)-1]] = v
				continue
			}
			if s != segs[i] {
				ok = false
				break
			}
			literals++
		}
		op := item.GetOperation(method)
		if !ok || op == nil || literals <= bestLiterals {
			continue
		}
		best = &routers.Route{Spec: doc, Path: tmpl, PathItem: item, Method: method, Operation: op}
		bestParams, bestLiterals = params, literals
	}
	return best, bestParams, best != nil
}

// checkAgainstSpec fails t when the response to req (read as status, header, body) does not
// match what the document declares for that operation and status.
// Requests to other addresses (the admin address, webhook receivers) are not checked, nor are
// requests to the dex address for paths the document does not give the dex server.
func (e *env) checkAgainstSpec(t *testing.T, req *http.Request, status int, header http.Header, body []byte) {
	t.Helper()
	method := req.Method
	if method == http.MethodHead {
		return // no body to check; the GET of the same path is
	}
	origin := req.URL.Scheme + "://" + req.URL.Host
	if origin != e.base && origin != e.dex {
		return
	}
	route, params, ok := findRoute(servedSpec(t, e.base), method, req.URL.EscapedPath())
	if !ok || origin == e.dex && len(route.PathItem.Servers) == 0 && route.Path != "/healthz" && route.Path != "/readyz" {
		return
	}
	if err := specMismatch(route, params, req, status, header, body); err != nil {
		shown := body
		if len(shown) > 2000 {
			shown = append(slices.Clip(shown[:2000]), "…"...)
		}
		t.Errorf("%s %s: the %d response does not match /openapi.json (%s %s): %v\nbody: %s",
			method, req.URL.RequestURI(), status, strings.ToUpper(method), route.Path, err, bytes.TrimSpace(shown))
	}
}

// specMismatch validates one response against route's operation: nil when it matches.
func specMismatch(route *routers.Route, params map[string]string, req *http.Request, status int, header http.Header, body []byte) error {
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 status,
		Header:                 header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	in.SetBodyBytes(body)
	return openapi3filter.ValidateResponse(context.Background(), in)
}

// TestSpecValidatorCatchesMismatches: the validator the harness applies to every response
// refuses a record with a wrong JSON type, a missing or extra key, and a status the document
// does not list, and accepts the real answer.
func TestSpecValidatorCatchesMismatches(t *testing.T) {
	e := newEnv(t)
	seedGenerated(t, e)
	path := "/v2/trade/bsc?tokenAddress=" + genTokA
	real := e.do(t, "GET", path, nil)
	require.Equal(t, 200, real.Status)
	req, err := http.NewRequest("GET", e.base+path, nil)
	require.NoError(t, err)
	route, params, ok := findRoute(servedSpec(t, e.base), "GET", req.URL.EscapedPath())
	require.True(t, ok)
	require.Equal(t, "/v2/trade/{chain}", route.Path)
	require.NoError(t, specMismatch(route, params, req, 200, real.Header, real.Body))
	for name, mutate := range map[string]func(string) string{
		"a decimal as a JSON number": func(b string) string {
			return regexp.MustCompile(`"tokenAmount":"([0-9.]+)"`).ReplaceAllString(b, `"tokenAmount":$1`)
		},
		"a key missing": func(b string) string { return strings.Replace(b, `"dexImage":`, `"dexImageX":`, 1) },
		"an extra key": func(b string) string {
			return strings.Replace(b, `{"accountOwnerAddress"`, `{"extra":1,"accountOwnerAddress"`, 1)
		},
		"null for an array": func(b string) string { return strings.Replace(b, `"data":[`, `"data":null,"x":[`, 1) },
	} {
		bad := mutate(string(real.Body))
		require.NotEqual(t, string(real.Body), bad, name)
		require.Error(t, specMismatch(route, params, req, 200, real.Header, []byte(bad)), name)
	}
	require.Error(t, specMismatch(route, params, req, 418, real.Header, []byte(`{}`)), "an undocumented status")
	tooMany := http.Header{"Content-Type": {"application/json"}}
	errBody := []byte(`{"code":429,"message":"slow down","timestamp":"2026-01-01T00:00:00Z","details":{},"requestId":"r"}`)
	require.Error(t, specMismatch(route, params, req, 429, tooMany, errBody), "a 429 without Retry-After")
	tooMany.Set("Retry-After", "3")
	require.NoError(t, specMismatch(route, params, req, 429, tooMany, errBody))
}
