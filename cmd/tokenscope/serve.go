package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/tokenscope/tokenscope/app/config"
	"github.com/tokenscope/tokenscope/cmd/internal/wire"
)

func init() {
	register(command{name: "serve", summary: "run the HTTP API (main address and the dex address)", run: runServe})
	register(command{name: "worker", summary: "run a Temporal worker (scale out by running more)", run: runWorker})
	register(command{name: "healthcheck", summary: "exit 0 when a URL (default the API's /readyz) answers 200; for container healthchecks", run: runHealthcheck})
}

// connect parses a command's (flag-less) arguments and opens the database and the Temporal
// client that serve and worker share; close releases both.
func connect(ctx context.Context, name string, cfg config.Config, log *slog.Logger, args []string) (rt *wire.Runtime, close func(), err error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	what := "Runs the HTTP API: the main address (HTTP_ADDR) and the dex address (DEX_HTTP_ADDR)."
	if name == "worker" {
		what = "Runs a Temporal worker (TEMPORAL_ADDRESS): KYT, webhook delivery, jobs, the refresh loop, chain followers."
	}
	usageOf(fs, name, what)
	if err := fs.Parse(args); err != nil {
		return nil, nil, err
	}
	pool, err := wire.OpenDatabase(ctx, cfg, log, false)
	if err != nil {
		return nil, nil, err
	}
	tc, err := wire.DialTemporal(cfg, log, "")
	if err != nil {
		pool.Close()
		return nil, nil, err
	}
	return wire.NewRuntime(cfg, log, pool, tc), func() { tc.Close(); pool.Close() }, nil
}

func runServe(ctx context.Context, cfg config.Config, log *slog.Logger, args []string) error {
	wire.ServiceGC()
	rt, closeAll, err := connect(ctx, "serve", cfg, log, args)
	if err != nil {
		return err
	}
	defer closeAll()
	lns, err := wire.ListenHTTP(cfg)
	if err != nil {
		return err
	}
	return wire.ServeHTTP(ctx, rt, lns, nil)
}

func runWorker(ctx context.Context, cfg config.Config, log *slog.Logger, args []string) error {
	wire.ServiceGC()
	rt, closeAll, err := connect(ctx, "worker", cfg, log, args)
	if err != nil {
		return err
	}
	defer closeAll()
	// The admin address (/metrics) is taken before anything starts: a busy port is a start error.
	admin, err := net.Listen("tcp", cfg.AdminHTTPAddr)
	if err != nil {
		return fmt.Errorf("ADMIN_HTTP_ADDR: %w", err)
	}
	w := wire.NewWorker(rt)
	if err := w.Start(); err != nil {
		admin.Close()
		return err
	}
	defer w.Stop()
	defer wire.StartWorkflowProbe(ctx, rt)()
	defer wire.StartFirstRefresh(ctx, rt, nil)()
	if err := wire.StartLoops(ctx, rt); err != nil {
		log.Warn("start loops", "err", err)
	}
	log.Info("worker started", "temporal", cfg.TemporalAddress, "health", cfg.WorkerHealthAddr, "admin", admin.Addr().String())
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return wire.ServeAdmin(gctx, rt, admin) })
	g.Go(func() error { return serveWorkerHealth(gctx, rt) })
	return g.Wait()
}

// serveWorkerHealth answers /healthz and /readyz for a worker (which has no API of its own),
// so an orchestrator can probe it, until ctx ends.
func serveWorkerHealth(ctx context.Context, rt *wire.Runtime) error {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"up"}`))
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		for _, c := range wire.ReadinessChecks(rt) {
			if err := c.Ping(r.Context()); err != nil {
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = fmt.Fprintf(w, `{"status":"not ready","%s":%q}`, c.Name, err.Error())
				return
			}
		}
		_, _ = w.Write([]byte(`{"status":"ready"}`))
	})
	srv := &http.Server{Addr: rt.Cfg.WorkerHealthAddr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	select {
	case err := <-errc:
		return fmt.Errorf("worker health server: %w", err)
	case <-ctx.Done():
	}
	rt.Log.Info("worker stopping")
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(shutdown)
}

func runHealthcheck(ctx context.Context, cfg config.Config, _ *slog.Logger, args []string) error {
	fs := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	usageOf(fs, "healthcheck [URL]", "Exits 0 when URL (default the API's /readyz) answers 200; for container healthchecks.")
	if err := fs.Parse(args); err != nil {
		return err
	}
	url := wire.LocalURL(cfg.HTTPAddr) + "/readyz"
	if fs.NArg() > 0 {
		url = fs.Arg(0)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %d", url, res.StatusCode)
	}
	return nil
}
