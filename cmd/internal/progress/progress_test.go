package progress_test

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/cmd/internal/progress"
)

func TestLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    progress.Snapshot
		want string
	}{
		{"a quarter read, a quarter committed", progress.Snapshot{Events: 120_000, Decoded: 120_000, Bytes: 12 << 20, Total: 48 << 20, Elapsed: 3 * time.Second},
			"import: 120000 of ~480000 events committed (25%), 40000 events/s, ETA 9s"},
		// The whole file read while a third of its events wait for their commits: two thirds,
		// and the commit rate's ETA (was: 100%, ETA 0s).
		{"read to the end, a third to commit", progress.Snapshot{Events: 200_000, Decoded: 300_000, Bytes: 30 << 20, Total: 30 << 20, Elapsed: 10 * time.Second},
			"import: 200000 of 300000 events committed (66%), 20000 events/s, ETA 5s"},
		{"read ahead of the commits", progress.Snapshot{Events: 1_000, Decoded: 4_000, Bytes: 4 << 20, Total: 8 << 20, Elapsed: time.Second},
			"import: 1000 of ~8000 events committed (12%), 1000 events/s, ETA 7s"},
		{"start", progress.Snapshot{Total: 1 << 30},
			"import: 0 events committed, - events/s, ETA -"},
		{"unknown size (a pipe)", progress.Snapshot{Events: 500, Decoded: 700, Bytes: 1536, Elapsed: 2 * time.Second},
			"import: 500 events committed, 250 events/s, 1.5 KiB read"},
		{"read past a size that grew", progress.Snapshot{Events: 10, Decoded: 10, Bytes: 2048, Total: 1024, Elapsed: time.Second},
			"import: 10 of 10 events committed (100%), 10 events/s, ETA 0s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, progress.Line(tc.s))
		})
	}
}

func TestSummary(t *testing.T) {
	s := progress.Snapshot{Events: 480_000, Bytes: 48 << 20, Total: 48 << 20, Elapsed: 12*time.Second + 340*time.Millisecond}
	assert.Equal(t, "import: done: 480000 events (200000 trades), 48.0 MiB in 12.3s, 38897 events/s", progress.Summary(s, 200_000, false))
	assert.True(t, strings.HasPrefix(progress.Summary(s, 1, true), "import: stopped: "))
}

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1024*1024 - 1: "1023.9 KiB",
		5 << 20: "5.0 MiB", 3<<30 + 512<<20: "3.5 GiB", 2 << 40: "2.0 TiB"} {
		assert.Equal(t, want, progress.Bytes(n), "%d", n)
	}
}

// syncBuffer is a bytes.Buffer the meter's goroutine and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestMeterCountsAndEndsWithTheSummary(t *testing.T) {
	var out syncBuffer
	m := progress.Start(&out, 10, time.Hour) // no redraw but the first one
	n, err := io.Copy(io.Discard, m.Reader(strings.NewReader("0123456789")))
	require.NoError(t, err)
	require.Equal(t, int64(10), n)
	for range 3 {
		m.Decoded()
	}
	m.SetEvents(3)
	m.Finish(2, false)
	m.Finish(2, false) // once only
	text := out.String()
	require.True(t, strings.HasPrefix(text, "\r\x1b[Kimport: 0 events committed, "), "%q", text)
	assert.Equal(t, 1, strings.Count(text, "import: done: "), "%q", text)
	assert.Contains(t, text, "import: done: 3 events (2 trades), 10 B in ")
	// The final counts are drawn before the summary replaces them, so an import shorter than one
	// redraw interval still shows its share committed.
	assert.Contains(t, text, "\r\x1b[Kimport: 3 of 3 events committed (100%), ")
	assert.Less(t, strings.Index(text, "3 of 3 events committed"), strings.Index(text, "import: done: "), "%q", text)
	assert.True(t, strings.HasSuffix(text, " events/s\n"), "%q", text)
}

// TestMeterSharesAreOfCommittedEvents: with the whole input read and decoded, the line shows the
// committed share, and reaches 100% only with the last commit.
func TestMeterSharesAreOfCommittedEvents(t *testing.T) {
	var out syncBuffer
	m := progress.Start(&out, 10, 5*time.Millisecond)
	_, err := io.Copy(io.Discard, m.Reader(strings.NewReader("0123456789")))
	require.NoError(t, err)
	for range 3 {
		m.Decoded()
	}
	m.SetEvents(1)
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "import: 1 of 3 events committed (33%)") },
		5*time.Second, time.Millisecond, "%q", out.String())
	assert.NotContains(t, out.String(), "(100%)")
	m.SetEvents(3)
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "import: 3 of 3 events committed (100%)") },
		5*time.Second, time.Millisecond, "%q", out.String())
	m.Finish(3, false)
}

func TestNilMeterDoesNothing(t *testing.T) {
	var m *progress.Meter
	r := strings.NewReader("x")
	assert.Same(t, io.Reader(r), m.Reader(r))
	m.SetEvents(1)
	m.Finish(1, false)
}
