package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/tokenscope/tokenscope/adapters/ndjson"
	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/app/config"
	"github.com/tokenscope/tokenscope/app/ingest"
	"github.com/tokenscope/tokenscope/app/simulate"
	"github.com/tokenscope/tokenscope/cmd/internal/wire"
	"github.com/tokenscope/tokenscope/domain/chainevent"
)

func init() {
	register(command{name: "simulate", summary: "generate a deterministic market (backfill, then optionally live)", run: runSimulate})
}

func runSimulate(ctx context.Context, cfg config.Config, log *slog.Logger, args []string) error {
	fs := flag.NewFlagSet("simulate", flag.ContinueOnError)
	usageOf(fs, "simulate [flags]", "Generates a deterministic simulated market: a backfill, then optionally live trading; into the\n"+
		"database (DATABASE_URL) or, with --ndjson, into an NDJSON file for import.")
	seed := fs.Uint64("seed", 1, "random seed; the same seed and --end give the same events")
	tokens := fs.Int("tokens", 200, "tokens to launch during the backfill")
	wallets := fs.Int("wallets", 2000, "wallets")
	trades := fs.Int("trades", 20000, "backfill trades (0 for none)")
	span := fs.Duration("span", 24*time.Hour, "time the backfill's trades are spread over, ending at --end")
	endFlag := fs.String("end", "", "RFC 3339 end of the backfill (default now)")
	live := fs.Int("live", 0, "after the backfill keep trading at this many steps per second until interrupted")
	out := fs.String("ndjson", "", "write events to this NDJSON file instead of ingesting them")
	if err := fs.Parse(args); err != nil {
		return err
	}
	end := time.Now().UTC()
	if *endFlag != "" {
		t, err := time.Parse(time.RFC3339, *endFlag)
		if err != nil {
			return fmt.Errorf("--end: %w", err)
		}
		end = t
	}
	sim := simulate.New(simulate.Config{Seed: *seed, Tokens: *tokens, Wallets: *wallets, Trades: *trades,
		Start: end.Add(-*span), End: end})

	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			return err
		}
		w := bufio.NewWriterSize(f, 1<<20)
		sink := &countingSink{Sink: simulate.EncoderSink{Enc: ndjson.NewEncoder(w)}, byType: map[string]int{}}
		if *trades > 0 {
			if err := sim.Backfill(ctx, sink); err != nil {
				f.Close()
				return err
			}
		}
		if err := w.Flush(); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "tokenscope simulate: wrote %s to %s\n", sink.summary(), *out)
		return nil
	}

	pool, err := wire.OpenDatabase(ctx, cfg, log, true)
	if err != nil {
		return err
	}
	defer pool.Close()
	svc := ingest.New(postgres.NewIngestStore(pool), wire.SystemClock{}, 0)
	// With REDIS_URL the simulated market reaches the API nodes' stream subscribers (the
	// compose demo profile's live page).
	stopStreams, err := startIngestStreams(ctx, cfg, log, pool, svc)
	if err != nil {
		return err
	}
	defer stopStreams()
	sink := &simulate.IngestSink{Ingester: svc}
	if *trades > 0 {
		start := time.Now()
		if err := sim.Backfill(ctx, sink); err != nil {
			return err
		}
		log.Info("backfill ingested", "events", sink.Total.Events, "trades", sink.Total.Trades, "took", time.Since(start).String())
	}
	if *live > 0 {
		log.Info("trading live", "steps_per_second", *live)
		return sim.Live(ctx, sink, wire.SystemClock{}, *live)
	}
	return nil
}

// countingSink counts what passes through it by event type, for simulate --ndjson's report.
type countingSink struct {
	simulate.Sink
	total  int
	byType map[string]int
}

func (c *countingSink) Emit(ctx context.Context, e chainevent.Event) error {
	if err := c.Sink.Emit(ctx, e); err != nil {
		return err
	}
	c.total++
	c.byType[string(e.Type())]++
	return nil
}

// summary is "N events (k type, …)", types in name order.
func (c *countingSink) summary() string {
	types := make([]string, 0, len(c.byType))
	for t := range c.byType {
		types = append(types, t)
	}
	sort.Strings(types)
	parts := make([]string, len(types))
	for i, t := range types {
		parts[i] = fmt.Sprintf("%d %s", c.byType[t], t)
	}
	return fmt.Sprintf("%d events (%s)", c.total, strings.Join(parts, ", "))
}
