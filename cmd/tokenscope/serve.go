package main

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"net"

	"github.com/gofiber/fiber/v2"
	"golang.org/x/sync/errgroup"

	"github.com/tokenscope/tokenscope/adapters/httpapi"
	"github.com/tokenscope/tokenscope/app/config"
)

func init() {
	register(command{name: "serve", summary: "run the HTTP API (main address and the dex address)", run: runServe})
	register(command{name: "worker", summary: "run a Temporal worker (scale out by running more)", run: runWorker})
}

func runServe(ctx context.Context, cfg config.Config, log *slog.Logger, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return err
	}
	pool, err := openDatabase(ctx, cfg, log, false)
	if err != nil {
		return err
	}
	defer pool.Close()
	tc, err := dialTemporal(cfg, log, "")
	if err != nil {
		return err
	}
	defer tc.Close()
	rt := newRuntime(cfg, log, pool, tc)
	mainLn, dexLn, err := listenHTTP(cfg)
	if err != nil {
		return err
	}
	return serveHTTP(ctx, rt, mainLn, dexLn, nil)
}

func runWorker(ctx context.Context, cfg config.Config, log *slog.Logger, args []string) error {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return err
	}
	pool, err := openDatabase(ctx, cfg, log, false)
	if err != nil {
		return err
	}
	defer pool.Close()
	tc, err := dialTemporal(cfg, log, "")
	if err != nil {
		return err
	}
	defer tc.Close()
	rt := newRuntime(cfg, log, pool, tc)
	w := newWorker(rt)
	if err := w.Start(); err != nil {
		return err
	}
	defer w.Stop()
	if err := startLoops(ctx, rt); err != nil {
		log.Warn("start loops", "err", err)
	}
	log.Info("worker started", "temporal", cfg.TemporalAddress)
	<-ctx.Done()
	log.Info("worker stopping")
	return nil
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
