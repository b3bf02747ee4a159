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
		{"known size", progress.Snapshot{Events: 120_000, Bytes: 12 << 20, Total: 48 << 20, Elapsed: 3 * time.Second},
			"import: 120000 events, 40000 events/s, 12.0 MiB of 48.0 MiB (25%), ETA 9s"},
		{"start", progress.Snapshot{Total: 1 << 30},
			"import: 0 events, - events/s, 0 B of 1.0 GiB (0%), ETA -"},
		{"unknown size (a pipe)", progress.Snapshot{Events: 500, Bytes: 1536, Elapsed: 2 * time.Second},
			"import: 500 events, 250 events/s, 1.5 KiB read"},
		{"read past a size that grew", progress.Snapshot{Events: 10, Bytes: 2048, Total: 1024, Elapsed: time.Second},
			"import: 10 events, 10 events/s, 2.0 KiB of 1.0 KiB (100%), ETA 0s"},
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
	m.SetEvents(3)
	m.Finish(2, false)
	m.Finish(2, false) // once only
	text := out.String()
	require.True(t, strings.HasPrefix(text, "\r\x1b[Kimport: 0 events, "), "%q", text)
	assert.Contains(t, text, "0 B of 10 B (0%)")
	assert.Equal(t, 1, strings.Count(text, "import: done: "), "%q", text)
	assert.Contains(t, text, "import: done: 3 events (2 trades), 10 B in ")
	assert.True(t, strings.HasSuffix(text, " events/s\n"), "%q", text)
}

func TestNilMeterDoesNothing(t *testing.T) {
	var m *progress.Meter
	r := strings.NewReader("x")
	assert.Same(t, io.Reader(r), m.Reader(r))
	m.SetEvents(1)
	m.Finish(1, false)
}
