// Command tokenbench is `make bench`: it builds nothing itself (make builds bin/tokenscope and
// bin/tokenscope-dev), creates its own database on the local Postgres, fills it with the
// simulator through the ingest path (the production binary's apikey, simulate and import),
// starts tokenscope-dev on free loopback ports, and drives every operation at a fixed
// concurrency for a fixed time from this separate process, each next to its baselines measured
// in the same run on the same data (raw SQL through pgx, a bare Fiber handler, a no-op workflow on
// the same Temporal server, plain POSTs, a plain COPY). It prints the table, writes
// BENCHMARKS.md, and stops everything it started and drops its database, also on failure or
// Ctrl-C. It sends traffic to loopback addresses only.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"

	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/app/market"
	"github.com/tokenscope/tokenscope/bench/load"
	"github.com/tokenscope/tokenscope/bench/report"
)

// scale sizes a run. Without history the data is filled in two steps, 1/10 then the remaining
// 9/10, so the cost growth rows compare 1× with 10× of the same market shape. With history the
// whole simulated market (tokens, wallets, trades) goes in through the ingest path first; then
// the trades table is grown by copies of those trades shifted back in time (see extendHistory)
// to mainTrades for the main rows (the 1× of the growth rows), and to 10 × mainTrades for the
// 10× growth rows. The ingest path derives every position, window and holder count per batch
// and runs at under a thousand trades/s at 100k tokens on this machine (760-870 measured), so a
// million trades through it would take about 20 minutes and the 10× table several hours.
type scale struct {
	name                    string
	tokens, wallets, trades int
	duration                time.Duration
	deliveries              deliverySizes // the webhook delivery rows
	mainTrades              int           // with history: the trades table's size for the main rows
	// liveRate trades/s are POSTed for liveDuration in the live ingest rows.
	liveRate     int
	liveDuration time.Duration
	// follow sizes the chain follower's backfill rows.
	follow followSize
}

func (sc scale) history() bool { return sc.mainTrades > 0 }

var scales = map[string]scale{
	"smoke": {name: "smoke", tokens: 300, wallets: 1_000, trades: 6_000, duration: time.Second,
		deliveries: deliverySizes{oneEndpoint: 200, endpoints: 10, fanout: 200, paced: 500 * time.Millisecond},
		liveRate:   5_000, liveDuration: 3 * time.Second, follow: followSize{swaps: 2_000, pools: 20, wallets: 50, perBlock: 60}},
	"small": {name: "small", tokens: 10_000, wallets: 20_000, trades: 200_000, duration: 10 * time.Second,
		deliveries: deliverySizes{oneEndpoint: 2_000, endpoints: 100, fanout: 2_000, paced: 3 * time.Second},
		liveRate:   5_000, liveDuration: time.Minute, follow: followSize{swaps: 100_000, pools: 1_000, wallets: 500, perBlock: 60}},
	"large": {name: "large", tokens: 100_000, wallets: 200_000, trades: 250_000, duration: 10 * time.Second,
		deliveries: deliverySizes{oneEndpoint: 10_000, endpoints: 100, fanout: 10_000, paced: 10 * time.Second}, mainTrades: 1_000_000,
		liveRate: 5_000, liveDuration: time.Minute, follow: followSize{swaps: 100_000, pools: 1_000, wallets: 500, perBlock: 60}},
}

// groups are the row groups -only selects by name (next to read operations by number); the fills
// (and so the import rows' figures) always run, except for deliveries alone, which run on an empty
// database, and follow and replica alone, which make their own chain, databases or clusters
// (no fill, no service).
var groups = []string{"reads", "growth", "kyt", "jobs", "webhooks", "deliveries", "import", "live", "candles", "streams", "follow", "replica"}

func main() {
	scaleName := flag.String("scale", envOr("BENCH_SCALE", "small"), "smoke, small or large")
	bin := flag.String("bin", "bin/tokenscope", "the production binary, for apikey, simulate and import (make bench builds it)")
	devBin := flag.String("dev-bin", "bin/tokenscope-dev", "the development stack binary the service runs as (make bench builds it)")
	conc := flag.Int("concurrency", 16, "concurrent callers of every series")
	dur := flag.Duration("duration", 0, "how long each series runs (default: 1s smoke, 10s small and large)")
	pg := flag.String("pg", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "admin URL of a loopback Postgres")
	out := flag.String("out", "", "write the report here (default BENCHMARKS.md, except at smoke scale)")
	failOnErrors := flag.Bool("fail-on-errors", false, "exit 1 when an endpoint that exists answered an error (always on at smoke scale)")
	keep := flag.Bool("keep", false, "keep the run's database at the end (its name is printed) for a later -reuse")
	reuse := flag.String("reuse", "", "run on this database, kept by an earlier -keep run of the same scale, instead of filling a new one (it is kept too)")
	fillOnly := flag.Bool("fill-only", false, "fill a new database, measure its import, keep it and stop (measure later with -reuse)")
	only := flag.String("only", "", "comma list of what to run: read operation numbers (e.g. 2,9) and row groups ("+strings.Join(groups, ", ")+
		"); default all. A partial run writes no report file unless -out is given")
	liveDur := flag.Duration("live-duration", 0, "how long the live ingest rows send (default: 3s smoke, 1m small and large)")
	ingestWait := flag.String("ingest-wait", "commit", "the live sender's POST /v2/ingest wait parameter: commit (answer once committed, "+
		"derived by the service's background flushes) or derived (each POST waits for its trades' derivations)")
	paced := flag.Duration("paced", 0, "how long the webhook latency row writes 1,000 events/s (default: the scale's)")
	flag.Parse()

	sc, ok := scales[*scaleName]
	if !ok {
		fmt.Fprintf(os.Stderr, "tokenbench: unknown scale %q (smoke, small, large)\n", *scaleName)
		os.Exit(2)
	}
	if *dur > 0 {
		sc.duration = *dur
	}
	if *liveDur > 0 {
		sc.liveDuration = *liveDur
	}
	if *paced > 0 {
		sc.deliveries.paced = *paced
	}
	if *ingestWait != "commit" && *ingestWait != "derived" {
		fmt.Fprintf(os.Stderr, "tokenbench: -ingest-wait: %q is neither commit nor derived\n", *ingestWait)
		os.Exit(2)
	}
	sel, err := parseOnly(*only)
	if err != nil {
		fmt.Fprintf(os.Stderr, "tokenbench: -only: %v\n", err)
		os.Exit(2)
	}
	if *out == "" && sc.name != "smoke" && !sel.partial() {
		*out = "BENCHMARKS.md"
	}
	if sc.name == "smoke" {
		*failOnErrors = true
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code := run(ctx, sc, options{bin: *bin, devBin: *devBin, pg: *pg, conc: *conc, out: *out, failOnErrors: *failOnErrors, keep: *keep || *fillOnly,
		reuse: *reuse, fillOnly: *fillOnly, only: sel, ingestWait: *ingestWait})
	os.Exit(code)
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "tokenbench %s  "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

// options are the command line's settings besides the scale.
type options struct {
	bin, devBin        string
	pg, out            string
	conc               int
	failOnErrors, keep bool
	fillOnly           bool
	reuse              string
	// only is -only's selection; empty runs everything.
	only selection
	// ingestWait is the live sender's wait parameter (-ingest-wait).
	ingestWait string
}

// selection is what -only picks: row groups by name and read operations by number.
type selection struct {
	groups map[string]bool
	// ops holds the prefixes ("2 ", "9 ") of the read operations picked by number.
	ops []string
	// text is the list as given, for the report's command line.
	text string
}

// parseOnly reads -only's comma list: each item is a group name or a read operation's number.
func parseOnly(list string) (selection, error) {
	sel := selection{groups: map[string]bool{}}
	var items []string
	for _, it := range strings.Split(list, ",") {
		if it = strings.TrimSpace(it); it == "" {
			continue
		}
		items = append(items, it)
		if slices.Contains(groups, it) {
			sel.groups[it] = true
			continue
		}
		if n, err := strconv.Atoi(it); err != nil || n <= 0 {
			return selection{}, fmt.Errorf("%q is neither a read operation's number nor a group (%s)", it, strings.Join(groups, ", "))
		}
		sel.ops = append(sel.ops, it+" ")
	}
	sel.text = strings.Join(items, ",")
	return sel, nil
}

// partial tells whether -only narrowed the run.
func (s selection) partial() bool { return len(s.groups) > 0 || len(s.ops) > 0 }

// deliveriesOnly tells whether the run is the webhook delivery rows alone, which need no data.
func (s selection) deliveriesOnly() bool {
	return len(s.ops) == 0 && len(s.groups) == 1 && s.groups["deliveries"]
}

// followOnly tells whether the run is the chain follower rows alone, which need neither the
// fills nor the service.
func (s selection) followOnly() bool {
	return len(s.ops) == 0 && len(s.groups) == 1 && s.groups["follow"]
}

// replicaOnly tells whether the run is the replica rows alone, which make their own primary,
// standby and services.
func (s selection) replicaOnly() bool {
	return len(s.ops) == 0 && len(s.groups) == 1 && s.groups["replica"]
}

// want tells whether the run measures group g.
func (o options) want(g string) bool { return !o.only.partial() || o.only.groups[g] }

// pick keeps the read operations the run selects: all of them with the reads group (or without
// -only), those numbered in -only otherwise.
func (o options) pick(ops []readOp) []readOp {
	if o.want("reads") {
		return ops
	}
	return pickOps(ops, o.only.ops...)
}

// reusePrefix is the name every tokenbench database starts with; -reuse takes no other, so a
// mistyped name cannot point the run at somebody's real data.
const reusePrefix = "tokenscope_bench_"

// run does the whole benchmark and returns the exit code; every resource it acquires is
// released by its defers, whichever way it returns.
func run(ctx context.Context, sc scale, o options) int {
	started := time.Now()
	for _, b := range []string{o.bin, o.devBin} {
		if _, err := os.Stat(b); err != nil {
			logf("no binary at %s (run `make build`): %v", b, err)
			return 1
		}
	}
	dir, err := os.MkdirTemp("", "tokenbench-")
	if err != nil {
		logf("%v", err)
		return 1
	}
	defer os.RemoveAll(dir)
	logFile, err := os.Create(filepath.Join(dir, "service.log"))
	if err != nil {
		logf("%v", err)
		return 1
	}
	defer logFile.Close()
	// Private copies of the binaries: a `make build` elsewhere in the tree during the run cannot
	// swap them between the fills and the service.
	binCopy, devBinCopy := filepath.Join(dir, "tokenscope"), filepath.Join(dir, "tokenscope-dev")
	for _, c := range [][2]string{{o.bin, binCopy}, {o.devBin, devBinCopy}} {
		if err := copyFile(c[0], c[1]); err != nil {
			logf("copy %s: %v", c[0], err)
			return 1
		}
	}
	st := &stack{bin: binCopy, devBin: devBinCopy, adminURL: o.pg, dir: dir, logFile: logFile, dbName: fmt.Sprintf("%s%d", reusePrefix, os.Getpid())}
	if o.reuse != "" {
		if !strings.HasPrefix(o.reuse, reusePrefix) {
			logf("-reuse takes a database an earlier -keep run left, named %s…; not %q", reusePrefix, o.reuse)
			return 2
		}
		st.dbName = o.reuse
		o.keep = true
	}
	if st.dbURL, err = withDatabase(o.pg, st.dbName); err != nil {
		logf("%v", err)
		return 1
	}
	if o.reuse == "" {
		if err := st.createDatabase(ctx); err != nil {
			logf("%v", err)
			return 1
		}
		logf("database %s created; scale %s, concurrency %d, %s per series; logs in %s", st.dbName, sc.name, o.conc, sc.duration, logFile.Name())
	} else {
		logf("reusing database %s; scale %s, concurrency %d, %s per series; logs in %s", st.dbName, sc.name, o.conc, sc.duration, logFile.Name())
	}
	defer func() {
		if o.keep {
			logf("database %s kept (re-run with -reuse %s; drop it with: psql -h 127.0.0.1 -U postgres -c 'DROP DATABASE %s')", st.dbName, st.dbName, st.dbName)
			return
		}
		if err := st.dropDatabase(); err != nil {
			logf("drop database %s: %v", st.dbName, err)
		} else {
			logf("database %s dropped", st.dbName)
		}
	}()
	defer func() {
		if err := st.stopService(); err != nil {
			logf("stop service: %v", err)
		}
	}()
	failed := func(what string, err error) int {
		logf("%s: %v", what, err)
		tail(logFile.Name())
		return 1
	}

	if o.only.deliveriesOnly() {
		return runDeliveries(ctx, sc, o, st, failed)
	}
	if o.only.followOnly() {
		return runFollow(ctx, sc, o, st, failed)
	}
	if o.only.replicaOnly() {
		return runReplica(ctx, sc, o, st, failed)
	}

	// 1× data, ingested before the service starts.
	end := time.Now().UTC().Truncate(time.Second)
	fill1 := fill{Seed: 1, Tokens: sc.tokens / 10, Wallets: sc.wallets / 10, Trades: sc.trades / 10}
	if sc.history() {
		fill1 = fill{Seed: 1, Tokens: sc.tokens, Wallets: sc.wallets, Trades: sc.trades}
	}
	fill2 := fill{Seed: 2, Tokens: sc.tokens - fill1.Tokens, Wallets: sc.wallets - fill1.Wallets, Trades: sc.trades - fill1.Trades}
	var ingest1 report.Row
	reused := false
	if o.reuse != "" {
		if st.pool, err = postgres.Open(ctx, st.dbURL, int32(o.conc+4)); err != nil {
			return failed("open pool", err)
		}
		var trades, copies int64
		if err := st.pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE tx_signature LIKE '%`+historyMark+`%') FROM trades`).Scan(&trades, &copies); err != nil {
			return failed("read the reused database", err)
		}
		if copies > 0 || trades == 0 || (!sc.history() && trades >= int64(sc.trades)) {
			st.pool.Close()
			logf("database %s holds %d trades (%d history copies): not the 1× data of scale %s; fill a new one", st.dbName, trades, copies, sc.name)
			return 2
		}
		reused = true
		if ingest1, err = loadFillRow(ctx, st.pool); err != nil {
			ingest1 = report.Row{Op: "ingest into an empty database (tokenscope import, service stopped)", Data: "1×",
				Subject: report.Measure{Name: "tokenscope import", Missing: "reused database of an earlier run (-reuse): " + err.Error()}}
		}
	} else {
		logf("fill 1×: simulate + import %d tokens, %d wallets, %d trades", fill1.Tokens, fill1.Wallets, fill1.Trades)
		im1, err := st.ingestFill(ctx, fill1, end)
		if err != nil {
			return failed("fill 1×", err)
		}
		if st.pool, err = postgres.Open(ctx, st.dbURL, int32(o.conc+4)); err != nil {
			return failed("open pool", err)
		}
		if ingest1, err = ingestRow(ctx, st, sc, "ingest into an empty database (tokenscope import, service stopped)", "1×", im1); err != nil {
			st.pool.Close()
			return failed("copy baseline", err)
		}
		_ = os.Remove(im1.file)
		if err := saveFillRow(ctx, st.pool, ingest1); err != nil {
			st.pool.Close()
			return failed("save the fill's figures", err)
		}
		if o.fillOnly {
			st.pool.Close()
			logf("filled in %s", time.Since(started).Round(time.Second))
			return 0
		}
	}
	defer st.pool.Close()
	if err := st.createKey(ctx); err != nil {
		return failed("api key", err)
	}
	serviceUp := time.Now()
	if err := st.startService(ctx); err != nil {
		return failed("start service", err)
	}
	logf("service up on %s (dex %s, temporal %s)", st.httpURL, st.dexURL, st.temporalAddr)

	tc, err := dialTemporal(st.temporalAddr)
	if err != nil {
		logf("temporal client: %v (workflow baselines will be missing)", err)
		tc = nil
	}
	fib, err := startFiber()
	if err != nil {
		return failed("bare fiber", err)
	}
	defer fib.stop()
	rcv, err := startReceiver()
	if err != nil {
		return failed("receiver", err)
	}
	defer rcv.stop()
	b := &bench{st: st, ingestWait: o.ingestWait, opts: load.Options{Concurrency: o.conc, Duration: sc.duration}, client: load.Client(o.conc),
		market: market.New(postgres.NewMarketReader(st.pool)), fiber: fib, rcv: rcv, tc: tc, logf: logf,
		deliverySizes: sc.deliveries}
	defer func() {
		if b.tc != nil {
			b.tc.Close()
		}
	}()

	if err := st.waitRanking(ctx, serviceUp, 120*time.Second); err != nil {
		logf("ranking: %v", err)
	}
	t1, err := sampleTargets(ctx, st.pool)
	if err != nil {
		return failed("sample targets", err)
	}
	growthPrefixes := []string{"1 ", "3 ", "8 ", "9 "}
	env := describeMachine(ctx, st)
	if sc.history() {
		growthPrefixes = []string{"3 "} // history copies grow the trades table only
		logf("1×: growing trades to %d with history copies", sc.mainTrades)
		took, err := extendHistory(ctx, st.pool, int64(sc.mainTrades), logf)
		if err != nil {
			return failed("history copies", err)
		}
		env.historyTook = took
	}
	var growthOps []readOp
	if o.want("growth") {
		growthOps = pickOps(b.readOps(t1), growthPrefixes...)
	}
	at1, sql1 := b.growthSeries(ctx, growthOps, "1×")
	if ctx.Err() != nil {
		return failed("interrupted", ctx.Err())
	}
	env.counts1 = countData(ctx, st.pool)

	var rows []report.Row
	var at10, sql10 map[string]report.Measure
	if sc.history() {
		// The main rows run on the 1× data (the whole simulated market, its trades table grown to
		// mainTrades); then the trades table grows ten times and the trade pages are measured again.
		rows = b.otherRows(ctx, o, t1, "1×")
		if o.want("live") {
			rows = append(rows, b.liveRows(ctx, t1, liveFill{fill: fill1, end: end}, sc.liveRate, sc.liveDuration, "1×")...)
		}
		if o.want("streams") {
			rows = append(rows, b.streamRows(ctx, liveFill{fill: fill1, end: end}, sc.liveDuration, "1×")...)
		}
		if o.want("import") {
			rows = append(rows, ingest1)
		}
		if ctx.Err() != nil {
			return failed("interrupted", ctx.Err())
		}
		if o.want("growth") {
			logf("10×: growing trades to %d with history copies", 10*sc.mainTrades)
			took, err := extendHistory(ctx, st.pool, 10*int64(sc.mainTrades), logf)
			if err != nil {
				return failed("history copies", err)
			}
			env.historyTook += took
			env.counts10 = countData(ctx, st.pool)
			at10, sql10 = b.growthSeries(ctx, growthOps, "10×")
		}
	} else {
		// 10× data: the other 9/10, ingested while the service runs.
		logf("fill 10×: simulate + import %d more tokens, %d more trades (service running)", fill2.Tokens, fill2.Trades)
		im2, err := st.ingestFill(ctx, fill2, end)
		if err != nil {
			return failed("fill 10×", err)
		}
		ingest2, err := ingestRow(ctx, st, sc, "ingest 9× more into 1× (tokenscope import, service running)", "1×→10×", im2)
		if err != nil {
			return failed("copy baseline", err)
		}
		_ = os.Remove(im2.file)
		env.counts10 = countData(ctx, st.pool)
		if err := st.waitRanking(ctx, time.Now(), 120*time.Second); err != nil {
			logf("ranking: %v", err)
		}
		at10, sql10 = b.growthSeries(ctx, growthOps, "10×")
		t10, err := sampleTargets(ctx, st.pool)
		if err != nil {
			return failed("sample targets", err)
		}
		rows = b.otherRows(ctx, o, t10, "10×")
		if o.want("live") {
			rows = append(rows, b.liveRows(ctx, t10, liveFill{fill: fill2, end: end}, sc.liveRate, sc.liveDuration, "10×")...)
		}
		if o.want("streams") {
			rows = append(rows, b.streamRows(ctx, liveFill{fill: fill2, end: end}, sc.liveDuration, "10×")...)
		}
		if o.want("import") {
			rows = append(rows, ingest1, ingest2)
		}
	}
	if o.want("follow") && ctx.Err() == nil {
		rows = append(rows, b.followRows(ctx, sc.follow))
	}
	if o.want("replica") && ctx.Err() == nil {
		rows = append(rows, b.replicaRows(ctx, sc)...)
	}
	if ctx.Err() != nil {
		return failed("interrupted", ctx.Err())
	}
	var growth []report.Growth
	for _, o := range growthOps {
		g := report.Growth{Op: o.op, At1: at1[o.op], At10: at10[o.op], SQL1: sql1[o.op], SQL10: sql10[o.op]}
		if strings.HasPrefix(o.op, "3 ") {
			g.Max = 1.2
		}
		growth = append(growth, g)
	}
	return finish(sc, o, b, env, reused, started, rows, growth)
}

// finish prints the rows, writes the report file when the run has one (-out, or BENCHMARKS.md
// for a whole run above smoke scale) and returns the exit code.
func finish(sc scale, o options, b *bench, env machine, reused bool, started time.Time, rows []report.Row, growth []report.Growth) int {
	annotate(rows)

	fmt.Println()
	_ = report.Text(os.Stdout, rows, growth)
	for _, r := range b.restarts {
		logf("service restart: %s", r)
	}
	if o.out != "" {
		env.loadAvg = loadAverage()
		env.command = commandLine(sc, o)
		env.scale = sc
		env.reused = reused
		env.took = time.Since(started)
		env.concurrency = o.conc
		env.restarts = b.restarts
		if err := writeMarkdown(o.out, env, rows, growth); err != nil {
			logf("write %s: %v", o.out, err)
			return 1
		}
		logf("wrote %s", o.out)
	}
	for _, w := range report.BaselineErrors(rows) {
		logf("warning: %s", w)
	}
	if fails := report.Failures(rows, growth); len(fails) > 0 {
		for _, f := range fails {
			logf("ERROR %s", f)
		}
		if o.failOnErrors {
			return 1
		}
	}
	logf("done in %s", time.Since(started).Round(time.Second))
	return 0
}

// otherRows measures the read, KYT, job, webhook and webhook delivery rows the run selects.
func (b *bench) otherRows(ctx context.Context, o options, t targets, data string) []report.Row {
	rows := b.readRows(ctx, o.pick(b.readOps(t)), data)
	if o.want("kyt") {
		rows = append(rows, b.kytRows(ctx)...)
	}
	if o.want("jobs") {
		rows = append(rows, b.jobRows(ctx, t)...)
	}
	if o.want("webhooks") {
		rows = append(rows, b.webhookRows(ctx)...)
	}
	if o.want("candles") {
		rows = append(rows, b.readRows(ctx, b.candleOps(t), data)...)
	}
	if o.want("deliveries") {
		rows = append(rows, b.webhookDeliveryRows(ctx)...)
	}
	return rows
}

// runDeliveries runs the webhook delivery rows alone (-only deliveries) on an empty database
// (migrated by `tokenscope migrate`) and prints them; failures end it with 1 at every scale.
func runDeliveries(ctx context.Context, sc scale, o options, st *stack, failed func(string, error) int) int {
	started := time.Now()
	if _, err := st.tool(ctx, "migrate"); err != nil {
		return failed("migrate", err)
	}
	var err error
	if st.pool, err = postgres.Open(ctx, st.dbURL, int32(o.conc+4)); err != nil {
		return failed("open pool", err)
	}
	defer st.pool.Close()
	if err := st.createKey(ctx); err != nil {
		return failed("api key", err)
	}
	if err := st.startService(ctx); err != nil {
		return failed("start service", err)
	}
	rcv, err := startReceiver()
	if err != nil {
		return failed("receiver", err)
	}
	defer rcv.stop()
	b := &bench{st: st, ingestWait: o.ingestWait, opts: load.Options{Concurrency: o.conc, Duration: sc.duration}, client: load.Client(o.conc),
		rcv: rcv, logf: logf, deliverySizes: sc.deliveries}
	rows := b.webhookDeliveryRows(ctx)
	o.failOnErrors = true
	return finish(sc, o, b, describeMachine(ctx, st), false, started, rows, nil)
}

// runFollow runs the chain follower rows alone (-only follow): its chain and its two databases
// are its own; the run's database is only migrated (the report reads the server's version).
func runFollow(ctx context.Context, sc scale, o options, st *stack, failed func(string, error) int) int {
	started := time.Now()
	if _, err := st.tool(ctx, "migrate"); err != nil {
		return failed("migrate", err)
	}
	var err error
	if st.pool, err = postgres.Open(ctx, st.dbURL, 2); err != nil {
		return failed("open pool", err)
	}
	defer st.pool.Close()
	b := &bench{st: st, logf: logf}
	rows := []report.Row{b.followRows(ctx, sc.follow)}
	if sc.name == "smoke" {
		o.failOnErrors = true
	}
	return finish(sc, o, b, describeMachine(ctx, st), false, started, rows, nil)
}

func pickOps(ops []readOp, prefixes ...string) []readOp {
	var out []readOp
	for _, o := range ops {
		for _, p := range prefixes {
			if strings.HasPrefix(o.op, p) {
				out = append(out, o)
			}
		}
	}
	return out
}

// importGoal is the engine issue's goal for the import: at least half the rate of the COPY of the
// same trade rows into an empty table shaped like trades (its key and indexes).
const importGoal = "≥ 0.5× the COPY into a table shaped like trades"

// maxImportRSS is issue 11's bound on the ingesting process's resident memory at large scale.
const maxImportRSS = 3 << 29 // 1.5 GiB

// ingestRow compares the import's trade rate with a plain COPY of the same trades, and reports
// the import process's peak resident memory (bounded by the goal at large scale).
func ingestRow(ctx context.Context, st *stack, sc scale, op, data string, im imported) (report.Row, error) {
	copied, copyTook, indexedTook, err := st.copyTrades(ctx, im.file)
	if err != nil {
		return report.Row{}, err
	}
	goal := &report.Goal{Text: importGoal, Baseline: 1, Metric: report.Rate, Min: 0.5}
	if sc.name == "large" {
		goal.Text += "; peak RSS ≤ 1.5 GiB"
		goal.Checks = []report.Check{{Text: "peak RSS ≤ 1.5 GiB", Met: im.peakRSS > 0 && im.peakRSS <= maxImportRSS}}
	}
	note := fmt.Sprintf("trades/s = the %s trade rows the import reported new ÷ the import's own stream time, which covers "+
		"decoding and committing all %s events of the file (the trades and the launches, pools, snapshots, labels and red packets "+
		"around them; process start excluded); the COPY writes the file's %s trade rows alone; the p50 column holds the total "+
		"time of the one import / the one COPY",
		thousands(int64(im.trades)), thousands(int64(im.events)), thousands(int64(copied)))
	if copied != im.trades {
		note += fmt.Sprintf("; the import reported %d new trades, the file holds %d", im.trades, copied)
	}
	if im.trades > 0 {
		total, svc, db := perTrade(im.cpu, cpuUse{}, im.trades)
		note += fmt.Sprintf("; CPU per trade %.1f µs: the import process %.1f µs (%.2f s, user + system over its whole life) + "+
			"Postgres %.1f µs (%.2f s: the bench database's backends, polled every 200 ms, and the cluster's WAL writer, "+
			"checkpointer and background writer; with the service running, its own work in that time is in it too)",
			us(total), us(svc), im.cpu.svc.Seconds(), us(db), im.cpu.db.Seconds())
	}
	row := report.Row{Op: op, Data: data,
		Subject: report.Measure{Name: "tokenscope import", Calls: im.trades, Unit: "trades/s", Rate: float64(im.trades) / im.took.Seconds(),
			P50: im.took, PeakRSS: im.peakRSS},
		Baselines: []report.Measure{{Name: "COPY, unindexed table", Calls: copied, Unit: "trades/s", Rate: float64(copied) / copyTook.Seconds(), P50: copyTook},
			{Name: "COPY, empty table shaped like trades (its key and 6 indexes)", Calls: copied, Unit: "trades/s",
				Rate: float64(copied) / indexedTook.Seconds(), P50: indexedTook}},
		Goal: goal, Note: note}
	logf("%s: %d trades in %s (COPY: %s), peak RSS %s", op, im.trades, im.took.Round(time.Millisecond),
		copyTook.Round(time.Millisecond), report.Bytes(im.peakRSS))
	return row, nil
}

func dialTemporal(addr string) (client.Client, error) {
	return client.Dial(client.Options{HostPort: addr, Namespace: "default",
		Logger: tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))})
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func commandLine(sc scale, o options) string {
	c := "make bench BENCH_SCALE=" + sc.name
	if o.reuse != "" {
		c = "go run ./bench/cmd/tokenbench -scale " + sc.name + " -reuse " + o.reuse
	}
	if o.only.partial() {
		if o.reuse == "" {
			c = "go run ./bench/cmd/tokenbench -scale " + sc.name
		}
		c += " -only " + o.only.text
	}
	return c
}

// tail prints the end of the service log after a failure.
func tail(name string) {
	b, err := os.ReadFile(name)
	if err != nil {
		return
	}
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	fmt.Fprintf(os.Stderr, "--- end of %s ---\n%s\n", name, b)
}

func newGet(ctx context.Context, u string, h http.Header) (*http.Request, error) {
	if err := load.Loopback(u); err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, "GET", u, nil)
	if err != nil {
		return nil, err
	}
	req.Header = h.Clone()
	return req, nil
}
