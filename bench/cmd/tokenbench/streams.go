package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"golang.org/x/sync/errgroup"

	"github.com/tokenscope/tokenscope/app/simulate"
	"github.com/tokenscope/tokenscope/app/stream"
	"github.com/tokenscope/tokenscope/bench/load"
	"github.com/tokenscope/tokenscope/bench/report"
)

// The stream rows (-only streams): streamSubscribers connections, each subscribed to the trade
// channel of one token (round robin over the tokens, most recently traded first), while the
// live sender POSTs streamRate trades/s to /v2/ingest; each message's latency is its receipt
// minus the commit of its batch (the publication's committed_ms tag); the receipt minus the
// trade's timestamp, which the sender sets when it encodes the trade into the POST (adding the
// POST's queue and commit), is reported beside it. Then
// streamIdle connections are opened and left idle, and the service's resident memory before
// and after gives the memory per connection. All connections are loopback.

const (
	streamSubscribers = 1_000
	streamRate        = 2_000
	streamIdle        = 10_000
	streamDialers     = 32
)

var streamLatencyGoal = report.Goal{Text: "p99 ≤ 250 ms", MaxP99: 250 * time.Millisecond}

// streamConn is one raw client of the Centrifuge JSON protocol: connected with the API key as
// the public client is, answering the server's pings, handing each publication to onPub.
type streamConn struct {
	conn *websocket.Conn
	mu   sync.Mutex
}

func dialStream(ctx context.Context, base, key string) (*streamConn, error) {
	d := websocket.Dialer{HandshakeTimeout: 20 * time.Second}
	u := "ws://" + strings.TrimPrefix(base, "http://") + "/connection/websocket?token=" + url.QueryEscape(key)
	conn, _, err := d.DialContext(ctx, u, nil)
	if err != nil {
		return nil, err
	}
	c := &streamConn{conn: conn}
	if err := c.command(fmt.Sprintf(`{"id":1,"connect":{"token":%q,"name":"go"}}`, key), `"connect"`); err != nil {
		_ = conn.Close()
		return nil, err
	}
	return c, nil
}

// command sends one command and waits for the reply containing want.
func (c *streamConn) command(cmd, want string) error {
	if err := c.conn.WriteMessage(websocket.TextMessage, []byte(cmd)); err != nil {
		return err
	}
	_ = c.conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	defer func() { _ = c.conn.SetReadDeadline(time.Time{}) }()
	for {
		_, b, err := c.conn.ReadMessage()
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(`"error"`)) {
			return fmt.Errorf("refused: %s", b)
		}
		if bytes.Contains(b, []byte(want)) {
			return nil
		}
	}
}

// read answers pings and passes publications on until the connection ends.
func (c *streamConn) read(onPub func(line []byte, at time.Time)) {
	for {
		_, b, err := c.conn.ReadMessage()
		if err != nil {
			return
		}
		at := time.Now()
		for line := range bytes.SplitSeq(b, []byte("\n")) {
			if string(line) == "{}" {
				c.mu.Lock()
				_ = c.conn.WriteMessage(websocket.TextMessage, []byte("{}"))
				c.mu.Unlock()
				continue
			}
			if onPub != nil && bytes.Contains(line, []byte(`"pub"`)) {
				onPub(line, at)
			}
		}
	}
}

func (c *streamConn) close() { _ = c.conn.Close() }

// dialMany opens n connections with streamDialers dialing at once; setup runs on each.
func dialMany(ctx context.Context, base, key string, n int, setup func(i int, c *streamConn) error) ([]*streamConn, error) {
	conns := make([]*streamConn, n)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(streamDialers)
	for i := range n {
		g.Go(func() error {
			c, err := dialStream(gctx, base, key)
			if err != nil {
				return fmt.Errorf("connection %d: %w", i, err)
			}
			conns[i] = c
			if setup != nil {
				return setup(i, c)
			}
			return nil
		})
	}
	err := g.Wait()
	return conns, err
}

func closeAll(conns []*streamConn) {
	for _, c := range conns {
		if c != nil {
			c.close()
		}
	}
}

// tradedTokenChannels lists the trade channels of up to n traded tokens, most recently traded
// first (the tokens the live sender's simulator keeps trading).
func (b *bench) tradedTokenChannels(ctx context.Context, n int) ([]string, error) {
	rows, err := b.st.pool.Query(ctx, `SELECT chain, token_address FROM trades GROUP BY 1, 2
		ORDER BY max(block_timestamp_ms) DESC LIMIT $1`, n)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var c, a string
		if err := rows.Scan(&c, &a); err != nil {
			return nil, err
		}
		out = append(out, "dex-trade:"+c+"_"+a)
	}
	return out, rows.Err()
}

// streamRows measures the stream rows.
func (b *bench) streamRows(ctx context.Context, lf liveFill, dur time.Duration, data string) []report.Row {
	b.alive(ctx)
	op := fmt.Sprintf("streams: trade → message received, %s connections subscribed to dex-trade, %s trades/s POSTed for %s",
		thousands(streamSubscribers), thousands(streamRate), dur)
	idleOp := fmt.Sprintf("streams: %s idle connections on one process", thousands(streamIdle))
	missing := func(o, why string) report.Row {
		return report.Row{Op: o, Data: data, Subject: report.Measure{Name: "subscriber", Missing: why}}
	}
	hot, err := b.recentTokens(ctx)
	if err != nil || len(hot) == 0 {
		return []report.Row{missing(op, fmt.Sprintf("no recently traded token (%v)", err))}
	}
	channels, err := b.tradedTokenChannels(ctx, streamSubscribers)
	if err != nil || len(channels) == 0 {
		return []report.Row{missing(op, fmt.Sprintf("no traded token (%v)", err))}
	}
	b.logf("streams: %d connections subscribing over %d token channels", streamSubscribers, len(channels))

	var mu sync.Mutex
	// lat: from the batch's commit (the publication's committed_ms tag) to receipt, the row's
	// figure; stamped: from the sender's stamp in the POST body to receipt (POST queue included).
	var lat, stamped []time.Duration
	var received atomic.Int64
	since := func(at time.Time, ms int64) time.Duration { return max(at.Sub(time.UnixMilli(ms)), 0) }
	onPub := func(line []byte, at time.Time) {
		var push struct {
			Push struct {
				Pub struct {
					Data struct {
						T int64 `json:"t"`
					} `json:"data"`
					Tags map[string]string `json:"tags"`
				} `json:"pub"`
			} `json:"push"`
		}
		if json.Unmarshal(line, &push) != nil || push.Push.Pub.Data.T == 0 {
			return
		}
		received.Add(1)
		mu.Lock()
		defer mu.Unlock()
		stamped = append(stamped, since(at, push.Push.Pub.Data.T))
		if c, err := strconv.ParseInt(push.Push.Pub.Tags[stream.CommittedTag], 10, 64); err == nil && c > 0 {
			lat = append(lat, since(at, c))
		}
	}
	subs, err := dialMany(ctx, b.st.dexURL, b.st.key, streamSubscribers, func(i int, c *streamConn) error {
		ch := channels[i%len(channels)]
		return c.command(fmt.Sprintf(`{"id":2,"subscribe":{"channel":%q,"delta":"fossil"}}`, ch), `"subscribe"`)
	})
	defer closeAll(subs)
	if err != nil {
		return []report.Row{missing(op, "connect: "+err.Error())}
	}
	for _, c := range subs {
		go c.read(onPub)
	}

	sim := simulate.New(simulate.Config{Seed: lf.Seed, Tokens: lf.Tokens, Wallets: lf.Wallets, Trades: lf.Trades,
		Start: lf.end.Add(-fillSpan), End: lf.end})
	if err := sim.Backfill(ctx, discard{}); err != nil {
		return []report.Row{missing(op, "rebuild the simulator: "+err.Error())}
	}
	s := &sender{b: b, sim: sim, rate: streamRate, dur: dur, lastSent: hot}
	b.logf("streams: sending %d trades/s for %s", streamRate, dur)
	s.run(ctx)
	sleepCtx(ctx, 2*time.Second) // the last POSTs' messages
	mu.Lock()
	m := report.Measure{Name: "ingest commit → message received", Calls: len(lat), Unit: "msgs/s"}
	if s.elapsed > 0 {
		m.Rate = float64(len(lat)) / s.elapsed.Seconds()
	}
	m.P50, m.P99 = load.Percentile(lat, 50), load.Percentile(lat, 99)
	stampP50, stampP99 := load.Percentile(stamped, 50), load.Percentile(stamped, 99)
	mu.Unlock()
	if m.Calls == 0 {
		m.Missing = "no message received"
	}
	g := streamLatencyGoal
	postP50, postP99 := load.Percentile(s.postLat, 50), load.Percentile(s.postLat, 99)
	b.logf("streams: %d messages over %d channels, %d trades acknowledged (%d POST errors; POST round trip p50 %s, p99 %s)",
		received.Load(), min(len(channels), streamSubscribers), s.acked, s.errors, postP50, postP99)
	rows := []report.Row{{Op: op, Data: data, Subject: m, Goal: &g,
		Note: fmt.Sprintf("%s trades acknowledged in %d POSTs (%d errors); %s messages over %d channels "+
			"(one subscription per connection); latency counts from the commit of the trade's batch (the publication's "+
			"%s tag) to receipt; from the moment the sender stamped the trade into its POST body, which adds the POST's "+
			"queue and commit, it was p50 %s, p99 %s (POST round trip p50 %s, p99 %s)",
			thousands(int64(s.acked)), s.posts, s.errors, thousands(received.Load()), min(len(channels), streamSubscribers),
			stream.CommittedTag, stampP50.Round(time.Millisecond), stampP99.Round(time.Millisecond),
			postP50.Round(time.Millisecond), postP99.Round(time.Millisecond))}}
	closeAll(subs)

	// Idle connections: the service's resident memory before and after.
	if b.st.svc == nil || b.st.svc.Process == nil {
		return append(rows, missing(idleOp, "the service's process is not known"))
	}
	pid := b.st.svc.Process.Pid
	sleepCtx(ctx, time.Second)
	before, _, err := procMemory(pid)
	if err != nil {
		return append(rows, missing(idleOp, "read memory: "+err.Error()))
	}
	b.logf("streams: opening %d idle connections", streamIdle)
	t0 := time.Now()
	idle, err := dialMany(ctx, b.st.dexURL, b.st.key, streamIdle, nil)
	defer closeAll(idle)
	opened := time.Since(t0)
	if err != nil {
		return append(rows, missing(idleOp, "connect: "+err.Error()))
	}
	for _, c := range idle {
		go c.read(nil)
	}
	sleepCtx(ctx, 3*time.Second)
	after, _, err := procMemory(pid)
	if err != nil {
		return append(rows, missing(idleOp, "read memory: "+err.Error()))
	}
	perText := fmt.Sprintf("%.1f KiB", float64(after-before)/streamIdle/1024)
	b.logf("streams: service RSS %s before, %s with %d idle connections: %s per connection",
		report.Bytes(before), report.Bytes(after), streamIdle, perText)
	im := report.Measure{Name: "connections opened (connect command answered)", Calls: streamIdle, Unit: "conns/s",
		Rate: float64(streamIdle) / opened.Seconds(), PeakRSS: after}
	rows = append(rows, report.Row{Op: idleOp, Data: data, Subject: im,
		Note: fmt.Sprintf("service resident memory %s before, %s with the connections open: %s per connection "+
			"(the service is tokenscope-dev: API, worker and embedded Temporal in one process)",
			report.Bytes(before), report.Bytes(after), perText)})
	return rows
}
