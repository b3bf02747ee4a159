// Package progress draws the one-line progress display of `tokenscope import` on a terminal:
// events committed and their rate, bytes read of the total, and an estimate of the time left
// when the total is known. It redraws at a fixed interval from counters the import updates, so
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
	Bytes   int64 // read so far
	Total   int64 // input size in bytes; 0 when unknown (a pipe)
	Elapsed time.Duration
}

// Line is the progress line of s (without the terminal control codes), e.g.
// "import: 120000 events, 40000 events/s, 12.0 MiB of 48.0 MiB (25%), ETA 9s".
func Line(s Snapshot) string {
	var b strings.Builder
	fmt.Fprintf(&b, "import: %d events, %s events/s, %s", s.Events, rate(s.Events, s.Elapsed), Bytes(s.Bytes))
	if s.Total > 0 {
		read := min(s.Bytes, s.Total)
		fmt.Fprintf(&b, " of %s (%d%%), ETA %s", Bytes(s.Total), read*100/s.Total, eta(read, s.Total, s.Elapsed))
	} else {
		b.WriteString(" read")
	}
	return b.String()
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

// eta extrapolates the byte rate so far; "-" until something was read.
func eta(read, total int64, elapsed time.Duration) string {
	if read <= 0 || elapsed <= 0 {
		return "-"
	}
	left := time.Duration(float64(elapsed) * float64(total-read) / float64(read))
	return left.Round(time.Second).String()
}

// Meter counts an import and redraws its line on out. A nil *Meter does nothing, so the import
// calls it the same way whether or not stderr is a terminal.
type Meter struct {
	out   io.Writer
	total int64
	start time.Time

	bytes, events atomic.Int64

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

// SetEvents records the events committed so far.
func (m *Meter) SetEvents(n int64) {
	if m != nil {
		m.events.Store(n)
	}
}

// Finish stops the redraws and replaces the line with the summary.
func (m *Meter) Finish(trades int64, failed bool) {
	if m == nil {
		return
	}
	m.once.Do(func() {
		close(m.stop)
		<-m.done
		fmt.Fprintf(m.out, "\r\x1b[K%s\n", Summary(m.snapshot(), trades, failed))
	})
}

func (m *Meter) snapshot() Snapshot {
	return Snapshot{Events: m.events.Load(), Bytes: m.bytes.Load(), Total: m.total, Elapsed: time.Since(m.start)}
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
