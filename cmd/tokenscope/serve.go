package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
	"golang.org/x/sync/errgroup"

	"github.com/tokenscope/tokenscope/adapters/httpapi"
	"github.com/tokenscope/tokenscope/app/config"
)

func init() {
	register(command{name: "serve", summary: "run the HTTP API (main address and the dex address)", run: runServe})
	register(command{name: "worker", summary: "run a Temporal worker (scale out by running more)", run: runWorker})
	register(command{name: "healthcheck", summary: "exit 0 when a URL (default the API's /readyz) answers 200; for container healthchecks", run: runHealthcheck})
}

// connect parses a command's (flag-less) arguments and opens the database and the Temporal
// client that serve and worker share; close releases both.
func connect(ctx context.Context, name string, cfg config.Config, log *slog.Logger, args []string) (rt *runtime, close func(), err error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return nil, nil, err
	}
	pool, err := openDatabase(ctx, cfg, log, false)
	if err != nil {
		return nil, nil, err
	}
	tc, err := dialTemporal(cfg, log, "")
	if err != nil {
		pool.Close()
		return nil, nil, err
	}
	return newRuntime(cfg, log, pool, tc), func() { tc.Close(); pool.Close() }, nil
}

func runServe(ctx context.Context, cfg config.Config, log *slog.Logger, args []string) error {
	rt, closeAll, err := connect(ctx, "serve", cfg, log, args)
	if err != nil {
		return err
	}
	defer closeAll()
	mainLn, dexLn, err := listenHTTP(cfg)
	if err != nil {
		return err
	}
	return serveHTTP(ctx, rt, mainLn, dexLn, nil)
}

func runWorker(ctx context.Context, cfg config.Config, log *slog.Logger, args []string) error {
	rt, closeAll, err := connect(ctx, "worker", cfg, log, args)
	if err != nil {
		return err
	}
	defer closeAll()
	w := newWorker(rt)
	if err := w.Start(); err != nil {
		return err
	}
	defer w.Stop()
	if err := startLoops(ctx, rt); err != nil {
		log.Warn("start loops", "err", err)
	}
	log.Info("worker started", "temporal", cfg.TemporalAddress, "health", cfg.WorkerHealthAddr)
	return serveWorkerHealth(ctx, rt)
}

// serveWorkerHealth answers /healthz and /readyz for a worker (which has no API of its own),
// so an orchestrator can probe it, until ctx ends.
func serveWorkerHealth(ctx context.Context, rt *runtime) error {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"up"}`))
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		for _, c := range readinessChecks(rt) {
			if err := c.Ping(r.Context()); err != nil {
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = fmt.Fprintf(w, `{"status":"not ready","%s":%q}`, c.Name, err.Error())
				return
			}
		}
		_, _ = w.Write([]byte(`{"status":"ready"}`))
	})
	srv := &http.Server{Addr: rt.cfg.WorkerHealthAddr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	select {
	case err := <-errc:
		return fmt.Errorf("worker health server: %w", err)
	case <-ctx.Done():
	}
	rt.log.Info("worker stopping")
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(shutdown)
}

// listenHTTP opens the main and dex listeners.
func listenHTTP(cfg config.Config) (net.Listener, net.Listener, error) {
	mainLn, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return nil, nil, err
	}
	dexLn, err := net.Listen("tcp", cfg.DexHTTPAddr)
	if err != nil {
		_ = mainLn.Close()
		return nil, nil, err
	}
	return mainLn, dexLn, nil
}

// serveHTTP runs the main and dex APIs until ctx ends, then drains in-flight requests.
// ready, when not nil, is called once both listeners accept connections.
func serveHTTP(ctx context.Context, rt *runtime, mainLn, dexLn net.Listener, ready func()) error {
	deps := httpDeps(rt)
	main := httpapi.New(deps)
	dex := httpapi.NewDex(deps)
	g, gctx := errgroup.WithContext(ctx)
	serve := func(app *fiber.App, ln net.Listener) func() error {
		return func() error { return app.Listener(ln) }
	}
	g.Go(serve(main, mainLn))
	g.Go(serve(dex, dexLn))
	rt.log.Info("http listening", "addr", mainLn.Addr().String(), "dexAddr", dexLn.Addr().String())
	if ready != nil {
		ready()
	}
	g.Go(func() error {
		<-gctx.Done()
		rt.log.Info("http draining")
		return errors.Join(
			main.ShutdownWithTimeout(rt.cfg.ShutdownTimeout),
			dex.ShutdownWithTimeout(rt.cfg.ShutdownTimeout),
		)
	})
	err := g.Wait()
	if ctx.Err() != nil {
		return nil
	}
	return err
}

func runHealthcheck(ctx context.Context, cfg config.Config, _ *slog.Logger, args []string) error {
	fs := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return err
	}
	url := localURL(cfg.HTTPAddr) + "/readyz"
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
