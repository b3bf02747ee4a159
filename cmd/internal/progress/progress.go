// Package progress draws the one-line progress display of `tokenscope import` on a terminal:
// events committed and their rate, the share of the input's events committed and an estimate
// of the time left when the input's size is known. It redraws at a fixed interval from counters the import updates, so
// the import's hot loop only adds to an atomic. Standard library only.
package progress

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Snapshot is what one line shows.
type Snapshot struct {
	Events  int64 // committed so far
	Decoded int64 // read and decoded so far (ahead of Events by the batches under way)
	Bytes   int64 // read so far
	Total   int64 // input size in bytes; 0 when unknown (a pipe)
	Elapsed time.Duration
}

// Line is the progress line of s (without the terminal control codes), e.g.
// "import: 120000 of ~480000 events committed (25%), 40000 events/s, ETA 9s".
//
// The share is of committed events, not of bytes read: reading runs ahead of the commits (the
// read buffer and the batches under way), so a file read to its end may still have a third of
// its events to commit. The input's event count is estimated from its size and the bytes per
// event read so far ("~"), and is exact once the whole input is read; the ETA extrapolates the
// commit rate.
func Line(s Snapshot) string {
	var b strings.Builder
	if s.Total <= 0 {
		fmt.Fprintf(&b, "import: %d events committed, %s events/s, %s read", s.Events, rate(s.Events, s.Elapsed), Bytes(s.Bytes))
		return b.String()
	}
	expected, approx := expectedEvents(s)
	if expected <= 0 {
		fmt.Fprintf(&b, "import: %d events committed, %s events/s, ETA -", s.Events, rate(s.Events, s.Elapsed))
		return b.String()
	}
	committed := min(s.Events, expected)
	fmt.Fprintf(&b, "import: %d of %s%d events committed (%d%%), %s events/s, ETA %s", s.Events, approx, expected,
		committed*100/expected, rate(s.Events, s.Elapsed), eta(committed, expected, s.Elapsed))
	return b.String()
}

// expectedEvents estimates the input's events: those decoded, scaled by the bytes not read yet
// at the bytes per event so far; exact ("" rather than "~") once every byte is read.
func expectedEvents(s Snapshot) (int64, string) {
	decoded := max(s.Decoded, s.Events)
	if s.Bytes >= s.Total {
		return decoded, ""
	}
	if decoded <= 0 || s.Bytes <= 0 {
		return 0, "~"
	}
	return max(decoded, int64(float64(decoded)*float64(s.Total)/float64(s.Bytes))), "~"
}

// Summary is the closing line, e.g. "import: done: 480000 events (200000 trades), 48.0 MiB in
// 12s, 40000 events/s".
func Summary(s Snapshot, trades int64, failed bool) string {
	word := "done"
	if failed {
		word = "stopped"
	}
	return fmt.Sprintf("import: %s: %d events (%d trades), %s in %s, %s events/s",
		word, s.Events, trades, Bytes(s.Bytes), s.Elapsed.Round(time.Millisecond*100), rate(s.Events, s.Elapsed))
}

// Bytes shows a size in binary units with one decimal.
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	// Tenths in integers: n*10/div, so no float rounding shows 1023.96 KiB as "1024.0 KiB".
	tenths := n * 10 / div
	return fmt.Sprintf("%d.%d %ciB", tenths/10, tenths%10, "KMGTP"[exp])
}

func rate(events int64, elapsed time.Duration) string {
	if elapsed < time.Millisecond {
		return "-"
	}
	return fmt.Sprintf("%d", events*int64(time.Second)/int64(elapsed))
}

// eta extrapolates the commit rate so far; "-" until something was committed.
func eta(done, total int64, elapsed time.Duration) string {
	if done <= 0 || elapsed <= 0 {
		return "-"
	}
	left := time.Duration(float64(elapsed) * float64(total-done) / float64(done))
	return left.Round(time.Second).String()
}

// Meter counts an import and redraws its line on out. A nil *Meter does nothing, so the import
// calls it the same way whether or not stderr is a terminal.
type Meter struct {
	out   io.Writer
	total int64
	start time.Time

	bytes, events, decoded atomic.Int64

	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// Start draws the first line at once and then every interval (a few times a second at most,
// the caller's choice) until Finish.
func Start(out io.Writer, total int64, interval time.Duration) *Meter {
	m := &Meter{out: out, total: total, start: time.Now(), stop: make(chan struct{}), done: make(chan struct{})}
	m.draw()
	go func() {
		defer close(m.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				m.draw()
			case <-m.stop:
				return
			}
		}
	}()
	return m
}

// Reader counts the bytes read through r.
func (m *Meter) Reader(r io.Reader) io.Reader {
	if m == nil {
		return r
	}
	return countingReader{r: r, n: &m.bytes}
}

// Decoded counts one more event read and decoded (not committed yet).
func (m *Meter) Decoded() {
	if m != nil {
		m.decoded.Add(1)
	}
}

// SetEvents records the events committed so far.
func (m *Meter) SetEvents(n int64) {
	if m != nil {
		m.events.Store(n)
	}
}

// Finish stops the redraws, draws the line once more with the final counts (an import shorter
// than one interval would otherwise never show its share committed), and replaces it with the
// summary.
func (m *Meter) Finish(trades int64, failed bool) {
	if m == nil {
		return
	}
	m.once.Do(func() {
		close(m.stop)
		<-m.done
		m.draw()
		fmt.Fprintf(m.out, "\r\x1b[K%s\n", Summary(m.snapshot(), trades, failed))
	})
}

func (m *Meter) snapshot() Snapshot {
	return Snapshot{Events: m.events.Load(), Decoded: m.decoded.Load(), Bytes: m.bytes.Load(), Total: m.total,
		Elapsed: time.Since(m.start)}
}

// draw rewrites the current terminal line: carriage return, erase to the end of the line.
func (m *Meter) draw() {
	fmt.Fprintf(m.out, "\r\x1b[K%s", Line(m.snapshot()))
}

type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}
