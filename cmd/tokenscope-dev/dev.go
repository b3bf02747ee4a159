// Command tokenscope-dev is the development stack `make run` builds and runs: in one process
// it applies the migrations, starts an embedded Temporal server and its Web UI
// (adapters/temporal/devserver), a worker and the HTTP API, seeds a simulated market and writes
// an API key. It is the only binary that links the Temporal server and UI libraries; the
// production binary (cmd/tokenscope) does not, and both build on the composition root in
// cmd/internal/wire.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/tokenscope/tokenscope/adapters/temporal/devserver"
	"github.com/tokenscope/tokenscope/app/config"
	"github.com/tokenscope/tokenscope/app/simulate"
	"github.com/tokenscope/tokenscope/cmd/internal/wire"
	"github.com/tokenscope/tokenscope/domain/account"
	"github.com/tokenscope/tokenscope/domain/fault"
)

func main() {
	wire.Run("tokenscope-dev", func(ctx context.Context, cfg config.Config, log *slog.Logger) error {
		return runDev(ctx, cfg, log, os.Args[1:])
	})
}

// devWebhookCIDRs lets the development stack deliver webhooks to a receiver on the laptop; the
// production default allows public https destinations only.
const devWebhookCIDRs = "127.0.0.0/8,::1/128"

// devAccount owns the key tokenscope-dev writes to .data/dev-api-key.
const devAccount = "dev"

func runDev(ctx context.Context, cfg config.Config, log *slog.Logger, args []string) error {
	fs := flag.NewFlagSet("tokenscope-dev", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: tokenscope-dev\n\nRuns the whole service on this machine (what `make run` runs); settings come from the environment (see README.md).")
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fault.Invalid("argument", fs.Arg(0), "tokenscope-dev takes none; the production subcommands are in bin/tokenscope")
	}
	wire.ServiceGC()
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return err
	}
	pool, err := wire.OpenDatabase(ctx, cfg, log, true)
	if err != nil {
		return err
	}
	defer pool.Close()

	temporalAddr := cfg.TemporalAddress
	uiURL := ""
	if temporalAddr == "" {
		srv, err := devserver.Start(devserver.Config{
			DataDir:      filepath.Join(cfg.DataDir, "temporal"),
			FrontendPort: cfg.TemporalPort,
			UIPort:       cfg.TemporalUIPort,
			Namespace:    cfg.TemporalNS,
			Log:          log.With("component", "temporal-server"),
		})
		if err != nil {
			return fmt.Errorf("embedded temporal: %w", err)
		}
		defer func() {
			if err := srv.Stop(); err != nil {
				log.Warn("temporal stop", "err", err)
			}
		}()
		temporalAddr = srv.HostPort()
		uiURL = srv.UIURL()
	}
	tc, err := wire.DialTemporal(cfg, log, temporalAddr)
	if err != nil {
		return err
	}
	defer tc.Close()

	if cfg.WebhookAllowed == "" {
		cfg.WebhookAllowed = devWebhookCIDRs // try webhooks against a receiver on this machine
	}
	rt := wire.NewRuntime(cfg, log, pool, tc)
	w := wire.NewWorker(rt)
	if err := w.Start(); err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	defer w.Stop()
	// /readyz answers 200 only once a no-op workflow has run through this worker's queue, and
	// once a refresh round has ranked the market (after the simulated one is backfilled).
	defer wire.StartWorkflowProbe(ctx, rt)()
	seeded := make(chan struct{})
	var seedOnce sync.Once
	markSeeded := func() { seedOnce.Do(func() { close(seeded) }) }
	defer wire.StartFirstRefresh(ctx, rt, func(ctx context.Context) error {
		select {
		case <-seeded:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})()
	if err := wire.StartLoops(ctx, rt); err != nil {
		return fmt.Errorf("start loops: %w", err)
	}
	keyFile := filepath.Join(cfg.DataDir, "dev-api-key")
	if err := ensureDevKey(ctx, rt, keyFile); err != nil {
		return err
	}
	var bg sync.WaitGroup
	defer bg.Wait()
	bg.Add(1)
	go func() {
		defer bg.Done()
		if err := devBackground(ctx, rt, markSeeded); err != nil && !errors.Is(err, context.Canceled) {
			log.Error("dev background", "err", err)
		}
	}()

	lns, err := wire.ListenHTTP(cfg)
	if err != nil {
		return err
	}
	return wire.ServeHTTP(ctx, rt, lns, func() {
		api := wire.LocalURL(cfg.HTTPAddr)
		fmt.Printf(`
tokenscope is running (Ctrl-C stops everything)
  API           %s   (reference: %s/docs, OpenAPI: %s/openapi.json)
  DEX API       %s   (multi-token detail: /v1/token/{chain}/multi, /v2/token/{chain}/multi)
  Metrics       %s/metrics
  Temporal      %s   (namespace %s)
  Temporal UI   %s
  API key       %s   (scopes read, kyt, webhook, ingest)

try:
  curl -H "Authorization: Bearer $(cat %s)" "%s/v2/token/search?q=a"

`, api, api, api, wire.LocalURL(cfg.DexHTTPAddr), wire.LocalURL(cfg.AdminHTTPAddr), temporalAddr, cfg.TemporalNS, orNone(uiURL), keyFile, keyFile, api)
	})
}

// ensureDevKey keeps a working key in keyFile: the existing one if it still authenticates
// (the database may have been reset), otherwise a new one.
func ensureDevKey(ctx context.Context, rt *wire.Runtime, keyFile string) error {
	if b, err := os.ReadFile(keyFile); err == nil {
		if _, err := rt.App.Keys.Authenticate(ctx, strings.TrimSpace(string(b))); err == nil {
			return nil
		}
	}
	full, _, err := rt.App.Keys.Create(ctx, devAccount, "dev", account.AllScopes)
	if err != nil {
		return err
	}
	return os.WriteFile(keyFile, []byte(full+"\n"), 0o600)
}

// devLiveRate is how many simulated market steps per second tokenscope-dev keeps trading at.
const devLiveRate = 3

// devBackground runs the dev-only extras: seeding and live-trading the simulated market, so
// every endpoint shows moving data (DEV_SIMULATE=false turns it off). seeded is called once the
// market is backfilled (at once without simulation).
func devBackground(ctx context.Context, rt *wire.Runtime, seeded func()) error {
	if !rt.Cfg.SimulateOnDev {
		seeded()
		return nil
	}
	// A failed batch (the database restarting, say) must not end live trading for the rest of
	// the session: log it and carry on after a pause. seedMarket backfills only an empty market.
	for {
		err := seedMarket(ctx, rt, devLiveRate, seeded)
		if ctx.Err() != nil {
			return nil
		}
		rt.Log.Warn("simulated market stopped; restarting in 2s", "err", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(2 * time.Second):
		}
	}
}

func orNone(s string) string {
	if s == "" {
		return "(external Temporal: use its own UI)"
	}
	return s
}

// seedMarket is what tokenscope-dev calls on first start: when no trade is stored yet it
// backfills a modest market (200 tokens, 2,000 wallets, 20,000 trades over the last 24 h), then
// trades live at rate steps per second until ctx ends. With trades already stored it only trades live.
// seeded is called once the backfill is stored.
func seedMarket(ctx context.Context, rt *wire.Runtime, rate int, seeded func()) error {
	var any bool
	if err := rt.Pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM trades)").Scan(&any); err != nil {
		return err
	}
	end := time.Now().UTC()
	trades := 20000
	if any {
		trades = 0
	}
	sim := simulate.New(simulate.Config{Seed: uint64(end.UnixNano()), Tokens: 200, Wallets: 2000, Trades: trades,
		Start: end.Add(-24 * time.Hour), End: end})
	sink := &simulate.IngestSink{Ingester: rt.App.Ingest}
	if trades > 0 {
		start := time.Now()
		if err := sim.Backfill(ctx, sink); err != nil {
			return err
		}
		rt.Log.Info("market seeded", "trades", sink.Total.Trades, "took", time.Since(start).String())
	} else {
		// Existing market: launch a few tokens so live trading has something to trade.
		sim = simulate.New(simulate.Config{Seed: uint64(end.UnixNano()), Tokens: 20, Wallets: 2000, Trades: 100,
			Start: end.Add(-time.Minute), End: end})
		if err := sim.Backfill(ctx, sink); err != nil {
			return err
		}
	}
	seeded()
	return sim.Live(ctx, sink, rt.Clock, rate)
}
