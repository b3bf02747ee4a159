package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tokenscope/tokenscope/adapters/ndjson"
	"github.com/tokenscope/tokenscope/app/simulate"
	"github.com/tokenscope/tokenscope/bench/load"
	"github.com/tokenscope/tokenscope/bench/report"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/domain/trade"
)

// The live ingest rows: a sender POSTs simulated trades of the tokens that exist to /v2/ingest
// on a fixed schedule (rate trades/s, up to maxPostsInFlight POSTs at a time) while open-loop
// readers call operations 2, 3, 8 and 9 at liveReadRate requests/s in total, after the same
// readers ran alone for the idle baseline. They measure whether the service keeps up (the
// sender's queue of trades due but not yet sent), how fresh the reads are (time from the POST's
// response to the trade being visible in operation 3 and counted in operation 2's 1m window),
// what the ingest costs the readers (their p99 under ingest against their idle p99), and what it
// costs the machine: service + Postgres CPU per acknowledged trade, the readers' share taken out.

// liveFill is the simulated market the live sender continues: the configuration of a fill
// that was imported, so its tokens, pools and wallet balances are those of the database.
type liveFill struct {
	fill
	end time.Time
}

// Sender settings: a POST carries every trade due since the last one, at most maxPostTrades, with
// at most maxPostsInFlight POSTs in flight, and the sender looks at the schedule every senderTick.
const (
	maxPostTrades    = 2000
	maxPostsInFlight = 4
	senderTick       = 20 * time.Millisecond
	// probeEvery is the smallest gap between two freshness samples; probeLimit is how long a
	// sample is polled before it counts as an error; probePoll is the polling interval.
	probeEvery = 250 * time.Millisecond
	probeLimit = 10 * time.Second
	probePoll  = 10 * time.Millisecond
	// coldFor is how long a sampled trade's token must have had no trade: its 1m window then
	// counts no trade but the sample (and those sent after it).
	coldFor = 65 * time.Second
)

var (
	liveRatioGoal  = &report.Goal{Text: "p99 ≤ 2× idle p99 (same readers, same run)", Baseline: 0, Metric: report.P99, Max: 2}
	freshnessLimit = report.Goal{Text: "p50 ≤ 250 ms, p99 ≤ 1 s", MaxP50: 250 * time.Millisecond, MaxP99: time.Second}
)

// liveRows runs the idle readers, then the sender with the readers, and returns the rows.
func (b *bench) liveRows(ctx context.Context, t targets, lf liveFill, rate int, dur time.Duration, data string) []report.Row {
	b.alive(ctx)
	op := fmt.Sprintf("live ingest: %s trades/s POSTed to /v2/ingest for %s", thousands(int64(rate)), dur)
	missing := func(why string) []report.Row {
		return []report.Row{{Op: op, Data: data, Subject: report.Measure{Name: "sender", Missing: why}}}
	}
	readers := pickOps(b.readOps(t), "2 ", "3 trade list, by token", "8 ", "9 ")
	if len(readers) != 4 {
		return missing("the reader operations are not all there")
	}
	b.logf("live: rebuilding the simulator of fill seed %d", lf.Seed)
	sim := simulate.New(simulate.Config{Seed: lf.Seed, Tokens: lf.Tokens, Wallets: lf.Wallets, Trades: lf.Trades,
		Start: lf.end.Add(-fillSpan), End: lf.end})
	if err := sim.Backfill(ctx, discard{}); err != nil {
		return missing("rebuild the simulator: " + err.Error())
	}
	hot, err := b.recentTokens(ctx)
	if err != nil {
		return missing("read recently traded tokens: " + err.Error())
	}

	// An unrecorded pass first, as before the growth rows: connections and caches warm.
	warm := max(b.opts.Duration/4, time.Second)
	b.logf("live: readers alone at %d requests/s for %s (warm-up) then %s (idle baseline)", liveReadRate, warm, b.opts.Duration)
	b.openLoad(ctx, readers, func(ctx context.Context) { sleepCtx(ctx, warm) })
	meter := cpuMeter{pool: b.st.pool}
	if b.st.svc != nil && b.st.svc.Process != nil {
		meter.svcPid = b.st.svc.Process.Pid
	}
	var idleCPU, busyCPU cpuUse
	var cpuErr error
	measured := func(ctx context.Context, use *cpuUse, phase func(context.Context)) {
		c0, err := meter.sample(ctx)
		phase(ctx)
		c1, err1 := meter.sample(context.WithoutCancel(ctx))
		if err = errors.Join(err, err1); err != nil && cpuErr == nil {
			cpuErr = err
		}
		*use = c1.since(c0)
	}
	idle := b.openLoad(ctx, readers, func(ctx context.Context) {
		measured(ctx, &idleCPU, func(ctx context.Context) { sleepCtx(ctx, b.opts.Duration) })
	})

	b.logf("live: sending %d trades/s for %s (POSTs of ≤ %d trades, ≤ %d in flight) with readers at %d requests/s",
		rate, dur, maxPostTrades, maxPostsInFlight, liveReadRate)
	var mem *memSampler
	if b.st.svc != nil && b.st.svc.Process != nil {
		mem = sampleMemory(b.st.svc.Process.Pid, 250*time.Millisecond)
	}
	rssBefore := int64(0)
	if mem != nil {
		rssBefore, _, _ = procMemory(b.st.svc.Process.Pid)
	}
	// Each kind of freshness (operation 3, operation 2's 1m window) has probers of its own, handed a
	// sample only when one is idle: a sample never waits for a prober, so its clock, started at the
	// POST's answer, counts the service's delay only (a slow kind does not hold up the other).
	s := &sender{b: b, sim: sim, rate: rate, dur: dur, lastSent: hot}
	var pr prober
	var probes sync.WaitGroup
	for i := range s.samples {
		s.samples[i] = make(chan sample)
		for range 2 {
			probes.Add(1)
			go func() { defer probes.Done(); pr.run(ctx, b, i, s.samples[i]) }()
		}
	}
	var drained time.Duration
	var drainErr error
	busy := b.openLoad(ctx, readers, func(ctx context.Context) {
		measured(ctx, &busyCPU, func(ctx context.Context) {
			s.run(ctx)
			// The CPU counts until every acknowledged trade is derived: with wait=commit the
			// service may still be deriving when the sender stops.
			t0 := time.Now()
			drainErr = b.drainDerivations(ctx, liveDrainLimit)
			drained = time.Since(t0)
		})
		for _, ch := range s.samples {
			close(ch)
		}
		probes.Wait()
	})
	var peak, maxRSS int64
	if mem != nil {
		peak, maxRSS = mem.stop()
	}

	// The sender row: achieved rate against the schedule, and the queue over time.
	sub := report.Measure{Name: "POST /v2/ingest, trades acknowledged", Unit: "trades/s", Calls: s.acked, Errors: s.errors,
		FirstError: s.firstErr, PeakRSS: peak}
	if s.elapsed > 0 {
		sub.Rate = float64(s.acked) / s.elapsed.Seconds()
	}
	sub.P50, sub.P99 = load.Percentile(s.postLat, 50), load.Percentile(s.postLat, 99)
	planned := int(float64(rate) * dur.Seconds())
	sched := report.Measure{Name: "schedule", Unit: "trades/s", Calls: planned, Rate: float64(rate)}
	endQueue := planned - s.sent
	backlogOK := endQueue <= rate
	senderRow := report.Row{Op: op, Data: data, Subject: sub, Baselines: []report.Measure{sched},
		Goal: &report.Goal{Text: "achieved ≥ 0.95× the schedule, no growing backlog (≤ 1 s of trades queued at the end)",
			Baseline: 0, Metric: report.Rate, Min: 0.95,
			Checks: []report.Check{{Text: "queue at the end ≤ 1 s of trades", Met: backlogOK}}},
		Note: fmt.Sprintf("%s trades (%s events with the launches, snapshots, labels and red packets the simulator makes "+
			"alongside) in %d POSTs over %s; p50/p99 are the POSTs' round trips (each answers after its batch commits); "+
			"queue of trades due but not yet sent, at each tenth of the run: %s (%s at the end); the service "+
			"(tokenscope-dev: API, worker and embedded Temporal in one process) held %s resident before, at most %s "+
			"sampled during, peak (VmHWM) %s",
			thousands(int64(s.acked)), thousands(int64(s.events)), s.posts, s.elapsed.Round(time.Millisecond),
			strings.Join(s.queueTimeline(), ", "), thousands(int64(max(endQueue, 0))), report.Bytes(rssBefore),
			report.Bytes(maxRSS), report.Bytes(peak))}
	if drainErr != nil && cpuErr == nil {
		cpuErr = drainErr
	}
	cpu := cpuRow(op, data, busyCPU, idleCPU, s.acked, peak, cpuErr)
	cpu.Note = fmt.Sprintf("POSTs sent with wait=%s; the phase ends when the service has derived every acknowledged trade, "+
		"%s after the sender stopped. ", b.ingestWait, drained.Round(time.Millisecond)) + cpu.Note
	rows := []report.Row{senderRow, cpu}

	for i, what := range []string{"visible in operation 3 (trade list by token)", "counted in operation 2's 1m window"} {
		lat, errs, first := pr.result(i)
		m := report.Measure{Name: "POST response → " + strings.SplitN(what, " ", 2)[0], Calls: len(lat) + errs, Errors: errs,
			FirstError: first}
		m.P50, m.P99 = load.Percentile(lat, 50), load.Percentile(lat, 99)
		if m.Calls == 0 {
			m.Missing = "no trade sampled (no token without a trade in the previous 65 s)"
		}
		g := freshnessLimit
		rows = append(rows, report.Row{Op: "live ingest: freshness, " + what, Data: data, Subject: m, Goal: &g,
			Note: fmt.Sprintf("sampled trades (one every %s at most, of tokens with no trade in the previous %s), polled every %s "+
				"for up to %s; calls = samples", probeEvery, coldFor, probePoll, probeLimit)})
	}
	for _, o := range readers {
		u, i := busy[o.op], idle[o.op]
		u.Name, i.Name = "under ingest", "idle, before the ingest"
		rows = append(rows, report.Row{Op: "live ingest: readers, " + o.op, Data: data, Subject: u,
			Baselines: []report.Measure{i}, Goal: liveRatioGoal})
	}
	return rows
}

// liveDrainLimit bounds how long the live phase waits, after the sender stops, for the service to
// derive every trade it acknowledged (wait=commit leaves them to its background flushes).
const liveDrainLimit = 2 * time.Minute

// ingestQuery is the query of the live sender's POSTs: none for wait=derived, the default (so
// that the sender also drives a build from before the parameter).
func (b *bench) ingestQuery() string {
	if b.ingestWait == "" || b.ingestWait == "derived" {
		return ""
	}
	return "?wait=" + b.ingestWait
}

// drainDerivations waits until the bench database lists no trade and marks no token for a flush
// (trade_pending, market_pending): everything acknowledged is derived. It fails after limit.
func (b *bench) drainDerivations(ctx context.Context, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		var pending int64
		err := b.st.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM trade_pending) + (SELECT count(*) FROM market_pending)`).Scan(&pending)
		if err != nil {
			return fmt.Errorf("waiting for the derivations: %w", err)
		}
		if pending == 0 {
			return nil
		}
		sleepCtx(ctx, 50*time.Millisecond)
		if ctx.Err() != nil {
			return fmt.Errorf("%d trade lists and token marks still pending %s after the sender stopped", pending, limit)
		}
	}
}

// maxCPUPerTrade and maxLiveRSS are the engine issue's bounds on the live row: service +
// database CPU per acknowledged trade, and the service's peak resident memory.
const (
	maxCPUPerTrade = 100 * time.Microsecond
	maxLiveRSS     = 3 << 29 // 1.5 GiB
)

// cpuRow reports the CPU per acknowledged trade of the live phase: the service's and the
// database's CPU while the sender ran, less the readers' own share (their CPU per second alone,
// in the idle phase, times the phase's length), divided by the trades acknowledged.
func cpuRow(op, data string, busy, idle cpuUse, acked int, peak int64, err error) report.Row {
	name := "service + Postgres CPU per acknowledged trade"
	m := report.Measure{Name: name, Unit: "µs/trade", Calls: acked, PeakRSS: peak}
	if err != nil {
		m.Missing = "CPU not sampled: " + err.Error()
	} else if acked == 0 {
		m.Missing = "no trade acknowledged"
	}
	total, svc, db := perTrade(busy, idle, acked)
	m.Rate = float64(total) / float64(time.Microsecond)
	met := m.Missing == "" && total <= maxCPUPerTrade
	rssOK := peak > 0 && peak <= maxLiveRSS
	return report.Row{Op: op + ": CPU", Data: data, Subject: m,
		Goal: &report.Goal{Text: "≤ 100 µs of service + Postgres CPU per trade; service peak RSS ≤ 1.5 GiB",
			Checks: []report.Check{{Text: "≤ 100 µs per trade", Met: met}, {Text: "peak RSS ≤ 1.5 GiB", Met: rssOK}}},
		Note: fmt.Sprintf("per trade: service %.1f µs + Postgres %.1f µs. Under ingest (%s): service %.2f s, Postgres %.2f s "+
			"of CPU; readers alone (%s, same rate): service %.2f s, Postgres %.2f s, taken out in proportion to the time; "+
			"Postgres = the bench database's backends and the cluster's WAL writer, checkpointer and background writer "+
			"(/proc/<pid>/stat)", us(svc), us(db), busy.wall.Round(time.Millisecond), busy.svc.Seconds(), busy.db.Seconds(),
			idle.wall.Round(time.Millisecond), idle.svc.Seconds(), idle.db.Seconds())}
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// recentTokens lists the tokens traded within coldFor, as the time of their last trade.
func (b *bench) recentTokens(ctx context.Context) (map[string]int64, error) {
	rows, err := b.st.pool.Query(ctx, `SELECT chain, token_address, max(block_timestamp_ms) FROM trades
		WHERE block_timestamp_ms > $1 GROUP BY 1, 2`, time.Now().Add(-coldFor).UnixMilli())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var c, a string
		var at int64
		if err := rows.Scan(&c, &a, &at); err != nil {
			return nil, err
		}
		out[c+"/"+a] = at
	}
	return out, rows.Err()
}

// liveReadRate is the readers' open-loop rate in the live rows: requests/s in total over the
// reader operations, sent on a fixed schedule whatever the answers' speed (closed-loop readers on
// a 2-core machine take every free cycle, and then the row measures the readers, not the ingest).
const liveReadRate = 200

// maxReadsInFlight bounds the open-loop readers' requests in flight; a request due while that
// many are in flight is not sent and counts as an error.
const maxReadsInFlight = 256

// openLoad sends liveReadRate requests/s in total over ops (in turn), each at its scheduled time
// on its own goroutine, while during runs, and returns each operation's measure. A request's
// latency counts from its scheduled time, so a slow answer delays no later request and a stall
// shows in the percentiles (no coordinated omission).
func (b *bench) openLoad(ctx context.Context, ops []readOp, during func(ctx context.Context)) map[string]report.Measure {
	rctx, stop := context.WithCancel(ctx)
	type result struct {
		mu    sync.Mutex
		lat   []time.Duration
		errs  int
		first string
	}
	results := make([]result, len(ops))
	record := func(k int, d time.Duration, err error) {
		r := &results[k]
		r.mu.Lock()
		defer r.mu.Unlock()
		r.lat = append(r.lat, d)
		if err != nil {
			r.errs++
			if r.first == "" {
				r.first = err.Error()
			}
		}
	}
	var wg sync.WaitGroup
	slots := make(chan struct{}, maxReadsInFlight)
	start := time.Now()
	gap := time.Second / liveReadRate
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			due := start.Add(time.Duration(i) * gap)
			sleepCtx(rctx, time.Until(due))
			if rctx.Err() != nil {
				return
			}
			k := i % len(ops)
			select {
			case slots <- struct{}{}:
			default:
				record(k, 0, fmt.Errorf("not sent: %d requests in flight", maxReadsInFlight))
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-slots }()
				cctx, cancel := context.WithTimeout(context.WithoutCancel(rctx), 10*time.Second)
				defer cancel()
				_, err := load.Do(cctx, b.client, ops[k].http(b, k, i))
				record(k, time.Since(due), err)
			}()
		}
	}()
	during(rctx)
	stop()
	wg.Wait()
	elapsed := time.Since(start)
	out := map[string]report.Measure{}
	for k, o := range ops {
		r := &results[k]
		m := report.Measure{Calls: len(r.lat), Errors: r.errs, FirstError: r.first}
		m.Rate = float64(len(r.lat)) / elapsed.Seconds()
		m.P50, m.P99 = load.Percentile(r.lat, 50), load.Percentile(r.lat, 99)
		out[o.op] = m
	}
	return out
}

// sender POSTs the simulator's events on the schedule, at most maxPostsInFlight at a time.
type sender struct {
	b        *bench
	sim      *simulate.Simulator
	rate     int
	dur      time.Duration
	lastSent map[string]int64 // chain/token → last trade time sent (or found in the database)
	samples  [2]chan sample   // to the probers of operation 3 and of operation 2's window

	sent, events, posts int
	queue               []int // trades due but not sent, at each tenth of the run

	// creating maps a red packet to the answer of the POST in flight that creates it.
	creating map[string]chan struct{}

	mu         sync.Mutex // guards what the POSTs' goroutines record
	acked      int
	errors     int
	firstErr   string
	postLat    []time.Duration
	elapsed    time.Duration
	lastSample time.Time
}

// sample is a trade whose freshness the prober measures.
type sample struct {
	chain, token, signature string
	blockMs                 int64 // the trade's block time, which bounds the trade-list probe
	acked                   time.Time
}

func (s *sender) run(ctx context.Context) {
	client := load.Client(maxPostsInFlight)
	slots := make(chan struct{}, maxPostsInFlight)
	var posts sync.WaitGroup
	defer posts.Wait()
	start := time.Now()
	deadline := start.Add(s.dur)
	step := s.dur / 10
	nextMark := start.Add(step)
	for ctx.Err() == nil {
		now := time.Now()
		due := int(float64(s.rate) * min(now.Sub(start), s.dur).Seconds())
		for !now.Before(nextMark) && nextMark.Before(deadline.Add(time.Millisecond)) {
			s.queue = append(s.queue, max(int(float64(s.rate)*nextMark.Sub(start).Seconds())-s.sent, 0))
			nextMark = nextMark.Add(step)
		}
		if !now.Before(deadline) {
			break
		}
		if due-s.sent <= 0 {
			sleepCtx(ctx, senderTick)
			continue
		}
		// Wait for a free slot (the backlog grows meanwhile), then cut the body from what is due then.
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return
		case <-time.After(time.Until(deadline)):
			continue
		}
		now = time.Now()
		due = int(float64(s.rate) * min(now.Sub(start), s.dur).Seconds())
		s.mu.Lock()
		pick := now.Sub(s.lastSample) >= probeEvery
		s.mu.Unlock()
		body := &postBody{lastSent: s.lastSent, pickSample: pick}
		body.enc = ndjson.NewEncoder(&body.buf)
		want := max(min(due-s.sent, maxPostTrades), 1)
		for body.trades < want && ctx.Err() == nil {
			if err := s.sim.Step(ctx, body, time.Now()); err != nil {
				<-slots
				s.fail(fmt.Errorf("simulate: %w", err))
				return
			}
		}
		s.sent += body.trades
		s.events += body.events
		s.posts++
		// A claim or expiry of a packet whose creation is still in flight waits for that POST.
		var deps []chan struct{}
		for id := range body.uses {
			if ch, ok := s.creating[id]; ok {
				deps = append(deps, ch)
			}
		}
		done := make(chan struct{})
		if s.creating == nil {
			s.creating = map[string]chan struct{}{}
		}
		for id := range body.created {
			s.creating[id] = done
		}
		for id, ch := range s.creating {
			select {
			case <-ch:
				delete(s.creating, id) // answered: later POSTs need not wait
			default:
			}
		}
		posts.Add(1)
		go func() {
			defer posts.Done()
			defer func() { <-slots }()
			defer close(done)
			for _, ch := range deps {
				<-ch
			}
			s.post(ctx, client, body, start)
		}()
	}
}

// post sends one body and records its answer.
func (s *sender) post(ctx context.Context, client *http.Client, body *postBody, start time.Time) {
	t0 := time.Now()
	_, err := load.Do(ctx, client, load.Request{Method: "POST", URL: s.b.st.httpURL + "/v2/ingest" + s.b.ingestQuery(),
		Header: ingestHeader(s.b.st.key), Body: body.buf.Bytes()})
	acked := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.postLat = append(s.postLat, acked.Sub(t0))
	if err != nil {
		s.errors++
		if s.firstErr == "" {
			s.firstErr = err.Error()
		}
		return
	}
	s.acked += body.trades
	s.elapsed = max(s.elapsed, acked.Sub(start))
	if body.sample != nil {
		body.sample.acked = acked
		for _, ch := range s.samples {
			select {
			case ch <- *body.sample:
				s.lastSample = acked
			default: // this kind's probers are busy: not sampled
			}
		}
	}
}

func (s *sender) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errors++
	if s.firstErr == "" {
		s.firstErr = err.Error()
	}
}

// queueTimeline is the queue at each tenth of the run.
func (s *sender) queueTimeline() []string {
	var out []string
	for _, q := range s.queue {
		out = append(out, thousands(int64(q)))
	}
	return out
}

func ingestHeader(key string) http.Header {
	return http.Header{"Authorization": {"Bearer " + key}, "Content-Type": {"application/x-ndjson"}}
}

// postBody is the simulate.Sink of one POST: it encodes the events, with every trade and pool
// snapshot re-timed to the wall clock (the simulator moves its clock at least a millisecond per
// step, which at thousands of steps a second would date trades minutes ahead), and picks at most
// one trade of a token without a trade in coldFor as the freshness sample.
type postBody struct {
	buf        bytes.Buffer
	enc        *ndjson.Encoder
	lastSent   map[string]int64
	pickSample bool
	sample     *sample
	// created are the red packets the body creates; uses the packets its claims and expiries name
	// (a POST that names a packet created by a POST still in flight waits for that one's answer).
	created, uses map[string]bool

	trades, events int
}

func (p *postBody) Emit(_ context.Context, e chainevent.Event) error {
	now := time.Now().UnixMilli()
	switch v := e.(type) {
	case chainevent.Trade:
		v.BlockTimestamp = now
		key := string(v.Chain) + "/" + v.TokenAddress
		if last, seen := p.lastSent[key]; p.pickSample && p.sample == nil && v.Status == trade.Succeeded &&
			(!seen || now-last > coldFor.Milliseconds()) {
			p.sample = &sample{chain: string(v.Chain), token: v.TokenAddress, signature: v.TransactionSignature, blockMs: now}
		}
		p.lastSent[key] = now
		p.trades++
		e = v
	case chainevent.PoolSnapshot:
		v.BlockTimestamp, v.SnapshotTime = now, now
		e = v
	case chainevent.RedPacketCreated:
		p.note(&p.created, v.Packet.ID)
	case chainevent.RedPacketClaimed:
		p.note(&p.uses, v.Claim.PacketID)
	case chainevent.RedPacketExpired:
		p.note(&p.uses, v.PacketID)
	}
	p.events++
	return p.enc.Encode(e)
}

func (p *postBody) note(set *map[string]bool, id string) {
	if *set == nil {
		*set = map[string]bool{}
	}
	(*set)[id] = true
}

func (p *postBody) Flush(context.Context) error { return nil }

// discard is the sink of the rebuild: the events are in the database already.
type discard struct{}

func (discard) Emit(context.Context, chainevent.Event) error { return nil }
func (discard) Flush(context.Context) error                  { return nil }

// prober polls operations 3 and 2 for sampled trades.
type prober struct {
	mu    sync.Mutex
	lat   [2][]time.Duration
	errs  [2]int
	first [2]string
}

func (p *prober) run(ctx context.Context, b *bench, kind int, samples <-chan sample) {
	for smp := range samples {
		deadline := smp.acked.Add(probeLimit)
		var u string
		if kind == 0 {
			// The list is bounded to the sample's millisecond: later trades of a busy token (the rest
			// of the same POST, other senders' POSTs) would otherwise push it off the newest-first page.
			ms := strconv.FormatInt(smp.blockMs, 10)
			u = b.st.httpURL + "/v2/trade/" + smp.chain + "?" + url.Values{"tokenAddress": {smp.token},
				"afterTimestamp": {ms}, "beforeTimestamp": {ms}, "limit": {"100"}}.Encode()
		} else {
			v1 := smp.chain
			if v1 == string(chain.Eth) {
				v1 = string(chain.Ethereum) // the v1 paths' spelling
			}
			u = b.st.dexURL + "/v1/token/" + v1 + "/multi?" + url.Values{"tokenAddresses": {smp.token}}.Encode()
		}
		for ctx.Err() == nil {
			cctx, cancel := context.WithTimeout(ctx, probeLimit)
			res, err := load.Do(cctx, b.client, load.Request{Method: "GET", URL: u, Header: b.auth()})
			cancel()
			at := time.Now()
			if err == nil && (kind == 0 && bytes.Contains(res.Body, []byte(smp.signature)) || kind == 1 && counted1m(res.Body, smp.token)) {
				p.mu.Lock()
				p.lat[kind] = append(p.lat[kind], at.Sub(smp.acked))
				p.mu.Unlock()
				break
			}
			if at.After(deadline) {
				p.mu.Lock()
				p.errs[kind]++
				if p.first[kind] == "" {
					p.first[kind] = fmt.Sprintf("%s trade %s of token %s not seen within %s of the POST's response",
						smp.chain, smp.signature, smp.token, probeLimit)
				}
				p.mu.Unlock()
				break
			}
			sleepCtx(ctx, probePoll)
		}
	}
}

func (p *prober) result(i int) ([]time.Duration, int, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]time.Duration(nil), p.lat[i]...), p.errs[i], p.first[i]
}

// counted1m tells whether the multi-detail answer shows at least one trade in token's 1m window.
func counted1m(body []byte, token string) bool {
	var recs []struct {
		Address string `json:"address"`
		Stats   struct {
			Trades1m json.Number `json:"trades1m"`
		} `json:"stats"`
	}
	if json.Unmarshal(body, &recs) != nil {
		return false
	}
	for _, r := range recs {
		if r.Address == token {
			n, err := r.Stats.Trades1m.Int64()
			return err == nil && n > 0
		}
	}
	return false
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
