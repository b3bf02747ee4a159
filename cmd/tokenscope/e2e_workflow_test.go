package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/tokenscope/tokenscope/app/config"
	"github.com/tokenscope/tokenscope/cmd/internal/wire"
	"github.com/tokenscope/tokenscope/domain/account"
	"github.com/tokenscope/tokenscope/domain/webhook"
	"github.com/tokenscope/tokenscope/workflows"
)

const (
	solAddr = "D1Mc6j9xQWgR1o1Z7yU5nVVXFQiAYx7FG9AW1aVfwrUM"
	solSig  = "5rKfmXQyMhz7F2zRE6SpWWx3YkSxtA4gFqZD8CwGRYMx5YLTB8NhbiM9xEHG9jruiWdUyUz7Fpz8jmB8SKcjsLqe"
)

// fastWorkflows makes retries, polls and heartbeats fast enough for tests.
func fastWorkflows(c *config.Config) {
	c.WebhookRetry = "50ms,100ms,200ms"
	c.WebhookDispatchPoll = 50 * time.Millisecond
	c.WebhookTimeout = 2 * time.Second
	c.JobPollInterval = 50 * time.Millisecond
	c.SSEHeartbeat = 100 * time.Millisecond
	c.KYTFlagged = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin=SEVERE"
}

// eventually polls cond every 20 ms until it holds or d passes.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	eventuallyEvery(t, d, 20*time.Millisecond, what, cond)
}

// eventuallyEvery is eventually checking cond every interval: for a cond that costs CPU (a
// dump of every goroutine's stack) on a wait that takes seconds anyway.
func eventuallyEvery(t *testing.T, d, interval time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			dumpTemporal(t)
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(interval)
	}
}

func withdrawalBody(amount string) map[string]any {
	return map[string]any{"address": solAddr, "asset": "SOL", "assetAmount": amount,
		"attemptTimestamp": "2024-01-15T10:30:00.000Z", "network": "Solana", "assetPrice": "3"}
}

func countRows(t *testing.T, e *env, query string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, e.rt.Pool.QueryRow(context.Background(), query, args...).Scan(&n))
	return n
}

func TestKYTRegistration(t *testing.T) {
	e := newEnv(t, fastWorkflows)

	t.Run("withdrawal answers at once and is screened in the workflow", func(t *testing.T) {
		r := e.do(t, "POST", "/v2/kyt/withdrawal", withdrawalBody("0.1"))
		require.Equal(t, 200, r.Status, "%s", r.Body)
		o := r.Object(t)
		assert.Equal(t, "0.3", o["usdAmount"], "0.1 × 3 exactly")
		assert.Equal(t, solAddr, o["address"])
		assert.Equal(t, "0.1", o["assetAmount"])
		assert.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, o["externalId"])
		assert.NotEmpty(t, o["attemptIdentifier"])
		id := o["externalId"].(string)
		var s map[string]any
		eventually(t, 30*time.Second, "registered", func() bool {
			s = e.do(t, "GET", "/v2/kyt/withdrawal/"+id+"/summary", nil).Object(t)
			return s["status"] == "registered"
		})
		assert.Equal(t, "lowRisk", s["rating"])
		assert.NotNil(t, s["processedAt"])
		assert.Equal(t, 404, e.do(t, "GET", "/v2/kyt/transfers/"+id+"/summary", nil).Status, "a withdrawal is not a transfer")
	})

	t.Run("flagged counterparty of a transfer is rated by the built-in provider", func(t *testing.T) {
		body := map[string]any{"asset": "SOL", "direction": "received", "network": "Solana",
			"transferReference": solSig + ":9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"}
		r := e.do(t, "POST", "/v2/kyt/transfer", body)
		require.Equal(t, 200, r.Status, "%s", r.Body)
		o := r.Object(t)
		assert.Nil(t, o["updatedAt"], "null until processed")
		id := o["externalId"].(string)
		var s map[string]any
		eventually(t, 30*time.Second, "registered", func() bool {
			s = e.do(t, "GET", "/v2/kyt/transfers/"+id+"/summary", nil).Object(t)
			return s["status"] == "registered"
		})
		assert.Equal(t, "severeRisk", s["rating"])
		assert.Equal(t, "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin", s["outputAddress"])
		assert.NotNil(t, s["updatedAt"])
	})

	t.Run("the same withdrawal posted concurrently has one externalId and one row", func(t *testing.T) {
		const n = 10
		ids := make([]string, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := e.do(t, "POST", "/v2/kyt/withdrawal", withdrawalBody("7.25"))
				if assert.Equal(t, 200, r.Status, "%s", r.Body) {
					var o map[string]any
					_ = json.Unmarshal(r.Body, &o)
					ids[i], _ = o["externalId"].(string)
				}
			}()
		}
		wg.Wait()
		for _, id := range ids {
			assert.Equal(t, ids[0], id)
		}
		assert.Equal(t, 1, countRows(t, e, `SELECT count(*) FROM kyt_registrations WHERE external_id = $1`, ids[0]))
	})

	t.Run("an idempotency key reused for another body is a conflict", func(t *testing.T) {
		r := e.do(t, "POST", "/v2/kyt/withdrawal", withdrawalBody("1"), "Idempotency-Key", "k-conflict")
		require.Equal(t, 200, r.Status, "%s", r.Body)
		r = e.do(t, "POST", "/v2/kyt/withdrawal", withdrawalBody("2"), "Idempotency-Key", "k-conflict")
		assert.Equal(t, 409, r.Status, "%s", r.Body)
	})

	t.Run("validation names the field", func(t *testing.T) {
		for _, tc := range []struct {
			name, path string
			body       map[string]any
			param      string
		}{
			{"missing address", "/v2/kyt/withdrawal", map[string]any{"asset": "SOL", "assetAmount": "1", "attemptTimestamp": "2024-01-15T10:30:00Z", "network": "Solana"}, "address"},
			{"unknown network", "/v2/kyt/withdrawal", map[string]any{"address": solAddr, "asset": "SOL", "assetAmount": "1", "attemptTimestamp": "2024-01-15T10:30:00Z", "network": "tron"}, "network"},
			{"negative amount", "/v2/kyt/withdrawal", withdrawalBody("-1"), "assetAmount"},
			{"bad timestamp", "/v2/kyt/withdrawal", map[string]any{"address": solAddr, "asset": "SOL", "assetAmount": "1", "attemptTimestamp": "yesterday", "network": "Solana"}, "attemptTimestamp"},
			{"bad direction", "/v2/kyt/transfer", map[string]any{"asset": "SOL", "direction": "out", "network": "Solana", "transferReference": solSig}, "direction"},
			{"reference without address", "/v2/kyt/transfer", map[string]any{"asset": "SOL", "direction": "received", "network": "Solana", "transferReference": solSig}, "transferReference"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := e.do(t, "POST", tc.path, tc.body)
				require.Equal(t, 400, r.Status, "%s", r.Body)
				assert.Equal(t, tc.param, r.Object(t)["details"].(map[string]any)["parameter"])
			})
		}
	})

	t.Run("another account sees 404", func(t *testing.T) {
		o := e.do(t, "POST", "/v2/kyt/withdrawal", withdrawalBody("3")).Object(t)
		other := e.keyFor(t, "kyt-other", account.ScopeKYT)
		r := e.do(t, "GET", "/v2/kyt/withdrawal/"+o["externalId"].(string)+"/summary", nil, "Authorization", "Bearer "+other)
		assert.Equal(t, 404, r.Status, "%s", r.Body)
	})
}

// receiver is a loopback webhook receiver whose answers a test scripts.
type receiver struct {
	srv     *httptest.Server
	mu      sync.Mutex
	reqs    []*http.Request
	bodies  [][]byte
	answers []int // status per request; 200 once exhausted
	delay   time.Duration
}

func newReceiver(t *testing.T, answers ...int) *receiver {
	r := &receiver{answers: answers}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		n := len(r.reqs)
		r.reqs = append(r.reqs, req)
		r.bodies = append(r.bodies, b)
		status, delay := 200, r.delay
		if n < len(r.answers) {
			status = r.answers[n]
		}
		r.mu.Unlock()
		if delay > 0 {
			time.Sleep(delay)
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.reqs)
}

// outboxSeq makes outbox event ids unique across the package's tests.
var outboxSeq atomic.Int64

// publish writes an outbox row as the engine does and returns its event id.
func publish(t *testing.T, e *env, ch webhook.Channel, payload string) string {
	t.Helper()
	id := fmt.Sprintf("%s:test-%d-%d", ch, time.Now().UnixNano(), outboxSeq.Add(1))
	_, err := e.rt.Pool.Exec(context.Background(), `INSERT INTO outbox (event_id, channel, payload, created_at_ms) VALUES ($1, $2, $3, $4)`,
		id, string(ch), payload, time.Now().UnixMilli())
	require.NoError(t, err)
	return id
}

func createEndpoint(t *testing.T, e *env, key string, body map[string]any) string {
	t.Helper()
	r := e.do(t, "POST", "/v2/webhook/endpoint", body, "Authorization", "Bearer "+key)
	require.Equal(t, 200, r.Status, "%s", r.Body)
	return r.Object(t)["id"].(string)
}

func TestWebhookDelivery(t *testing.T) {
	e := newEnv(t, fastWorkflows)
	require.NoError(t, wire.StartWebhookDispatch(context.Background(), e.rt))
	key := e.keyFor(t, "wh-deliver", account.ScopeWebhook)

	t.Run("500 three times then 200: four attempts, one success, verifiable signature", func(t *testing.T) {
		rcv := newReceiver(t, 500, 500, 500)
		id := createEndpoint(t, e, key, map[string]any{"url": rcv.srv.URL, "channels": []string{"sol.token.created"}})
		other := newReceiver(t)
		createEndpoint(t, e, key, map[string]any{"url": other.srv.URL, "channels": []string{"sol.token.migrated"}})
		secretText := e.do(t, "GET", "/v2/webhook/endpoint/"+id+"/secret", nil, "Authorization", "Bearer "+key).Object(t)["secret"].(string)
		secret, err := webhook.ParseSecret(secretText)
		require.NoError(t, err)

		evID := publish(t, e, webhook.TokenCreated, `{"address":"So1","name":"A","symbol":"AAA","decimals":9}`)
		eventually(t, 45*time.Second, "four attempts", func() bool { return rcv.count() >= 4 })
		// Nothing more may come. Attempts 2-4 are the retry workflow's: once it has completed it
		// sends nothing. The first went through the pump's lane: a marker event published now
		// goes through the same lane after it, so once the marker has arrived, a repeat of the
		// first attempt would have arrived before it. The other endpoint gets a marker of its own
		// channel: once it has arrived, a misrouted event would have too.
		msgID := workflows.MessageID(evID)
		ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
		defer cancel()
		require.NoError(t, e.rt.Temporal.GetWorkflow(ctx, workflows.DeliveryWorkflowID(id, msgID), "").Get(ctx, nil))
		marker := workflows.MessageID(publish(t, e, webhook.TokenCreated, `{"address":"So2","name":"M","symbol":"MARK","decimals":9}`))
		otherMarker := workflows.MessageID(publish(t, e, webhook.TokenMigrated, `{"address":"So3","name":"M","symbol":"MARK","decimals":9}`))
		eventually(t, 45*time.Second, "the marker", func() bool { return rcv.count() >= 5 })
		eventually(t, 45*time.Second, "the other endpoint's marker", func() bool { return other.count() >= 1 })
		require.Equal(t, 5, rcv.count(), "four attempts, then the marker")
		require.Equal(t, 1, other.count(), "an endpoint on another channel gets nothing but its marker")
		rcv.mu.Lock()
		assert.Equal(t, marker, rcv.reqs[4].Header.Get("webhook-id"), "the marker came last")
		rcv.mu.Unlock()
		other.mu.Lock()
		assert.Equal(t, otherMarker, other.reqs[0].Header.Get("webhook-id"))
		other.mu.Unlock()

		rcv.mu.Lock()
		for i, req := range rcv.reqs[:4] {
			assert.Equal(t, msgID, req.Header.Get("webhook-id"), "same id on every retry")
			assert.Equal(t, msgID, req.Header.Get("svix-id"))
			ts, err := strconv.ParseInt(req.Header.Get("webhook-timestamp"), 10, 64)
			require.NoError(t, err)
			assert.WithinDuration(t, time.Now(), time.Unix(ts, 0), webhook.DefaultTolerance)
			assert.Contains(t, strings.Fields(req.Header.Get("webhook-signature")),
				webhook.Sign(secret, msgID, time.Unix(ts, 0), rcv.bodies[i]), "signed with the endpoint's secret")
		}
		var payload map[string]any
		require.NoError(t, json.Unmarshal(rcv.bodies[3], &payload))
		rcv.mu.Unlock()
		assert.Equal(t, "sol.token.created", payload["channel"])
		assert.Equal(t, "AAA", payload["data"].(map[string]any)["symbol"])

		var list map[string]any
		ofEvent := func() (n, successes int) {
			for _, a := range list["data"].([]any) {
				if a.(map[string]any)["msgId"] == msgID {
					n++
					if a.(map[string]any)["success"] == true {
						successes++
					}
				}
			}
			return n, successes
		}
		eventually(t, 5*time.Second, "four recorded attempts", func() bool {
			list = e.do(t, "GET", "/v2/webhook/endpoint/"+id+"/attempts", nil, "Authorization", "Bearer "+key).Object(t)
			n, _ := ofEvent()
			return n == 4
		})
		_, successes := ofEvent()
		assert.Equal(t, 1, successes)
		// Attempt 1 went through the pump's lane, attempts 2-4 through the retry workflow.
		replay(t, e.rt.Temporal, workflows.WebhookDispatchWorkflowID)
		replay(t, e.rt.Temporal, workflows.DeliveryWorkflowID(id, msgID))
	})
}

// replay fetches a workflow's history and replays it against the current code: a change that
// breaks determinism fails here.
func replay(t *testing.T, c client.Client, workflowID string) {
	t.Helper()
	iter := c.GetWorkflowHistory(context.Background(), workflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	h := &historypb.History{}
	for iter.HasNext() {
		ev, err := iter.Next()
		require.NoError(t, err)
		h.Events = append(h.Events, ev)
	}
	require.NotEmpty(t, h.Events)
	r := worker.NewWorkflowReplayer()
	reg := func(fn any, name string) { r.RegisterWorkflowWithOptions(fn, workflow.RegisterOptions{Name: name}) }
	reg(workflows.KYTRegistrationWorkflow, workflows.KYTRegistrationWorkflowName)
	reg(workflows.WebhookDeliveryWorkflow, workflows.WebhookDeliveryWorkflowName)
	reg(workflows.WebhookDispatchWorkflow, workflows.WebhookDispatchWorkflowName)
	reg(workflows.WebhookEndpointWorkflow, workflows.WebhookEndpointWorkflowName)
	reg(workflows.CalculatePnLJobWorkflow, workflows.CalculatePnLJobWorkflowName)
	reg(workflows.NoopWorkflow, workflows.NoopWorkflowName)
	reg(workflows.MarketRefreshWorkflow, workflows.MarketRefreshWorkflowName)
	require.NoError(t, r.ReplayWorkflowHistory(nil, h), "replay %s", workflowID)
}
