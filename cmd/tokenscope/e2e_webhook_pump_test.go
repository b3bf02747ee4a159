package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/cmd/internal/wire"
	"github.com/tokenscope/tokenscope/domain/account"
	"github.com/tokenscope/tokenscope/domain/webhook"
	"github.com/tokenscope/tokenscope/workflows"
)

// idReceiver counts requests per webhook-id; a hanging one answers nothing until the sender
// gives up.
type idReceiver struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen map[string]int
	reqs int
	// inFlight and maxInFlight count the requests being answered at once.
	inFlight, maxInFlight int
}

func newIDReceiver(t *testing.T, hang bool) *idReceiver {
	r := &idReceiver{seen: map[string]int{}}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		r.mu.Lock()
		r.seen[req.Header.Get("webhook-id")]++
		r.reqs++
		r.inFlight++
		r.maxInFlight = max(r.maxInFlight, r.inFlight)
		r.mu.Unlock()
		defer func() {
			r.mu.Lock()
			r.inFlight--
			r.mu.Unlock()
		}()
		if hang {
			select {
			case <-req.Context().Done():
			case <-time.After(30 * time.Second):
			}
			return
		}
		w.WriteHeader(200)
	}))
	t.Cleanup(r.srv.CloseClientConnections)
	t.Cleanup(r.srv.Close)
	return r
}

// counts returns the distinct ids received and the requests.
func (r *idReceiver) counts() (ids, reqs int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.seen), r.reqs
}

// publishMany writes n outbox rows on ch in one statement and returns their webhook-ids.
func publishMany(t *testing.T, e *env, ch webhook.Channel, n int) []string {
	t.Helper()
	ids := make([]string, n)
	events := make([]string, n)
	payloads := make([]string, n)
	base := fmt.Sprintf("%s:many-%d-%d", ch, time.Now().UnixNano(), outboxSeq.Add(1))
	for i := range n {
		events[i] = fmt.Sprintf("%s-%d", base, i)
		payloads[i] = fmt.Sprintf(`{"address":"So%d","name":"N","symbol":"NNN","decimals":9}`, i)
		ids[i] = workflows.MessageID(events[i])
	}
	_, err := e.rt.Pool.Exec(context.Background(), `INSERT INTO outbox (event_id, channel, payload, created_at_ms)
		SELECT ev, $3, p::jsonb, $4 FROM unnest($1::text[], $2::text[]) AS t(ev, p)`, events, payloads, string(ch), time.Now().UnixMilli())
	require.NoError(t, err)
	return ids
}

// TestWebhookPump covers the delivery pump's behaviour: no event is sent twice when nothing
// fails, and an endpoint that hangs delays nobody else.
func TestWebhookPump(t *testing.T) {
	e := newEnv(t, fastWorkflows)
	require.NoError(t, wire.StartWebhookDispatch(context.Background(), e.rt))

	t.Run("500 events to 3 endpoints: each gets every event exactly once, one recorded attempt each", func(t *testing.T) {
		key := e.keyFor(t, "wh-pump-once", account.ScopeWebhook)
		var rcvs []*idReceiver
		var eps []string
		for range 3 {
			r := newIDReceiver(t, false)
			rcvs = append(rcvs, r)
			eps = append(eps, createEndpoint(t, e, key, map[string]any{"url": r.srv.URL, "channels": []string{"sol.token.migrated"}}))
		}
		const n = 500
		ids := publishMany(t, e, webhook.TokenMigrated, n)
		for i, r := range rcvs {
			eventually(t, 60*time.Second, fmt.Sprintf("endpoint %d has every event", i), func() bool { got, _ := r.counts(); return got == n })
		}
		// Nothing more may come: a marker event published after the n arrived goes through each
		// endpoint's lane after them. A lane records a batch's attempts once every request of the
		// batch has returned, so once the marker's attempt is recorded, an event the lane sent
		// again (with the marker or before it) has arrived too.
		marker := workflows.MessageID(publish(t, e, webhook.TokenMigrated, `{"address":"SoM","name":"M","symbol":"MARK","decimals":9}`))
		for i, r := range rcvs {
			eventually(t, 60*time.Second, fmt.Sprintf("endpoint %d has the marker", i), func() bool {
				r.mu.Lock()
				defer r.mu.Unlock()
				return r.seen[marker] > 0
			})
			eventually(t, 60*time.Second, fmt.Sprintf("endpoint %d's attempt of the marker recorded", i), func() bool {
				return countRows(t, e, `SELECT count(*) FROM webhook_attempts WHERE endpoint_id = $1 AND event_id = $2`, eps[i], marker) == 1
			})
		}
		for i, r := range rcvs {
			got, reqs := r.counts()
			assert.Equal(t, n+1, got, "endpoint %d: distinct webhook-ids (the events and the marker)", i)
			assert.Equal(t, n+1, reqs, "endpoint %d: no event sent twice", i)
			r.mu.Lock()
			for _, id := range append(ids, marker) {
				assert.Equal(t, 1, r.seen[id], "endpoint %d: %s", i, id)
			}
			r.mu.Unlock()
			assert.Equal(t, n+1, countRows(t, e, `SELECT count(*) FROM webhook_attempts WHERE endpoint_id = $1 AND attempt = 1 AND succeeded`, eps[i]))
			assert.Equal(t, n+1, countRows(t, e, `SELECT count(*) FROM webhook_attempts WHERE endpoint_id = $1`, eps[i]), "one attempt each")
			assert.Equal(t, 0, countRows(t, e, `SELECT count(*) FROM webhook_queue WHERE endpoint_id = $1`, eps[i]), "nothing left queued")
		}
	})

	t.Run("rateLimit 10: first attempts spaced 100 ms apart", func(t *testing.T) {
		key := e.keyFor(t, "wh-pump-rate", account.ScopeWebhook)
		var mu sync.Mutex
		var arrivals []time.Time
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			_, _ = io.Copy(io.Discard, req.Body)
			mu.Lock()
			arrivals = append(arrivals, time.Now())
			mu.Unlock()
		}))
		defer srv.Close()
		createEndpoint(t, e, key, map[string]any{"url": srv.URL, "channels": []string{"sol.token.created"}, "rateLimit": 10,
			"filter": `data.symbol == "RATE"`})
		const n = 35
		ids := make([]string, n)
		for i := range ids {
			ids[i] = publish(t, e, webhook.TokenCreated, `{"address":"SoR","name":"R","symbol":"RATE","decimals":9}`)
		}
		eventually(t, 30*time.Second, "every event", func() bool { mu.Lock(); defer mu.Unlock(); return len(arrivals) == n })
		mu.Lock()
		defer mu.Unlock()
		for i := range arrivals {
			in := 0
			for _, a := range arrivals[i:] {
				if a.Sub(arrivals[i]) < time.Second {
					in++
				}
			}
			// The sender starts one request every 100 ms; the receiver sees them with the jitter of
			// a loaded machine, so two more than the limit may land in one of its seconds.
			assert.LessOrEqual(t, in, 12, "arrivals in the second after arrival %d", i)
		}
		// Sent unthrottled they would all arrive within milliseconds.
		assert.GreaterOrEqual(t, arrivals[n-1].Sub(arrivals[0]), time.Duration(n-1-10)*100*time.Millisecond,
			"%d events at 10 per second take at least %d × 100 ms", n, n-11)
	})

	t.Run("an endpoint that hangs: the others get everything while its first attempts are still queued", func(t *testing.T) {
		key := e.keyFor(t, "wh-pump-iso", account.ScopeWebhook)
		hung := newIDReceiver(t, true)
		hungID := createEndpoint(t, e, key, map[string]any{"url": hung.srv.URL, "channels": []string{"sol.token.created"}})
		var rcvs []*idReceiver
		for range 4 {
			r := newIDReceiver(t, false)
			rcvs = append(rcvs, r)
			createEndpoint(t, e, key, map[string]any{"url": r.srv.URL, "channels": []string{"sol.token.created"}})
		}
		// 48 events: the hanging endpoint takes 16 at a time, each until the 2 s sender timeout,
		// so its first attempts need at least 6 s; the others need no time from it.
		const n = 48
		publishMany(t, e, webhook.TokenCreated, n)
		for i, r := range rcvs {
			eventually(t, 60*time.Second, fmt.Sprintf("healthy endpoint %d has every event", i), func() bool { got, _ := r.counts(); return got == n })
		}
		queued := countRows(t, e, `SELECT count(*) FROM webhook_queue WHERE endpoint_id = $1`, hungID)
		tried := countRows(t, e, `SELECT count(*) FROM webhook_attempts WHERE endpoint_id = $1`, hungID)
		assert.Positive(t, queued, "the hanging endpoint still has first attempts queued")
		assert.Less(t, tried, n, "and has not tried every event yet")
		hung.mu.Lock()
		assert.LessOrEqual(t, hung.maxInFlight, 16, "at most 16 requests in flight to one endpoint")
		hung.mu.Unlock()
		for i, r := range rcvs {
			_, reqs := r.counts()
			assert.Equal(t, n, reqs, "healthy endpoint %d: nothing sent twice", i)
		}
		// Delete it, so its queue and retries (on the package's shared task queue) end at once.
		r := e.do(t, "DELETE", "/v2/webhook/endpoint/"+hungID, nil, "Authorization", "Bearer "+key)
		require.Equal(t, 200, r.Status, "%s", r.Body)
	})
}
