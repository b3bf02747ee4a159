package workflows

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"sync"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/webhook"
	"github.com/tokenscope/tokenscope/ports"
)

// DeliveryInput is one event for one endpoint. The schedule travels in the input so a
// configuration change never alters the history of a delivery already running.
type DeliveryInput struct {
	EndpointID string
	Event      webhook.Event
	Schedule   webhook.RetrySchedule
	// AttemptTimeout bounds one attempt activity (the sender's timeout plus throttling and
	// bookkeeping); it is also how soon an attempt lost with its worker is retried.
	AttemptTimeout time.Duration
	// Failed is the number of attempts already made (by the endpoint lane) and FirstDelay the
	// wait before the next one; zero for a delivery that starts with its first attempt.
	Failed     int
	FirstDelay time.Duration
}

// AttemptInput names one attempt.
type AttemptInput struct {
	EndpointID string
	Event      webhook.Event
	Number     int
}

// AttemptOutput is what the workflow needs to know about an attempt.
type AttemptOutput struct {
	// Skipped: the endpoint is gone or disabled, so nothing was sent and nothing follows.
	Skipped    bool
	Success    bool
	Throttled  bool
	Gone       bool
	Abort      bool
	RetryAfter time.Duration
}

// DeliveryActivities holds the ports of the delivery workflow.
type DeliveryActivities struct {
	Endpoints ports.EndpointStore
	Attempts  ports.AttemptStore
	Sender    ports.WebhookSender
	Clock     ports.Clock
	Disable   webhook.AutoDisable

	mu   sync.Mutex
	next map[string]time.Time // per endpoint: earliest start of the next send (rateLimit)
}

// throttle waits until the endpoint may receive another message. The limit is enforced per
// worker process, which is what one worker (and `make run`) needs; several workers each
// allow rateLimit.
func (a *DeliveryActivities) throttle(ctx context.Context, ep *webhook.Endpoint) error {
	perSecond, limited := ep.Throttle()
	if !limited {
		return nil
	}
	gap := time.Second / time.Duration(perSecond)
	a.mu.Lock()
	if a.next == nil {
		a.next = map[string]time.Time{}
	}
	now := time.Now()
	at := a.next[ep.ID()]
	if at.Before(now) {
		at = now
	}
	a.next[ep.ID()] = at.Add(gap)
	a.mu.Unlock()
	wait := time.Until(at)
	if wait <= 0 {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Attempt sends the event once, signed with the endpoint's current (and, during a rotation,
// previous) secret, and records the attempt.
func (a *DeliveryActivities) Attempt(ctx context.Context, in AttemptInput) (AttemptOutput, error) {
	ep, err := a.liveEndpoint(ctx, in.EndpointID)
	if err != nil {
		return AttemptOutput{}, err
	}
	if ep == nil {
		return AttemptOutput{Skipped: true}, nil
	}
	if err := a.throttle(ctx, ep); err != nil {
		return AttemptOutput{}, err
	}
	s, err := a.send(ctx, ep, in.Event, in.Number)
	if err != nil {
		return AttemptOutput{}, err
	}
	r := s.rec.Result
	out := AttemptOutput{Success: r.Success, Throttled: r.Throttled, Gone: r.Gone, Abort: s.abort, RetryAfter: s.retryAfter}
	return out, a.settle(ctx, ep, r.Success, r.Gone)
}

// The steps of an attempt, shared by both lanes: Attempt (WebhookDelivery) and
// EndpointActivities.SendBatch (WebhookEndpoint).

// liveEndpoint returns the endpoint to send to, or nil when it is deleted or disabled and
// nothing is to be sent.
func (a *DeliveryActivities) liveEndpoint(ctx context.Context, id string) (*webhook.Endpoint, error) {
	ep, err := a.Endpoints.Get(ctx, "", id)
	if fault.Is(err, fault.KindNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if ep.Disabled() {
		return nil, nil
	}
	return ep, nil
}

// sent is an attempt made and recorded, with what the sender said about the next one.
type sent struct {
	rec        webhook.Attempt
	retryAfter time.Duration
	abort      bool
}

// send makes attempt number n of ev (attempt) and records it.
func (a *DeliveryActivities) send(ctx context.Context, ep *webhook.Endpoint, ev webhook.Event, n int) (sent, error) {
	s, err := a.attempt(ctx, ep, ev, n)
	if err != nil {
		return sent{}, err
	}
	if err := a.Attempts.RecordAttempt(ctx, s.rec); err != nil {
		return sent{}, err
	}
	return s, nil
}

// attempt signs ev with the endpoint's current (and, during a rotation, previous) secret and
// sends it once as attempt number n; the caller records it. A send cut short because the worker
// is stopping returns ctx's error: the outcome is unknown, not failed.
func (a *DeliveryActivities) attempt(ctx context.Context, ep *webhook.Endpoint, ev webhook.Event, n int) (sent, error) {
	body := webhook.Payload(ev)
	now := a.Clock.Now()
	headers := webhook.Headers(ep.SigningSecrets(now), ev.ID, now, body)
	start := time.Now()
	res, sendErr := a.Sender.Send(ctx, ep.URL(), headers, body)
	latency := time.Since(start)
	if ctx.Err() != nil {
		return sent{}, ctx.Err()
	}
	rec := webhook.NewAttempt(ep.ID(), ev.ID, n, res.StatusCode, sendErr, latency, now)
	return sent{rec: rec, retryAfter: res.RetryAfter, abort: res.Abort}, nil
}

// settle applies what attempts to ep showed: a 410 disables the endpoint, otherwise a success
// clears its failure clock. An endpoint deleted in the meantime needs neither.
func (a *DeliveryActivities) settle(ctx context.Context, ep *webhook.Endpoint, succeeded, gone bool) error {
	var err error
	switch {
	case gone:
		_, err = a.Endpoints.Update(ctx, "", ep.ID(), func(e *webhook.Endpoint) error { e.Disable(a.Clock.Now()); return nil })
	case succeeded && !ep.FirstFailureAt().IsZero():
		_, err = a.Endpoints.Update(ctx, "", ep.ID(), func(e *webhook.Endpoint) error { e.RecordSuccess(); return nil })
	}
	if fault.Is(err, fault.KindNotFound) {
		return nil
	}
	return err
}

// Exhausted notes that a message ran out of retries; the auto-disable rule may switch the
// endpoint off.
func (a *DeliveryActivities) Exhausted(ctx context.Context, endpointID string) error {
	_, err := a.Endpoints.Update(ctx, "", endpointID, func(e *webhook.Endpoint) error {
		e.RecordFailure(a.Clock.Now(), a.Disable)
		return nil
	})
	if fault.Is(err, fault.KindNotFound) {
		return nil
	}
	return err
}

func deliveryActivityOptions(attempt time.Duration) workflow.ActivityOptions {
	if attempt <= 0 {
		attempt = time.Minute
	}
	return workflow.ActivityOptions{
		StartToCloseTimeout: attempt,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    time.Minute,
		},
	}
}

// WebhookDeliveryWorkflow delivers one event to one endpoint: an attempt now, then one after
// each delay of the schedule (adjusted for 429, timeouts and Retry-After, with jitter), until
// a 2xx, a 410, an abort request, a disabled or deleted endpoint, or the end of the schedule.
func WebhookDeliveryWorkflow(ctx workflow.Context, in DeliveryInput) (int, error) {
	ctx = workflow.WithActivityOptions(ctx, deliveryActivityOptions(in.AttemptTimeout))
	var a *DeliveryActivities
	if in.FirstDelay > 0 {
		if err := workflow.Sleep(ctx, in.FirstDelay); err != nil {
			return in.Failed, err
		}
	}
	for n := in.Failed + 1; ; n++ {
		var out AttemptOutput
		if err := workflow.ExecuteActivity(ctx, a.Attempt, AttemptInput{EndpointID: in.EndpointID, Event: in.Event, Number: n}).
			Get(ctx, &out); err != nil {
			return n, err
		}
		if out.Skipped || out.Success || out.Gone || out.Abort {
			return n, nil
		}
		var jitter float64
		if err := workflow.SideEffect(ctx, func(workflow.Context) any { return rand.Float64() }).Get(&jitter); err != nil {
			return n, err
		}
		delay, more := in.Schedule.NextDelayAfter(n, webhook.Result{Throttled: out.Throttled}, out.RetryAfter,
			func() float64 { return jitter })
		if !more {
			return n, workflow.ExecuteActivity(ctx, a.Exhausted, in.EndpointID).Get(ctx, nil)
		}
		if err := workflow.Sleep(ctx, delay); err != nil {
			return n, err
		}
	}
}

// MessageID is the webhook-id of an outbox event: derived from the event id, so a dispatcher
// that re-reads the row after a crash produces the same id (and the same delivery workflow).
// Outbox ids contain '.', which the signed content forbids, hence the hash.
func MessageID(eventID string) string {
	sum := sha256.Sum256([]byte(eventID))
	return "msg_" + hex.EncodeToString(sum[:16])
}

// DispatchInput configures the dispatcher loop; zero values take the defaults. BatchSize is
// the loop's before dispatchPumpChange only.
type DispatchInput struct {
	PollInterval time.Duration
	BatchSize    int
	// RoundsPerRun is how many rounds (before dispatchPumpChange) or pump runs (since) one
	// workflow run makes before it continues as new.
	RoundsPerRun int
	// RunFor is how long one pump run lasts (DefaultPumpRun).
	RunFor time.Duration
}

func (in DispatchInput) withDefaults() DispatchInput {
	if in.PollInterval <= 0 {
		in.PollInterval = DefaultDispatchPoll
	}
	if in.RunFor <= 0 {
		in.RunFor = DefaultPumpRun
	}
	if in.RoundsPerRun <= 0 {
		in.RoundsPerRun = pumpRunsPerHistory
	}
	return in
}

// dispatchPumpChange marks the change from the DispatchBatch loop (events handed to endpoint
// workflows by signal) to the delivery pump, with the configuration signal (workflow.GetVersion).
const (
	dispatchPumpChange  = "dispatch-pump"
	dispatchPumpVersion = 1
)

// Pump run limits.
const (
	// PumpHeartbeatTimeout is how soon a pump lost with its worker is started again.
	PumpHeartbeatTimeout = 10 * time.Second
	// pumpStopGrace bounds a run's graceful end (its batches in flight) past RunFor.
	pumpStopGrace = 5 * time.Minute
	// pumpRunsPerHistory bounds the history: about eight events per run.
	pumpRunsPerHistory = 100
)

// Dispatcher defaults.
const (
	DefaultDispatchPoll   = 500 * time.Millisecond
	DefaultDispatchBatch  = 200
	DefaultDispatchRounds = 500
	dispatchParallelism   = 16
)

// DispatchActivities holds the ports of the dispatcher.
type DispatchActivities struct {
	Source    ports.EventSource
	Endpoints ports.EndpointStore
	Filter    ports.FilterCompiler
	Feeder    ports.DeliveryFeeder
	Clock     ports.Clock
}

// DispatchBatch hands up to limit outbox events to their endpoints' delivery workflows, one
// hand-over per endpoint, and only then marks them dispatched: a crash in between re-reads the
// events, and a second hand-over neither queues nor sends a message twice (the endpoint
// workflow queues a message id once, and an attempt already recorded is not resent).
func (a *DispatchActivities) DispatchBatch(ctx context.Context, limit int) (int, error) {
	events, err := a.Source.Pending(ctx, limit)
	if err != nil || len(events) == 0 {
		return 0, err
	}
	rt, err := a.route(ctx, events)
	if err != nil {
		return 0, err
	}
	perEndpoint, order, seqs := map[string][]webhook.Event{}, rt.order, rt.seqs
	for id, evs := range rt.perEndpoint {
		for _, e := range evs {
			perEndpoint[id] = append(perEndpoint[id], e.ev)
		}
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		work  = make(chan string)
	)
	for range min(dispatchParallelism, len(order)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range work {
				if err := a.Feeder.Enqueue(ctx, id, perEndpoint[id]); err != nil {
					mu.Lock()
					first = errors.Join(first, err)
					mu.Unlock()
				}
			}
		}()
	}
	for _, id := range order {
		work <- id
	}
	close(work)
	wg.Wait()
	if first != nil {
		return 0, first
	}
	return len(events), a.Source.MarkDispatched(ctx, seqs, a.Clock.Now())
}

// routed is one outbox event as an endpoint receives it.
type routed struct {
	seq int64
	ev  webhook.Event
}

// routing is where a read of outbox events goes: each endpoint's events in outbox order,
// the endpoints in first-seen order (so hand-overs are deterministic), and every row read.
type routing struct {
	perEndpoint map[string][]routed
	order       []string
	seqs        []int64
	// endpoints are the subscribers as read for this routing.
	endpoints map[string]*webhook.Endpoint
}

// route finds each event's subscribers: enabled endpoints that want its channel, created
// before it, whose filter (if any) matches.
func (a *DispatchActivities) route(ctx context.Context, events []ports.OutboxEvent) (routing, error) {
	rt := routing{perEndpoint: map[string][]routed{}, seqs: make([]int64, 0, len(events)), endpoints: map[string]*webhook.Endpoint{}}
	subs := map[webhook.Channel][]*webhook.Endpoint{}
	for _, row := range events {
		rt.seqs = append(rt.seqs, row.Seq)
		ev, err := webhook.NewEvent(MessageID(row.EventID), webhook.Channel(row.Channel), row.CreatedAtMs, row.Payload)
		if err != nil {
			continue // an event no endpoint could ever accept (unknown channel, oversized)
		}
		eps, ok := subs[ev.Channel]
		if !ok {
			if eps, err = a.Endpoints.Subscribers(ctx, ev.Channel); err != nil {
				return routing{}, err
			}
			subs[ev.Channel] = eps
		}
		for _, ep := range eps {
			// An endpoint receives the events committed since it was created, as a subscription
			// does; a backlog older than the endpoint is not replayed to it.
			if row.CreatedAtMs < ep.CreatedAt().UnixMilli() {
				continue
			}
			if f := ep.Filter(); f != nil && !a.Filter.Match(*f, ev) {
				continue
			}
			if _, seen := rt.perEndpoint[ep.ID()]; !seen {
				rt.order = append(rt.order, ep.ID())
				rt.endpoints[ep.ID()] = ep
			}
			rt.perEndpoint[ep.ID()] = append(rt.perEndpoint[ep.ID()], routed{seq: row.Seq, ev: ev})
		}
	}
	return rt, nil
}

// WebhookDispatchWorkflow (ID WebhookDispatchWorkflowID) turns outbox rows into deliveries.
//
// Since dispatchPumpChange it runs the delivery pump (RunPump: fan-out into the delivery queue
// and one lane per endpoint, docs/workflows.md) as one long-running activity after another, each
// for in.RunFor, and continues as new after in.RoundsPerRun runs. A DispatchConfigSignal
// (sent by every process that starts the loop) replaces the configuration: a changed one ends
// the run under way (cancellation; its batches in flight are finished) and the next run takes
// it.
//
// Runs started before dispatchPumpChange keep the old loop, command for command: DispatchBatch
// back to back while there is a backlog, PollInterval sleeps when idle, continue-as-new after
// RoundsPerRun rounds; they take a signalled configuration when they continue as new, and the
// new run pumps.
func WebhookDispatchWorkflow(ctx workflow.Context, in DispatchInput) error {
	version := workflow.GetVersion(ctx, dispatchPumpChange, workflow.DefaultVersion, dispatchPumpVersion)
	configs := workflow.GetSignalChannel(ctx, DispatchConfigSignal)
	if version == workflow.DefaultVersion {
		return legacyDispatchLoop(ctx, in, configs)
	}
	in = in.withDefaults()
	if err := workflow.SetQueryHandler(ctx, DispatchConfigQuery, func() (DispatchInput, error) { return in, nil }); err != nil {
		return err
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: in.RunFor + pumpStopGrace,
		// How soon a pump lost with its worker is run again.
		HeartbeatTimeout:    PumpHeartbeatTimeout,
		WaitForCancellation: true,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    30 * time.Second,
		},
	})
	var a *PumpActivities
	for run := 0; run < in.RoundsPerRun; run++ {
		cctx, cancel := workflow.WithCancel(actx)
		fut := workflow.ExecuteActivity(cctx, a.RunPump, PumpInput{PollInterval: in.PollInterval, RunFor: in.RunFor})
		for done := false; !done; {
			sel := workflow.NewSelector(ctx)
			sel.AddFuture(fut, func(f workflow.Future) {
				done = true
				if err := f.Get(ctx, nil); err != nil && !temporal.IsCanceledError(err) {
					workflow.GetLogger(ctx).Warn("webhook pump run failed", "error", err)
				}
			})
			sel.AddReceive(configs, func(c workflow.ReceiveChannel, _ bool) {
				var next DispatchInput
				c.Receive(ctx, &next)
				if next = next.withDefaults(); next != in {
					in = next
					cancel()
				}
			})
			sel.Select(ctx)
		}
		cancel()
	}
	drainDispatchConfigs(configs, &in)
	return workflow.NewContinueAsNewError(ctx, WebhookDispatchWorkflowName, in)
}

// drainDispatchConfigs applies every configuration already signalled; it adds no command.
func drainDispatchConfigs(configs workflow.ReceiveChannel, in *DispatchInput) {
	var next DispatchInput
	for configs.ReceiveAsync(&next) {
		*in = next
	}
}

// legacyDispatchLoop is WebhookDispatchWorkflow before dispatchPumpChange.
func legacyDispatchLoop(ctx workflow.Context, in DispatchInput, configs workflow.ReceiveChannel) error {
	if in.PollInterval <= 0 {
		in.PollInterval = DefaultDispatchPoll
	}
	if in.BatchSize <= 0 {
		in.BatchSize = DefaultDispatchBatch
	}
	if in.RoundsPerRun <= 0 {
		in.RoundsPerRun = DefaultDispatchRounds
	}
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		// Short on purpose: a batch lost with its worker holds up every event until this
		// timeout lets another worker retry it (the starts it made are idempotent).
		StartToCloseTimeout: 15 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    30 * time.Second,
		},
	})
	var a *DispatchActivities
	for round := 0; round < in.RoundsPerRun; round++ {
		var n int
		if err := workflow.ExecuteActivity(ctx, a.DispatchBatch, in.BatchSize).Get(ctx, &n); err != nil {
			return err
		}
		if n < in.BatchSize {
			if err := workflow.Sleep(ctx, in.PollInterval); err != nil {
				return err
			}
		}
	}
	drainDispatchConfigs(configs, &in)
	return workflow.NewContinueAsNewError(ctx, WebhookDispatchWorkflow, in)
}
