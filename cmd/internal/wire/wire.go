// Package wire is the composition root both binaries share: the only package that builds
// concrete adapters and hands them to the use cases, registers the workflows on a worker and
// serves the HTTP apps. cmd/tokenscope (the production binary) and cmd/tokenscope-dev (the
// development stack, which adds the embedded Temporal server and UI) are thin commands over it.
// It may import every layer and adapter except adapters/temporal/devserver, so the production
// binary carries no Temporal server code (cmd/tokenscope/deps_test.go checks it).
package wire

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"

	"github.com/tokenscope/tokenscope/adapters/evm"
	"github.com/tokenscope/tokenscope/adapters/httpapi"
	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/adapters/temporal"
	"github.com/tokenscope/tokenscope/app"
	"github.com/tokenscope/tokenscope/app/apikey"
	"github.com/tokenscope/tokenscope/app/candle"
	"github.com/tokenscope/tokenscope/app/config"
	"github.com/tokenscope/tokenscope/app/ingest"
	"github.com/tokenscope/tokenscope/app/market"
	"github.com/tokenscope/tokenscope/domain/ratelimit"
	"github.com/tokenscope/tokenscope/workflows"
)

// SystemClock is the real ports.Clock.
type SystemClock struct{}

func (SystemClock) Now() time.Time { return time.Now() }

// Runtime is everything a running process holds; the commands build the parts they need.
type Runtime struct {
	Cfg      config.Config
	Log      *slog.Logger
	Pool     *pgxpool.Pool
	Temporal client.Client // nil for commands that do not talk to Temporal
	Registry *prometheus.Registry
	// WorkflowMetrics counts workflow starts and outcomes on Registry.
	WorkflowMetrics *temporal.Metrics
	Clock           SystemClock
	App             *app.Application
	// Versions follows the market's writers for the read cache while ServeHTTP runs.
	Versions *postgres.MarketVersions
	// Router, when DATABASE_REPLICA_URLS names standbys, serves the market reads from them while
	// ServeHTTP runs (README, "Read replicas and failover"); nil: every read on Pool.
	Router *postgres.ReadRouter
	// WorkflowProbe, set by StartWorkflowProbe in the processes that run a worker, gates
	// readiness on a no-op workflow round trip.
	WorkflowProbe *temporal.WorkflowProbe
	// firstRefresh, set by StartFirstRefresh in the processes that run a worker, gates
	// readiness on one completed market refresh round.
	firstRefresh *firstRefresh
	// chainMetrics and ingestMetrics are the chain followers' metrics on Registry, webhookMetrics
	// the deliveries' (registered by the first worker).
	chainMetrics   *evm.Metrics
	ingestMetrics  *ingestMetrics
	webhookMetrics *webhookMetrics
}

// OpenDatabase creates the database if missing, connects and (optionally) migrates.
func OpenDatabase(ctx context.Context, cfg config.Config, log *slog.Logger, migrate bool) (*pgxpool.Pool, error) {
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

// NewRuntime wires the application over an open pool and an optional Temporal client.
func NewRuntime(cfg config.Config, log *slog.Logger, pool *pgxpool.Pool, tc client.Client) *Runtime {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	registerPoolMetrics(reg, pool)
	rt := &Runtime{Cfg: cfg, Log: log, Pool: pool, Registry: reg, WorkflowMetrics: temporal.NewMetrics(reg),
		Versions: postgres.NewMarketVersions(pool, log)}
	if len(cfg.DatabaseReplicaURLs) > 0 {
		router, err := postgres.NewReadRouter(pool, cfg.DatabaseReplicaURLs, cfg.DBMaxConns, cfg.ReplicaMaxLag, log)
		if err != nil {
			// config.Load has checked each URL's form: only an unusable option gets here.
			log.Error("read replicas unavailable: every read on the primary", "err", err)
		} else {
			rt.Router = router
			rt.Versions.RouteReads(router)
			registerReplicaMetrics(reg, router)
		}
	}
	if tc != nil {
		instrumented, err := rt.WorkflowMetrics.Instrument(tc, cfg.TemporalNS, log)
		if err != nil {
			// Only an invalid option fails here; run uninstrumented rather than not at all.
			log.Warn("workflow start metrics unavailable", "err", err)
			instrumented = tc
		}
		rt.Temporal = instrumented
	}
	rt.App = buildApplication(rt)
	return rt
}

// buildApplication constructs every use case over real adapters. Each area adds its line.
func buildApplication(rt *Runtime) *app.Application {
	ing := ingest.New(postgres.NewIngestStore(rt.Pool), rt.Clock, 0).WithBackgroundErrors(func(err error) {
		rt.Log.Warn("a background flush failed; its trades stay listed for the next flush", "err", err)
	})
	rt.Registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "tokenscope_ingest_background_flush_failures_total",
		Help: "Background flushes (of POST /v2/ingest?wait=commit streams) that failed; their trades stay listed for the next flush."},
		func() float64 { return float64(ing.BackgroundFlushFailures()) }))
	a := &app.Application{
		Keys:    apikey.New(postgres.NewAccountStore(rt.Pool), rt.Clock),
		Ingest:  ing,
		Market:  market.New(postgres.NewMarketReader(rt.reads()), market.WithCache(rt.Versions), market.WithClock(rt.Clock)),
		Candles: candle.New(postgres.NewCandleStore(rt.reads()), rt.Clock),
	}
	buildWorkflowAreas(rt, a)
	return a
}

// reads is where the market reads go: the router over the standbys, or the primary's pool.
func (rt *Runtime) reads() postgres.ReadDB {
	if rt.Router != nil {
		return rt.Router
	}
	return rt.Pool
}

// RegisterWorkflows registers every workflow and activity on the worker. Each area adds its line.
func RegisterWorkflows(w worker.Registry, rt *Runtime) {
	registerMarketRefresh(w, rt)
	registerWorkflowAreas(w, rt)
	registerChainFollow(w, rt)
}

// StartLoops starts the durable singleton workflows (market refresh, webhook dispatch) if they
// are not running yet. Each area adds its line.
func StartLoops(ctx context.Context, rt *Runtime) error {
	if err := StartMarketRefresh(ctx, rt); err != nil {
		return err
	}
	if err := StartChainFollowers(ctx, rt); err != nil {
		return err
	}
	return StartWebhookDispatch(ctx, rt)
}

// ReadinessChecks are the dependencies /readyz probes.
func ReadinessChecks(rt *Runtime) []httpapi.Check {
	checks := []httpapi.Check{{Name: "postgres", Ping: postgres.Pinger{Pool: rt.Pool}.Ping}}
	if rt.Router != nil {
		// Named in the details, never failing readiness: the primary serves what a standby cannot.
		for _, rep := range rt.Router.Replicas() {
			checks = append(checks, httpapi.Check{Name: "postgres replica " + rep.Name, Ping: rep.Ping, Optional: true})
		}
	}
	if rt.Temporal != nil {
		checks = append(checks, httpapi.Check{Name: "temporal", Ping: temporal.Pinger{Client: rt.Temporal}.Ping})
	}
	if rt.WorkflowProbe != nil {
		checks = append(checks, httpapi.Check{Name: "workflows", Ping: rt.WorkflowProbe.Ping},
			httpapi.Check{Name: "webhooks", Ping: (&pumpSeen{store: postgres.NewWebhookStore(rt.Pool)}).Ping})
	}
	if rt.firstRefresh != nil {
		checks = append(checks, httpapi.Check{Name: "rankings", Ping: rt.firstRefresh.Ping})
	}
	// Only processes that run followers (a worker) go unready when one stops: an API must not.
	if rt.WorkflowProbe != nil && len(rt.Cfg.Followers) > 0 {
		checks = append(checks, httpapi.Check{Name: "chains", Ping: haltedChains{store: postgres.NewChainStore(rt.Pool)}.Ping})
	}
	return checks
}

// pumpSeen is the readiness gate of the webhook delivery pump in the processes that run a
// worker: down until a pump (here or in another worker) has been seen holding its lock, then up
// for good, as the workflow round trip is. After a crash the pump's lost activity is retried
// only after its heartbeat timeout (docs/workflows.md), later than the rest is ready; without
// this gate /readyz said ready while no webhook was sent for up to 30 s.
type pumpSeen struct {
	store *postgres.WebhookStore
	seen  atomic.Bool
}

func (p *pumpSeen) Ping(ctx context.Context) error {
	if p.seen.Load() {
		return nil
	}
	running, err := p.store.PumpRunning(ctx)
	if err != nil {
		return err
	}
	if !running {
		return errors.New("the webhook delivery pump is not running yet")
	}
	p.seen.Store(true)
	return nil
}

// StartWorkflowProbe makes readiness wait for a no-op workflow round trip on the task queue
// (run in the background until one succeeds). Call it before the health endpoints are built,
// in a process whose worker has started (tokenscope-dev, worker): an API-only process (serve)
// has no worker of its own and keeps the frontend check alone. stop ends the probe if it is
// still trying and waits for it.
func StartWorkflowProbe(ctx context.Context, rt *Runtime) (stop func()) {
	p := temporal.NewWorkflowProbe(rt.Temporal)
	rt.WorkflowProbe = p
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		start := time.Now()
		if err := p.Run(ctx); err != nil {
			return // ctx ended: the process is stopping
		}
		rt.Log.Info("first workflow round trip", "took", time.Since(start).String(), "workflowId", p.ID)
	}()
	return func() { cancel(); <-done }
}

// httpDeps builds what the HTTP adapter needs; call it once per runtime (it registers metrics).
// release closes the rate limiter's Redis client.
func httpDeps(rt *Runtime) (d httpapi.Deps, release func(), err error) {
	rl, limiterChecks, release, err := rateLimit(rt.Cfg, rt.Log)
	if err != nil {
		return httpapi.Deps{}, release, err
	}
	var failedAuth ratelimit.Limit
	if n := rt.Cfg.RateLimitFailedAuthPerMinute; n > 0 {
		if failedAuth, err = ratelimit.New("RATE_LIMIT_FAILED_AUTH_PER_MINUTE", n, n); err != nil {
			return httpapi.Deps{}, release, err
		}
	}
	return httpapi.Deps{
		App: rt.App, Auth: rt.App.Keys, Checks: append(ReadinessChecks(rt), limiterChecks...), Log: rt.Log,
		Registry: rt.Registry, Metrics: httpapi.NewMetrics(rt.Registry), RequestTimeout: rt.Cfg.RequestTimeout,
		ReadTimeout: rt.Cfg.HTTPReadTimeout, IngestIdleTimeout: rt.Cfg.IngestIdleTimeout, RateLimit: rl, FailedAuthLimit: failedAuth,
		Pprof: rt.Cfg.AdminPprof, Classify: postgres.AsUnavailable,
	}, release, nil
}

// NewWorker builds a worker on the one task queue with every workflow registered.
func NewWorker(rt *Runtime) worker.Worker {
	w := worker.New(rt.Temporal, workflows.TaskQueue, worker.Options{
		Interceptors: []interceptor.WorkerInterceptor{rt.WorkflowMetrics.WorkerInterceptor()},
		// Stop waits this long for running activities: the webhook pump ends at once when the
		// worker stops but finishes and records its requests in flight (each bounded by the
		// sender's timeout), which would otherwise be sent again after the restart.
		WorkerStopTimeout: rt.Cfg.WebhookTimeout + 5*time.Second,
	})
	RegisterWorkflows(w, rt)
	return w
}

// DialTemporal connects to cfg.TemporalAddress (or addr when it is set).
func DialTemporal(cfg config.Config, log *slog.Logger, addr string) (client.Client, error) {
	if addr == "" {
		addr = cfg.TemporalAddress
	}
	if addr == "" {
		return nil, fmt.Errorf("TEMPORAL_ADDRESS is not set (only tokenscope-dev, what `make run` runs, embeds a Temporal server)")
	}
	return temporal.Dial(addr, cfg.TemporalNS, log)
}
