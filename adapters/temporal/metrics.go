package temporal

import (
	"context"
	"errors"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/workflow"
)

// Metrics counts workflow starts (client side) and workflow outcomes (worker side) for /metrics.
type Metrics struct {
	starts   *prometheus.CounterVec
	outcomes *prometheus.CounterVec
}

// NewMetrics registers the workflow metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		starts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tokenscope_workflow_starts_total",
			Help: "Workflow starts (and signal-with-starts) by workflow type and result (ok or error).",
		}, []string{"type", "result"}),
		outcomes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tokenscope_workflow_outcomes_total",
			Help: "Workflow runs finished on this worker by type and outcome (completed, failed, continued_as_new, canceled).",
		}, []string{"type", "outcome"}),
	}
	reg.MustRegister(m.starts, m.outcomes)
	return m
}

// Instrument returns c, a client of namespace, with the start counter attached (it shares c's
// connection).
func (m *Metrics) Instrument(c client.Client, namespace string, log *slog.Logger) (client.Client, error) {
	return client.NewClientFromExisting(c, client.Options{
		Namespace:    namespace,
		Logger:       tlog.NewStructuredLogger(log.With("component", "temporal-client")),
		Interceptors: []interceptor.ClientInterceptor{&clientMetrics{m: m}},
	})
}

// WorkerInterceptor counts the outcomes of workflow runs executed by a worker.
func (m *Metrics) WorkerInterceptor() interceptor.WorkerInterceptor { return &workerMetrics{m: m} }

func result(err error) string {
	if err != nil {
		return "error"
	}
	return "ok"
}

type clientMetrics struct {
	interceptor.ClientInterceptorBase
	m *Metrics
}

func (c *clientMetrics) InterceptClient(next interceptor.ClientOutboundInterceptor) interceptor.ClientOutboundInterceptor {
	return &clientOutbound{ClientOutboundInterceptorBase: interceptor.ClientOutboundInterceptorBase{Next: next}, m: c.m}
}

type clientOutbound struct {
	interceptor.ClientOutboundInterceptorBase
	m *Metrics
}

func (c *clientOutbound) ExecuteWorkflow(ctx context.Context, in *interceptor.ClientExecuteWorkflowInput) (client.WorkflowRun, error) {
	run, err := c.Next.ExecuteWorkflow(ctx, in)
	c.m.starts.WithLabelValues(in.WorkflowType, result(err)).Inc()
	return run, err
}

func (c *clientOutbound) SignalWithStartWorkflow(ctx context.Context, in *interceptor.ClientSignalWithStartWorkflowInput) (client.WorkflowRun, error) {
	run, err := c.Next.SignalWithStartWorkflow(ctx, in)
	c.m.starts.WithLabelValues(in.WorkflowType, result(err)).Inc()
	return run, err
}

type workerMetrics struct {
	interceptor.WorkerInterceptorBase
	m *Metrics
}

func (w *workerMetrics) InterceptWorkflow(ctx workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &workflowInbound{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}, m: w.m}
}

type workflowInbound struct {
	interceptor.WorkflowInboundInterceptorBase
	m *Metrics
}

// ExecuteWorkflow counts the run's outcome once: a run replayed on another worker (after a
// crash or cache eviction) finishes again in that worker's replay, which is not counted.
func (w *workflowInbound) ExecuteWorkflow(ctx workflow.Context, in *interceptor.ExecuteWorkflowInput) (any, error) {
	out, err := w.Next.ExecuteWorkflow(ctx, in)
	if workflow.IsReplaying(ctx) {
		return out, err
	}
	outcome := "completed"
	var can *workflow.ContinueAsNewError
	switch {
	case err == nil:
	case errors.As(err, &can):
		outcome = "continued_as_new"
	case errors.Is(err, workflow.ErrCanceled):
		outcome = "canceled"
	default:
		outcome = "failed"
	}
	w.m.outcomes.WithLabelValues(workflow.GetInfo(ctx).WorkflowType.Name, outcome).Inc()
	return out, err
}
