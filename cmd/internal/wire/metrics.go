package wire

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/domain/webhook"
	"github.com/tokenscope/tokenscope/ports"
)

// registerPoolMetrics puts the database pool's figures on reg (every process that has a
// Runtime: serve, worker, tokenscope-dev), read from the pool at each scrape.
func registerPoolMetrics(reg prometheus.Registerer, pool *pgxpool.Pool) {
	gauge := func(name, help string, v func(*pgxpool.Stat) float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 { return v(pool.Stat()) })
	}
	counter := func(name, help string, v func(*pgxpool.Stat) float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return v(pool.Stat()) })
	}
	reg.MustRegister(
		gauge("tokenscope_db_pool_max_conns", "Database pool size limit (DB_MAX_CONNS).",
			func(s *pgxpool.Stat) float64 { return float64(s.MaxConns()) }),
		gauge("tokenscope_db_pool_conns", "Database connections open (in use, idle or being opened).",
			func(s *pgxpool.Stat) float64 { return float64(s.TotalConns()) }),
		gauge("tokenscope_db_pool_acquired_conns", "Database connections in use.",
			func(s *pgxpool.Stat) float64 { return float64(s.AcquiredConns()) }),
		gauge("tokenscope_db_pool_idle_conns", "Database connections idle in the pool.",
			func(s *pgxpool.Stat) float64 { return float64(s.IdleConns()) }),
		counter("tokenscope_db_pool_acquires_total", "Connections taken from the pool.",
			func(s *pgxpool.Stat) float64 { return float64(s.AcquireCount()) }),
		counter("tokenscope_db_pool_empty_acquires_total", "Acquires that had to wait for a connection (the pool was empty).",
			func(s *pgxpool.Stat) float64 { return float64(s.EmptyAcquireCount()) }),
		counter("tokenscope_db_pool_acquire_wait_seconds_total", "Time spent waiting for a connection.",
			func(s *pgxpool.Stat) float64 { return s.AcquireDuration().Seconds() }),
	)
}

// ingestMetrics count what the chain followers of a worker commit, as their ingest use case's
// ports.CommitListener.
type ingestMetrics struct {
	batches, events, trades prometheus.Counter
	flushes                 prometheus.Counter
}

func newIngestMetrics(reg prometheus.Registerer) *ingestMetrics {
	m := &ingestMetrics{
		batches: prometheus.NewCounter(prometheus.CounterOpts{Name: "tokenscope_ingest_batches_total",
			Help: "Ingest batches committed by this process."}),
		events: prometheus.NewCounter(prometheus.CounterOpts{Name: "tokenscope_ingest_events_total",
			Help: "Distinct events committed by this process's ingest batches."}),
		trades: prometheus.NewCounter(prometheus.CounterOpts{Name: "tokenscope_ingest_trades_total",
			Help: "Trades committed by this process's ingest batches."}),
		flushes: prometheus.NewCounter(prometheus.CounterOpts{Name: "tokenscope_ingest_flushes_total",
			Help: "Derivations of the touched tokens' market data (flushes) by this process."}),
	}
	reg.MustRegister(m.batches, m.events, m.trades, m.flushes)
	return m
}

// Committed implements ports.CommitListener.
func (m *ingestMetrics) Committed(b chainevent.Batch) {
	m.batches.Inc()
	m.events.Add(float64(b.Len()))
	m.trades.Add(float64(len(b.Trades)))
}

// Derived implements ports.CommitListener.
func (m *ingestMetrics) Derived() { m.flushes.Inc() }

// webhookMetrics are the worker's webhook delivery figures: every attempt (first or retry) by
// result and its latency, the retries scheduled after failed first attempts, and the pump's
// queue read at each scrape.
type webhookMetrics struct {
	attempts *prometheus.CounterVec
	latency  prometheus.Histogram
	retried  prometheus.Counter
}

func newWebhookMetrics(reg prometheus.Registerer, store *postgres.WebhookStore) *webhookMetrics {
	m := &webhookMetrics{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tokenscope_webhook_deliveries_total",
			Help: "Webhook delivery attempts (first attempts and retries) by result: sent (2xx) or failed."}, []string{"result"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "tokenscope_webhook_delivery_duration_seconds",
			Help: "Webhook delivery attempt latency, until the receiver's answer or the failure.", Buckets: prometheus.DefBuckets}),
		retried: prometheus.NewCounter(prometheus.CounterOpts{Name: "tokenscope_webhook_retries_total",
			Help: "Webhook deliveries whose first attempt failed and that were handed to a retry workflow."}),
	}
	depth := func(name, help string, pick func(queued, undispatched int64) int64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			q, u, err := store.QueueDepth(ctx)
			if err != nil {
				return -1 // the database did not answer: no figure (the database's own metrics say why)
			}
			return float64(pick(q, u))
		})
	}
	reg.MustRegister(m.attempts, m.latency, m.retried,
		depth("tokenscope_webhook_queue_depth", "Webhook deliveries queued for the pump's first attempt (-1: the database did not answer).",
			func(q, _ int64) int64 { return q }),
		depth("tokenscope_webhook_outbox_pending", "Outbox events not yet fanned out to their endpoints' queues (-1: the database did not answer).",
			func(_, u int64) int64 { return u }),
	)
	m.attempts.WithLabelValues("sent")
	m.attempts.WithLabelValues("failed")
	return m
}

// sender counts and times every attempt s makes.
func (m *webhookMetrics) sender(s ports.WebhookSender) ports.WebhookSender {
	return meteredSender{s, m}
}

// retries counts the retry workflows r starts.
func (m *webhookMetrics) retries(r ports.RetryStarter) ports.RetryStarter {
	return meteredRetries{r, m}
}

type meteredSender struct {
	ports.WebhookSender
	m *webhookMetrics
}

func (s meteredSender) Send(ctx context.Context, url string, headers map[string]string, body []byte) (ports.SendResult, error) {
	start := time.Now()
	res, err := s.WebhookSender.Send(ctx, url, headers, body)
	if ctx.Err() != nil {
		return res, err // cut short by a stopping worker: neither sent nor failed
	}
	s.m.latency.Observe(time.Since(start).Seconds())
	result := "failed"
	if webhook.Outcome(res.StatusCode, err).Success {
		result = "sent"
	}
	s.m.attempts.WithLabelValues(result).Inc()
	return res, err
}

type meteredRetries struct {
	ports.RetryStarter
	m *webhookMetrics
}

func (r meteredRetries) StartRetry(ctx context.Context, endpointID string, ev webhook.Event, attempt int, delay time.Duration) error {
	err := r.RetryStarter.StartRetry(ctx, endpointID, ev, attempt, delay)
	if err == nil {
		r.m.retried.Inc()
	}
	return err
}

// registerReplicaMetrics puts the read router's figures on reg: each standby's lag and state,
// the reads each database served and the reads a standby was passed over for.
func registerReplicaMetrics(reg prometheus.Registerer, r *postgres.ReadRouter) {
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "tokenscope_db_reads_total",
		Help: "Market reads by the database that served them (primary or a standby).", ConstLabels: prometheus.Labels{"database": "primary"}},
		func() float64 { return float64(r.PrimaryReads()) }))
	for _, rep := range r.Replicas() {
		l := prometheus.Labels{"replica": rep.Name}
		reg.MustRegister(
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "tokenscope_db_reads_total",
				Help: "Market reads by the database that served them (primary or a standby).", ConstLabels: prometheus.Labels{"database": rep.Name}},
				func() float64 { return float64(rep.State().Reads) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "tokenscope_db_replica_lag_seconds", ConstLabels: l,
				Help: "How long ago the primary first held a position the standby has not replayed (at the last poll)."},
				func() float64 { return rep.State().Lag.Seconds() }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "tokenscope_db_replica_up", ConstLabels: l,
				Help: "1 while the standby serves reads (answering, a standby, within REPLICA_MAX_LAG)."},
				func() float64 {
					if rep.State().Usable {
						return 1
					}
					return 0
				}),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "tokenscope_db_replica_skips_total",
				ConstLabels: prometheus.Labels{"replica": rep.Name, "reason": "behind"},
				Help:        "Reads the standby was passed over for: behind (not yet replayed a change this process knows of) or unusable (lagging, down, promoted)."},
				func() float64 { return float64(rep.State().SkippedBehind) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "tokenscope_db_replica_skips_total",
				ConstLabels: prometheus.Labels{"replica": rep.Name, "reason": "unusable"},
				Help:        "Reads the standby was passed over for: behind (not yet replayed a change this process knows of) or unusable (lagging, down, promoted)."},
				func() float64 { return float64(rep.State().SkippedUnusable) }),
		)
	}
}
