package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tokenscope/tokenscope/bench/report"
)

// machine describes where and how the run happened.
type machine struct {
	cpus        int
	cpuModel    string
	memory      string
	goVersion   string
	postgres    string
	loadAvg     string
	date        time.Time
	command     string
	scale       scale
	took        time.Duration
	concurrency int
	restarts    []string
	reused      bool
	// counts1 and counts10 are the data the 1× and 10× rows ran on; historyTook is how long the
	// history copies took (history scales only).
	counts1, counts10 dataCounts
	historyTook       time.Duration
}

// dataCounts is the size of the data a set of rows ran on.
type dataCounts struct{ tokens, wallets, trades, positions int64 }

func (d dataCounts) String() string {
	return fmt.Sprintf("%s tokens, %s wallets with positions, %s trades, %s positions",
		thousands(d.tokens), thousands(d.wallets), thousands(d.trades), thousands(d.positions))
}

// countData counts the tables the read rows depend on (exact counts; one scan each).
func countData(ctx context.Context, pool *pgxpool.Pool) dataCounts {
	var d dataCounts
	_ = pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM tokens), (SELECT count(DISTINCT (chain, wallet)) FROM wallet_positions),
		(SELECT count(*) FROM trades), (SELECT count(*) FROM wallet_positions)`).Scan(&d.tokens, &d.wallets, &d.trades, &d.positions)
	return d
}

func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func loadAverage() string {
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		return strings.Join(strings.Fields(string(b))[:3], " ")
	}
	return ""
}

func describeMachine(ctx context.Context, st *stack) machine {
	m := machine{cpus: runtime.NumCPU(), goVersion: runtime.Version(), date: time.Now().UTC()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.cpuModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int64
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "MemTotal:") {
				fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(l, "MemTotal:")), "%d", &kb)
			}
		}
		m.memory = fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
	}
	m.loadAvg = loadAverage()
	_ = st.pool.QueryRow(ctx, "SHOW server_version").Scan(&m.postgres)
	return m
}

// annotate writes, for each row that misses its goal, what the numbers of the same run say
// about why and what to look at next.
func annotate(rows []report.Row) {
	for i := range rows {
		r := &rows[i]
		if r.Verdict() != "MISSED" || r.Goal == nil {
			continue
		}
		s := r.Subject
		var base report.Measure
		if r.Goal.Baseline < len(r.Baselines) {
			base = r.Baselines[r.Goal.Baseline]
		}
		var why string
		switch {
		case strings.HasPrefix(r.Goal.Text, "p99 ≤ 1.5× raw SQL"):
			why = fmt.Sprintf("the HTTP path adds %.2f ms at p50 over the same read in-process (auth, JSON encoding, the loopback hop "+
				"and the client's own HTTP work, all on the same 2 cores as Postgres and the 16-way load); at p99 the gap grows to ×%.2f. "+
				"Next: a CPU profile of the service under this load (BenchmarkHandler and BenchmarkInmemory in adapters/httpapi isolate the HTTP share).",
				ms64(s.P50-base.P50), ratio(s.P99, base.P99))
		case strings.HasPrefix(r.Goal.Text, "req/s ≥ 0.5× bare Fiber"):
			sql := r.Baselines[0]
			why = fmt.Sprintf("the bare handler answers %.0f req/s; the read alone, with no HTTP at all, reaches %.0f req/s (×%.2f of it), "+
				"so no HTTP-side tuning can meet the goal: it needs the response cached between refreshes (the ranking and "+
				"market data change once per MARKET_REFRESH_INTERVAL) or a cheaper query (EXPLAIN ANALYZE the token detail read).",
				base.Rate, sql.Rate, sql.Rate/base.Rate)
		case r.Goal.Text == importGoal || strings.HasPrefix(r.Goal.Text, importGoal+";"):
			why = fmt.Sprintf("the import commits every trade with its derivations (positions, time buckets, window deltas, "+
				"holder totals, and the market rows of the touched tokens at each flush) in batches of 5,000 events; the COPY "+
				"into the table shaped like trades writes the trade rows and their indexes only. Ratio ×%.3f. "+
				"Next: docs/engine-benchmarks.md, eighth round, for where the CPU goes.", s.Rate/base.Rate)
		case strings.HasPrefix(r.Op, "live ingest: "):
			continue // the rows' notes and the sender's queue say what there is to say
		case strings.HasPrefix(r.Goal.Text, "p99 ≤ 2× bare workflow"):
			why = fmt.Sprintf("the POST writes its row, then starts a workflow and waits for the start to be durable: p50 %.2f ms against "+
				"%.2f ms for a bare start. Next: trace one request (DB write vs. StartWorkflow) under load.", ms64(s.P50), ms64(base.P50))
		case strings.HasPrefix(r.Goal.Text, "deliveries/s"), strings.HasPrefix(r.Goal.Text, "event → first attempt"):
			why = "see docs/workflows.md, Webhook delivery path, for where a delivery's time goes."
		}
		if r.Note != "" {
			r.Note += "; "
		}
		r.Note += "misses its goal: " + why
	}
}

// goalFigures are the figures a goal is read on: the ratio, the bounded figures, failed checks.
func goalFigures(r report.Row) string {
	var parts []string
	if x, ok := r.GoalRatio(); ok {
		parts = append(parts, fmt.Sprintf("×%.2f", x))
	}
	g, s := r.Goal, r.Subject
	if g.MinRate > 0 {
		parts = append(parts, fmt.Sprintf("%.0f %s", s.Rate, s.Unit))
	}
	if g.MaxP50 > 0 {
		parts = append(parts, fmt.Sprintf("p50 %.0f ms", ms64(s.P50)))
	}
	if g.MaxP99 > 0 {
		parts = append(parts, fmt.Sprintf("p99 %.0f ms", ms64(s.P99)))
	}
	if s.PeakRSS > 0 {
		parts = append(parts, "peak RSS "+report.Bytes(s.PeakRSS))
	}
	for _, c := range g.Checks {
		if !c.Met {
			parts = append(parts, "not met: "+c.Text)
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

func ms64(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func writeMarkdown(path string, m machine, rows []report.Row, growth []report.Growth) error {
	var w bytes.Buffer
	fmt.Fprintf(&w, "# tokenscope benchmarks\n\n")
	fmt.Fprintf(&w, "Written by `%s` (the `bench/cmd/tokenbench` harness) on %s; the run took %s. Re-run it to check every figure.\n\n",
		m.command, m.date.Format("2006-01-02 15:04 UTC"), m.took.Round(time.Second))
	fmt.Fprintf(&w, "Every figure counts only as a ratio against a baseline measured **in the same run, on the same data, on the same machine**: "+
		"the machine is shared and noisy, so absolute times say little.\n\n")
	fmt.Fprintf(&w, "## Machine\n\n")
	fmt.Fprintf(&w, "- CPUs: %d (%s)\n- memory: %s\n- Go: %s\n- PostgreSQL: %s (127.0.0.1:5432)\n- load average when the table was written: %s\n\n",
		m.cpus, orDash(m.cpuModel), m.memory, m.goVersion, m.postgres, m.loadAvg)
	fmt.Fprintf(&w, "## Run\n\n")
	if m.scale.history() {
		fmt.Fprintf(&w, "- scale `%s`: %d tokens, %d wallets, %d trades from the simulator (seed 1, 24 h ending at the run's start), "+
			"ingested with `tokenscope import` into an empty database\n", m.scale.name, m.scale.tokens, m.scale.wallets, m.scale.trades)
		fmt.Fprintf(&w, "- then the trades table grown to %d rows (1×) and later %d rows (10×) by copies of those trades, the k-th copy "+
			"shifted k × 24 h and k × (their block-height span) back in time with its own signatures (`INSERT … SELECT` in the bench, "+
			"%s in all; tokens, pools, positions and market data are those of the ingested trades). The ingest path runs at under a "+
			"thousand trades/s at 100k tokens here (ingest row), so a million trades through it would take about 20 minutes and the 10× "+
			"table several hours\n",
			m.scale.mainTrades, 10*m.scale.mainTrades, m.historyTook.Round(time.Second))
	} else {
		fmt.Fprintf(&w, "- scale `%s`: %d tokens, %d wallets, %d trades from the simulator (seed 1 then 2, 24 h ending at the run's start), "+
			"ingested with `tokenscope import` in two steps: 1/10 (the 1× data), then the other 9/10 (10×)\n", m.scale.name, m.scale.tokens, m.scale.wallets, m.scale.trades)
	}
	if m.reused {
		fmt.Fprintf(&w, "- the 1× data was filled by an earlier run kept with `-keep` and reused here (`-reuse`); this run did not fill it\n")
	}
	fmt.Fprintf(&w, "- data measured: 1× = %s; 10× = %s\n", m.counts1, m.counts10)
	fmt.Fprintf(&w, "- service: `tokenscope-dev` (API, worker, embedded Temporal; `DEV_SIMULATE=false`, default settings otherwise) on free loopback ports, "+
		"its own database `tokenscope_bench_<pid>`, dropped at the end unless kept with `-keep`\n")
	fmt.Fprintf(&w, "- load: %d concurrent callers for %s per series, from the separate `tokenbench` process over loopback HTTP/1.1 keep-alive; "+
		"p50 and p99 over every call of the series; a call fails on a transport error or a non-2xx status\n", m.concurrency, m.scale.duration)
	if m.scale.history() {
		fmt.Fprintf(&w, "- the table's main rows run on the 1× data; the growth table repeats the trade pages at 1× and 10× with the same request targets, each after an unrecorded warm-up pass of its raw SQL (a quarter of the series length)\n\n")
	} else {
		fmt.Fprintf(&w, "- the table's main rows run on the 10× data; the growth table repeats four operations at 1× and 10× with the same request targets, each after an unrecorded warm-up pass of its raw SQL (a quarter of the series length)\n\n")
	}
	fmt.Fprintf(&w, "Baselines:\n\n")
	fmt.Fprintf(&w, "- **raw SQL**: the use case the handler calls (`app/market`, `app/webhookendpoint`) over the Postgres adapter, called in the bench "+
		"process through its own pgx pool with the same parameters and the same concurrency: the SQL and row scanning alone, without HTTP, "+
		"auth or JSON\n")
	fmt.Fprintf(&w, "- **bare Fiber**: a Fiber v2 handler in the bench process on loopback returning the endpoint's own response body, byte for byte\n")
	fmt.Fprintf(&w, "- **no-op workflow**: `workflows.NoopWorkflowName` started on the service's task queue of the same embedded Temporal server "+
		"(start only, and start + result, run by the service's worker)\n")
	fmt.Fprintf(&w, "- **plain POSTs**: a Go loop POSTing 600-byte bodies to the same loopback receiver the webhook endpoint delivers to\n")
	fmt.Fprintf(&w, "- **COPY**: the same trade rows COPYed into a table with no index, key or trigger (decoding not timed); "+
		"then into an empty table shaped like `trades` (`LIKE trades INCLUDING ALL`: its key and every index), what the trade "+
		"rows alone cost before any derivation, the most the import's ratio to the unindexed COPY can reach\n")
	fmt.Fprintf(&w, "- **schedule** (live ingest): the offered rate; the sender POSTs to `/v2/ingest`, at most %d requests in flight, "+
		"every trade due since its last POST (at most %d a POST), generated by the simulator rebuilt from the fill the tokens came "+
		"from; trades and pool snapshots carry the wall-clock time of their POST (a POST with a red packet claim or expiry waits "+
		"for the answer of a POST in flight that creates the packet)\n", maxPostsInFlight, maxPostTrades)
	fmt.Fprintf(&w, "- **idle, before the ingest** (live ingest): the same open-loop readers (%d requests/s in total over operations "+
		"2, 3 by token, 8 and 9, in turn, each request on its schedule whatever the answers' speed, latency counted from "+
		"the scheduled time) for %s right before the sender starts, after a warm-up; their CPU in that phase is the readers' "+
		"share taken out of the CPU per trade\n\n", liveReadRate, m.scale.duration)
	fmt.Fprintf(&w, "## Results\n\n")
	report.MarkdownTable(&w, rows, growth)
	fmt.Fprintf(&w, "\n## Goals (issues 4, 6 and 11)\n\n")
	for _, r := range rows {
		if r.Goal != nil {
			fmt.Fprintf(&w, "- %s — %s: **%s** (%s)\n", r.Op, r.Goal.Text, r.Verdict(), goalFigures(r))
		}
	}
	for _, g := range growth {
		if g.Max > 0 {
			x, _ := report.Ratio(g.At10, g.At1, report.P50)
			fmt.Fprintf(&w, "- %s, p50 growth 1× → 10× ≤ ×%.1f: **%s** (×%.2f)\n", g.Op, g.Max, g.Verdict(), x)
		}
	}
	fmt.Fprintf(&w, "\n## Notes\n\n")
	for _, r := range m.restarts {
		fmt.Fprintf(&w, "- **service restart**: %s (rows after it ran against the restarted service)\n", r)
	}
	for _, r := range rows {
		if r.Note != "" {
			fmt.Fprintf(&w, "- **%s**: %s\n", r.Op, r.Note)
		}
		if r.Subject.FirstError != "" {
			fmt.Fprintf(&w, "- **%s**: %d errors; first: `%s`\n", r.Op, r.Subject.Errors, oneLine(r.Subject.FirstError))
		}
		if !r.Subject.Measured() {
			fmt.Fprintf(&w, "- **%s**: not measured: %s\n", r.Op, r.Subject.Missing)
		}
	}
	return os.WriteFile(path, w.Bytes(), 0o644)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	s = strings.ReplaceAll(s, "`", "'")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
