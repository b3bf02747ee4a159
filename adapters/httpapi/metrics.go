package httpapi

import (
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the HTTP request counters and latency histograms exposed at /metrics.
type Metrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	// limited counts requests refused 429 by the per-key rate limit; limiterErrors the requests
	// let through because the limiter could not decide (ratelimit.go).
	limited, limiterErrors prometheus.Counter

	// series caches the children of both vectors by label values: WithLabelValues hashes and
	// checks every label on each call, and formatting the status allocated. The label values
	// are routes, methods and statuses, so the cache stays as small as the metrics themselves.
	mu     sync.RWMutex
	series map[seriesKey]series
}

type seriesKey struct {
	method, route string
	status        int
}

type series struct {
	requests prometheus.Counter
	latency  prometheus.Observer
}

// NewMetrics registers the HTTP metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tokenscope_http_requests_total", Help: "HTTP requests by method, route and status.",
		}, []string{"method", "route", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "tokenscope_http_request_duration_seconds", Help: "HTTP request latency by method and route.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"method", "route"}),
	}
	m.limited = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "tokenscope_ratelimit_rejected_total", Help: "Requests refused 429 by the per-key rate limit.",
	})
	m.limiterErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "tokenscope_ratelimit_errors_total", Help: "Requests let through unlimited because the rate limiter failed (Redis unreachable).",
	})
	m.series = map[seriesKey]series{}
	reg.MustRegister(m.requests, m.latency, m.limited, m.limiterErrors)
	return m
}

func (m *Metrics) rateLimited() {
	if m != nil {
		m.limited.Inc()
	}
}

func (m *Metrics) limiterFailed() {
	if m != nil {
		m.limiterErrors.Inc()
	}
}

func (m *Metrics) observe(method, route string, status int, d time.Duration) {
	k := seriesKey{method: method, route: route, status: status}
	m.mu.RLock()
	s, ok := m.series[k]
	m.mu.RUnlock()
	if !ok {
		s = m.add(k)
	}
	s.requests.Inc()
	s.latency.Observe(d.Seconds())
}

// count records a request without a latency: one refused before routing, whose start fasthttp
// does not report. Its route's request count can therefore exceed its histogram count.
func (m *Metrics) count(method, route string, status int) {
	m.requests.WithLabelValues(method, route, strconv.Itoa(status)).Inc()
}

func (m *Metrics) add(k seriesKey) series {
	// The strings may alias a request's buffers; the cache keeps copies.
	k.method, k.route = strings.Clone(k.method), strings.Clone(k.route)
	s := series{
		requests: m.requests.WithLabelValues(k.method, k.route, strconv.Itoa(k.status)),
		latency:  m.latency.WithLabelValues(k.method, k.route),
	}
	m.mu.Lock()
	m.series[k] = s
	m.mu.Unlock()
	return s
}
