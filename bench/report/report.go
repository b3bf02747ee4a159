// Package report turns tokenbench's measurements into the table it prints and the BENCHMARKS.md
// it writes: each operation next to its baselines from the same run, the ratios between them,
// and whether the goal for that row is met. Standard library only.
package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Measure is one measured series: an endpoint or one of its baselines.
type Measure struct {
	Name   string
	Calls  int
	Errors int
	// Rate is calls (or, for Unit other than req/s, items) per second.
	Rate     float64
	Unit     string
	P50, P99 time.Duration
	// Missing says why nothing was measured (endpoint absent, not applicable…); empty when measured.
	Missing    string
	FirstError string
	// PeakRSS is the measured process's peak resident memory in bytes (0: not sampled); the
	// series cell shows it.
	PeakRSS int64 `json:",omitempty"`
}

// Measured tells whether the series ran.
func (m Measure) Measured() bool { return m.Missing == "" }

// Metric names what a goal compares.
type Metric string

const (
	P99  Metric = "p99"
	P50  Metric = "p50"
	Rate Metric = "rate"
)

// Goal is one of the targets: Subject's metric divided by the baseline's metric must be
// at most Max (latencies) or at least Min (rates), when either is set; the absolute limits on the
// subject and every check must hold too. A goal may have limits or checks only (no ratio).
type Goal struct {
	Text     string
	Baseline int // index into Row.Baselines
	Metric   Metric
	Max, Min float64
	// MinRate, MaxP50 and MaxP99 bound the subject's own figures (0: no bound).
	MinRate        float64       `json:",omitempty"`
	MaxP50, MaxP99 time.Duration `json:",omitempty"`
	// Checks are conditions measured outside the series (a backlog that grows, a peak RSS).
	Checks []Check `json:",omitempty"`
}

// Check is one condition of a goal the harness evaluated itself.
type Check struct {
	Text string
	Met  bool
}

func (g *Goal) ratio() bool { return g.Max > 0 || g.Min > 0 }

// Row is an operation, the baselines run next to it and its goal (nil when the issue sets none).
type Row struct {
	Op        string
	Data      string
	Subject   Measure
	Baselines []Measure
	Goal      *Goal
	// Note explains a miss (or anything else worth knowing about the row).
	Note string
}

// Ratio divides a's metric by b's; false when either is missing or zero.
func Ratio(a, b Measure, m Metric) (float64, bool) {
	if !a.Measured() || !b.Measured() {
		return 0, false
	}
	var x, y float64
	switch m {
	case P99:
		x, y = float64(a.P99), float64(b.P99)
	case P50:
		x, y = float64(a.P50), float64(b.P50)
	default:
		x, y = a.Rate, b.Rate
	}
	if x == 0 || y == 0 {
		return 0, false
	}
	return x / y, true
}

// GoalRatio is the ratio the goal is read on (false when there is none).
func (r Row) GoalRatio() (float64, bool) {
	if r.Goal == nil || !r.Goal.ratio() || r.Goal.Baseline >= len(r.Baselines) {
		return 0, false
	}
	return Ratio(r.Subject, r.Baselines[r.Goal.Baseline], r.Goal.Metric)
}

// Verdict is "met", "MISSED", "n/a" (no goal) or "unmeasured".
func (r Row) Verdict() string {
	if r.Goal == nil {
		return "n/a"
	}
	if r.Subject.Errors > 0 {
		return "ERRORS"
	}
	g, s := r.Goal, r.Subject
	if !s.Measured() {
		return "unmeasured"
	}
	met := true
	if g.ratio() {
		if g.Baseline >= len(r.Baselines) {
			return "unmeasured"
		}
		x, ok := Ratio(s, r.Baselines[g.Baseline], g.Metric)
		if !ok {
			return "unmeasured"
		}
		met = (g.Max > 0 && x <= g.Max) || (g.Min > 0 && x >= g.Min)
	}
	if (g.MaxP50 > 0 && s.P50 == 0) || (g.MaxP99 > 0 && s.P99 == 0) || (g.MinRate > 0 && s.Rate == 0) {
		return "unmeasured"
	}
	met = met && (g.MaxP50 == 0 || s.P50 <= g.MaxP50) && (g.MaxP99 == 0 || s.P99 <= g.MaxP99) && s.Rate >= g.MinRate
	for _, c := range g.Checks {
		met = met && c.Met
	}
	if met {
		return "met"
	}
	return "MISSED"
}

// Growth compares an operation's p50 at 1× and 10× the data.
type Growth struct {
	Op        string
	At1, At10 Measure
	// SQL1 and SQL10 are the raw-SQL baseline at 1× and 10×: whether the query itself grew.
	SQL1, SQL10 Measure
	// Max is the goal on p50(10×)/p50(1×); 0 when the issue sets none.
	Max float64
}

// Verdict is "met", "MISSED", "n/a" or "unmeasured".
func (g Growth) Verdict() string {
	x, ok := Ratio(g.At10, g.At1, P50)
	switch {
	case !ok || g.At1.Errors > 0 || g.At10.Errors > 0:
		return "unmeasured"
	case g.Max == 0:
		return "n/a"
	case x <= g.Max:
		return "met"
	}
	return "MISSED"
}

func ms(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}

func rate(m Measure) string {
	if m.Rate == 0 {
		return "-"
	}
	u := m.Unit
	if u == "" {
		u = "req/s"
	}
	if m.Rate >= 100 {
		return fmt.Sprintf("%.0f %s", m.Rate, u)
	}
	return fmt.Sprintf("%.1f %s", m.Rate, u)
}

// ratios renders subject/baseline for p50, p99 and rate.
func ratios(s, b Measure) string {
	var parts []string
	for _, m := range []Metric{P50, P99, Rate} {
		if x, ok := Ratio(s, b, m); ok {
			name := string(m)
			if m == Rate {
				name = "rate"
			}
			parts = append(parts, fmt.Sprintf("%s ×%.2f", name, x))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

type line struct {
	cells []string
}

func (r Row) lines() []line {
	s := r.Subject
	status := fmt.Sprint(s.Errors)
	if !s.Measured() {
		status = "missing"
	}
	goal := "-"
	if r.Goal != nil {
		goal = r.Goal.Text
	}
	calls := fmt.Sprint(s.Calls)
	if !s.Measured() {
		calls = "-"
	}
	out := []line{{[]string{r.Op, r.Data, seriesName(s), calls, rate(s), ms(s.P50), ms(s.P99), status, "", goal, r.Verdict()}}}
	for i, b := range r.Baselines {
		berr := fmt.Sprint(b.Errors)
		bcalls := fmt.Sprint(b.Calls)
		if !b.Measured() {
			berr, bcalls = "missing", "-"
		}
		mark := ""
		if r.Goal != nil && r.Goal.Baseline == i {
			mark = " (goal)"
		}
		out = append(out, line{[]string{"", "", "↳ " + seriesName(b) + mark, bcalls, rate(b), ms(b.P50), ms(b.P99), berr, ratios(s, b), "", ""}})
	}
	return out
}

// seriesName is the series cell: the name, and the peak RSS when it was sampled.
func seriesName(m Measure) string {
	if m.PeakRSS > 0 {
		return fmt.Sprintf("%s (peak RSS %s)", m.Name, Bytes(m.PeakRSS))
	}
	return m.Name
}

// Bytes renders a byte count in MiB, or GiB from 1 GiB on.
func Bytes(n int64) string {
	if n >= 1<<30 {
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	}
	return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
}

var header = []string{"operation", "data", "series", "calls", "rate", "p50", "p99", "errors", "endpoint ÷ baseline", "goal", "verdict"}

// BaselineErrors lists baselines that had failed calls: worth a warning, not a failure of the
// service.
func BaselineErrors(rows []Row) []string {
	var out []string
	for _, r := range rows {
		for _, b := range r.Baselines {
			if b.Measured() && b.Errors > 0 {
				out = append(out, fmt.Sprintf("%s, baseline %s: %d errors (%s)", r.Op, b.Name, b.Errors, b.FirstError))
			}
		}
	}
	return out
}

// Text writes the table for a terminal.
func Text(w io.Writer, rows []Row, growth []Growth) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range rows {
		for _, l := range r.lines() {
			fmt.Fprintln(tw, strings.Join(l.cells, "\t"))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(growth) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, strings.Join(growthHeader, "\t"))
		for _, g := range growth {
			fmt.Fprintln(tw, strings.Join(growthCells(g), "\t"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, r := range rows {
		if r.Subject.FirstError != "" {
			fmt.Fprintf(w, "first error of %s: %s\n", r.Op, r.Subject.FirstError)
		}
	}
	return nil
}

var growthHeader = []string{"cost growth", "endpoint p50 at 1×", "at 10×", "ratio", "raw SQL p50 at 1×", "at 10×", "ratio", "goal (endpoint)", "verdict"}

func growthCells(g Growth) []string {
	x, ok := Ratio(g.At10, g.At1, P50)
	ratio := "-"
	if ok {
		ratio = fmt.Sprintf("×%.2f", x)
	}
	goal := "-"
	if g.Max > 0 {
		goal = fmt.Sprintf("≤ ×%.1f", g.Max)
	}
	sqlRatio := "-"
	if x, ok := Ratio(g.SQL10, g.SQL1, P50); ok {
		sqlRatio = fmt.Sprintf("×%.2f", x)
	}
	return []string{g.Op, ms(g.At1.P50), ms(g.At10.P50), ratio, ms(g.SQL1.P50), ms(g.SQL10.P50), sqlRatio, goal, g.Verdict()}
}

func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// MarkdownTable writes the rows and the growth table as Markdown.
func MarkdownTable(w io.Writer, rows []Row, growth []Growth) {
	fmt.Fprintln(w, "| "+strings.Join(header, " | ")+" |")
	fmt.Fprintln(w, "|"+strings.Repeat("---|", len(header)))
	for _, r := range rows {
		for _, l := range r.lines() {
			cs := make([]string, len(l.cells))
			for i, c := range l.cells {
				cs[i] = cell(c)
			}
			fmt.Fprintln(w, "| "+strings.Join(cs, " | ")+" |")
		}
	}
	if len(growth) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| "+strings.Join(growthHeader, " | ")+" |")
		fmt.Fprintln(w, "|"+strings.Repeat("---|", len(growthHeader)))
		for _, g := range growth {
			fmt.Fprintln(w, "| "+strings.Join(growthCells(g), " | ")+" |")
		}
	}
}

// Failures lists the rows whose endpoint was measured and returned errors (missing rows are
// not failures: that work has not landed).
func Failures(rows []Row, growth []Growth) []string {
	var out []string
	for _, r := range rows {
		if r.Subject.Measured() && r.Subject.Errors > 0 {
			out = append(out, fmt.Sprintf("%s: %d errors (%s)", r.Op, r.Subject.Errors, r.Subject.FirstError))
		}
	}
	for _, g := range growth {
		for _, m := range []Measure{g.At1, g.At10} {
			if m.Measured() && m.Errors > 0 {
				out = append(out, fmt.Sprintf("growth %s: %d errors (%s)", g.Op, m.Errors, m.FirstError))
			}
		}
	}
	return out
}
