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
	lns, err := listenHTTP(cfg)
	if err != nil {
		return err
	}
	return serveHTTP(ctx, rt, lns, nil)
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
	defer startWorkflowProbe(ctx, rt)()
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

// listeners are the three HTTP addresses of `serve` and `dev`.
type listeners struct {
	main, dex net.Listener
	// admin serves /metrics, off the API addresses.
	admin net.Listener
}

// listenHTTP opens the main, dex and admin listeners.
func listenHTTP(cfg config.Config) (listeners, error) {
	var lns listeners
	var err error
	for _, l := range []struct {
		ln   *net.Listener
		addr string
	}{{&lns.main, cfg.HTTPAddr}, {&lns.dex, cfg.DexHTTPAddr}, {&lns.admin, cfg.AdminHTTPAddr}} {
		if *l.ln, err = net.Listen("tcp", l.addr); err != nil {
			lns.close()
			return listeners{}, err
		}
	}
	return lns, nil
}

// close closes the listeners opened so far.
func (l listeners) close() {
	for _, ln := range []net.Listener{l.main, l.dex, l.admin} {
		if ln != nil {
			_ = ln.Close()
		}
	}
}

// serveHTTP runs the main, dex and admin apps until ctx ends, then drains in-flight requests.
// ready, when not nil, is called once every listener accepts connections.
func serveHTTP(ctx context.Context, rt *runtime, lns listeners, ready func()) error {
	deps := httpDeps(rt)
	apps := []struct {
		app *fiber.App
		ln  net.Listener
	}{{httpapi.New(deps), lns.main}, {httpapi.NewDex(deps), lns.dex}, {httpapi.NewAdmin(deps), lns.admin}}
	g, gctx := errgroup.WithContext(ctx)
	for _, a := range apps {
		g.Go(func() error { return a.app.Listener(a.ln) })
	}
	rt.log.Info("http listening", "addr", lns.main.Addr().String(), "dexAddr", lns.dex.Addr().String(),
		"adminAddr", lns.admin.Addr().String())
	if ready != nil {
		ready()
	}
	g.Go(func() error {
		<-gctx.Done()
		rt.log.Info("http draining")
		var errs []error
		for _, a := range apps {
			errs = append(errs, a.app.ShutdownWithTimeout(rt.cfg.ShutdownTimeout))
		}
		return errors.Join(errs...)
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
