package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// devOnly reports whether a package belongs to the embedded development stack: the Temporal
// server, the Temporal Web UI server, or the adapter that embeds them.
func devOnly(pkg string) bool {
	return strings.HasPrefix(pkg, "go.temporal.io/server") ||
		strings.HasPrefix(pkg, "github.com/temporalio/ui-server") ||
		strings.HasPrefix(pkg, "github.com/tokenscope/tokenscope/adapters/temporal/devserver")
}

// deps lists the packages the binary built from pkg links, in the environment env adds to this one.
func deps(t *testing.T, pkg string, env ...string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", pkg)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	require.NoError(t, err, "go list -deps %s", pkg)
	return strings.Fields(string(out))
}

// TestProductionBinaryHasNoTemporalServer: the production binary (and so the Docker image,
// which ships it; see TestDockerfileBuildsAStaticBinary) links neither the Temporal server nor
// its Web UI. They belong to cmd/tokenscope-dev only; an import that drags them back in through
// cmd/internal/wire or an adapter fails here. The image is built with CGO_ENABLED=0, so the
// list is checked under that setting too.
func TestProductionBinaryHasNoTemporalServer(t *testing.T) {
	for _, env := range [][]string{nil, {"CGO_ENABLED=0"}} {
		list := deps(t, ".", env...)
		require.Greater(t, len(list), 100, "go list -deps answered too little to mean anything: %v", env)
		var bad []string
		for _, p := range list {
			if devOnly(p) {
				bad = append(bad, p)
			}
		}
		if len(bad) > 0 {
			t.Errorf("cmd/tokenscope links %d development-only packages (env %v), among them %v: they belong to cmd/tokenscope-dev only",
				len(bad), env, bad[len(bad)-min(len(bad), 3):])
		}
	}
	// The check can fail: the development binary does link them.
	dev := deps(t, "../tokenscope-dev")
	assert.Contains(t, dev, "go.temporal.io/server/temporal")
	assert.Contains(t, dev, "github.com/temporalio/ui-server/v2/server")
}
