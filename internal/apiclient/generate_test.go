package apiclient_test

import (
	"bytes"
	"flag"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/httpapi"
)

var update = flag.Bool("update", false, "rewrite client.gen.go from the current document")

// generate runs oapi-codegen (pinned in tools/go.mod) over the document the main API serves.
func generate(t *testing.T) []byte {
	t.Helper()
	app := httpapi.New(httpapi.Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	res, err := app.Test(httptest.NewRequest("GET", "/openapi.json", nil), -1)
	require.NoError(t, err)
	require.Equal(t, 200, res.StatusCode)
	doc, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	dir := t.TempDir()
	spec, out := filepath.Join(dir, "openapi.json"), filepath.Join(dir, "client.gen.go")
	require.NoError(t, os.WriteFile(spec, doc, 0o644))
	cmd := exec.Command("go", "tool", "-modfile=../../tools/go.mod", "oapi-codegen",
		"-generate", "types,client", "-package", "apiclient", "-o", out, spec)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Run(), "oapi-codegen: %s", stderr.String())
	gen, err := os.ReadFile(out)
	require.NoError(t, err)
	return gen
}

// TestGeneratedClientIsCurrent fails when client.gen.go is not what oapi-codegen makes of
// today's /openapi.json: run `make apiclient` and commit.
func TestGeneratedClientIsCurrent(t *testing.T) {
	gen := generate(t)
	if *update {
		require.NoError(t, os.WriteFile("client.gen.go", gen, 0o644))
		return
	}
	committed, err := os.ReadFile("client.gen.go")
	require.NoError(t, err)
	if !bytes.Equal(committed, gen) {
		t.Fatal("internal/apiclient/client.gen.go is stale (the OpenAPI document changed): run `make apiclient` and commit")
	}
}
