//go:build measure

// Measurements, not assertions: run with `make measure` (go test -tags measure). They load the
// shared Temporal server with hundreds of workflows, so they stay out of `make test`, where
// the backlog they leave would starve the end-to-end tests that follow.

package main

import (
	"bytes"
	"context"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/tokenscope/tokenscope/cmd/internal/wire"
	"github.com/tokenscope/tokenscope/domain/account"
	"github.com/tokenscope/tokenscope/domain/webhook"
	"github.com/tokenscope/tokenscope/workflows"
)

func median(ds []time.Duration) time.Duration {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2]
}

// TestMeasureWorkflows records the figures docs/workflows.md quotes. It is bounded (a few
// hundred loopback requests) and asserts only what must hold whatever the machine.
func TestMeasureWorkflows(t *testing.T) {
	e := newEnv(t, fastWorkflows)
	ctx := context.Background()
	tc := e.rt.Temporal
	const rounds = 30

	// KYT registration round trip (POST → workflow closed) next to a no-op workflow.
	var noop, reg []time.Duration
	for i := range rounds {
		start := time.Now()
		run, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: workflows.TaskQueue}, workflows.NoopWorkflowName)
		require.NoError(t, err)
		require.NoError(t, run.Get(ctx, nil))
		noop = append(noop, time.Since(start))

		start = time.Now()
		r := e.do(t, "POST", "/v2/kyt/withdrawal", withdrawalBody("1"), "Idempotency-Key", "measure-"+strconv.Itoa(i)+"-"+strconv.FormatInt(start.UnixNano(), 10))
		require.Equal(t, 200, r.Status, "%s", r.Body)
		id := r.Object(t)["externalId"].(string)
		require.NoError(t, tc.GetWorkflow(ctx, workflows.KYTWorkflowID("e2e", "withdrawal", id), "").Get(ctx, nil))
		reg = append(reg, time.Since(start))
		replayOnce(t, i, tc, workflows.KYTWorkflowID("e2e", "withdrawal", id))
	}
	mNoop, mReg := median(noop), median(reg)
	t.Logf("MEASURE noop workflow round trip median %v; KYT registration round trip median %v; ratio %.1f",
		mNoop, mReg, float64(mReg)/float64(mNoop))

	// Deliveries per second to a loopback receiver, next to plain POSTs from a Go loop.
	require.NoError(t, wire.StartWebhookDispatch(ctx, e.rt))
	key := e.keyFor(t, "wh-measure", account.ScopeWebhook)
	rcv := newReceiver(t)
	createEndpoint(t, e, key, map[string]any{"url": rcv.srv.URL})
	const events = 300
	start := time.Now()
	for range events {
		publish(t, e, webhook.TokenCreated, `{"symbol":"M"}`)
	}
	eventually(t, 60*time.Second, "every delivery", func() bool { return rcv.count() >= events })
	viaWorkflows := float64(events) / time.Since(start).Seconds()

	body := []byte(`{"channel":"sol.token.created","timestamp":1,"data":{"symbol":"M"}}`)
	start = time.Now()
	for range events {
		res, err := http.Post(rcv.srv.URL, "application/json", bytes.NewReader(body))
		require.NoError(t, err)
		res.Body.Close()
	}
	plain := float64(events) / time.Since(start).Seconds()
	t.Logf("MEASURE deliveries/s through outbox+dispatcher+delivery workflows %.0f; plain POSTs/s %.0f; ratio %.1f",
		viaWorkflows, plain, plain/viaWorkflows)

	// Delay from a job's state change to its SSE message.
	var delays []time.Duration
	for range 10 {
		r := e.do(t, "POST", "/v2/wallet/sol/"+solAddr+"/calculate-pnl", nil)
		require.Equal(t, 200, r.Status)
		jobID := r.Object(t)["jobId"].(string)
		sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		res, sc := openStream(t, sctx, http.DefaultClient, e, jobID)
		msgs := readSSE(t, sc, 100)
		got := time.Now()
		res.Body.Close()
		cancel()
		require.NotEmpty(t, msgs)
		last := msgs[len(msgs)-1]
		if last.Data["status"] != "completed" {
			continue // the job had finished before the stream opened: its first message is terminal
		}
		stored, err := e.rt.App.Jobs.Get(ctx, "e2e", jobID)
		require.NoError(t, err)
		delays = append(delays, got.Sub(stored.UpdatedAt))
	}
	if len(delays) > 0 {
		t.Logf("MEASURE job state change → SSE message median %v over %d jobs (poll interval %v)",
			median(delays), len(delays), e.rt.Cfg.JobPollInterval)
	}
	assert.True(t, strings.HasPrefix(workflows.MessageID("x"), "msg_"))
}

// replayOnce replays the first registration's history: one replay is enough per workflow type.
func replayOnce(t *testing.T, i int, c client.Client, id string) {
	if i == 0 {
		replay(t, c, id)
	}
}
