package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/adapters/webhooksender"
	"github.com/tokenscope/tokenscope/app/webhookendpoint"
	"github.com/tokenscope/tokenscope/bench/load"
	"github.com/tokenscope/tokenscope/bench/report"
	"github.com/tokenscope/tokenscope/domain/webhook"
)

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

var workflowGoal = &report.Goal{Text: "p99 ≤ 2× bare workflow start p99", Baseline: 0, Metric: report.P99, Max: 2}

// kytRows measures the withdrawal registration (every call a new registration, so every call
// starts a workflow) against a no-op workflow start and round-trip and bare Fiber.
func (b *bench) kytRows(ctx context.Context) []report.Row {
	b.alive(ctx)
	b.logf("measuring KYT withdrawal POST")
	run := time.Now().UnixNano()
	sub, body := b.httpSeries(ctx, seriesEndpoint, func(w, i int) load.Request {
		payload := fmt.Sprintf(`{"address":"9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM","asset":"SOL","assetAmount":"%d.%d",`+
			`"attemptTimestamp":"2026-01-15T10:30:00.000Z","network":"Solana","assetPrice":"150","memo":"tokenbench %d"}`, w+1, i, run)
		return load.Request{Method: "POST", URL: b.st.httpURL + "/v2/kyt/withdrawal", Header: b.auth(), Body: []byte(payload)}
	})
	row := report.Row{Op: "10 KYT withdrawal POST", Data: "-", Subject: sub, Goal: workflowGoal}
	row.Baselines = []report.Measure{b.noopSeries(ctx, false), b.noopSeries(ctx, true), b.fiberSeries(ctx, "kyt", "POST", body)}
	return []report.Row{row, b.kytBurstRow(ctx, run)}
}

// kytBurst is how many withdrawal registrations the burst row POSTs at once.
const kytBurst = 200

// kytBurstRow POSTs kytBurst new withdrawal registrations at the same moment, each on its own
// connection, and reports their answers' latency, how many were accepted (200) and refused
// (503, the only other answer the service may give a burst), and how long the accepted ones took
// to reach registered (polled in the database, at most a minute).
func (b *bench) kytBurstRow(ctx context.Context, run int64) report.Row {
	b.alive(ctx)
	b.logf("measuring a burst of %d concurrent KYT withdrawal POSTs", kytBurst)
	client := load.Client(kytBurst)
	var (
		mu        sync.Mutex
		lat       []time.Duration
		ok, busy  int
		others    int
		firstErr  string
		wg        sync.WaitGroup
		start     = make(chan struct{})
		memoMatch = fmt.Sprintf("tokenbench burst %d", run)
	)
	for i := range kytBurst {
		wg.Add(1)
		go func() {
			defer wg.Done()
			payload := fmt.Sprintf(`{"address":"9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM","asset":"SOL","assetAmount":"1.%d",`+
				`"attemptTimestamp":"2026-01-15T10:30:00.000Z","network":"Solana","assetPrice":"150","memo":"%s %d"}`, i, memoMatch, i)
			<-start
			t0 := time.Now()
			res, err := load.Do(ctx, client, load.Request{Method: "POST", URL: b.st.httpURL + "/v2/kyt/withdrawal", Header: b.auth(),
				Body: []byte(payload)})
			d := time.Since(t0)
			mu.Lock()
			defer mu.Unlock()
			lat = append(lat, d)
			switch {
			case err == nil:
				ok++
			case res.Status == 503:
				busy++
			default:
				others++
				if firstErr == "" {
					firstErr = err.Error()
				}
			}
		}()
	}
	began := time.Now()
	close(start)
	wg.Wait()
	answered := time.Since(began)
	m := report.Measure{Name: "POST /v2/kyt/withdrawal, all at once", Calls: len(lat), Errors: others, FirstError: firstErr}
	m.P50, m.P99 = load.Percentile(lat, 50), load.Percentile(lat, 99)
	// The accepted registrations reach registered once their workflows have screened them.
	var stored, pending int
	deadline := time.Now().Add(time.Minute)
	for {
		err := b.st.pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE status = 'pending') FROM kyt_registrations
			WHERE request->'withdrawal'->>'memo' LIKE $1 || ' %'`, memoMatch).Scan(&stored, &pending)
		if err != nil {
			m.Missing = "read the registrations: " + err.Error()
			break
		}
		if pending == 0 || time.Now().After(deadline) {
			break
		}
		sleepCtx(ctx, 100*time.Millisecond)
	}
	settled := time.Since(began)
	if stored != ok {
		m.Errors++
		m.FirstError = fmt.Sprintf("%d registrations stored for %d accepted", stored, ok)
	}
	return report.Row{Op: "10 KYT withdrawal POST, a burst of 200 at once", Data: "-", Subject: m,
		Note: fmt.Sprintf("%d accepted (200), %d refused (503), %d other answers; every answer within %s; %d registrations "+
			"stored, every one out of pending %s after the burst began (%d still pending when the polling stopped, at most "+
			"a minute)", ok, busy, others, answered.Round(time.Millisecond), stored, settled.Round(time.Millisecond), pending)}
}

// jobRows measures starting a calculate-pnl job, reading jobs and the first message of a job's
// stream.
func (b *bench) jobRows(ctx context.Context, t targets) []report.Row {
	b.alive(ctx)
	b.logf("measuring job start (calculate-pnl)")
	var ids []string
	mk := func(w, i int) load.Request {
		wt := pick(t.wallets, w, i)
		return load.Request{Method: "POST", URL: b.st.httpURL + "/v2/wallet/" + wt.chain + "/" + wt.wallet + "/calculate-pnl",
			Header: b.auth(), Body: []byte(`{}`)}
	}
	sub, body := b.httpSeries(ctx, seriesEndpoint, mk)
	start := report.Row{Op: "12 job start (POST calculate-pnl)", Data: "-", Subject: sub, Goal: workflowGoal}
	start.Baselines = []report.Measure{b.noopSeries(ctx, false), b.noopSeries(ctx, true), b.fiberSeries(ctx, "job-start", "POST", body)}
	rows := []report.Row{start}
	if !sub.Measured() {
		return rows
	}
	for k := 0; k < 16; k++ {
		res, err := load.Do(ctx, b.client, mk(k, 1000+k))
		if err != nil {
			break
		}
		var o struct {
			JobID string `json:"jobId"`
		}
		if json.Unmarshal(res.Body, &o) == nil && o.JobID != "" {
			ids = append(ids, o.JobID)
		}
	}
	if len(ids) == 0 {
		return rows
	}
	time.Sleep(2 * time.Second) // let most of them finish: the stream row reads finished jobs
	b.alive(ctx)
	b.logf("measuring job read")
	sub, body = b.httpSeries(ctx, seriesEndpoint, func(w, i int) load.Request {
		return load.Request{Method: "GET", URL: b.st.httpURL + "/v2/job/" + pick(ids, w, i), Header: b.auth()}
	})
	get := report.Row{Op: "12 job read (GET /v2/job/{id})", Data: "-", Subject: sub}
	get.Baselines = []report.Measure{b.noopSeries(ctx, true), b.fiberSeries(ctx, "job-get", "GET", body)}
	rows = append(rows, get)

	b.logf("measuring job stream (first message)")
	r := load.Run(ctx, b.opts, func(ctx context.Context, w, i int) error {
		return firstEvent(ctx, b, b.st.httpURL+"/v2/job/"+pick(ids, w, i)+"/streaming")
	})
	stream := report.Row{Op: "12 job stream, first message", Data: "-", Subject: measureOf(seriesEndpoint, r),
		Note: "time to the first SSE data line of a finished job"}
	stream.Baselines = []report.Measure{b.noopSeries(ctx, true)}
	return append(rows, stream)
}

// firstEvent opens a job stream and returns once its first data line arrived.
func firstEvent(ctx context.Context, b *bench, u string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := newGet(ctx, u, b.auth())
	if err != nil {
		return err
	}
	res, err := b.client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		return fmt.Errorf("GET job stream: HTTP %d", res.StatusCode)
	}
	buf := make([]byte, 4096)
	var seen []byte
	for {
		n, err := res.Body.Read(buf)
		seen = append(seen, buf[:n]...)
		if bytes.Contains(seen, []byte("data:")) && bytes.Contains(seen[bytes.Index(seen, []byte("data:")):], []byte("\n")) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("job stream ended before a message: %w", err)
		}
	}
}

// webhookRows creates an endpoint on the loopback receiver and measures GET and PATCH of it
// against the same calls through the use case (the delivery rows are webhookDeliveryRows).
func (b *bench) webhookRows(ctx context.Context) []report.Row {
	create := func(path, ch string) (string, error) {
		res, err := load.Do(ctx, b.client, load.Request{Method: "POST", URL: b.st.httpURL + "/v2/webhook/endpoint", Header: b.auth(),
			Body: []byte(fmt.Sprintf(`{"url":%q,"channels":[%q],"description":"tokenbench"}`, b.rcv.base+path, ch))})
		if err != nil {
			return "", err
		}
		var o struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(res.Body, &o); err != nil || o.ID == "" {
			return "", fmt.Errorf("create endpoint answered %.200s", res.Body)
		}
		return o.ID, nil
	}
	missing := func(op, why string) report.Row {
		return report.Row{Op: op, Data: "-", Subject: report.Measure{Name: seriesEndpoint, Missing: why}}
	}
	b.alive(ctx)
	id, err := create("/patched", "sol.token.migrated")
	if err != nil {
		b.logf("  create webhook endpoint: %v", err)
		return []report.Row{missing("14 webhook endpoint GET", err.Error()), missing("13 webhook endpoint PATCH", err.Error())}
	}
	guard := webhooksender.Guard{}
	if allowed, err := webhooksender.ParseCIDRs("127.0.0.0/8,::1/128"); err == nil {
		guard.Allowed = allowed
	}
	filter, err := webhooksender.NewFilter()
	if err != nil {
		b.logf("  webhook filter: %v", err)
	}
	store := postgres.NewWebhookStore(b.st.pool)
	svc := webhookendpoint.New(store, store, guard, filter, wallClock{})

	b.logf("measuring webhook endpoint GET")
	sub, body := b.httpSeries(ctx, seriesEndpoint, func(w, i int) load.Request {
		return load.Request{Method: "GET", URL: b.st.httpURL + "/v2/webhook/endpoint/" + id, Header: b.auth()}
	})
	get := report.Row{Op: "14 webhook endpoint GET", Data: "-", Subject: sub, Goal: sqlGoal}
	get.Baselines = []report.Measure{
		b.sqlSeries(ctx, func(ctx context.Context, _, _ int) error { _, err := svc.Get(ctx, benchAccount, id); return err }),
		b.fiberSeries(ctx, "webhook-get", "GET", body)}
	get.Baselines[0].Name = "raw SQL (app/webhookendpoint via pgx)"

	b.logf("measuring webhook endpoint PATCH")
	patch := func(w, i int) []byte {
		return []byte(fmt.Sprintf(`{"endpointId":%q,"description":"tokenbench %d-%d","metadata":{"k":"%d"}}`, id, w, i, i))
	}
	sub, body = b.httpSeries(ctx, seriesEndpoint, func(w, i int) load.Request {
		return load.Request{Method: "PATCH", URL: b.st.httpURL + "/v2/webhook/endpoint", Header: b.auth(), Body: patch(w, i)}
	})
	pat := report.Row{Op: "13 webhook endpoint PATCH (one row)", Data: "-", Subject: sub, Goal: sqlGoal,
		Note: "every call updates the same endpoint, so calls serialize on its row lock in both series"}
	pat.Baselines = []report.Measure{
		b.sqlSeries(ctx, func(ctx context.Context, w, i int) error {
			n := i + 1_000_000
			_, err := svc.Patch(ctx, benchAccount, id, webhook.Patch{Description: webhook.Value(fmt.Sprintf("tokenbench %d-%d", w, n)),
				Metadata: webhook.Value(map[string]string{"k": strconv.Itoa(n)})})
			return err
		}),
		b.fiberSeries(ctx, "webhook-patch", "PATCH", body)}
	pat.Baselines[0].Name = "raw SQL (app/webhookendpoint via pgx)"
	return []report.Row{get, pat}
}
