// Package httpapi is the Fiber v2 driving adapter: it parses requests into domain values, calls
// the use cases in app.Application and renders DTOs. Handlers never choose status codes; the
// error handler in errors.go maps fault kinds. routes.go lists every route.
package httpapi

import (
	"log/slog"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/pprof"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tokenscope/tokenscope/app"
	"github.com/tokenscope/tokenscope/domain/ratelimit"
)

// BodyLimit is the largest request body accepted (except the streamed ingest route).
const BodyLimit = 1 << 20

// Deps is what the HTTP adapter needs from the composition root.
type Deps struct {
	App            *app.Application
	Auth           Authenticator
	Checks         []Check
	Log            *slog.Logger
	Registry       *prometheus.Registry
	Metrics        *Metrics
	RequestTimeout time.Duration
	// ReadTimeout bounds the time a client takes to send a request, headers and body (of the
	// streamed ingest route only what arrives before its handler runs, then IngestIdleTimeout
	// applies); 0 means DefaultReadTimeout.
	ReadTimeout time.Duration
	// IngestIdleTimeout replaces ReadTimeout and RequestTimeout on the streamed ingest route: its
	// body may take as long as it keeps coming, but not send a byte for longer than this; 0 means
	// DefaultIngestIdleTimeout.
	IngestIdleTimeout time.Duration
	// RateLimit limits each key's authenticated requests on the main and dex APIs.
	RateLimit RateLimit
	// FailedAuthLimit limits each client address's requests refused 401 (a missing, unknown,
	// revoked or expired key), spent from RateLimit.Limiter; zero: not limited.
	FailedAuthLimit ratelimit.Limit
	// Pprof serves Go's runtime profiles (net/http/pprof's /debug/pprof/) on the admin address
	// only: a CPU profile of the service under load is what shows where a request's time goes.
	Pprof bool
	// Classify, when set, turns an error no use case mapped into a domain fault where it
	// recognises one (the database being unavailable during a failover: 503, not 500).
	Classify func(error) error
}

func (d Deps) readTimeout() time.Duration {
	if d.ReadTimeout > 0 {
		return d.ReadTimeout
	}
	return DefaultReadTimeout
}

func (d Deps) ingestIdleTimeout() time.Duration {
	if d.IngestIdleTimeout > 0 {
		return d.IngestIdleTimeout
	}
	return DefaultIngestIdleTimeout
}

// handlers carries the dependencies every handler method uses.
type handlers struct {
	app *app.Application
	log *slog.Logger
	// ingestIdle bounds a pause in a streamed ingest body (Deps.IngestIdleTimeout).
	ingestIdle time.Duration
}

func newFiber(d Deps, name string) *fiber.App {
	render := errorHandler(d.Log, d.Classify)
	f := fiber.New(fiber.Config{
		AppName:      name,
		ErrorHandler: render,
		// The real 1 MiB limit is withBodyLimit; this ceiling only bounds the streamed ingest route.
		BodyLimit:             512 << 20,
		DisableStartupMessage: true,
		ReadBufferSize:        HeaderLimit,
		ReadTimeout:           d.readTimeout(),
		IdleTimeout:           120 * time.Second,
		// Streaming request bodies lets the ingest route read NDJSON without buffering it whole.
		StreamRequestBody: true,
		JSONEncoder:       encodeJSON,
	})
	guardTransport(f, d, render)
	f.Use(withRequestID, withAccessLog(d.Log, d.Metrics), withRecover(d.Log), withBodyLimit(BodyLimit))
	f.Get("/healthz", healthz)
	f.Get("/readyz", readyz(d.Checks))
	f.Get("/favicon.ico", favicon)
	return f
}

// New builds the main API (every operation).
func New(d Deps) *fiber.App {
	f := newFiber(d, "tokenscope")
	// The API's description, unauthenticated (openapi.go, docs.go).
	f.Get("/openapi.json", openAPI)
	f.Get("/docs", docsPage)
	f.Get(docsAssetPath, docsAsset)
	h := &handlers{app: d.App, log: d.Log, ingestIdle: d.ingestIdleTimeout()}
	pageRoutes(f)
	api := f.Group("", withTimeout(d.RequestTimeout), withAuth(d.Auth, newFailureGate(d)), withRateLimit(d.RateLimit, d.Metrics, d.Log), withText)
	routes(api, h)
	f.Use(notFound)
	return f
}

// NewDex builds the {dex_base_url} API: the multi-token detail operation on its own address.
func NewDex(d Deps) *fiber.App {
	f := newFiber(d, "tokenscope-dex")
	h := &handlers{app: d.App, log: d.Log}
	api := f.Group("", withTimeout(d.RequestTimeout), withAuth(d.Auth, newFailureGate(d)), withRateLimit(d.RateLimit, d.Metrics, d.Log), withText)
	dexRoutes(api, h)
	f.Use(notFound)
	return f
}

// NewAdmin builds the operators' address: /metrics (Prometheus text), /healthz and /readyz. It
// has no authentication, so it belongs on a loopback or otherwise private address; the API
// addresses do not serve /metrics.
func NewAdmin(d Deps) *fiber.App {
	f := newFiber(d, "tokenscope-admin")
	if d.Registry != nil {
		f.Get("/metrics", metricsHandler(d.Registry))
	}
	if d.Pprof {
		f.Use(pprof.New())
	}
	f.Use(notFound)
	return f
}

func notFound(c *fiber.Ctx) error {
	return fiber.ErrNotFound
}
