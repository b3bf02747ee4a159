package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"time"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/tokenscope/tokenscope/adapters/ndjson"
	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/adapters/temporal"
	"github.com/tokenscope/tokenscope/app/config"
	appingest "github.com/tokenscope/tokenscope/app/ingest"
	"github.com/tokenscope/tokenscope/app/simulate"
	"github.com/tokenscope/tokenscope/workflows"
)

func init() {
	register(command{name: "simulate", summary: "generate a deterministic market (backfill, then optionally live)", run: runSimulate})
}

func runSimulate(ctx context.Context, cfg config.Config, log *slog.Logger, args []string) error {
	fs := flag.NewFlagSet("simulate", flag.ContinueOnError)
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
		if *trades > 0 {
			if err := sim.Backfill(ctx, simulate.EncoderSink{Enc: ndjson.NewEncoder(w)}); err != nil {
				f.Close()
				return err
			}
		}
		if err := w.Flush(); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}

	pool, err := openDatabase(ctx, cfg, log, true)
	if err != nil {
		return err
	}
	defer pool.Close()
	sink := &simulate.IngestSink{Ingester: appingest.New(postgres.NewIngestStore(pool), systemClock{}, 0)}
	if *trades > 0 {
		start := time.Now()
		if err := sim.Backfill(ctx, sink); err != nil {
			return err
		}
		log.Info("backfill ingested", "events", sink.Total.Events, "trades", sink.Total.Trades, "took", time.Since(start).String())
	}
	if *live > 0 {
		log.Info("trading live", "steps_per_second", *live)
		return sim.Live(ctx, sink, systemClock{}, *live)
	}
	return nil
}

// registerMarketRefresh registers the market refresh workflow and its activity on a worker.
func registerMarketRefresh(w worker.Registry, rt *runtime) {
	w.RegisterWorkflowWithOptions(workflows.MarketRefreshWorkflow, workflow.RegisterOptions{Name: workflows.MarketRefreshWorkflowName})
	w.RegisterActivity(&workflows.RefreshActivities{Clock: rt.clock, Market: postgres.NewIngestStore(rt.pool)})
}

// startMarketRefresh starts the singleton refresh loop, or gives the running one this process's
// configuration (temporal.StartRefreshLoop).
func startMarketRefresh(ctx context.Context, rt *runtime) error {
	if err := temporal.StartRefreshLoop(ctx, rt.temporal, workflows.RefreshInput{Interval: rt.cfg.RefreshInterval}); err != nil {
		return fmt.Errorf("start market refresh: %w", err)
	}
	return nil
}

// SeedMarket is what `dev` calls on first start: when no trade is stored yet it backfills a
// modest market (200 tokens, 2,000 wallets, 20,000 trades over the last 24 h), then trades live
// at rate steps per second until ctx ends. With trades already stored it only trades live.
func seedMarket(ctx context.Context, rt *runtime, rate int) error {
	var any bool
	if err := rt.pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM trades)").Scan(&any); err != nil {
		return err
	}
	end := time.Now().UTC()
	trades := 20000
	if any {
		trades = 0
	}
	sim := simulate.New(simulate.Config{Seed: uint64(end.UnixNano()), Tokens: 200, Wallets: 2000, Trades: trades,
		Start: end.Add(-24 * time.Hour), End: end})
	sink := &simulate.IngestSink{Ingester: rt.app.Ingest}
	if trades > 0 {
		start := time.Now()
		if err := sim.Backfill(ctx, sink); err != nil {
			return err
		}
		rt.log.Info("market seeded", "trades", sink.Total.Trades, "took", time.Since(start).String())
	} else {
		// Existing market: launch a few tokens so live trading has something to trade.
		sim = simulate.New(simulate.Config{Seed: uint64(end.UnixNano()), Tokens: 20, Wallets: 2000, Trades: 100,
			Start: end.Add(-time.Minute), End: end})
		if err := sim.Backfill(ctx, sink); err != nil {
			return err
		}
	}
	return sim.Live(ctx, sink, rt.clock, rate)
}
