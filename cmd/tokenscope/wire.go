package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"

	"github.com/tokenscope/tokenscope/adapters/httpapi"
	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/adapters/temporal"
	"github.com/tokenscope/tokenscope/app"
	"github.com/tokenscope/tokenscope/app/apikey"
	"github.com/tokenscope/tokenscope/app/config"
	appingest "github.com/tokenscope/tokenscope/app/ingest"
	"github.com/tokenscope/tokenscope/app/market"
	"github.com/tokenscope/tokenscope/workflows"
)

// systemClock is the real ports.Clock.
type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// runtime is everything a running process holds; the commands build the parts they need.
type runtime struct {
	cfg      config.Config
	log      *slog.Logger
	pool     *pgxpool.Pool
	temporal client.Client // nil for commands that do not talk to Temporal
	registry *prometheus.Registry
	// workflowMetrics counts workflow starts and outcomes on registry.
	workflowMetrics *temporal.Metrics
	clock           systemClock
	app             *app.Application
	// workflowProbe, set by startWorkflowProbe in the processes that run a worker, gates
	// readiness on a no-op workflow round trip.
	workflowProbe *temporal.WorkflowProbe
}

// openDatabase creates the database if missing, connects and (optionally) migrates.
func openDatabase(ctx context.Context, cfg config.Config, log *slog.Logger, migrate bool) (*pgxpool.Pool, error) {
	if migrate {
		if err := postgres.EnsureDatabase(ctx, cfg.DatabaseURL); err != nil {
			return nil, err
		}
	}
	pool, err := postgres.Open(ctx, cfg.DatabaseURL, cfg.DBMaxConns)
	if err != nil {
		return nil, err
	}
	if migrate {
		applied, err := postgres.Migrate(ctx, pool)
		if err != nil {
			pool.Close()
			return nil, err
		}
		if len(applied) > 0 {
			log.Info("migrations applied", "names", applied)
		}
	}
	return pool, nil
}

// newRuntime wires the application over an open pool and an optional Temporal client.
func newRuntime(cfg config.Config, log *slog.Logger, pool *pgxpool.Pool, tc client.Client) *runtime {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	rt := &runtime{cfg: cfg, log: log, pool: pool, registry: reg, workflowMetrics: temporal.NewMetrics(reg)}
	if tc != nil {
		instrumented, err := rt.workflowMetrics.Instrument(tc, cfg.TemporalNS, log)
		if err != nil {
			// Only an invalid option fails here; run uninstrumented rather than not at all.
			log.Warn("workflow start metrics unavailable", "err", err)
			instrumented = tc
		}
		rt.temporal = instrumented
	}
	rt.app = buildApplication(rt)
	return rt
}

// buildApplication constructs every use case over real adapters. Each area adds its line.
func buildApplication(rt *runtime) *app.Application {
	a := &app.Application{
		Keys:   apikey.New(postgres.NewAccountStore(rt.pool), rt.clock),
		Ingest: appingest.New(postgres.NewIngestStore(rt.pool), rt.clock, 0),
		Market: market.New(postgres.NewMarketReader(rt.pool), market.WithHotCache(rt.clock, rt.cfg.RankingCacheTTL)),
	}
	buildWorkflowAreas(rt, a)
	return a
}

// registerWorkflows registers every workflow and activity on the worker. Each area adds its line.
func registerWorkflows(w worker.Registry, rt *runtime) {
	registerMarketRefresh(w, rt)
	registerWorkflowAreas(w, rt)
}

// startLoops starts the durable singleton workflows (market refresh, webhook dispatch) if they
// are not running yet. Each area adds its line.
func startLoops(ctx context.Context, rt *runtime) error {
	if err := startMarketRefresh(ctx, rt); err != nil {
		return err
	}
	return startWebhookDispatch(ctx, rt)
}

// readinessChecks are the dependencies /readyz probes.
func readinessChecks(rt *runtime) []httpapi.Check {
	checks := []httpapi.Check{{Name: "postgres", Ping: postgres.Pinger{Pool: rt.pool}.Ping}}
	if rt.temporal != nil {
		checks = append(checks, httpapi.Check{Name: "temporal", Ping: temporal.Pinger{Client: rt.temporal}.Ping})
	}
	if rt.workflowProbe != nil {
		checks = append(checks, httpapi.Check{Name: "workflows", Ping: rt.workflowProbe.Ping})
	}
	return checks
}

// startWorkflowProbe makes readiness wait for a no-op workflow round trip on the task queue
// (run in the background until one succeeds). Call it before the health endpoints are built,
// in a process whose worker has started (dev, worker): an API-only process (serve) has no
// worker of its own and keeps the frontend check alone. stop ends the probe if it is still
// trying and waits for it.
func startWorkflowProbe(ctx context.Context, rt *runtime) (stop func()) {
	p := temporal.NewWorkflowProbe(rt.temporal)
	rt.workflowProbe = p
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		start := time.Now()
		if err := p.Run(ctx); err != nil {
			return // ctx ended: the process is stopping
		}
		rt.log.Info("first workflow round trip", "took", time.Since(start).String(), "workflowId", p.ID)
	}()
	return func() { cancel(); <-done }
}

// httpDeps builds what the HTTP adapter needs; call it once per runtime (it registers metrics).
func httpDeps(rt *runtime) httpapi.Deps {
	return httpapi.Deps{
		App: rt.app, Auth: rt.app.Keys, Checks: readinessChecks(rt), Log: rt.log,
		Registry: rt.registry, Metrics: httpapi.NewMetrics(rt.registry), RequestTimeout: rt.cfg.RequestTimeout,
		ReadTimeout: rt.cfg.HTTPReadTimeout,
	}
}

// newWorker builds a worker on the one task queue with every workflow registered.
func newWorker(rt *runtime) worker.Worker {
	w := worker.New(rt.temporal, workflows.TaskQueue, worker.Options{
		Interceptors: []interceptor.WorkerInterceptor{rt.workflowMetrics.WorkerInterceptor()},
	})
	registerWorkflows(w, rt)
	return w
}

// dialTemporal connects to cfg.TemporalAddress (or addr when it is set).
func dialTemporal(cfg config.Config, log *slog.Logger, addr string) (client.Client, error) {
	if addr == "" {
		addr = cfg.TemporalAddress
	}
	if addr == "" {
		return nil, fmt.Errorf("TEMPORAL_ADDRESS is not set (only `tokenscope dev` embeds a Temporal server)")
	}
	return temporal.Dial(addr, cfg.TemporalNS, log)
}
