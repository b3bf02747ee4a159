package workflows

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/tokenscope/tokenscope/domain/webhook"
	"github.com/tokenscope/tokenscope/ports"
)

// The delivery pump (issue 12): first attempts without a Temporal round trip per event.
//
// One long-running activity (RunPump, run by WebhookDispatch) holds the pump lock, wakes when
// the outbox gains rows (LISTEN/NOTIFY; PollInterval is the fallback), and fans each event out
// to its subscribers into the durable delivery queue in the transaction that stamps the outbox
// row. Each endpoint has a lane: a bounded in-memory window on its queued rows, sent in batches
// with at most laneConcurrency requests in flight, its attempts recorded and its rows removed
// in one transaction per batch. A lane waits only for its own endpoint, so a receiver that
// hangs or fails slows nobody else. A first attempt that failed leaves the queue once its
// per-message WebhookDelivery retry workflow is started (from attempt 2, as the endpoint
// workflow did). Everything in memory is a cache of the queue: a pump lost with its worker is
// retried after its heartbeat timeout and resumes from the queue, resending only what has no
// recorded first attempt.

// Pump limits.
const (
	// laneBatch is the most events a lane sends between two bookkeeping transactions.
	laneBatch = 200
	// laneConcurrency bounds the requests in flight to one endpoint (and its kept-alive
	// connections).
	laneConcurrency = 16
	// laneWindow bounds the events a lane holds in memory; the rest wait in the queue table and
	// are read back when the window empties.
	laneWindow = 2000
	// laneIdle is how long an empty lane waits before it ends.
	laneIdle = time.Minute
	// laneRetryStarts bounds the retry workflow starts a lane makes at once.
	laneRetryStarts = 8
	// pumpFanoutBatch is the most outbox rows one fan-out transaction takes.
	pumpFanoutBatch = 1000
	// laneBackoff is the pause of a lane after a failed bookkeeping step.
	laneBackoff = time.Second
	// laneEndpointFresh is how old the fan-out's read of an endpoint may be for a lane to send
	// with it; an older one is read again (a PATCH, a disable or a delete is seen within it).
	laneEndpointFresh = time.Second
)

// PumpInput configures one run of the pump.
type PumpInput struct {
	// PollInterval is how often the outbox is read without a notification.
	PollInterval time.Duration
	// RunFor is how long the activity runs before it returns and the workflow starts the next
	// run (which keeps each activity's lifetime, and a lost run's cost, bounded).
	RunFor time.Duration
}

// DefaultPumpRun is RunFor's default.
const DefaultPumpRun = time.Hour

func (in PumpInput) withDefaults() PumpInput {
	if in.PollInterval <= 0 {
		in.PollInterval = DefaultDispatchPoll
	}
	if in.RunFor <= 0 {
		in.RunFor = DefaultPumpRun
	}
	return in
}

// PumpActivities holds the pump's ports. Throttling and sending are the delivery activities',
// so rateLimit holds across first attempts and retries in one worker; with one pump at a time
// (the lock) first attempts are spaced exactly per endpoint.
type PumpActivities struct {
	Delivery *DeliveryActivities
	Dispatch *DispatchActivities
	Queue    ports.DeliveryQueue
	Lookup   ports.AttemptLookup
	Retries  ports.RetryStarter
	Schedule webhook.RetrySchedule
	Log      *slog.Logger
}

// RunPump runs the pump for in.RunFor, or until its context ends (cancellation, a lost
// worker). Ending is graceful: lanes send nothing new, and the batches in flight are finished and
// recorded (a request cut short would be resent by the next run, a duplicate).
func (a *PumpActivities) RunPump(ctx context.Context, in PumpInput) error {
	in = in.withDefaults()
	stopHeartbeat := heartbeat(ctx)
	defer stopHeartbeat()
	ctx, cancel := context.WithTimeout(ctx, in.RunFor)
	defer cancel()
	if activity.IsActivity(ctx) {
		// A stopping worker (a deploy, SIGTERM) ends the run at once, gracefully: the worker
		// waits for it (WorkerStopTimeout) while the batches in flight are recorded.
		stopping := activity.GetWorkerStopChannel(ctx)
		go func() {
			select {
			case <-stopping:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	p := &pump{a: a, in: in, lanes: map[string]*lane{}, wake: make(chan struct{}, 1)}
	return p.run(ctx)
}

type pump struct {
	a  *PumpActivities
	in PumpInput

	// wake is signalled (without blocking) when the outbox gains rows.
	wake chan struct{}

	mu    sync.Mutex
	lanes map[string]*lane
	wg    sync.WaitGroup
}

func (p *pump) log() *slog.Logger {
	if p.a.Log != nil {
		return p.a.Log
	}
	return slog.Default()
}

func (p *pump) run(ctx context.Context) error {
	held := make(chan struct{})
	wake := p.wake
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	watched := make(chan error, 1)
	go func() {
		watched <- p.a.Queue.Watch(watchCtx, func() { close(held) }, func() {
			select {
			case wake <- struct{}{}:
			default:
			}
		})
	}()
	select {
	case <-held:
	case err := <-watched:
		return err
	case <-ctx.Done():
		stopWatch()
		<-watched
		return nil
	}
	// From here the lock is held; work stops when ctx ends or the lock is lost.
	work, stopWork := context.WithCancel(ctx)
	var lost error
	lostDone := make(chan struct{})
	go func() {
		defer close(lostDone)
		lost = <-watched
		stopWork()
	}()
	err := p.pump(work)
	stopWork()
	p.wg.Wait() // lanes finish their batches in flight
	stopWatch()
	<-lostDone
	if err != nil && work.Err() == nil {
		return err
	}
	return lost
}

// pump resumes the lanes with queued rows, then fans the outbox out whenever it is woken.
func (p *pump) pump(ctx context.Context) error {
	ids, err := p.a.Queue.QueuedEndpoints(ctx)
	if err != nil {
		return err
	}
	for _, id := range ids {
		p.push(ctx, id, nil, true, nil, time.Time{})
	}
	poll := time.NewTimer(0)
	defer poll.Stop()
	for {
		for {
			n, err := p.fanout(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
			if n < pumpFanoutBatch {
				break
			}
		}
		poll.Reset(p.in.PollInterval)
		select {
		case <-ctx.Done():
			return nil
		case <-p.wake:
		case <-poll.C:
		}
	}
}

// fanout queues one read of outbox rows and hands the events to their lanes.
func (p *pump) fanout(ctx context.Context) (int, error) {
	read := time.Now()
	events, err := p.a.Dispatch.Source.Pending(ctx, pumpFanoutBatch)
	if err != nil || len(events) == 0 {
		return 0, err
	}
	rt, err := p.a.Dispatch.route(ctx, events)
	if err != nil {
		return 0, err
	}
	var qs []ports.QueuedDelivery
	for _, id := range rt.order {
		for _, r := range rt.perEndpoint[id] {
			qs = append(qs, ports.QueuedDelivery{EndpointID: id, Seq: r.seq})
		}
	}
	if err := p.a.Queue.Fanout(ctx, qs, rt.seqs, p.a.Dispatch.Clock.Now()); err != nil {
		return 0, err
	}
	for _, id := range rt.order {
		p.push(ctx, id, rt.perEndpoint[id], false, rt.endpoints[id], read)
	}
	return len(events), nil
}

// push hands events to the endpoint's lane, starting one if needed; backlog says the queue table
// holds rows the lane has not seen (a resumed pump); ep, when not nil, is the endpoint as read at.
func (p *pump) push(ctx context.Context, id string, evs []routed, backlog bool, ep *webhook.Endpoint, at time.Time) {
	p.mu.Lock()
	l, ok := p.lanes[id]
	if !ok {
		l = &lane{id: id, p: p, known: map[int64]bool{}, wake: make(chan struct{}, 1), perSecond: -1}
		p.lanes[id] = l
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			l.run(ctx)
		}()
	}
	l.seen(ep, at)
	l.add(evs, backlog)
	p.mu.Unlock()
}

// retire removes an idle lane, unless events arrived meanwhile.
func (p *pump) retire(l *lane) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.window) > 0 || l.backlog {
		return false
	}
	delete(p.lanes, l.id)
	return true
}

// queued is one event in a lane's window; reread marks one read back from the queue table,
// whose first attempt may already be recorded.
type queued struct {
	routed
	reread bool
}

// lane is one endpoint's sender.
type lane struct {
	id   string
	p    *pump
	wake chan struct{}

	mu      sync.Mutex
	window  []queued
	known   map[int64]bool // seqs in the window or in flight
	backlog bool           // the queue table holds rows not in the window
	// perSecond is the endpoint's rateLimit as last read (0: none, -1: not read yet).
	perSecond int32
	// ep is the endpoint as last read, at epAt.
	ep   *webhook.Endpoint
	epAt time.Time
}

// seen keeps a newer read of the endpoint.
func (l *lane) seen(ep *webhook.Endpoint, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ep != nil && at.After(l.epAt) {
		l.ep, l.epAt = ep, at
	}
}

// endpoint returns the endpoint to send to (nil: deleted or disabled), read again when the last
// read is older than laneEndpointFresh.
func (l *lane) endpoint(ctx context.Context) (*webhook.Endpoint, error) {
	l.mu.Lock()
	ep, at := l.ep, l.epAt
	l.mu.Unlock()
	if ep != nil && time.Since(at) < laneEndpointFresh {
		return ep, nil
	}
	at = time.Now()
	ep, err := l.p.a.Delivery.liveEndpoint(ctx, l.id)
	if err != nil || ep == nil {
		return nil, err
	}
	l.seen(ep, at)
	return ep, nil
}

func (l *lane) add(evs []routed, backlog bool) {
	l.mu.Lock()
	for _, r := range evs {
		if l.known[r.seq] {
			continue
		}
		if len(l.window) >= laneWindow {
			l.backlog = true
			continue
		}
		l.known[r.seq] = true
		l.window = append(l.window, queued{routed: r})
	}
	l.backlog = l.backlog || backlog
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// take removes up to n events from the window; reread reports that the window was empty and
// the queue table must be read back.
func (l *lane) take(n int) (batch []queued, reread bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.window) == 0 {
		if l.backlog {
			l.backlog = false
			return nil, true
		}
		return nil, false
	}
	k := min(n, len(l.window))
	batch = append(batch, l.window[:k]...)
	l.window = l.window[k:]
	return batch, false
}

// forget drops sent events from known; failed says they are still queued and must be read back.
func (l *lane) forget(batch []queued, failed bool) {
	l.mu.Lock()
	for _, q := range batch {
		delete(l.known, q.seq)
	}
	if failed {
		l.backlog = true
	}
	l.mu.Unlock()
}

func (l *lane) run(ctx context.Context) {
	idle := time.NewTimer(laneIdle)
	defer idle.Stop()
	for ctx.Err() == nil {
		batch, reread := l.take(l.batchSize())
		switch {
		case reread:
			if err := l.reread(ctx); err != nil {
				l.pause(ctx, err)
			}
			continue
		case len(batch) == 0:
			idle.Reset(laneIdle)
			select {
			case <-ctx.Done():
				return
			case <-l.wake:
			case <-idle.C:
				if l.p.retire(l) {
					return
				}
			}
			continue
		}
		// A batch begun is finished, also when the pump is stopping: a request cut short has an
		// unknown outcome and would be sent again.
		err := l.deliver(context.WithoutCancel(ctx), batch)
		l.forget(batch, err != nil)
		if err != nil {
			l.pause(ctx, err)
		}
	}
}

// batchSize keeps a throttled endpoint's batch to about a second of sending, so a stopping pump
// is not held up by a slow rateLimit.
func (l *lane) batchSize() int {
	l.mu.Lock()
	per := l.perSecond
	l.mu.Unlock()
	if per < 0 {
		return 1 // the first batch learns the endpoint's rateLimit
	}
	if per > 0 && int(per) < laneBatch {
		return int(per)
	}
	return laneBatch
}

func (l *lane) pause(ctx context.Context, err error) {
	l.p.log().Warn("webhook lane", "endpoint", l.id, "err", err)
	select {
	case <-ctx.Done():
	case <-time.After(laneBackoff):
	}
}

// reread fills the window from the queue table.
func (l *lane) reread(ctx context.Context) error {
	rows, err := l.p.a.Queue.Queued(ctx, l.id, laneWindow)
	if err != nil {
		l.mu.Lock()
		l.backlog = true
		l.mu.Unlock()
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, row := range rows {
		if l.known[row.Seq] {
			continue
		}
		ev, err := webhook.NewEvent(MessageID(row.EventID), webhook.Channel(row.Channel), row.CreatedAtMs, row.Payload)
		if err != nil {
			continue // fan-out never queues such an event
		}
		if len(l.window) >= laneWindow {
			l.backlog = true
			break
		}
		l.known[row.Seq] = true
		l.window = append(l.window, queued{routed: routed{seq: row.Seq, ev: ev}, reread: true})
	}
	if len(rows) == laneWindow {
		l.backlog = true
	}
	return nil
}

// deliver makes the first attempt of each event of the batch (one whose first attempt is already
// recorded is not resent: its stored outcome decides), records the attempts and removes the
// finished events from the queue in one transaction, starts the retry workflow of each failed
// one, and then removes those. An error leaves the rest queued.
func (l *lane) deliver(ctx context.Context, batch []queued) error {
	d := l.p.a.Delivery
	ep, err := l.endpoint(ctx)
	if err != nil {
		return err
	}
	seqs := make([]int64, len(batch))
	for i, q := range batch {
		seqs[i] = q.seq
	}
	if ep == nil { // deleted or disabled: nothing is sent
		return l.p.a.Queue.Complete(ctx, l.id, nil, seqs)
	}
	per, _ := ep.Throttle()
	l.mu.Lock()
	l.perSecond = per
	l.mu.Unlock()
	var reread []string
	for _, q := range batch {
		if q.reread {
			reread = append(reread, q.ev.ID)
		}
	}
	prior := map[string]webhook.Attempt{}
	if len(reread) > 0 {
		if prior, err = l.p.a.Lookup.RecordedAttempts(ctx, l.id, reread, 1); err != nil {
			return err
		}
	}

	type outcome struct {
		sent
		recorded bool
		err      error
	}
	outs := make([]outcome, len(batch))
	var wg sync.WaitGroup
	sem := make(chan struct{}, laneConcurrency)
	for i, q := range batch {
		if rec, ok := prior[q.ev.ID]; ok {
			outs[i] = outcome{sent: sent{rec: rec}, recorded: true}
			continue
		}
		if err := d.throttle(ctx, ep); err != nil {
			outs[i].err = err
			continue
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			s, err := d.attempt(ctx, ep, q.ev, 1)
			outs[i] = outcome{sent: s, err: err}
		}()
	}
	wg.Wait()

	var (
		attempts      []webhook.Attempt
		done, retried []int64
		retry         []int
		errs          []error
	)
	succeeded, gone := false, false
	for i, o := range outs {
		if o.err != nil {
			errs = append(errs, o.err)
			continue
		}
		if !o.recorded {
			attempts = append(attempts, o.rec)
		}
		r := o.rec.Result
		switch {
		case r.Success:
			succeeded = true
		case r.Gone:
			gone = true
		case o.abort:
		default:
			retry = append(retry, i)
			continue
		}
		done = append(done, batch[i].seq)
	}
	if len(retry) > 0 {
		// An endpoint deleted or disabled while the batch was out (a receiver that hangs is
		// often switched off meanwhile) gets no retries.
		live, err := d.liveEndpoint(ctx, l.id)
		if err != nil {
			return err
		}
		if live == nil {
			for _, i := range retry {
				done = append(done, batch[i].seq)
			}
			retry = nil
		}
	}
	if err := l.p.a.Queue.Complete(ctx, l.id, attempts, done); err != nil {
		return err
	}
	if err := d.settle(ctx, ep, succeeded, gone); err != nil {
		errs = append(errs, err)
	}
	// Failed first attempts: their retries are started before they leave the queue.
	var mu sync.Mutex
	sem = make(chan struct{}, laneRetryStarts)
	for _, i := range retry {
		o := outs[i]
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			delay, more := l.p.a.Schedule.NextDelayAfter(1, o.rec.Result, o.retryAfter, rand.Float64)
			var err error
			if more {
				err = l.p.a.Retries.StartRetry(ctx, l.id, batch[i].ev, 1, delay)
			} else { // a schedule without retries: exhausted at the first failure
				err = d.Exhausted(ctx, l.id)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			retried = append(retried, batch[i].seq)
		}()
	}
	wg.Wait()
	if len(retried) > 0 {
		if err := l.p.a.Queue.Complete(ctx, l.id, nil, retried); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
