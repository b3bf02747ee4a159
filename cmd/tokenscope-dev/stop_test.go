package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDevCtrlCStopsQuietly: tokenscope-dev (what `make run` runs) stopped with Ctrl-C (SIGINT)
// once ready exits 0, logs no warning and no error on the way (the worker stops before the
// embedded Temporal server, so its pollers never meet a closed port), and its last line says
// the service stopped.
func TestDevCtrlCStopsQuietly(t *testing.T) {
	d := newDevProcesses(t, "LOG_LEVEL=info")
	p, _ := d.start("dev")
	d.waitReady("dev", 90*time.Second)
	require.NoError(t, p.Process.Signal(syscall.SIGINT))
	require.NoError(t, p.Wait(), "Ctrl-C ends tokenscope-dev cleanly")
	raw, err := os.ReadFile(filepath.Join(d.dir, "dev-0.log"))
	require.NoError(t, err)
	var lines []string
	for _, l := range strings.Split(string(raw), "\n") {
		// The helper process's own test framework lines are not the service's.
		if l = strings.TrimSpace(l); l != "" && l != "PASS" && !strings.HasPrefix(l, "ok ") && !strings.HasPrefix(l, "=== ") {
			lines = append(lines, l)
		}
	}
	require.NotEmpty(t, lines)
	for _, l := range lines {
		lower := strings.ToLower(l)
		assert.NotContains(t, lower, `"level":"warn"`, l)
		assert.NotContains(t, lower, `"level":"error"`, l)
		assert.NotContains(t, l, "Failed to poll", l)
	}
	last := lines[len(lines)-1]
	assert.Contains(t, last, `"msg":"tokenscope-dev stopped"`, "the last line says the service stopped: %s", last)
}
