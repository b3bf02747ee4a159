package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/app/simulate"
	"github.com/tokenscope/tokenscope/bench/load"
	"github.com/tokenscope/tokenscope/bench/report"
	"github.com/tokenscope/tokenscope/internal/pgcluster"
)

// The replica rows (issue 23): a primary and a streaming standby of the run's own (pgcluster:
// initdb and pg_basebackup -R on free loopback ports, never the shared server), the primary
// filled by `tokenscope migrate` + simulate + import as the main fill is, and two tokenscope-dev
// processes on it: one reading the primary (no DATABASE_REPLICA_URLS) and one whose market reads
// go to the standby (DATABASE_REPLICA_URLS). Operations 2, 3, 8 and 9 are measured on each in
// turn, and a sender POSTs trades to /v2/ingest of the standby's API while both APIs' operation 3
// are polled for each sampled trade. Everything is stopped and removed at the end.

// replicaFreshRate is the sender's rate in the replica freshness row: the row measures the path
// through the standby, not the ingest's capacity (the live rows do that).
const replicaFreshRate = 500

// replicaFill sizes the replica rows' primary: the scale's tokens (so there are tokens without a
// recent trade to sample) with a tenth of its wallets and trades, capped at small's.
func replicaFill(sc scale) fill {
	return fill{Seed: 3, Tokens: min(sc.tokens, 10_000), Wallets: min(sc.wallets/10, 2_000), Trades: min(sc.trades/10, 20_000)}
}

// replicaRows measures the replica group.
func (b *bench) replicaRows(ctx context.Context, sc scale) []report.Row {
	f := replicaFill(sc)
	data := fmt.Sprintf("%s tokens, %s trades (own primary + streaming standby)", thousands(int64(f.Tokens)), thousands(int64(f.Trades)))
	fail := func(what string, err error) []report.Row {
		b.logf("replica: %s: %v", what, err)
		return []report.Row{{Op: "replica: reads on a streaming standby", Data: data,
			Subject: report.Measure{Name: "standby", Errors: 1, Calls: 1, FirstError: what + ": " + err.Error()}}}
	}
	tb := &clusterTB{}
	defer tb.close()
	var primary, standby *pgcluster.Cluster
	started := time.Now()
	if err := clusterDo(func() {
		primary = pgcluster.NewPrimary(tb, pgcluster.Options{})
		standby = primary.NewStandby("standby1")
	}); err != nil {
		return fail("start the primary and the standby", err)
	}
	b.logf("replica: primary on port %d, standby on port %d (%s)", primary.Port, standby.Port, time.Since(started).Round(time.Millisecond))

	ps := *b.st
	ps.svc, ps.svcDone, ps.pool, ps.key = nil, nil, nil, ""
	ps.adminURL = primary.URL("postgres")
	ps.dbName = "tokenscope"
	ps.dbURL = primary.URL(ps.dbName)
	ps.svcEnv = []string{"DATA_DIR=" + filepath.Join(b.st.dir, "replica-primary-api")}
	if err := ps.createDatabase(ctx); err != nil {
		return fail("create the database", err)
	}
	if _, err := ps.tool(ctx, "migrate"); err != nil {
		return fail("migrate", err)
	}
	end := time.Now().UTC().Truncate(time.Second)
	b.logf("replica: fill: simulate + import %d tokens, %d wallets, %d trades into the primary", f.Tokens, f.Wallets, f.Trades)
	im, err := ps.ingestFill(ctx, f, end)
	if err != nil {
		return fail("fill", err)
	}
	_ = os.Remove(im.file)
	if ps.pool, err = postgres.Open(ctx, ps.dbURL, 4); err != nil {
		return fail("open the primary", err)
	}
	defer ps.pool.Close()
	if err := ps.createKey(ctx); err != nil {
		return fail("api key", err)
	}
	if err := clusterDo(func() { primary.WaitReplayed(standby) }); err != nil {
		return fail("standby catch-up", err)
	}
	rs := ps
	rs.svcEnv = []string{"DATA_DIR=" + filepath.Join(b.st.dir, "replica-standby-api"), "DATABASE_REPLICA_URLS=" + standby.URL(ps.dbName)}
	for _, s := range []*stack{&ps, &rs} {
		if err := s.startService(ctx); err != nil {
			return fail("start tokenscope-dev", err)
		}
		defer func(s *stack) {
			if err := s.stopService(); err != nil {
				b.logf("replica: stop service: %v", err)
			}
		}(s)
	}
	b.logf("replica: API on the primary %s, API reading the standby %s", ps.httpURL, rs.httpURL)
	t, err := sampleTargets(ctx, ps.pool)
	if err != nil {
		return fail("sample targets", err)
	}
	onPrimary, onStandby := *b, *b
	onPrimary.st, onStandby.st = &ps, &rs
	// The requests carry the run's key of this database (both services share it).
	readers := pickOps(onPrimary.readOps(t), "2 ", "3 trade list, by token", "8 ", "9 ")

	before, err := dbReads(ctx, b, &rs)
	if err != nil {
		return fail("read /metrics", err)
	}
	var rows []report.Row
	for _, o := range readers {
		if o.missing != "" {
			rows = append(rows, report.Row{Op: "replica: " + o.op, Data: data, Subject: report.Measure{Name: seriesEndpoint, Missing: o.missing}})
			continue
		}
		b.logf("replica: measuring %s on the primary, then through the standby", o.op)
		// An unrecorded pass on each first: connections and caches warm.
		warm := b.opts
		warm.Duration = max(b.opts.Duration/4, 500*time.Millisecond)
		for _, x := range []*bench{&onPrimary, &onStandby} {
			load.Run(ctx, warm, func(ctx context.Context, w, i int) error {
				_, err := load.Do(ctx, b.client, o.http(x, w, i))
				return err
			})
		}
		p, _ := onPrimary.httpSeries(ctx, "endpoint, reads on the primary", func(w, i int) load.Request { return o.http(&onPrimary, w, i) })
		s, _ := onStandby.httpSeries(ctx, "endpoint, reads on the standby", func(w, i int) load.Request { return o.http(&onStandby, w, i) })
		rows = append(rows, report.Row{Op: "replica: " + o.op, Data: data, Subject: s, Baselines: []report.Measure{p},
			Note: "standby ÷ primary: " + ratios(s, p)})
	}
	after, err := dbReads(ctx, b, &rs)
	if err != nil {
		return fail("read /metrics", err)
	}
	served := fmt.Sprintf("the standby's API served %s market reads from the standby and %s from the primary during these series "+
		"(tokenscope_db_reads_total on its /metrics)", thousands(int64(after.standby-before.standby)), thousands(int64(after.primary-before.primary)))
	b.logf("replica: %s", served)
	for i := range rows {
		rows[i].Note = strings.TrimPrefix(rows[i].Note+"; "+served, "; ")
	}
	if after.standby == before.standby && len(rows) > 0 {
		rows[0].Subject.Errors++
		rows[0].Subject.FirstError = "the standby served none of the reads"
	}

	rows = append(rows, b.replicaFreshness(ctx, &ps, &rs, f, end, sc.liveDuration, data))
	return rows
}

// ratios formats a's p50, p99 and rate over b's.
func ratios(a, b report.Measure) string {
	var parts []string
	for _, m := range []struct {
		name string
		m    report.Metric
	}{{"p50", report.P50}, {"p99", report.P99}, {"req/s", report.Rate}} {
		if r, ok := report.Ratio(a, b, m.m); ok {
			parts = append(parts, fmt.Sprintf("%s ×%.2f", m.name, r))
		}
	}
	if len(parts) == 0 {
		return "n/a"
	}
	return strings.Join(parts, ", ")
}

// readCounts are the reads a service's router counted per database.
type readCounts struct{ primary, standby float64 }

// dbReads reads tokenscope_db_reads_total from the service's /metrics.
func dbReads(ctx context.Context, b *bench, s *stack) (readCounts, error) {
	res, err := load.Do(ctx, b.client, load.Request{Method: "GET", URL: s.adminHTTP + "/metrics"})
	if err != nil {
		return readCounts{}, err
	}
	var c readCounts
	found := false
	sc := bufio.NewScanner(bytes.NewReader(res.Body))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "tokenscope_db_reads_total{") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			return readCounts{}, fmt.Errorf("metrics line %q: %w", line, err)
		}
		found = true
		if strings.Contains(line, `database="primary"`) {
			c.primary += v
		} else {
			c.standby += v
		}
	}
	if !found {
		return c, fmt.Errorf("no tokenscope_db_reads_total on %s/metrics", s.adminHTTP)
	}
	return c, nil
}

// replicaFreshness POSTs trades to the standby's API for dur and, for each sampled trade, polls
// operation 3 on both APIs until each shows it: the same trades, through the standby and on the
// primary.
func (b *bench) replicaFreshness(ctx context.Context, ps, rs *stack, f fill, end time.Time, dur time.Duration, data string) report.Row {
	op := "replica: freshness, POSTed trade visible in operation 3 (trade list by token)"
	missing := func(why string) report.Row {
		return report.Row{Op: op, Data: data, Subject: report.Measure{Name: "through the standby", Missing: why}}
	}
	sim := simulate.New(simulate.Config{Seed: f.Seed, Tokens: f.Tokens, Wallets: f.Wallets, Trades: f.Trades,
		Start: end.Add(-fillSpan), End: end})
	if err := sim.Backfill(ctx, discard{}); err != nil {
		return missing("rebuild the simulator: " + err.Error())
	}
	onStandby := *b
	onStandby.st = rs
	hot, err := onStandby.recentTokens(ctx)
	if err != nil {
		return missing("read recently traded tokens: " + err.Error())
	}
	b.logf("replica: sending %d trades/s to the standby's API for %s, polling operation 3 on both APIs", replicaFreshRate, dur)
	s := &sender{b: &onStandby, sim: sim, rate: replicaFreshRate, dur: dur, lastSent: hot, samples: [2]chan sample{make(chan sample, 1)}}
	var pr dualProber
	var probes sync.WaitGroup
	for range 2 {
		probes.Add(1)
		go func() { defer probes.Done(); pr.run(ctx, &onStandby, [2]*stack{rs, ps}, s.samples[0]) }()
	}
	s.run(ctx)
	close(s.samples[0])
	probes.Wait()
	ms := [2]report.Measure{}
	for i, name := range []string{"through the standby (API reading it)", "on the primary (API reading it)"} {
		m := report.Measure{Name: name, Calls: len(pr.lat[i]) + pr.errs[i], Errors: pr.errs[i], FirstError: pr.first[i]}
		m.P50, m.P99 = load.Percentile(pr.lat[i], 50), load.Percentile(pr.lat[i], 99)
		if m.Calls == 0 {
			m.Missing = "no trade sampled (no token without a trade in the previous 65 s)"
		}
		ms[i] = m
	}
	if s.errors > 0 {
		ms[0].Errors += s.errors
		ms[0].FirstError = strings.TrimPrefix(ms[0].FirstError+"; ingest: "+s.firstErr, "; ")
	}
	return report.Row{Op: op, Data: data, Subject: ms[0], Baselines: []report.Measure{ms[1]},
		Goal: &report.Goal{Text: "p99 ≤ 1 s (issue 23: as without a standby)", MaxP99: time.Second},
		Note: fmt.Sprintf("%s trades acknowledged in %d POSTs to the standby's API over %s (writes go to the primary); "+
			"sampled trades (one every %s at most, of tokens with no trade in the previous %s), polled on both APIs every %s "+
			"for up to %s; time from the POST's response; calls = samples; standby ÷ primary: %s",
			thousands(int64(s.acked)), s.posts, s.elapsed.Round(time.Millisecond), probeEvery, coldFor, probePoll, probeLimit,
			ratios(ms[0], ms[1]))}
}

// dualProber polls operation 3 on two APIs for each sampled trade.
type dualProber struct {
	mu    sync.Mutex
	lat   [2][]time.Duration
	errs  [2]int
	first [2]string
}

func (p *dualProber) run(ctx context.Context, b *bench, apis [2]*stack, samples <-chan sample) {
	for smp := range samples {
		ms := strconv.FormatInt(smp.blockMs, 10)
		var urls [2]string
		for i, s := range apis {
			urls[i] = s.httpURL + "/v2/trade/" + smp.chain + "?" + url.Values{"tokenAddress": {smp.token},
				"afterTimestamp": {ms}, "beforeTimestamp": {ms}, "limit": {"100"}}.Encode()
		}
		seen := [2]bool{}
		deadline := smp.acked.Add(probeLimit)
		for (!seen[0] || !seen[1]) && ctx.Err() == nil {
			// Both APIs at once, so neither waits for the other's answer.
			var polls sync.WaitGroup
			for i, u := range urls {
				if seen[i] {
					continue
				}
				polls.Add(1)
				go func() {
					defer polls.Done()
					cctx, cancel := context.WithTimeout(ctx, probeLimit)
					res, err := load.Do(cctx, b.client, load.Request{Method: "GET", URL: u, Header: b.auth()})
					cancel()
					if err == nil && bytes.Contains(res.Body, []byte(smp.signature)) {
						p.mu.Lock()
						p.lat[i] = append(p.lat[i], time.Since(smp.acked))
						p.mu.Unlock()
						seen[i] = true
					}
				}()
			}
			polls.Wait()
			if time.Now().After(deadline) {
				p.mu.Lock()
				for i := range seen {
					if !seen[i] {
						p.errs[i]++
						if p.first[i] == "" {
							p.first[i] = fmt.Sprintf("%s trade %s not seen within %s of the POST's response", smp.chain, smp.signature, probeLimit)
						}
					}
				}
				p.mu.Unlock()
				break
			}
			sleepCtx(ctx, probePoll)
		}
	}
}

// clusterTB is pgcluster's TB for this program: Fatalf ends the cluster step in progress (a
// panic clusterDo recovers) and the cleanups run at close.
type clusterTB struct{ cleanups []func() }

type clusterFailed struct{ err error }

func (t *clusterTB) Helper() {}
func (t *clusterTB) Fatalf(format string, args ...any) {
	panic(clusterFailed{fmt.Errorf(format, args...)})
}
func (t *clusterTB) Cleanup(f func()) { t.cleanups = append(t.cleanups, f) }
func (t *clusterTB) close() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
}

// clusterDo runs f, turning a pgcluster failure into an error.
func clusterDo(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			cf, ok := r.(clusterFailed)
			if !ok {
				panic(r)
			}
			err = cf.err
		}
	}()
	f()
	return nil
}

// runReplica runs the replica rows alone (-only replica): its clusters and services are its own;
// the run's database is only migrated (the report reads the server's version).
func runReplica(ctx context.Context, sc scale, o options, st *stack, failed func(string, error) int) int {
	started := time.Now()
	if _, err := st.tool(ctx, "migrate"); err != nil {
		return failed("migrate", err)
	}
	var err error
	if st.pool, err = postgres.Open(ctx, st.dbURL, 2); err != nil {
		return failed("open pool", err)
	}
	defer st.pool.Close()
	b := &bench{st: st, opts: load.Options{Concurrency: o.conc, Duration: sc.duration}, client: load.Client(o.conc), logf: logf}
	rows := b.replicaRows(ctx, sc)
	if sc.name == "smoke" {
		o.failOnErrors = true
	}
	return finish(sc, o, b, describeMachine(ctx, st), false, started, rows, nil)
}
