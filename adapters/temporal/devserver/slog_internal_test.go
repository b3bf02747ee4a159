package devserver

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/server/common/log/tag"
)

// TestSlogLoggerShapeAndShutdown: the server's lines come out of the service's slog handler
// with their tags as attributes; lines below the server's level are dropped; once stopping,
// warnings and errors are logged at debug.
func TestSlogLoggerShapeAndShutdown(t *testing.T) {
	var out bytes.Buffer
	stopping := &atomic.Bool{}
	l := newSlogLogger(slog.New(slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug})), "warn", stopping)
	l.With(tag.NewStringTag("service", "frontend")).Warn("Failed to poll for task.", tag.NewStringTag("WorkerType", "ActivityWorker"))
	l.Info("dropped: below warn")
	stopping.Store(true)
	l.Error("service failures")
	var lines []map[string]any
	for _, s := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(s), &m), s)
		lines = append(lines, m)
	}
	require.Len(t, lines, 2, out.String())
	assert.Equal(t, "WARN", lines[0]["level"])
	assert.Equal(t, "Failed to poll for task.", lines[0]["msg"])
	assert.Equal(t, "frontend", lines[0]["service"])
	assert.Equal(t, "ActivityWorker", lines[0]["WorkerType"])
	assert.Equal(t, "DEBUG", lines[1]["level"], "an error while stopping is part of the shutdown")
	assert.Equal(t, "service failures", lines[1]["msg"])
}
