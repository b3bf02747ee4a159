package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/tokenscope/tokenscope/adapters/ndjson"
	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/app/config"
	appingest "github.com/tokenscope/tokenscope/app/ingest"
	"github.com/tokenscope/tokenscope/cmd/internal/wire"
	"github.com/tokenscope/tokenscope/domain/ingest"
	"github.com/tokenscope/tokenscope/ports"
)

func init() {
	register(command{name: "import", summary: "ingest an NDJSON file of chain events (- for stdin)", run: runImport})
}

func runImport(ctx context.Context, cfg config.Config, log *slog.Logger, args []string) error {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	batch := fs.Int("batch", appingest.DefaultBatchSize, "events per transaction")
	flushEvery := fs.Duration("flush-every", 10*time.Second, "derive the market data of the tokens the batches touched this often, and at the end (a bulk import derives a token once per interval however many batches touch it)")
	at := fs.String("at", "", "derive as of this time, RFC 3339 or Unix ms (reproducible backfills and tests; default the system clock)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("usage: tokenscope import [--batch N] [--at TIME] FILE")
	}
	var clock ports.Clock = wire.SystemClock{}
	if *at != "" {
		t, err := parseAt(*at)
		if err != nil {
			return err
		}
		clock = fixedClock{t}
	}
	var in io.Reader = os.Stdin
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
	svc := appingest.New(postgres.NewIngestStore(pool), clock, *batch).WithFlushInterval(*flushEvery)
	start := time.Now()
	res, err := svc.Stream(ctx, ndjson.NewDecoder(bufio.NewReaderSize(in, 1<<20)), func(total ingest.Result) {
		log.Debug("batch committed", "events", total.Events, "trades", total.Trades)
	})
	elapsed := time.Since(start)
	fmt.Printf("events=%d inserted=%d skipped=%d trades=%d rederived=%d seconds=%.3f trades_per_second=%d\n",
		res.Events, res.Inserted, res.Skipped, res.Trades, res.Rederived, elapsed.Seconds(),
		int64(res.Trades)*int64(time.Second)/max(int64(elapsed), 1))
	return err
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
