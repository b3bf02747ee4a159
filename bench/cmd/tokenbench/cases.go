package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/client"

	"github.com/tokenscope/tokenscope/app/market"
	"github.com/tokenscope/tokenscope/bench/load"
	"github.com/tokenscope/tokenscope/bench/report"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/page"
	"github.com/tokenscope/tokenscope/domain/pnl"
	"github.com/tokenscope/tokenscope/domain/ranking"
	"github.com/tokenscope/tokenscope/ports"
	"github.com/tokenscope/tokenscope/workflows"
)

// benchAccount owns the run's API key, webhook endpoints, jobs and KYT registrations.
const benchAccount = "tokenbench"

// Series names, as the table shows them.
const (
	seriesEndpoint = "endpoint"
	seriesSQL      = "raw SQL (app/market via pgx)"
	seriesFiber    = "bare Fiber, same body"
	seriesStart    = "no-op workflow start"
	seriesRound    = "no-op workflow start+result"
)

// targets are the request parameters, sampled from the database so every call hits real data.
// Calls cycle through them in order, so two runs over the same data send the same requests.
type targets struct {
	queries   []string
	multi     [][]string // sol token addresses, 10 a call
	tokens    [][2]string
	pools     [][2]string
	creators  [][2]string
	packetIDs []string
	wallets   []walletTarget
	hot       [][2]string
}

type walletTarget struct {
	chain, wallet string
	tokens        []string
}

func pick[T any](s []T, w, i int) T { return s[(w*7919+i)%len(s)] }

// sampleTargets reads a deterministic pseudo-random sample (ordered by md5) of what exists.
func sampleTargets(ctx context.Context, pool *pgxpool.Pool) (targets, error) {
	var t targets
	pairs := func(q string) ([][2]string, error) {
		rows, err := pool.Query(ctx, q)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out [][2]string
		for rows.Next() {
			var a, b string
			if err := rows.Scan(&a, &b); err != nil {
				return nil, err
			}
			out = append(out, [2]string{a, b})
		}
		return out, rows.Err()
	}
	var err error
	names, err := pairs(`SELECT name, symbol FROM tokens ORDER BY md5(address) LIMIT 64`)
	if err != nil {
		return t, fmt.Errorf("sample tokens: %w", err)
	}
	for i, n := range names {
		q := n[1]
		if i%2 == 0 && len(n[0]) > 3 {
			q = n[0][:len(n[0])-1] // a name prefix: a handful of matches
		}
		t.queries = append(t.queries, q)
	}
	sol, err := pairs(`SELECT chain, address FROM tokens WHERE chain = 'sol' ORDER BY md5(address) LIMIT 200`)
	if err != nil {
		return t, err
	}
	for i := 0; i+10 <= len(sol); i += 10 {
		var set []string
		for _, p := range sol[i : i+10] {
			set = append(set, p[1])
		}
		t.multi = append(t.multi, set)
	}
	if t.tokens, err = pairs(`SELECT chain, address FROM tokens ORDER BY md5(address) LIMIT 64`); err != nil {
		return t, err
	}
	if t.pools, err = pairs(`SELECT chain, pool_address FROM pool_snapshots GROUP BY chain, pool_address ORDER BY md5(pool_address) LIMIT 64`); err != nil {
		return t, err
	}
	if t.creators, err = pairs(`SELECT chain, creator FROM red_packets ORDER BY md5(id) LIMIT 64`); err != nil {
		return t, err
	}
	ids, err := pairs(`SELECT packet_id, min(chain) FROM red_packet_claims GROUP BY packet_id ORDER BY md5(packet_id) LIMIT 64`)
	if err != nil {
		return t, err
	}
	for _, p := range ids {
		t.packetIDs = append(t.packetIDs, p[0])
	}
	rows, err := pool.Query(ctx, `SELECT chain, wallet, (array_agg(token_address ORDER BY token_address))[1:20]
		FROM wallet_positions GROUP BY chain, wallet ORDER BY md5(wallet) LIMIT 64`)
	if err != nil {
		return t, err
	}
	for rows.Next() {
		var w walletTarget
		if err := rows.Scan(&w.chain, &w.wallet, &w.tokens); err != nil {
			rows.Close()
			return t, err
		}
		t.wallets = append(t.wallets, w)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return t, err
	}
	for _, c := range []string{"sol", "eth", "bsc"} {
		for _, d := range []string{"1h", "4h", "24h"} {
			t.hot = append(t.hot, [2]string{c, d})
		}
	}
	switch {
	case len(t.queries) == 0, len(t.multi) == 0, len(t.tokens) == 0, len(t.wallets) == 0:
		return t, errors.New("the database holds too little data to sample request targets")
	}
	return t, nil
}

// readOp is one of operations 1–9: its HTTP request and the same read through the use case.
type readOp struct {
	op   string
	http func(b *bench, w, i int) load.Request
	sql  func(ctx context.Context, m *market.Service, w, i int) error
	// goal is set on the read operations the issue names a goal for.
	goal *report.Goal
	// missing says why the data has nothing to send this operation (the row shows it).
	missing string
}

var first20 = ports.PageRequest{Limit: 20, Direction: page.Next}

func mustChain(s string) chain.Chain {
	c, err := chain.Parse("chain", s)
	if err != nil {
		panic(err)
	}
	return c
}

var sqlGoal = &report.Goal{Text: "p99 ≤ 1.5× raw SQL p99", Baseline: 0, Metric: report.P99, Max: 1.5}
var cachedGoal = &report.Goal{Text: "req/s ≥ 0.5× bare Fiber (and p99 ≤ 1.5× SQL)", Baseline: 1, Metric: report.Rate, Min: 0.5}

func (b *bench) readOps(t targets) []readOp {
	get := func(base, path string, q url.Values) load.Request {
		u := base + path
		if len(q) > 0 {
			u += "?" + q.Encode()
		}
		return load.Request{Method: "GET", URL: u, Header: b.auth()}
	}
	ops := []readOp{
		{op: "1 token search", goal: sqlGoal,
			http: func(b *bench, w, i int) load.Request {
				return get(b.st.httpURL, "/v2/token/search", url.Values{"q": {pick(t.queries, w, i)}, "limit": {"20"}})
			},
			sql: func(ctx context.Context, m *market.Service, w, i int) error {
				_, err := m.Search(ctx, market.SearchRequest{Query: pick(t.queries, w, i), Desc: true, Page: first20})
				return err
			}},
		{op: "2 multi-token detail (10 addresses)", goal: cachedGoal,
			http: func(b *bench, w, i int) load.Request {
				return get(b.st.dexURL, "/v1/token/sol/multi", url.Values{"tokenAddresses": {strings.Join(pick(t.multi, w, i), ",")}})
			},
			sql: func(ctx context.Context, m *market.Service, w, i int) error {
				_, err := m.Multi(ctx, market.MultiRequest{Chain: chain.Sol, Addresses: pick(t.multi, w, i), Desc: true})
				return err
			}},
		{op: "3 trade list, by token", goal: sqlGoal,
			http: func(b *bench, w, i int) load.Request {
				tk := pick(t.tokens, w, i)
				return get(b.st.httpURL, "/v2/trade/"+tk[0], url.Values{"tokenAddress": {tk[1]}, "limit": {"20"}})
			},
			sql: func(ctx context.Context, m *market.Service, w, i int) error {
				tk := pick(t.tokens, w, i)
				_, err := m.Trades(ctx, ports.TradeFilter{Chain: mustChain(tk[0]), TokenAddress: tk[1]}, first20)
				return err
			}},
		{op: "3 trade list, newest of a chain", goal: sqlGoal,
			http: func(b *bench, w, i int) load.Request {
				return get(b.st.httpURL, "/v2/trade/"+pick(t.hot, w, i)[0], url.Values{"limit": {"20"}})
			},
			sql: func(ctx context.Context, m *market.Service, w, i int) error {
				_, err := m.Trades(ctx, ports.TradeFilter{Chain: mustChain(pick(t.hot, w, i)[0])}, first20)
				return err
			}},
		{op: "3 trade list, by wallet", goal: sqlGoal,
			http: func(b *bench, w, i int) load.Request {
				wt := pick(t.wallets, w, i)
				return get(b.st.httpURL, "/v2/trade/"+wt.chain, url.Values{"walletAddress": {wt.wallet}, "limit": {"20"}})
			},
			sql: func(ctx context.Context, m *market.Service, w, i int) error {
				wt := pick(t.wallets, w, i)
				_, err := m.Trades(ctx, ports.TradeFilter{Chain: mustChain(wt.chain), Wallet: wt.wallet}, first20)
				return err
			}},
		{op: "4 pool snapshots", goal: sqlGoal,
			http: func(b *bench, w, i int) load.Request {
				p := pick(t.pools, w, i)
				return get(b.st.httpURL, "/v2/dexpools/"+p[0]+"/"+p[1]+"/snapshots", url.Values{"limit": {"20"}})
			},
			sql: func(ctx context.Context, m *market.Service, w, i int) error {
				p := pick(t.pools, w, i)
				_, err := m.Snapshots(ctx, mustChain(p[0]), p[1], nil, first20)
				return err
			}},
		{op: "5 red packets of a wallet", goal: sqlGoal,
			http: func(b *bench, w, i int) load.Request {
				return get(b.st.httpURL, "/v2/redpacket/wallet/"+pick(t.creators, w, i)[1]+"/redpackets", url.Values{"limit": {"20"}})
			},
			sql: func(ctx context.Context, m *market.Service, w, i int) error {
				_, err := m.RedPackets(ctx, ports.RedPacketFilter{Creator: pick(t.creators, w, i)[1]}, first20)
				return err
			}},
		{op: "6 red packet list, by chain", goal: sqlGoal,
			http: func(b *bench, w, i int) load.Request {
				return get(b.st.httpURL, "/v2/redpacket", url.Values{"chain": {pick(t.hot, w, i)[0]}, "limit": {"20"}})
			},
			sql: func(ctx context.Context, m *market.Service, w, i int) error {
				_, err := m.RedPackets(ctx, ports.RedPacketFilter{Chain: mustChain(pick(t.hot, w, i)[0])}, first20)
				return err
			}},
		{op: "7 red packet claims", goal: sqlGoal,
			http: func(b *bench, w, i int) load.Request {
				return get(b.st.httpURL, "/v2/redpacket/"+pick(t.packetIDs, w, i)+"/claims", url.Values{"limit": {"20"}})
			},
			sql: func(ctx context.Context, m *market.Service, w, i int) error {
				_, err := m.Claims(ctx, pick(t.packetIDs, w, i), first20)
				return err
			}},
		{op: "8 wallet PnL by token", goal: sqlGoal,
			http: func(b *bench, w, i int) load.Request {
				wt := pick(t.wallets, w, i)
				return get(b.st.httpURL, "/v2/wallet/"+wt.chain+"/"+wt.wallet+"/pnl-by-token",
					url.Values{"tokenAddresses": {strings.Join(wt.tokens, ",")}, "limit": {"20"}})
			},
			sql: func(ctx context.Context, m *market.Service, w, i int) error {
				wt := pick(t.wallets, w, i)
				_, err := m.PnLByToken(ctx, mustChain(wt.chain), wt.wallet, wt.tokens, pnl.ResolutionAll, first20)
				return err
			}},
		{op: "9 hot tokens ranking", goal: cachedGoal,
			http: func(b *bench, w, i int) load.Request {
				h := pick(t.hot, w, i)
				return get(b.st.httpURL, "/v2/ranking/"+h[0]+"/hotTokens/"+h[1], nil)
			},
			sql: func(ctx context.Context, m *market.Service, w, i int) error {
				h := pick(t.hot, w, i)
				d, err := ranking.ParseDuration("duration", h[1])
				if err != nil {
					return err
				}
				_, err = m.HotTokens(ctx, market.HotRequest{Chain: mustChain(h[0]), Duration: d, Desc: true})
				return err
			}},
	}
	for i := range ops {
		switch op := ops[i].op[:2]; {
		case op == "4 " && len(t.pools) == 0:
			ops[i].missing = "no pool snapshot in the data"
		case (op == "5 " || op == "6 ") && len(t.creators) == 0:
			ops[i].missing = "no red packet in the data"
		case op == "7 " && len(t.packetIDs) == 0:
			ops[i].missing = "no red packet claim in the data"
		}
	}
	return ops
}

// bench holds what the measurements share.
type bench struct {
	st      *stack
	opts    load.Options
	client  *http.Client
	market  *market.Service
	fiber   *bareFiber
	rcv     *receiver
	tc      client.Client
	logf    func(format string, args ...any)
	noopSeq int
	// deliverySizes sizes the webhook delivery rows.
	deliverySizes deliverySizes
	// restarts records every time the service had ended by itself and was started again.
	restarts []string
	// ingestWait is the live sender's wait parameter of POST /v2/ingest (commit or derived).
	ingestWait string
}

// alive restarts the service (on new ports, same database) when it ended by itself since the
// last row, and records that: a row must not measure a dead service as 'connection refused'.
func (b *bench) alive(ctx context.Context) {
	gone, err := b.st.exited()
	if !gone || ctx.Err() != nil {
		return
	}
	what := fmt.Sprintf("%s: tokenscope-dev had exited (%v); restarted", time.Now().Format("15:04:05"), err)
	b.logf("  %s", what)
	if err := b.st.startService(ctx); err != nil {
		what += " — restart failed: " + err.Error()
		b.restarts = append(b.restarts, what)
		return
	}
	b.restarts = append(b.restarts, what)
	if b.tc != nil {
		b.tc.Close()
	}
	tc, err := dialTemporal(b.st.temporalAddr)
	if err != nil {
		b.tc = nil
		return
	}
	b.tc = tc
}

func (b *bench) auth() http.Header {
	return http.Header{"Authorization": {"Bearer " + b.st.key}, "Content-Type": {"application/json"}}
}

func measureOf(name string, r load.Result) report.Measure {
	return report.Measure{Name: name, Calls: r.Calls, Errors: r.Errors, Rate: r.PerSecond(), P50: r.P50, P99: r.P99,
		FirstError: r.FirstError}
}

// probe sends one request; a route the service does not have yet makes the row "missing".
func (b *bench) probe(ctx context.Context, r load.Request) (load.Response, string, error) {
	if err := load.Loopback(r.URL); err != nil {
		return load.Response{}, "", err
	}
	res, err := load.Do(ctx, b.client, r)
	if err != nil && (res.Status == 404 && strings.Contains(string(res.Body), "no route") || res.Status == 405 || res.Status == 501) {
		return res, fmt.Sprintf("not served yet (HTTP %d)", res.Status), nil
	}
	return res, "", err
}

// httpSeries drives one endpoint and returns its measure and a sample response body.
func (b *bench) httpSeries(ctx context.Context, name string, mk func(w, i int) load.Request) (report.Measure, []byte) {
	first := mk(0, 0)
	res, missing, err := b.probe(ctx, first)
	if missing != "" {
		return report.Measure{Name: name, Missing: missing}, nil
	}
	if err != nil {
		b.logf("  probe %s %s failed: %v", first.Method, first.URL, err)
	}
	r := load.Run(ctx, b.opts, func(ctx context.Context, w, i int) error {
		_, err := load.Do(ctx, b.client, mk(w, i))
		return err
	})
	return measureOf(name, r), res.Body
}

// fiberSeries measures a bare Fiber handler answering with a body as long as body.
func (b *bench) fiberSeries(ctx context.Context, key, method string, body []byte) report.Measure {
	if body == nil {
		return report.Measure{Name: seriesFiber, Missing: "no endpoint response to size it on"}
	}
	u := b.fiber.serve(key, body)
	r := load.Run(ctx, b.opts, func(ctx context.Context, _, _ int) error {
		_, err := load.Do(ctx, b.client, load.Request{Method: method, URL: u, Header: b.auth()})
		return err
	})
	return measureOf(seriesFiber, r)
}

// sqlSeries measures the use case's read over pgx in this process.
func (b *bench) sqlSeries(ctx context.Context, fn func(ctx context.Context, w, i int) error) report.Measure {
	r := load.Run(ctx, b.opts, fn)
	return measureOf(seriesSQL, r)
}

// readRows measures operations 1–9, each against raw SQL and bare Fiber.
func (b *bench) readRows(ctx context.Context, ops []readOp, data string) []report.Row {
	var rows []report.Row
	for _, o := range ops {
		if o.missing != "" {
			rows = append(rows, report.Row{Op: o.op, Data: data, Subject: report.Measure{Name: seriesEndpoint, Missing: o.missing}, Goal: o.goal})
			continue
		}
		b.alive(ctx)
		b.logf("measuring %s", o.op)
		sub, body := b.httpSeries(ctx, seriesEndpoint, func(w, i int) load.Request { return o.http(b, w, i) })
		row := report.Row{Op: o.op, Data: data, Subject: sub, Goal: o.goal}
		row.Baselines = append(row.Baselines, b.sqlSeries(ctx, func(ctx context.Context, w, i int) error { return o.sql(ctx, b.market, w, i) }))
		row.Baselines = append(row.Baselines, b.fiberSeries(ctx, o.op, "GET", body))
		rows = append(rows, row)
	}
	return rows
}

// growthSeries measures the endpoint and its raw SQL (no Fiber baseline) for the cost growth
// rows, keyed by operation.
func (b *bench) growthSeries(ctx context.Context, ops []readOp, data string) (endpoint, sql map[string]report.Measure) {
	endpoint, sql = map[string]report.Measure{}, map[string]report.Measure{}
	for _, o := range ops {
		if o.missing != "" {
			endpoint[o.op] = report.Measure{Name: seriesEndpoint, Missing: o.missing}
			sql[o.op] = report.Measure{Name: seriesSQL, Missing: o.missing}
			continue
		}
		b.alive(ctx)
		// An unrecorded pass first: right after the history copies the table's pages are cold
		// (the copies wrote many GB past the caches), and the growth rows compare steady states.
		warm := b.opts
		warm.Duration = max(b.opts.Duration/4, time.Second)
		b.logf("warming %s at %s for %s", o.op, data, warm.Duration)
		load.Run(ctx, warm, func(ctx context.Context, w, i int) error { return o.sql(ctx, b.market, w, i) })
		b.logf("measuring %s at %s", o.op, data)
		endpoint[o.op], _ = b.httpSeries(ctx, seriesEndpoint, func(w, i int) load.Request { return o.http(b, w, i) })
		sql[o.op] = b.sqlSeries(ctx, func(ctx context.Context, w, i int) error { return o.sql(ctx, b.market, w, i) })
	}
	return endpoint, sql
}

// noopSeries starts the no-op workflow on the service's task queue, and with wait also waits for
// its result (the service's own worker runs it).
func (b *bench) noopSeries(ctx context.Context, wait bool) report.Measure {
	name := seriesStart
	if wait {
		name = seriesRound
	}
	if b.tc == nil {
		return report.Measure{Name: name, Missing: "no Temporal client"}
	}
	b.settle(ctx)
	b.noopSeq++
	seq := b.noopSeq
	opts := b.opts
	opts.CallTimeout = 30 * time.Second
	r := load.Run(ctx, opts, func(ctx context.Context, w, i int) error {
		run, err := b.tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
			ID:        fmt.Sprintf("tokenbench-noop-%d-%d-%d", seq, w, i),
			TaskQueue: workflows.TaskQueue,
		}, workflows.NoopWorkflowName)
		if err != nil || !wait {
			return err
		}
		return run.Get(ctx, nil)
	})
	return measureOf(name, r)
}

// settle waits (at most a minute) until the workflows earlier series started have been worked
// off, so a workflow series does not measure the backlog of the one before: it runs single no-op
// round-trips until one takes under half a second.
func (b *bench) settle(ctx context.Context) {
	if b.tc == nil {
		return
	}
	deadline := time.Now().Add(time.Minute)
	for k := 0; time.Now().Before(deadline) && ctx.Err() == nil; k++ {
		b.noopSeq++
		start := time.Now()
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		run, err := b.tc.ExecuteWorkflow(cctx, client.StartWorkflowOptions{
			ID: fmt.Sprintf("tokenbench-settle-%d-%d", b.noopSeq, k), TaskQueue: workflows.TaskQueue}, workflows.NoopWorkflowName)
		if err == nil {
			err = run.Get(cctx, nil)
		}
		cancel()
		if err == nil && time.Since(start) < 500*time.Millisecond {
			return
		}
	}
	b.logf("  the workflow backlog did not drain within a minute; measuring anyway")
}

// bareFiber is a Fiber app on loopback that answers each registered path with a canned body.
type bareFiber struct {
	app    *fiber.App
	base   string
	bodies sync.Map
}

func startFiber() (*bareFiber, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	f := &bareFiber{app: fiber.New(fiber.Config{DisableStartupMessage: true}), base: "http://" + ln.Addr().String()}
	f.app.All("/canned/:key", func(c *fiber.Ctx) error {
		b, ok := f.bodies.Load(c.Params("key"))
		if !ok {
			return fiber.ErrNotFound
		}
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
		return c.Send(b.([]byte))
	})
	go func() { _ = f.app.Listener(ln) }()
	return f, nil
}

func (f *bareFiber) serve(key string, body []byte) string {
	k := url.PathEscape(strings.NewReplacer(" ", "-", ",", "", "(", "", ")", "").Replace(key))
	f.bodies.Store(k, append([]byte(nil), body...))
	return f.base + "/canned/" + k
}

func (f *bareFiber) stop() { _ = f.app.ShutdownWithTimeout(5 * time.Second) }

// receiver is the loopback webhook destination: it counts deliveries of the events a delivery
// row waits for (deliveryLog) and answers plain POSTs (the delivery baseline) the same way.
type receiver struct {
	srv  *http.Server
	base string

	mu sync.Mutex
	dl *deliveryLog
}

func startReceiver() (*receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &receiver{base: "http://" + ln.Addr().String()}
	mux := http.NewServeMux()
	mux.HandleFunc("/wh/", r.webhook)
	mux.HandleFunc("/hang/", r.webhook)
	mux.HandleFunc("/", func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	})
	r.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

func (r *receiver) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = r.srv.Shutdown(ctx)
}
