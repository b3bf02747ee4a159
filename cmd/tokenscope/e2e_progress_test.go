package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/ndjson"
	"github.com/tokenscope/tokenscope/app/simulate"
)

// smallMarket writes a small simulated market as NDJSON.
func smallMarket(t *testing.T) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "market.ndjson")
	f, err := os.Create(file)
	require.NoError(t, err)
	w := bufio.NewWriter(f)
	sim := simulate.New(simulate.Config{Seed: 5, Tokens: 10, Wallets: 100, Trades: 2_000, Start: engineAt.Add(-time.Hour), End: engineAt})
	require.NoError(t, sim.Backfill(context.Background(), simulate.EncoderSink{Enc: ndjson.NewEncoder(w)}))
	require.NoError(t, w.Flush())
	require.NoError(t, f.Close())
	return file
}

func importCommand(dbURL, file string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "import", "--at", engineAt.Format(time.RFC3339), file)
	cmd.Env = append(os.Environ(), runMainEnv+"=1", "DATABASE_URL="+dbURL, "LOG_LEVEL=warn", "DB_MAX_CONNS=4")
	return cmd
}

var progressLine = regexp.MustCompile(`import: (\d+) of ~?(\d+) events committed \((\d+)%\), \S+ events/s, ETA \S+`)

// TestImportProgressOnATerminal: with stderr a terminal, `tokenscope import` draws progress lines
// (events committed of the file's, events/s, ETA) and ends with a summary; stdout keeps its one
// machine-readable line.
func TestImportProgressOnATerminal(t *testing.T) {
	file := smallMarket(t)
	ptmx, tty, err := pty.Open()
	require.NoError(t, err)
	defer ptmx.Close()
	cmd := importCommand(engineDatabase(t, "progress"), file)
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, tty
	require.NoError(t, cmd.Start())
	tty.Close() // the child holds its own copy
	var term bytes.Buffer
	copied := make(chan struct{})
	go func() { _, _ = io.Copy(&term, ptmx); close(copied) }() // ends with EIO once the child exits
	err = cmd.Wait()
	<-copied
	require.NoError(t, err, "stderr: %s", term.String())
	text := term.String()
	assert.Regexp(t, progressLine, text)
	// Every line's share is of committed events: 100% only once all of them are committed.
	done := regexp.MustCompile(`import: done: (\d+) events`).FindStringSubmatch(text)
	require.NotNil(t, done, text)
	all, _ := strconv.ParseInt(done[1], 10, 64)
	for _, m := range progressLine.FindAllStringSubmatch(text, -1) {
		committed, _ := strconv.ParseInt(m[1], 10, 64)
		expected, _ := strconv.ParseInt(m[2], 10, 64)
		pct, _ := strconv.ParseInt(m[3], 10, 64)
		assert.Equal(t, min(committed, expected)*100/expected, pct, m[0])
		if !strings.Contains(m[0], "~") {
			assert.Equal(t, all, expected, "once the file is read the count is exact: %s", m[0])
		}
	}
	assert.Contains(t, text, "\r\x1b[K", "lines redraw in place")
	assert.Regexp(t, `import: done: \d+ events \(\d+ trades\), [0-9.]+ (KiB|MiB) in \S+, \d+ events/s\r?\n`, text)
	assert.Regexp(t, `^events=\d+ inserted=\d+ .*trades=\d+ `, stdout.String())
	assert.NotContains(t, stdout.String(), "import:", "progress goes to stderr only")
}

// TestImportNoProgressWhenRedirected: stderr to a file (CI logs, these tests) gets no progress.
func TestImportNoProgressWhenRedirected(t *testing.T) {
	file := smallMarket(t)
	errFile, err := os.Create(filepath.Join(t.TempDir(), "stderr.log"))
	require.NoError(t, err)
	defer errFile.Close()
	cmd := importCommand(engineDatabase(t, "noprogress"), file)
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, errFile
	require.NoError(t, cmd.Run())
	raw, err := os.ReadFile(errFile.Name())
	require.NoError(t, err)
	assert.NotContains(t, string(raw), "import:")
	assert.NotContains(t, string(raw), "\r")
	assert.True(t, strings.HasPrefix(stdout.String(), "events="), "stdout: %s", stdout.String())
}
