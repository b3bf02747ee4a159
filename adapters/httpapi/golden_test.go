package httpapi_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// updateHandlerGolden rewrites the golden files instead of comparing (see golden_internal_test.go,
// whose flag of the same name is the one registered: this package shares the test binary).
var updateHandlerGolden = flag.Lookup("update")

// TestGoldenResponses: every benchmarked route (endpoints and tokenEndpoints: trades, pool
// snapshots, PnL, webhook endpoint, red packets, claims, hot-token ranking, search in both
// modes, multi-detail in both shapes) answers the fixtures with the bytes of
// testdata/golden/route-NAME.json, which the hand-written encoders this package had before
// wrote, as application/json.
func TestGoldenResponses(t *testing.T) {
	s := newServer(t, &bytes.Buffer{})
	for _, e := range append(append([]endpoint{}, endpoints...), tokenEndpoints...) {
		if e.name == "whoami" {
			continue // names a key made at random
		}
		t.Run(e.name, func(t *testing.T) {
			ctx := newRequestCtx(e.path, s.key)
			s.app.Handler()(ctx)
			mustStatus(t, ctx.Response.StatusCode(), ctx.Response.Body(), fiber.StatusOK)
			assert.Equal(t, fiber.MIMEApplicationJSON, string(ctx.Response.Header.ContentType()))
			path := filepath.Join("testdata", "golden", "route-"+e.name+".json")
			if updateHandlerGolden != nil && updateHandlerGolden.Value.String() == "true" {
				require.NoError(t, os.WriteFile(path, ctx.Response.Body(), 0o644))
				return
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, string(want), string(ctx.Response.Body()))
		})
	}
}
