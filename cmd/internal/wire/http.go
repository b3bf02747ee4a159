package wire

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/gofiber/fiber/v2"
	"golang.org/x/sync/errgroup"

	"github.com/tokenscope/tokenscope/adapters/httpapi"
	"github.com/tokenscope/tokenscope/adapters/realtime"
	"github.com/tokenscope/tokenscope/app/config"
)

// Listeners are the three HTTP addresses of `serve` and tokenscope-dev.
type Listeners struct {
	Main, Dex net.Listener
	// Admin serves /metrics, off the API addresses.
	Admin net.Listener
}

// ListenHTTP opens the main, dex and admin listeners.
func ListenHTTP(cfg config.Config) (Listeners, error) {
	var lns Listeners
	var err error
	for _, l := range []struct {
		ln   *net.Listener
		addr string
	}{{&lns.Main, cfg.HTTPAddr}, {&lns.Dex, cfg.DexHTTPAddr}, {&lns.Admin, cfg.AdminHTTPAddr}} {
		if *l.ln, err = net.Listen("tcp", l.addr); err != nil {
			lns.Close()
			return Listeners{}, err
		}
	}
	return lns, nil
}

// Close closes the listeners opened so far.
func (l Listeners) Close() {
	for _, ln := range []net.Listener{l.Main, l.Dex, l.Admin} {
		if ln != nil {
			_ = ln.Close()
		}
	}
}

// ServeHTTP runs the main, dex and admin apps until ctx ends, then drains in-flight requests.
// ready, when not nil, is called once every listener accepts connections. The market's read
// cache follows the writers (Runtime.Versions) for as long.
func ServeHTTP(ctx context.Context, rt *Runtime, lns Listeners, ready func()) error {
	deps, closeDeps, err := httpDeps(rt)
	if err != nil {
		return err
	}
	defer closeDeps()
	// The stream endpoint shares the main and dex listeners (adapters/realtime.Split).
	streams, err := NewStreams(rt.Cfg, rt.Log, rt.App.Keys, rt.App.Market, rt.App.Candles, rt.App.Ingest, rt.Clock, rt.Registry, deps.RateLimit)
	if err != nil {
		return err
	}
	// Every address reads its requests through StrictFraming, the stream's path included.
	mainLn, mainWS := realtime.Split(httpapi.StrictFraming(lns.Main))
	dexLn, dexWS := realtime.Split(httpapi.StrictFraming(lns.Dex))
	apps := []struct {
		app *fiber.App
		ln  net.Listener
	}{{httpapi.New(deps), mainLn}, {httpapi.NewDex(deps), dexLn}, {httpapi.NewAdmin(deps), httpapi.StrictFraming(lns.Admin)}}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { rt.Versions.Run(gctx); return nil })
	if rt.Router != nil {
		defer rt.Router.Close() // after every app has drained
		g.Go(func() error { rt.Router.Run(gctx); return nil })
	}
	g.Go(func() error { return streams.Run(gctx) })
	for _, ln := range []net.Listener{mainWS, dexWS} {
		g.Go(func() error { return streams.Server.Serve(gctx, ln) })
	}
	for _, a := range apps {
		g.Go(func() error { return a.app.Listener(a.ln) })
	}
	rt.Log.Info("http listening", "addr", lns.Main.Addr().String(), "dexAddr", lns.Dex.Addr().String(),
		"adminAddr", lns.Admin.Addr().String())
	if ready != nil {
		ready()
	}
	g.Go(func() error {
		<-gctx.Done()
		rt.Log.Info("http draining")
		var errs []error
		for _, a := range apps {
			errs = append(errs, a.app.ShutdownWithTimeout(rt.Cfg.ShutdownTimeout))
		}
		return errors.Join(errs...)
	})
	err = g.Wait()
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// LocalURL is the http URL a client on this machine reaches a listen address at.
func LocalURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// ServeAdmin runs the admin app alone on ln (a worker's ADMIN_HTTP_ADDR: /metrics, /healthz,
// /readyz, and the profiles with ADMIN_PPROF), as ServeHTTP runs it beside the API, until ctx
// ends.
func ServeAdmin(ctx context.Context, rt *Runtime, ln net.Listener) error {
	app := httpapi.NewAdmin(httpapi.Deps{Checks: ReadinessChecks(rt), Log: rt.Log, Registry: rt.Registry,
		ReadTimeout: rt.Cfg.HTTPReadTimeout, Pprof: rt.Cfg.AdminPprof})
	errc := make(chan error, 1)
	go func() { errc <- app.Listener(httpapi.StrictFraming(ln)) }()
	select {
	case err := <-errc:
		return fmt.Errorf("admin server: %w", err)
	case <-ctx.Done():
	}
	return app.ShutdownWithTimeout(rt.Cfg.ShutdownTimeout)
}
