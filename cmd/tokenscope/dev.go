package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/tokenscope/tokenscope/adapters/temporal/devserver"
	"github.com/tokenscope/tokenscope/app/config"
	"github.com/tokenscope/tokenscope/domain/account"
)

func init() {
	register(command{name: "dev", summary: "run everything in one process: migrations, embedded Temporal + UI, worker, API", run: runDev})
}

// devAccount owns the key `dev` writes to .data/dev-api-key.
const devAccount = "dev"

func runDev(ctx context.Context, cfg config.Config, log *slog.Logger, args []string) error {
	fs := flag.NewFlagSet("dev", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return err
	}
	pool, err := openDatabase(ctx, cfg, log, true)
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
	tc, err := dialTemporal(cfg, log, temporalAddr)
	if err != nil {
		return err
	}
	defer tc.Close()

	if cfg.WebhookAllowed == "" {
		cfg.WebhookAllowed = devWebhookCIDRs // try webhooks against a receiver on this machine
	}
	rt := newRuntime(cfg, log, pool, tc)
	w := newWorker(rt)
	if err := w.Start(); err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	defer w.Stop()
	// /readyz answers 200 only once a no-op workflow has run through this worker's queue.
	defer startWorkflowProbe(ctx, rt)()
	if err := startLoops(ctx, rt); err != nil {
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
		if err := devBackground(ctx, rt); err != nil && !errors.Is(err, context.Canceled) {
			log.Error("dev background", "err", err)
		}
	}()

	lns, err := listenHTTP(cfg)
	if err != nil {
		return err
	}
	return serveHTTP(ctx, rt, lns, func() {
		api := localURL(cfg.HTTPAddr)
		fmt.Printf(`
tokenscope is running (Ctrl-C stops everything)
  API           %s
  DEX API       %s   (multi-token detail: /v1/token/{chain}/multi, /v2/token/{chain}/multi)
  Metrics       %s/metrics
  Temporal      %s   (namespace %s)
  Temporal UI   %s
  API key       %s   (scopes read, kyt, webhook, ingest)

try:
  curl -H "Authorization: Bearer $(cat %s)" "%s/v2/token/search?q=a"

`, api, localURL(cfg.DexHTTPAddr), localURL(cfg.AdminHTTPAddr), temporalAddr, cfg.TemporalNS, orNone(uiURL), keyFile, keyFile, api)
	})
}

// ensureDevKey keeps a working key in keyFile: the existing one if it still authenticates
// (the database may have been reset), otherwise a new one.
func ensureDevKey(ctx context.Context, rt *runtime, keyFile string) error {
	if b, err := os.ReadFile(keyFile); err == nil {
		if _, err := rt.app.Keys.Authenticate(ctx, strings.TrimSpace(string(b))); err == nil {
			return nil
		}
	}
	full, _, err := rt.app.Keys.Create(ctx, devAccount, "dev", account.AllScopes)
	if err != nil {
		return err
	}
	return os.WriteFile(keyFile, []byte(full+"\n"), 0o600)
}

// devLiveRate is how many simulated market steps per second `dev` keeps trading at.
const devLiveRate = 3

// devBackground runs the dev-only extras: seeding and live-trading the simulated market, so
// every endpoint shows moving data (DEV_SIMULATE=false turns it off).
func devBackground(ctx context.Context, rt *runtime) error {
	if !rt.cfg.SimulateOnDev {
		return nil
	}
	// A failed batch (the database restarting, say) must not end live trading for the rest of
	// the session: log it and carry on after a pause. seedMarket backfills only an empty market.
	for {
		err := seedMarket(ctx, rt, devLiveRate)
		if ctx.Err() != nil {
			return nil
		}
		rt.log.Warn("simulated market stopped; restarting in 2s", "err", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(2 * time.Second):
		}
	}
}

func localURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

func orNone(s string) string {
	if s == "" {
		return "(external Temporal: use its own UI)"
	}
	return s
}
