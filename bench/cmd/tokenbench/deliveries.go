package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/adapters/webhooksender"
	"github.com/tokenscope/tokenscope/app/webhookendpoint"
	"github.com/tokenscope/tokenscope/bench/load"
	"github.com/tokenscope/tokenscope/bench/report"
	"github.com/tokenscope/tokenscope/domain/webhook"
	"github.com/tokenscope/tokenscope/workflows"
)

// The webhook delivery rows (issue 12). Events are written straight into the outbox, as the
// engine's ingest transaction does, so the rows measure the delivery path alone: dispatcher,
// fan-out, signing, sending and recording. Each event's commit time is taken right after its
// insert commits; the loopback receiver notes the first arrival of every webhook-id.

// deliveryTarget is the rate: signed deliveries per second, to one endpoint or in total.
const deliveryTarget = 1000.0

// deliverySizes are a scale's delivery rows: events to one endpoint, endpoints of the fan-out
// rows (each event goes to all of them), deliveries of a fan-out row, and how long the paced
// latency row writes events at deliveryTarget per second.
type deliverySizes struct {
	oneEndpoint int
	endpoints   int
	fanout      int
	paced       time.Duration
}

// webhookDeliveryRows runs the delivery rows on endpoints of their own (outside the API's
// 10-per-account limit: one account per 10 endpoints) and deletes them afterwards.
func (b *bench) webhookDeliveryRows(ctx context.Context) []report.Row {
	sz := b.deliverySizes
	rows := []report.Row{
		{Op: fmt.Sprintf("webhook deliveries, %d events to one endpoint", sz.oneEndpoint), Data: "-"},
		{Op: fmt.Sprintf("webhook deliveries, %d events × %d endpoints", sz.fanout/sz.endpoints, sz.endpoints), Data: "-"},
		{Op: fmt.Sprintf("webhook deliveries, same, 1 of %d endpoints hanging (the other %d)", sz.endpoints, sz.endpoints-1), Data: "-"},
		{Op: fmt.Sprintf("webhook event → first attempt, %.0f events/s for %s, one endpoint", deliveryTarget, sz.paced), Data: "-"},
	}
	missing := func(why string) []report.Row {
		b.logf("  webhook deliveries: %s", why)
		for i := range rows {
			if rows[i].Subject.Name == "" {
				rows[i].Subject = report.Measure{Name: "deliveries", Missing: why}
			}
		}
		return rows
	}
	b.alive(ctx)
	guard := webhooksender.Guard{}
	if allowed, err := webhooksender.ParseCIDRs("127.0.0.0/8,::1/128"); err == nil {
		guard.Allowed = allowed
	}
	filter, err := webhooksender.NewFilter()
	if err != nil {
		return missing("webhook filter: " + err.Error())
	}
	store := postgres.NewWebhookStore(b.st.pool)
	svc := webhookendpoint.New(store, store, guard, filter, wallClock{})
	// Endpoints left by earlier rows would receive these events too.
	if _, err := b.st.pool.Exec(ctx, `UPDATE webhook_endpoints SET disabled = true`); err != nil {
		return missing("disable earlier endpoints: " + err.Error())
	}
	var created []string
	// done disables the endpoints of the rows measured so far, so a row's events are matched
	// against its own endpoints only; they are deleted at the end.
	done := func() {
		_, _ = b.st.pool.Exec(context.WithoutCancel(ctx), `UPDATE webhook_endpoints SET disabled = true WHERE id = ANY ($1)`, created)
	}
	defer func() {
		_, _ = b.st.pool.Exec(context.WithoutCancel(ctx), `DELETE FROM webhook_endpoints WHERE id = ANY ($1)`, created)
	}()
	// Every row's endpoints filter on the row's run tag, so a row's events reach only its own.
	wh := func(int) string { return "wh" }
	mk := func(run string, n int, path func(i int) string) ([]string, error) {
		var ids []string
		for i := range n {
			acct := fmt.Sprintf("tokenbench-wh-%s-%d", run, i/webhook.MaxEndpointsPerAccount)
			if _, err := b.st.pool.Exec(ctx, `INSERT INTO accounts (id, name) VALUES ($1, $1) ON CONFLICT DO NOTHING`, acct); err != nil {
				return nil, err
			}
			e, err := svc.Create(ctx, acct, webhookendpoint.Creation{URL: fmt.Sprintf("%s/%s/%d", b.rcv.base, path(i), i), Fields: webhook.Patch{
				Channels: webhook.Value([]webhook.Channel{webhook.TokenCreated}),
				Filter:   webhook.Value(fmt.Sprintf("data.run == %q", run))}})
			if err != nil {
				return nil, err
			}
			ids = append(ids, e.ID())
			created = append(created, e.ID())
		}
		return ids, nil
	}

	b.logf("measuring plain POSTs to the webhook receiver")
	payload := []byte(strings.Repeat("x", 300))
	r := load.Run(ctx, b.opts, func(ctx context.Context, _, _ int) error {
		_, err := load.Do(ctx, b.client, load.Request{Method: "POST", URL: b.rcv.base + "/plain", Body: payload})
		return err
	})
	plain := measureOf("plain POSTs to the receiver", r)
	plain.Unit = "POSTs/s"
	rateGoal := func(what string) *report.Goal {
		g := &report.Goal{Text: what + " ≥ 1,000/s", Metric: report.Rate, Min: 1e9}
		if plain.Rate > 0 {
			g.Min = deliveryTarget / plain.Rate
		}
		return g
	}

	// 1. A burst to one endpoint.
	if _, err := mk("one", 1, wh); err != nil {
		return missing("create endpoint: " + err.Error())
	}
	b.logf("measuring %d webhook deliveries to one endpoint", sz.oneEndpoint)
	rows[0].Subject = b.deliveryBurst(ctx, "one", sz.oneEndpoint, 1, nil)
	rows[0].Baselines = []report.Measure{plain}
	rows[0].Goal = rateGoal("deliveries/s")
	done()

	// 2. Fan-out to n endpoints.
	n := sz.endpoints
	if _, err := mk("fan", n, wh); err != nil {
		return missing("create endpoints: " + err.Error())
	}
	b.logf("measuring %d webhook deliveries over %d endpoints", sz.fanout, n)
	rows[1].Subject = b.deliveryBurst(ctx, "fan", sz.fanout/n, n, nil)
	rows[1].Baselines = []report.Measure{plain}
	rows[1].Goal = rateGoal("deliveries/s in total")
	done()

	// 3. The same with one endpoint hanging until the sender gives up.
	iso, err := mk("iso", n, func(i int) string {
		if i == 0 {
			return "hang"
		}
		return "wh"
	})
	if err != nil {
		return missing("create endpoints: " + err.Error())
	}
	b.logf("measuring %d webhook deliveries over %d endpoints, one hanging", sz.fanout, n)
	rows[2].Subject = b.deliveryBurst(ctx, "iso", sz.fanout/n, n-1, func(path string) bool { return strings.HasPrefix(path, "/hang/") })
	rows[2].Baselines = []report.Measure{plain}
	rows[2].Goal = rateGoal("deliveries/s to the others")
	rows[2].Note = "the hanging endpoint's deliveries are not counted; it answers nothing until the sender's timeout"
	var failed int
	if err := b.st.pool.QueryRow(ctx, `SELECT count(*) FROM webhook_attempts WHERE endpoint_id = ANY ($1) AND attempt = 1 AND NOT succeeded`,
		iso[1:]).Scan(&failed); err == nil && failed > 0 {
		rows[2].Note += fmt.Sprintf("; %d first attempts to the others failed (their retries come 5 s later)", failed)
	}
	// Also stops the hanging endpoint's retries from loading the later rows.
	done()

	// 4. Latency at the target rate.
	if _, err := mk("lat", 1, wh); err != nil {
		return missing("create endpoint: " + err.Error())
	}
	b.logf("measuring event → first attempt at %.0f events/s for %s", deliveryTarget, sz.paced)
	rows[3].Subject = b.deliveryPaced(ctx, "lat", sz.paced)
	rows[3].Baselines = []report.Measure{plain}
	rows[3].Goal = &report.Goal{Text: "event → first attempt p99 ≤ 1 s (p50 ≤ 200 ms)", Metric: report.P99, Max: 1e-9}
	if plain.P99 > 0 {
		rows[3].Goal.Max = float64(time.Second) / float64(plain.P99)
	}
	if s := rows[3].Subject; s.Measured() && s.P50 > 200*time.Millisecond {
		rows[3].Note = fmt.Sprintf("p50 %.0f ms misses its 200 ms goal", ms64(s.P50))
	}
	return rows
}

// outboxBatch is how many events one insert commits in the burst rows.
const outboxBatch = 500

// insertEvents writes one outbox row per address in one transaction and returns the commit time.
func (b *bench) insertEvents(ctx context.Context, run string, addrs []string) (time.Time, error) {
	ids := make([]string, len(addrs))
	payloads := make([]string, len(addrs))
	now := time.Now().UnixMilli()
	for i, a := range addrs {
		ids[i] = "sol.token.created:" + a
		payloads[i] = fmt.Sprintf(`{"address":%q,"run":%q,"name":"bench","symbol":"BNCH","decimals":9}`, a, run)
	}
	_, err := b.st.pool.Exec(ctx, `INSERT INTO outbox (event_id, channel, payload, created_at_ms)
		SELECT e, 'sol.token.created', p::jsonb, $3 FROM unnest($1::text[], $2::text[]) AS t(e, p)`, ids, payloads, now)
	return time.Now(), err
}

// deliveryBurst writes events (outboxBatch per commit, as fast as the database takes them) that
// each go to endpoints endpoints, and measures from the first commit to the last first arrival.
// Requests to a path ignore() accepts are not counted.
func (b *bench) deliveryBurst(ctx context.Context, run string, events, endpoints int, ignore func(path string) bool) report.Measure {
	addrs := make([]string, events)
	stamp := time.Now().UnixNano()
	for i := range addrs {
		addrs[i] = fmt.Sprintf("bench-%s-%d-%d", run, stamp, i)
	}
	want := make(map[string]bool, events)
	for _, a := range addrs {
		want[workflows.MessageID("sol.token.created:"+a)] = true
	}
	done := b.rcv.expectDeliveries(want, endpoints, ignore)
	committed := map[string]time.Time{}
	var first time.Time
	for i := 0; i < len(addrs); i += outboxBatch {
		part := addrs[i:min(i+outboxBatch, len(addrs))]
		at, err := b.insertEvents(ctx, run, part)
		if err != nil {
			return report.Measure{Name: "deliveries", Errors: 1, FirstError: err.Error()}
		}
		if first.IsZero() {
			first = at
		}
		for _, a := range part {
			committed[workflows.MessageID("sol.token.created:"+a)] = at
		}
	}
	return b.rcv.measure(ctx, done, first, committed, events*endpoints)
}

// deliveryPaced writes deliveryTarget events per second (in 10 ms steps) for d to the run's one
// endpoint and reports event → first attempt.
func (b *bench) deliveryPaced(ctx context.Context, run string, d time.Duration) report.Measure {
	const step = 10 * time.Millisecond
	per := int(deliveryTarget * step.Seconds())
	steps := int(d / step)
	stamp := time.Now().UnixNano()
	want := map[string]bool{}
	var all [][]string
	for s := range steps {
		part := make([]string, per)
		for i := range part {
			part[i] = fmt.Sprintf("bench-%s-%d-%d-%d", run, stamp, s, i)
			want[workflows.MessageID("sol.token.created:"+part[i])] = true
		}
		all = append(all, part)
	}
	done := b.rcv.expectDeliveries(want, 1, nil)
	committed := map[string]time.Time{}
	start := time.Now()
	for s, part := range all {
		if wait := time.Until(start.Add(time.Duration(s) * step)); wait > 0 {
			time.Sleep(wait)
		}
		at, err := b.insertEvents(ctx, run, part)
		if err != nil {
			return report.Measure{Name: "deliveries", Errors: 1, FirstError: err.Error()}
		}
		for _, a := range part {
			committed[workflows.MessageID("sol.token.created:"+a)] = at
		}
	}
	m := b.rcv.measure(ctx, done, start, committed, len(want))
	m.Name = "event → first attempt"
	return m
}

// deliveryLog is what the receiver saw of one delivery row.
type deliveryLog struct {
	want      map[string]bool
	endpoints int
	ignore    func(path string) bool
	first     map[string]time.Time // webhook-id + path → first arrival
	requests  int                  // counted requests, repeats included
	firstByID map[string]time.Time // webhook-id → earliest arrival at any endpoint
	done      chan struct{}
}

// expectDeliveries makes the receiver's /wh/ and /hang/ paths count the row's deliveries: every
// id in want at endpoints endpoints; the channel closes when all arrived.
func (r *receiver) expectDeliveries(want map[string]bool, endpoints int, ignore func(path string) bool) <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dl = &deliveryLog{want: want, endpoints: endpoints, ignore: ignore, first: map[string]time.Time{},
		firstByID: map[string]time.Time{}, done: make(chan struct{})}
	return r.dl.done
}

// webhook handles /wh/ and /hang/: a hanging path answers nothing until the sender gives up.
func (r *receiver) webhook(w http.ResponseWriter, req *http.Request) {
	_, _ = io.Copy(io.Discard, req.Body)
	now := time.Now()
	id := req.Header.Get("webhook-id")
	r.mu.Lock()
	dl := r.dl
	if dl != nil && dl.want[id] && (dl.ignore == nil || !dl.ignore(req.URL.Path)) {
		dl.requests++
		k := id + " " + req.URL.Path
		if _, seen := dl.first[k]; !seen {
			dl.first[k] = now
			if t, ok := dl.firstByID[id]; !ok || now.Before(t) {
				dl.firstByID[id] = now
			}
			if len(dl.first) == len(dl.want)*dl.endpoints {
				close(dl.done)
			}
		}
	}
	r.mu.Unlock()
	if strings.HasPrefix(req.URL.Path, "/hang/") {
		select {
		case <-req.Context().Done():
		case <-time.After(time.Minute):
		}
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{}`))
}

// measure waits for the row's deliveries (bounded) and reports their rate from start to the last
// first arrival, the per-delivery latency from its event's commit to its first arrival (p50,
// p99), and as errors the deliveries that never arrived. Repeats of a delivery are counted in the
// first error, as the no-failure rows must have none.
func (r *receiver) measure(ctx context.Context, done <-chan struct{}, start time.Time, committed map[string]time.Time, total int) report.Measure {
	limit := 30*time.Second + time.Duration(total)*20*time.Millisecond
	select {
	case <-done:
	case <-time.After(limit):
	case <-ctx.Done():
	}
	r.mu.Lock()
	dl := r.dl
	r.dl = nil
	var last time.Time
	lat := make([]time.Duration, 0, len(dl.first))
	for k, t := range dl.first {
		if t.After(last) {
			last = t
		}
		id, _, _ := strings.Cut(k, " ")
		lat = append(lat, t.Sub(committed[id]))
	}
	got, repeats := len(dl.first), dl.requests-len(dl.first)
	r.mu.Unlock()
	// No failure is injected at the counted endpoints, so a repeat is an error too.
	m := report.Measure{Name: "signed deliveries (first commit → last arrival)", Unit: "deliveries/s", Calls: got, Errors: total - got + repeats}
	if got > 0 {
		m.Rate = float64(got) / last.Sub(start).Seconds()
		slices.Sort(lat)
		m.P50, m.P99 = lat[len(lat)/2], lat[min(len(lat)-1, len(lat)*99/100)]
	}
	switch {
	case got < total:
		m.FirstError = fmt.Sprintf("%d of %d deliveries arrived within %s", got, total, limit)
	case repeats > 0:
		m.FirstError = fmt.Sprintf("%d deliveries arrived more than once", repeats)
	}
	return m
}
