package workflows

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/tokenscope/tokenscope/domain/webhook"
	"github.com/tokenscope/tokenscope/ports"
)

// The batched delivery lane. Every first attempt to an endpoint goes through one long-lived
// workflow per endpoint (WebhookEndpoint, ID endpoint/{id}): the dispatcher hands it events by
// signal-with-start, and it sends them in batches, one activity per batch. A workflow start
// costs several persistence writes; a batch of a hundred first attempts costs about as many as
// one start, which is where the throughput comes from (docs/workflows.md, Measured).
//
// A message whose first attempt fails leaves the lane: the batch activity starts the
// per-message WebhookDelivery workflow from attempt 2, which keeps the retry schedule on its
// own durable timers. The endpoint workflow therefore holds only events not yet tried, never
// retry state, so a receiver that is down for a day does not grow its history or its
// continue-as-new input; failing messages cost what every message cost before.

// Endpoint lane limits.
const (
	// endpointBatch is the most first attempts one activity sends.
	endpointBatch = 100
	// endpointSendParallelism bounds the requests in flight to one endpoint.
	endpointSendParallelism = 16
	// endpointMaxQueued and endpointMaxQueuedBytes bound the events the workflow holds; beyond
	// them events spill into per-message delivery workflows, so a stalled receiver cannot grow
	// the state (and the continue-as-new input, which Temporal caps at 2 MB) without bound.
	endpointMaxQueued      = 1000
	endpointMaxQueuedBytes = 512 << 10
	// maxChunkBytes bounds one signal or activity input of events.
	maxChunkBytes = 256 << 10
	// endpointIdle is how long an empty workflow waits for more before it completes; the next
	// signal-with-start opens a new run.
	endpointIdle = time.Minute
	// endpointHistoryLimit continues the workflow as new well before Temporal's own limits.
	endpointHistoryLimit = 2000
)

// EndpointInput starts (or continues) an endpoint's delivery workflow.
type EndpointInput struct {
	EndpointID     string
	Schedule       webhook.RetrySchedule
	AttemptTimeout time.Duration
	// Queued carries the untried events across continue-as-new.
	Queued []webhook.Event
}

// DeliverBatch is the payload of DeliverSignal.
type DeliverBatch struct {
	Events []webhook.Event
}

// SendBatchInput is one batch of first attempts.
type SendBatchInput struct {
	EndpointID     string
	Events         []webhook.Event
	Schedule       webhook.RetrySchedule
	AttemptTimeout time.Duration
}

// SendBatchOutput says what became of a batch.
type SendBatchOutput struct {
	// Skipped: the endpoint is gone or disabled; nothing was sent.
	Skipped   bool
	Delivered int
	// Retrying counts the messages handed to per-message retry workflows.
	Retrying int
}

// EndpointActivities holds the ports of the endpoint lane. Throttling shares the delivery
// activities' per-endpoint spacing, so rateLimit holds across both lanes in one worker.
type EndpointActivities struct {
	Delivery *DeliveryActivities
	Lookup   ports.AttemptLookup
	Retries  ports.RetryStarter
	Spill    ports.DeliveryStarter
}

// SendBatch makes the first attempt of each event, records it, and starts the retry workflow
// of each that failed. It is safe to run again after a lost worker: an attempt already
// recorded is not resent, its stored outcome decides, and retry starts are idempotent.
func (a *EndpointActivities) SendBatch(ctx context.Context, in SendBatchInput) (SendBatchOutput, error) {
	d := a.Delivery
	ep, err := d.liveEndpoint(ctx, in.EndpointID)
	if err != nil {
		return SendBatchOutput{}, err
	}
	if ep == nil {
		return SendBatchOutput{Skipped: true}, nil
	}
	ids := make([]string, len(in.Events))
	for i, ev := range in.Events {
		ids[i] = ev.ID
	}
	prior, err := a.Lookup.RecordedAttempts(ctx, ep.ID(), ids, 1)
	if err != nil {
		return SendBatchOutput{}, err
	}
	stop := heartbeat(ctx)
	defer stop()

	type outcome struct {
		sent
		err error
	}
	outs := make([]outcome, len(in.Events))
	var wg sync.WaitGroup
	sem := make(chan struct{}, endpointSendParallelism)
	for i, ev := range in.Events {
		if rec, ok := prior[ev.ID]; ok {
			outs[i] = outcome{sent: sent{rec: rec}}
			continue
		}
		if err := d.throttle(ctx, ep); err != nil {
			outs[i].err = err
			break
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			s, err := d.send(ctx, ep, ev, 1)
			outs[i] = outcome{sent: s, err: err}
		}()
	}
	wg.Wait()

	var out SendBatchOutput
	var errs []error
	succeeded, gone := false, false
	for i, o := range outs {
		switch {
		case o.err != nil:
			errs = append(errs, o.err)
			continue
		case o.rec.EventID == "": // not reached: an earlier throttle wait was cancelled
			continue
		case o.rec.Result.Success:
			succeeded = true
			out.Delivered++
			continue
		case o.rec.Result.Gone:
			gone = true
			continue
		case o.abort:
			continue
		}
		delay, more := in.Schedule.NextDelayAfter(1, o.rec.Result, o.retryAfter, rand.Float64)
		if !more {
			// A schedule without retries: the message is exhausted at its first failure.
			if err := d.Exhausted(ctx, ep.ID()); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		if err := a.Retries.StartRetry(ctx, ep.ID(), in.Events[i], 1, delay); err != nil {
			errs = append(errs, err)
			continue
		}
		out.Retrying++
	}
	if err := d.settle(ctx, ep, succeeded, gone); err != nil {
		errs = append(errs, err)
	}
	return out, errors.Join(errs...)
}

// SpillEvents hands events the endpoint workflow will not hold to per-message delivery
// workflows (idempotent starts).
func (a *EndpointActivities) SpillEvents(ctx context.Context, endpointID string, evs []webhook.Event) error {
	for _, ev := range evs {
		if err := a.Spill.StartDelivery(ctx, endpointID, ev); err != nil {
			return err
		}
	}
	return nil
}

// heartbeat keeps the activity alive while it works; the heartbeat timeout (one attempt's
// timeout) is then how soon a batch lost with its worker is retried, whatever the batch size.
func heartbeat(ctx context.Context) (stop func()) {
	if !activity.IsActivity(ctx) {
		return func() {}
	}
	return heartbeatEvery(ctx, 500*time.Millisecond)
}

func endpointActivityOptions(attempt time.Duration) workflow.ActivityOptions {
	if attempt <= 0 {
		attempt = time.Minute
	}
	return workflow.ActivityOptions{
		// A batch may wait for rateLimit; liveness is the heartbeat's job.
		StartToCloseTimeout: time.Hour,
		HeartbeatTimeout:    attempt,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    time.Minute,
		},
	}
}

// WebhookEndpointWorkflow sends an endpoint's events in batches as they arrive by signal. It
// completes after endpointIdle without work and continues as new before its history grows
// long, carrying the untried events.
func WebhookEndpointWorkflow(ctx workflow.Context, in EndpointInput) error {
	ctx = workflow.WithActivityOptions(ctx, endpointActivityOptions(in.AttemptTimeout))
	var a *EndpointActivities
	ch := workflow.GetSignalChannel(ctx, DeliverSignal)
	queue := in.Queued
	queued := make(map[string]bool, len(queue))
	for _, ev := range queue {
		queued[ev.ID] = true
	}
	receive := func(b DeliverBatch) {
		for _, ev := range b.Events {
			if !queued[ev.ID] { // a batch handed over twice (dispatcher retried) is queued once
				queued[ev.ID] = true
				queue = append(queue, ev)
			}
		}
	}
	drain := func() {
		for {
			var b DeliverBatch
			if !ch.ReceiveAsync(&b) {
				return
			}
			receive(b)
		}
	}
	for {
		drain()
		if keep := Chunks(queue, endpointMaxQueued, endpointMaxQueuedBytes)[0]; len(keep) < len(queue) {
			for _, part := range Chunks(queue[len(keep):], endpointBatch, maxChunkBytes) {
				if err := workflow.ExecuteActivity(ctx, a.SpillEvents, in.EndpointID, part).Get(ctx, nil); err != nil {
					return err
				}
				for _, ev := range part {
					delete(queued, ev.ID)
				}
			}
			queue = keep[:len(keep):len(keep)]
		}
		if len(queue) == 0 {
			if workflow.GetInfo(ctx).GetCurrentHistoryLength() > endpointHistoryLimit/2 {
				return workflow.NewContinueAsNewError(ctx, WebhookEndpointWorkflow, EndpointInput{
					EndpointID: in.EndpointID, Schedule: in.Schedule, AttemptTimeout: in.AttemptTimeout})
			}
			var b DeliverBatch
			got, _ := ch.ReceiveWithTimeout(ctx, endpointIdle, &b)
			if !got {
				return nil // idle; the server refuses to close a run with a signal still unread
			}
			receive(b)
			continue
		}
		batch := Chunks(queue, endpointBatch, maxChunkBytes)[0]
		n := len(batch)
		var out SendBatchOutput
		if err := workflow.ExecuteActivity(ctx, a.SendBatch, SendBatchInput{EndpointID: in.EndpointID, Events: batch,
			Schedule: in.Schedule, AttemptTimeout: in.AttemptTimeout}).Get(ctx, &out); err != nil {
			return err
		}
		for _, ev := range batch {
			delete(queued, ev.ID)
		}
		queue = queue[n:]
		if out.Skipped { // endpoint gone or disabled: the rest would be skipped too
			for _, ev := range queue {
				delete(queued, ev.ID)
			}
			queue = nil
		}
		if workflow.GetInfo(ctx).GetCurrentHistoryLength() > endpointHistoryLimit || workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
			drain()
			return workflow.NewContinueAsNewError(ctx, WebhookEndpointWorkflow, EndpointInput{
				EndpointID: in.EndpointID, Schedule: in.Schedule, AttemptTimeout: in.AttemptTimeout, Queued: queue})
		}
	}
}

// Chunks splits evs, in order, into runs of at most maxCount events and about maxBytes of
// payload each (an event larger than maxBytes is a run of its own). It returns one empty run
// for no events.
func Chunks(evs []webhook.Event, maxCount, maxBytes int) [][]webhook.Event {
	out := [][]webhook.Event{nil}
	size := 0
	for _, ev := range evs {
		cur := out[len(out)-1]
		sz := len(ev.ID) + len(ev.Data) + len(ev.Channel) + 32
		if len(cur) > 0 && (len(cur) >= maxCount || size+sz > maxBytes) {
			out = append(out, nil)
			cur, size = nil, 0
		}
		out[len(out)-1] = append(cur, ev)
		size += sz
	}
	return out
}

// SignalChunks splits events for DeliverSignal payloads.
func SignalChunks(evs []webhook.Event) [][]webhook.Event {
	return Chunks(evs, endpointMaxQueued, maxChunkBytes)
}
