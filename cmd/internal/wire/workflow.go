package wire

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/tokenscope/tokenscope/adapters/kytprovider"
	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/adapters/temporal"
	"github.com/tokenscope/tokenscope/adapters/webhooksender"
	"github.com/tokenscope/tokenscope/app"
	"github.com/tokenscope/tokenscope/app/compliance"
	"github.com/tokenscope/tokenscope/app/jobrunner"
	"github.com/tokenscope/tokenscope/app/webhookendpoint"
	"github.com/tokenscope/tokenscope/domain/webhook"
	"github.com/tokenscope/tokenscope/ports"
	"github.com/tokenscope/tokenscope/workflows"
)

// webhookGuard is the SSRF guard of the configured allow-list. A malformed list is logged and
// ignored: the guard then only allows public addresses, the safe side.
func webhookGuard(rt *Runtime) webhooksender.Guard {
	allowed, err := webhooksender.ParseCIDRs(rt.Cfg.WebhookAllowed)
	if err != nil {
		rt.Log.Error("WEBHOOK_ALLOWED_CIDRS ignored", "err", err)
	}
	return webhooksender.Guard{Allowed: allowed}
}

func webhookFilter(rt *Runtime) *webhooksender.Filter {
	f, err := webhooksender.NewFilter()
	if err != nil {
		panic("cel environment: " + err.Error()) // a fixed declaration list: cannot fail at run time
	}
	return f
}

func retrySchedule(rt *Runtime) webhook.RetrySchedule {
	if rt.Cfg.WebhookRetry == "" {
		return webhook.DefaultRetrySchedule()
	}
	s, err := webhook.ParseRetrySchedule(rt.Cfg.WebhookRetry)
	if err != nil {
		rt.Log.Error("WEBHOOK_RETRY_SCHEDULE ignored, using the default", "err", err)
		return webhook.DefaultRetrySchedule()
	}
	return s
}

// buildWorkflowAreas adds the KYT, webhook and job use cases to a.
func buildWorkflowAreas(rt *Runtime, a *app.Application) {
	kytStore := postgres.NewKYTStore(rt.Pool)
	a.KYT = compliance.New(kytStore, temporal.KYTStarter{Client: rt.Temporal}, kytStore, rt.Clock, rt.Cfg.KYTDeadline)
	wh := postgres.NewWebhookStore(rt.Pool)
	a.Webhooks = webhookendpoint.New(wh, wh, webhookGuard(rt), webhookFilter(rt), rt.Clock)
	a.Jobs = jobrunner.New(postgres.NewJobStore(rt.Pool, workflows.JobWorkflowID), temporal.JobRunner{Client: rt.Temporal}, rt.Clock,
		jobrunner.Limits{StartDeadline: rt.Cfg.KYTDeadline, QueryTimeout: 2 * rt.Cfg.JobPollInterval, MaxRunning: rt.Cfg.JobMaxRunning})
	a.JobStream = jobrunner.NewHub(a.Jobs, rt.Cfg.JobPollInterval, rt.Cfg.SSEHeartbeat)
}

func kytProvider(rt *Runtime) ports.KYTProvider {
	if rt.Cfg.KYTProviderURL != "" {
		return kytprovider.NewHTTP(rt.Cfg.KYTProviderURL, rt.Cfg.KYTAPIKey)
	}
	flagged, err := kytprovider.ParseFlagged(rt.Cfg.KYTFlagged)
	if err != nil {
		rt.Log.Error("KYT_FLAGGED_ADDRESSES ignored", "err", err)
	}
	return kytprovider.Builtin{Flagged: flagged}
}

// registerWorkflowAreas registers the KYT, webhook, job and no-op workflows and activities.
func registerWorkflowAreas(w worker.Registry, rt *Runtime) {
	kytStore := postgres.NewKYTStore(rt.Pool)
	wh := postgres.NewWebhookStore(rt.Pool)
	named := func(fn any, name string) { w.RegisterWorkflowWithOptions(fn, workflow.RegisterOptions{Name: name}) }
	named(workflows.KYTRegistrationWorkflow, workflows.KYTRegistrationWorkflowName)
	named(workflows.WebhookDeliveryWorkflow, workflows.WebhookDeliveryWorkflowName)
	named(workflows.WebhookDispatchWorkflow, workflows.WebhookDispatchWorkflowName)
	named(workflows.CalculatePnLJobWorkflow, workflows.CalculatePnLJobWorkflowName)
	named(workflows.NoopWorkflow, workflows.NoopWorkflowName)
	w.RegisterActivity(&workflows.KYTActivities{Store: kytStore, Provider: kytProvider(rt), Clock: rt.Clock})
	named(workflows.WebhookEndpointWorkflow, workflows.WebhookEndpointWorkflowName)
	var sender ports.WebhookSender = webhooksender.NewSender(webhookGuard(rt), rt.Cfg.WebhookTimeout)
	starter := temporal.DeliveryStarter{Client: rt.Temporal, Schedule: retrySchedule(rt),
		AttemptTimeout: rt.Cfg.WebhookTimeout + 3*time.Second}
	var retries ports.RetryStarter = starter
	if rt.Registry != nil {
		// Once per runtime: a process may build more than one worker on it.
		if rt.webhookMetrics == nil {
			rt.webhookMetrics = newWebhookMetrics(rt.Registry, wh)
		}
		sender, retries = rt.webhookMetrics.sender(sender), rt.webhookMetrics.retries(starter)
	}
	delivery := &workflows.DeliveryActivities{Endpoints: wh, Attempts: wh, Sender: sender, Clock: rt.Clock,
		Disable: webhook.AutoDisable{After: rt.Cfg.WebhookDisableAfter}}
	w.RegisterActivity(delivery)
	w.RegisterActivity(&workflows.EndpointActivities{Delivery: delivery, Lookup: wh, Retries: retries, Spill: starter})
	dispatch := &workflows.DispatchActivities{Source: wh, Endpoints: wh, Filter: webhookFilter(rt), Feeder: starter, Clock: rt.Clock}
	w.RegisterActivity(dispatch)
	w.RegisterActivity(&workflows.PumpActivities{Delivery: delivery, Dispatch: dispatch, Queue: wh, Lookup: wh,
		Retries: retries, Schedule: retrySchedule(rt), Log: rt.Log})
	w.RegisterActivity(&workflows.JobActivities{Jobs: postgres.NewJobStore(rt.Pool, workflows.JobWorkflowID),
		Positions: postgres.NewWalletRederiver(rt.Pool), Clock: rt.Clock})
}

// StartWebhookDispatch starts the outbox dispatcher loop.
func StartWebhookDispatch(ctx context.Context, rt *Runtime) error {
	return temporal.StartDispatcher(ctx, rt.Temporal, workflows.DispatchInput{PollInterval: rt.Cfg.WebhookDispatchPoll})
}

// registerMarketRefresh registers the market refresh workflow and its activity on a worker.
func registerMarketRefresh(w worker.Registry, rt *Runtime) {
	w.RegisterWorkflowWithOptions(workflows.MarketRefreshWorkflow, workflow.RegisterOptions{Name: workflows.MarketRefreshWorkflowName})
	store := postgres.NewIngestStore(rt.Pool)
	w.RegisterActivity(&workflows.RefreshActivities{Clock: rt.Clock, Market: store, Retainer: store,
		Retention: rt.Cfg.TradesRetention})
}

// StartMarketRefresh starts the singleton refresh loop, or gives the running one this process's
// configuration (temporal.StartRefreshLoop).
func StartMarketRefresh(ctx context.Context, rt *Runtime) error {
	if err := temporal.StartRefreshLoop(ctx, rt.Temporal, workflows.RefreshInput{Interval: rt.Cfg.RefreshInterval}); err != nil {
		return fmt.Errorf("start market refresh: %w", err)
	}
	return nil
}

// firstRefresh is the readiness gate of StartFirstRefresh: down until the rankings have been
// brought up to date once by this process.
type firstRefresh struct {
	done chan struct{}
}

func (f *firstRefresh) Ping(context.Context) error {
	select {
	case <-f.done:
		return nil
	default:
		return errors.New("the hot-token rankings have not been computed yet")
	}
}

// StartFirstRefresh makes readiness wait until this process has brought every hot-token ranking
// up to date once (workflows.RankMarket: the due ones are recomputed), so that once /readyz
// answers 200 every ranking reflects the trades stored by then (on an empty database that is
// quick and the rankings are empty). Call it, like StartWorkflowProbe, before the health
// endpoints are built, in a process that runs a worker (tokenscope-dev, worker). It runs in the
// background, outside Temporal (a ranking swap is one transaction, so the refresh loop computing
// the same ranking meanwhile is harmless), after seeded returns when it is not nil
// (tokenscope-dev backfills its simulated market first), and is retried until it succeeds.
// stop ends it if it is still trying and waits for it.
func StartFirstRefresh(ctx context.Context, rt *Runtime, seeded func(context.Context) error) (stop func()) {
	gate := &firstRefresh{done: make(chan struct{})}
	rt.firstRefresh = gate
	ctx, cancel := context.WithCancel(ctx)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		if seeded != nil && seeded(ctx) != nil {
			return // ctx ended
		}
		a := &workflows.RefreshActivities{Clock: rt.Clock, Market: postgres.NewIngestStore(rt.Pool)}
		for {
			start := time.Now()
			res, err := a.RankMarket(ctx)
			if err == nil {
				rt.Log.Info("rankings computed at startup", "took", time.Since(start).String(), "rankings", res.Rankings,
					"hotTokens", res.HotTokens)
				close(gate.done)
				return
			}
			if ctx.Err() != nil {
				return
			}
			rt.Log.Warn("computing the rankings at startup failed; retrying in 1s", "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
		}
	}()
	return func() { cancel(); <-finished }
}
