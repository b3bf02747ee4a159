package report_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/tokenscope/tokenscope/bench/report"
)

func TestVerdicts(t *testing.T) {
	sql := report.Measure{Name: "sql", Rate: 100, P50: time.Millisecond, P99: 10 * time.Millisecond}
	fiber := report.Measure{Name: "fiber", Rate: 1000, P50: time.Millisecond, P99: 2 * time.Millisecond}
	p99 := &report.Goal{Text: "p99", Baseline: 0, Metric: report.P99, Max: 1.5}
	rate := &report.Goal{Text: "rate", Baseline: 1, Metric: report.Rate, Min: 0.5}
	tests := []struct {
		name string
		row  report.Row
		want string
	}{
		{"p99 within", report.Row{Subject: report.Measure{P99: 15 * time.Millisecond, Rate: 1}, Baselines: []report.Measure{sql}, Goal: p99}, "met"},
		{"p99 over", report.Row{Subject: report.Measure{P99: 16 * time.Millisecond, Rate: 1}, Baselines: []report.Measure{sql}, Goal: p99}, "MISSED"},
		{"rate under", report.Row{Subject: report.Measure{Rate: 499, P99: 1}, Baselines: []report.Measure{sql, fiber}, Goal: rate}, "MISSED"},
		{"rate at", report.Row{Subject: report.Measure{Rate: 500, P99: 1}, Baselines: []report.Measure{sql, fiber}, Goal: rate}, "met"},
		{"errors", report.Row{Subject: report.Measure{Rate: 900, Errors: 1}, Baselines: []report.Measure{sql, fiber}, Goal: rate}, "ERRORS"},
		{"missing", report.Row{Subject: report.Measure{Missing: "not served"}, Baselines: []report.Measure{sql}, Goal: p99}, "unmeasured"},
		{"no goal", report.Row{Subject: report.Measure{Rate: 1}}, "n/a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assert.Equal(t, tt.want, tt.row.Verdict()) })
	}
	g := report.Growth{At1: report.Measure{P50: 10 * time.Millisecond, Rate: 1}, At10: report.Measure{P50: 12 * time.Millisecond, Rate: 1}, Max: 1.2}
	assert.Equal(t, "met", g.Verdict())
	g.At10.P50 = 13 * time.Millisecond
	assert.Equal(t, "MISSED", g.Verdict())
}

func TestFailuresCountEndpointsNotMissingRowsOrBaselines(t *testing.T) {
	rows := []report.Row{
		{Op: "a", Subject: report.Measure{Missing: "not served yet"}},
		{Op: "b", Subject: report.Measure{Calls: 3}, Baselines: []report.Measure{{Name: "x", Errors: 2, FirstError: "timeout"}}},
		{Op: "c", Subject: report.Measure{Calls: 3, Errors: 1, FirstError: "HTTP 500"}},
	}
	assert.Equal(t, []string{"c: 1 errors (HTTP 500)"}, report.Failures(rows, nil))
	assert.Len(t, report.BaselineErrors(rows), 1)
	var buf bytes.Buffer
	report.MarkdownTable(&buf, rows, nil)
	assert.Contains(t, buf.String(), "| a | ")
	assert.Contains(t, buf.String(), "missing")
}

func TestVerdictsWithLimitsAndChecks(t *testing.T) {
	copyRate := report.Measure{Name: "copy", Rate: 100_000}
	both := &report.Goal{Text: "both", Baseline: 0, Metric: report.Rate, Min: 0.25, MinRate: 20_000}
	fresh := &report.Goal{Text: "fresh", MaxP50: 250 * time.Millisecond, MaxP99: time.Second}
	checked := &report.Goal{Text: "checked", MaxP99: time.Second, Checks: []report.Check{{Text: "queue", Met: false}}}
	tests := []struct {
		name string
		row  report.Row
		want string
	}{
		{"ratio and floor met", report.Row{Subject: report.Measure{Rate: 30_000}, Baselines: []report.Measure{copyRate}, Goal: both}, "met"},
		{"ratio met, floor missed", report.Row{Subject: report.Measure{Rate: 19_000}, Baselines: []report.Measure{{Rate: 40_000}}, Goal: both}, "MISSED"},
		{"floor met, ratio missed", report.Row{Subject: report.Measure{Rate: 24_000}, Baselines: []report.Measure{copyRate}, Goal: both}, "MISSED"},
		{"limits only, met", report.Row{Subject: report.Measure{P50: 200 * time.Millisecond, P99: time.Second}, Goal: fresh}, "met"},
		{"limits only, p99 over", report.Row{Subject: report.Measure{P50: 200 * time.Millisecond, P99: 1001 * time.Millisecond}, Goal: fresh}, "MISSED"},
		{"limits only, nothing measured", report.Row{Subject: report.Measure{Missing: "no sample"}, Goal: fresh}, "unmeasured"},
		{"a failed check misses", report.Row{Subject: report.Measure{P99: time.Millisecond}, Goal: checked}, "MISSED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assert.Equal(t, tt.want, tt.row.Verdict()) })
	}
	_, ok := report.Row{Subject: report.Measure{P99: 1}, Goal: fresh}.GoalRatio()
	assert.False(t, ok, "a goal without a ratio has none to show")
}

func TestPeakRSSInTheSeriesCell(t *testing.T) {
	var buf bytes.Buffer
	report.MarkdownTable(&buf, []report.Row{{Op: "import", Subject: report.Measure{Name: "tokenscope import", Calls: 1, PeakRSS: 3 << 29}}}, nil)
	assert.Contains(t, buf.String(), "tokenscope import (peak RSS 1.50 GiB)")
	assert.Equal(t, "300 MiB", report.Bytes(300<<20))
}
