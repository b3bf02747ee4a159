package main

import (
	"context"
	"time"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/tokenscope/tokenscope/adapters/kytprovider"
	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/adapters/temporal"
	"github.com/tokenscope/tokenscope/adapters/webhooksender"
	"github.com/tokenscope/tokenscope/app"
	appjob "github.com/tokenscope/tokenscope/app/job"
	appkyt "github.com/tokenscope/tokenscope/app/kyt"
	appwebhook "github.com/tokenscope/tokenscope/app/webhook"
	"github.com/tokenscope/tokenscope/domain/webhook"
	"github.com/tokenscope/tokenscope/ports"
	"github.com/tokenscope/tokenscope/workflows"
)

// devWebhookCIDRs lets `tokenscope dev` deliver webhooks to a receiver on the laptop; the
// production default allows public https destinations only.
const devWebhookCIDRs = "127.0.0.0/8,::1/128"

// webhookGuard is the SSRF guard of the configured allow-list. A malformed list is logged and
// ignored: the guard then only allows public addresses, the safe side.
func webhookGuard(rt *runtime) webhooksender.Guard {
	allowed, err := webhooksender.ParseCIDRs(rt.cfg.WebhookAllowed)
	if err != nil {
		rt.log.Error("WEBHOOK_ALLOWED_CIDRS ignored", "err", err)
	}
	return webhooksender.Guard{Allowed: allowed}
}

func webhookFilter(rt *runtime) *webhooksender.Filter {
	f, err := webhooksender.NewFilter()
	if err != nil {
		panic("cel environment: " + err.Error()) // a fixed declaration list: cannot fail at run time
	}
	return f
}

func retrySchedule(rt *runtime) webhook.RetrySchedule {
	if rt.cfg.WebhookRetry == "" {
		return webhook.DefaultRetrySchedule()
	}
	s, err := webhook.ParseRetrySchedule(rt.cfg.WebhookRetry)
	if err != nil {
		rt.log.Error("WEBHOOK_RETRY_SCHEDULE ignored, using the default", "err", err)
		return webhook.DefaultRetrySchedule()
	}
	return s
}

// buildWorkflowAreas adds the KYT, webhook and job use cases to a.
func buildWorkflowAreas(rt *runtime, a *app.Application) {
	kytStore := postgres.NewKYTStore(rt.pool)
	a.KYT = &appkyt.Service{Store: kytStore, Starter: temporal.KYTStarter{Client: rt.temporal}, Pricer: kytStore,
		Clock: rt.clock, Deadline: rt.cfg.KYTDeadline}
	wh := postgres.NewWebhookStore(rt.pool)
	a.Webhooks = &appwebhook.Service{Endpoints: wh, Attempts: wh, Guard: webhookGuard(rt), Filter: webhookFilter(rt), Clock: rt.clock}
	a.Jobs = &appjob.Service{Store: postgres.NewJobStore(rt.pool, workflows.JobWorkflowID),
		Runner: temporal.JobRunner{Client: rt.temporal}, Clock: rt.clock, StartDeadline: rt.cfg.KYTDeadline,
		QueryTimeout: 2 * rt.cfg.JobPollInterval, MaxRunning: rt.cfg.JobMaxRunning}
	a.JobStream = &appjob.Hub{Service: a.Jobs, Interval: rt.cfg.JobPollInterval, Heartbeat: rt.cfg.SSEHeartbeat}
}

func kytProvider(rt *runtime) ports.KYTProvider {
	if rt.cfg.KYTProviderURL != "" {
		return kytprovider.NewHTTP(rt.cfg.KYTProviderURL, rt.cfg.KYTAPIKey)
	}
	flagged, err := kytprovider.ParseFlagged(rt.cfg.KYTFlagged)
	if err != nil {
		rt.log.Error("KYT_FLAGGED_ADDRESSES ignored", "err", err)
	}
	return kytprovider.Builtin{Flagged: flagged}
}

// registerWorkflowAreas registers the KYT, webhook, job and no-op workflows and activities.
func registerWorkflowAreas(w worker.Registry, rt *runtime) {
	kytStore := postgres.NewKYTStore(rt.pool)
	wh := postgres.NewWebhookStore(rt.pool)
	named := func(fn any, name string) { w.RegisterWorkflowWithOptions(fn, workflow.RegisterOptions{Name: name}) }
	named(workflows.KYTRegistrationWorkflow, workflows.KYTRegistrationWorkflowName)
	named(workflows.WebhookDeliveryWorkflow, workflows.WebhookDeliveryWorkflowName)
	named(workflows.WebhookDispatchWorkflow, workflows.WebhookDispatchWorkflowName)
	named(workflows.CalculatePnLJobWorkflow, workflows.CalculatePnLJobWorkflowName)
	named(workflows.NoopWorkflow, workflows.NoopWorkflowName)
	w.RegisterActivity(&workflows.KYTActivities{Store: kytStore, Provider: kytProvider(rt), Clock: rt.clock})
	named(workflows.WebhookEndpointWorkflow, workflows.WebhookEndpointWorkflowName)
	delivery := &workflows.DeliveryActivities{Endpoints: wh, Attempts: wh,
		Sender: webhooksender.NewSender(webhookGuard(rt), rt.cfg.WebhookTimeout), Clock: rt.clock,
		Disable: webhook.AutoDisable{After: rt.cfg.WebhookDisableAfter}}
	starter := temporal.DeliveryStarter{Client: rt.temporal, Schedule: retrySchedule(rt),
		AttemptTimeout: rt.cfg.WebhookTimeout + 3*time.Second}
	w.RegisterActivity(delivery)
	w.RegisterActivity(&workflows.EndpointActivities{Delivery: delivery, Lookup: wh, Retries: starter, Spill: starter})
	w.RegisterActivity(&workflows.DispatchActivities{Source: wh, Endpoints: wh, Filter: webhookFilter(rt),
		Feeder: starter, Clock: rt.clock})
	w.RegisterActivity(&workflows.JobActivities{Jobs: postgres.NewJobStore(rt.pool, workflows.JobWorkflowID),
		Positions: postgres.NewWalletRederiver(rt.pool), Clock: rt.clock})
}

// startWebhookDispatch starts the outbox dispatcher loop.
func startWebhookDispatch(ctx context.Context, rt *runtime) error {
	return temporal.StartDispatcher(ctx, rt.temporal, workflows.DispatchInput{PollInterval: rt.cfg.WebhookDispatchPoll})
}
