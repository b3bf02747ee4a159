package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"

	"golang.org/x/term"

	"github.com/tokenscope/tokenscope/adapters/ndjson"
	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/app/config"
	"github.com/tokenscope/tokenscope/app/ingest"
	"github.com/tokenscope/tokenscope/cmd/internal/progress"
	"github.com/tokenscope/tokenscope/cmd/internal/wire"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/ports"

	"github.com/jackc/pgx/v5/pgxpool"
)

func init() {
	register(command{name: "import", summary: "ingest an NDJSON file of chain events (- for stdin)", run: runImport})
}

func runImport(ctx context.Context, cfg config.Config, log *slog.Logger, args []string) error {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	usageOf(fs, "import [flags] FILE", "Ingests FILE, an NDJSON file of chain events (- reads standard input; the format is docs/engine.md's),\n"+
		"in batches with every derivation, and prints the totals. Reads DATABASE_URL.")
	batch := fs.Int("batch", ingest.DefaultBatchSize, "events per transaction")
	flushEvery := fs.Duration("flush-every", 10*time.Second, "derive the market data of the tokens the batches touched this often, and at the end (a bulk import derives a token once per interval however many batches touch it)")
	at := fs.String("at", "", "derive as of this time, RFC 3339 or Unix ms (reproducible backfills and tests; default the system clock)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("usage: tokenscope import [--batch N] [--at TIME] FILE")
	}
	// An import allocates a batch's events and deltas and drops them at its commit: its heap may
	// grow to 5× its live data between collections (GOGC=400) instead of 2×, under a 1 GiB soft
	// limit. Measured (docs/engine-benchmarks.md, fifth round): 144,249 trades of 20,000 tokens, CPU
	// 9.3 → 6.3 s, peak RSS 264–291 → 580 MiB; 98,528 trades of 100 tokens, CPU 2.35 → 2.29 s, peak
	// RSS 241 → 562 MiB.
	wire.TuneGC(400, 1<<30)
	var clock ports.Clock = wire.SystemClock{}
	if *at != "" {
		t, err := parseAt(*at)
		if err != nil {
			return err
		}
		clock = fixedClock{t}
	}
	in := os.Stdin
	if name := fs.Arg(0); name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	pool, err := wire.OpenDatabase(ctx, cfg, log, true)
	if err != nil {
		return err
	}
	defer pool.Close()
	svc := ingest.New(postgres.NewIngestStore(pool), clock, *batch).WithFlushInterval(*flushEvery)
	stopStreams, err := startIngestStreams(ctx, cfg, log, pool, svc)
	if err != nil {
		return err
	}
	defer stopStreams()
	meter := importMeter(in)
	start := time.Now()
	src := meteredSource{ndjson.NewDecoder(bufio.NewReaderSize(meter.Reader(in), 1<<20)), meter}
	res, err := svc.Stream(ctx, src, func(total chainevent.Result) {
		meter.SetEvents(int64(total.Events))
		log.Debug("batch committed", "events", total.Events, "trades", total.Trades)
	})
	elapsed := time.Since(start)
	meter.SetEvents(int64(res.Events))
	meter.Finish(int64(res.Trades), err != nil)
	fmt.Printf("events=%d inserted=%d skipped=%d trades=%d rederived=%d seconds=%.3f trades_per_second=%d\n",
		res.Events, res.Inserted, res.Skipped, res.Trades, res.Rederived, elapsed.Seconds(),
		int64(res.Trades)*int64(time.Second)/max(int64(elapsed), 1))
	return err
}

// importMeter is the progress display on stderr when stderr is a terminal (nil otherwise: a
// log file or CI gets nothing but the summary on stdout). Four redraws a second at most; the
// total is known when the input is a regular file (a file argument, or stdin redirected from one).
func importMeter(in *os.File) *progress.Meter {
	if !term.IsTerminal(int(os.Stderr.Fd())) {
		return nil
	}
	var total int64
	if st, err := in.Stat(); err == nil && st.Mode().IsRegular() {
		total = st.Size()
	}
	return progress.Start(os.Stderr, total, 250*time.Millisecond)
}

// meteredSource counts the events decoded for the progress display's estimate of the input's
// event count.
type meteredSource struct {
	ingest.Source
	meter *progress.Meter
}

func (s meteredSource) Next() (chainevent.Event, error) {
	ev, err := s.Source.Next()
	if err == nil {
		s.meter.Decoded()
	}
	return ev, err
}

// fixedClock is the clock of an import run with --at: every batch derives as of that time.
type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }

// parseAt reads --at: an RFC 3339 time or Unix milliseconds.
func parseAt(s string) (time.Time, error) {
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.UnixMilli(ms).UTC(), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("--at %q: want an RFC 3339 time or Unix milliseconds", s)
	}
	return t, nil
}

// startIngestStreams makes a process that ingests without serving (import, simulate) publish
// what it commits: with REDIS_URL its trades and flushes reach the API nodes' stream
// subscribers; without it, nothing (the subscribers are in other processes). stop publishes
// what is queued and closes the node.
func startIngestStreams(ctx context.Context, cfg config.Config, log *slog.Logger, pool *pgxpool.Pool, svc *ingest.Service) (stop func(), err error) {
	streams, err := wire.ImportStreams(cfg, log, pool, svc)
	if err != nil || streams == nil {
		return func() {}, err
	}
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan error, 1)
	go func() { done <- streams.Run(sctx) }()
	return func() { cancel(); <-done }, nil
}
