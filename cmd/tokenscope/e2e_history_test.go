package main

// The workflow histories workflows/testdata holds for workflows' TestReplayHistories: how they
// are recorded (TestRecordHistories) and the check that every registered workflow has one.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"go.temporal.io/server/common/dynamicconfig"
	temporalsrv "go.temporal.io/server/temporal"
	"go.temporal.io/server/temporaltest"

	"github.com/tokenscope/tokenscope/adapters/postgres/pgtest"
	"github.com/tokenscope/tokenscope/adapters/temporal"
	"github.com/tokenscope/tokenscope/app/config"
	"github.com/tokenscope/tokenscope/cmd/internal/wire"
	"github.com/tokenscope/tokenscope/domain/account"
	"github.com/tokenscope/tokenscope/domain/kyt"
	"github.com/tokenscope/tokenscope/domain/webhook"
	"github.com/tokenscope/tokenscope/workflows"
)

// historyDir is where the replay test reads the histories.
const historyDir = "../../workflows/testdata"

// recordContinueAsNewAt is the history length from which the recording server suggests
// continue-as-new (limit.historyCount.suggestContinueAsNew, 4 Ki events by default), so the
// endpoint workflow continues as new after its second batch instead of after hundreds.
const recordContinueAsNewAt = 15

// execution is one recorded run, written to file.
type execution struct {
	file          string
	workflowID    string
	runID         string
	workflowType  string
	wantCompleted enumspb.WorkflowExecutionStatus
}

// historyScenario drives a running tokenscope so its workflows write the histories named in
// files, and returns the runs to record, one per file in that order.
type historyScenario struct {
	files []string
	run   func(t *testing.T, e *env) []execution
}

// historyScenarios are the recordings in workflows/testdata (its README says what each covers).
// A new workflow, or a change to one guarded by workflow.GetVersion, adds a scenario (or a file
// to one) under a new name; a file already committed is never recorded again, since it stands
// for the runs of the build that wrote it. webhook_dispatch_run.json, webhook_endpoint_signaled.json
// and webhook_delivery_retried.json were recorded before the delivery pump (dispatch-pump): the
// dispatcher handed events to endpoint workflows, which today's code no longer starts.
// market_refresh_v0_signaled.json and
// market_refresh_v1_signaled.json came before this recorder (a one-off program: ExecuteWorkflow
// on a private task queue, a stub RefreshMarket) and v0 cannot be recorded by today's code.
var historyScenarios = []historyScenario{
	{files: []string{"noop_readiness_probe.json"}, run: recordNoop},
	{files: []string{"kyt_registration_withdrawal_v1.json", "kyt_registration_abandoned.json"}, run: recordKYT},
	{files: []string{"calculate_pnl_job_wallet_v1.json", "calculate_pnl_job_tokens_v1.json"}, run: recordPnLJobs},
	{files: []string{"webhook_dispatch_pump_signaled.json", "webhook_delivery_pump_retry.json"}, run: recordWebhookPump},
	{files: []string{"market_refresh_v1_started.json"}, run: recordMarketRefresh},
	{files: []string{"chain_follow_eth.json"}, run: recordChainFollow},
}

// TestRecordHistories records the histories of historyScenarios that workflows/testdata lacks:
//
//	RECORD_HISTORIES=1 go test -run TestRecordHistories ./cmd/tokenscope/
//
// It runs tokenscope as the e2e tests do (Postgres, the HTTP API, a worker with every workflow
// registered) on an in-process Temporal server of its own, and writes each run's history as
// `temporal workflow show --output json` does, the form client.HistoryFromJSON reads. Without
// RECORD_HISTORIES it does nothing: it is a tool, not a test.
func TestRecordHistories(t *testing.T) {
	if os.Getenv("RECORD_HISTORIES") == "" {
		t.Skip("a recorder: RECORD_HISTORIES=1 writes the missing histories into " + historyDir)
	}
	missing := map[string][]string{} // scenario's first file → its files not yet recorded
	for _, s := range historyScenarios {
		for _, f := range s.files {
			if _, err := os.Stat(filepath.Join(historyDir, f)); errors.Is(err, fs.ErrNotExist) {
				missing[s.files[0]] = append(missing[s.files[0]], f)
			}
		}
	}
	if len(missing) == 0 {
		t.Log("every history is recorded; nothing to do")
		return
	}
	srv := temporaltest.NewServer(temporaltest.WithT(t), temporaltest.WithBaseServerOptions(
		temporalsrv.WithDynamicConfigClient(dynamicconfig.StaticClient{
			dynamicconfig.ForceSearchAttributesCacheRefreshOnRead.Key(): []dynamicconfig.ConstrainedValue{{Value: true}},
			dynamicconfig.HistoryCountSuggestContinueAsNew.Key():        []dynamicconfig.ConstrainedValue{{Value: recordContinueAsNewAt}},
		})))
	pgtest.Truncate(t, "chain_checkpoints")
	e := newEnvWithClient(t, srv.GetDefaultClient(), true, fastWorkflows, startRecordingChain(t),
		func(c *config.Config) { c.TemporalNS = srv.GetDefaultNamespace() })
	for _, s := range historyScenarios {
		todo := missing[s.files[0]]
		if len(todo) == 0 {
			continue
		}
		t.Run(strings.TrimSuffix(s.files[0], ".json"), func(t *testing.T) {
			runs := s.run(t, e)
			require.Len(t, runs, len(s.files))
			for _, x := range runs {
				if slices.Contains(todo, x.file) {
					writeHistory(t, e.rt.Temporal, x)
				}
			}
		})
	}
}

// writeHistory waits for the run to end as expected and writes its history.
func writeHistory(t *testing.T, c client.Client, x execution) {
	t.Helper()
	waitStatus(t, c, x.workflowID, x.runID, x.wantCompleted)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	iter := c.GetWorkflowHistory(ctx, x.workflowID, x.runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	h := &historypb.History{}
	for iter.HasNext() {
		ev, err := iter.Next()
		require.NoError(t, err)
		h.Events = append(h.Events, ev)
	}
	require.NotEmpty(t, h.Events)
	require.Equal(t, x.workflowType, h.Events[0].GetWorkflowExecutionStartedEventAttributes().GetWorkflowType().GetName())
	b, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(h)
	require.NoError(t, err)
	path := filepath.Join(historyDir, x.file)
	require.NoError(t, os.WriteFile(path, append(b, '\n'), 0o644))
	t.Logf("wrote %s: %s run %s, %d events", path, x.workflowType, x.runID, len(h.Events))
}

// waitStatus waits until the run has the status want.
func waitStatus(t *testing.T, c client.Client, workflowID, runID string, want enumspb.WorkflowExecutionStatus) {
	t.Helper()
	var got enumspb.WorkflowExecutionStatus
	eventually(t, 60*time.Second, fmt.Sprintf("%s run %s %s", workflowID, runID, want), func() bool {
		d, err := c.DescribeWorkflowExecution(context.Background(), workflowID, runID)
		if err != nil {
			return false
		}
		got = d.GetWorkflowExecutionInfo().GetStatus()
		return got != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
	})
	require.Equal(t, want, got, "%s run %s", workflowID, runID)
}

// currentRun is the run ID of the workflow's current run, once it exists.
func currentRun(t *testing.T, c client.Client, workflowID string) string {
	t.Helper()
	var run string
	eventually(t, 30*time.Second, "workflow "+workflowID, func() bool {
		d, err := c.DescribeWorkflowExecution(context.Background(), workflowID, "")
		if err == nil {
			run = d.GetWorkflowExecutionInfo().GetExecution().GetRunId()
		}
		return run != ""
	})
	return run
}

const completed = enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED

// recordNoop: the readiness probe's round trip.
func recordNoop(t *testing.T, e *env) []execution {
	p := temporal.NewWorkflowProbe(e.rt.Temporal)
	p.ID = "readiness/record"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, p.Run(ctx))
	return []execution{{"noop_readiness_probe.json", p.ID, currentRun(t, e.rt.Temporal, p.ID), workflows.NoopWorkflowName, completed}}
}

// recordKYT: a withdrawal confirmed, screened by the built-in provider and recorded; and a
// workflow whose row was never written (started as the API starts it, for a registration no
// request stored, its deadline past), which ends as abandoned. kyt_registration_withdrawal.json
// was recorded before kyt-confirm-row.
func recordKYT(t *testing.T, e *env) []execution {
	r := e.do(t, "POST", "/v2/kyt/withdrawal", withdrawalBody("0.5"), "Idempotency-Key", "record-history")
	require.Equal(t, 200, r.Status, "%s", r.Body)
	id := workflows.KYTWorkflowID("e2e", string(kyt.KindWithdrawal), r.Object(t)["externalId"].(string))
	price := "3"
	reg, err := kyt.NewWithdrawal("e2e", "record-abandoned", kyt.WithdrawalRequest{Address: solAddr, Asset: "SOL",
		AssetAmount: "0.5", AttemptTimestamp: "2024-01-15T10:30:00.000Z", Network: kyt.Solana, AssetPrice: &price}, time.Now())
	require.NoError(t, err)
	lost := workflows.KYTWorkflowID("e2e", string(reg.Kind), reg.ExternalID)
	_, err = e.rt.Temporal.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: lost, TaskQueue: workflows.TaskQueue},
		workflows.KYTRegistrationWorkflowName, workflows.KYTInput{Registration: reg, CommitBy: time.Now().Add(-time.Minute)})
	require.NoError(t, err)
	return []execution{
		{"kyt_registration_withdrawal_v1.json", id, currentRun(t, e.rt.Temporal, id), workflows.KYTRegistrationWorkflowName, completed},
		{"kyt_registration_abandoned.json", lost, currentRun(t, e.rt.Temporal, lost), workflows.KYTRegistrationWorkflowName,
			enumspb.WORKFLOW_EXECUTION_STATUS_FAILED},
	}
}

// recordPnLJobs: a calculate-pnl job over a wallet's own tokens (none: it never traded), and
// one over twelve named tokens, one of them twice (two batches; version pnl-distinct-positions:
// the v0 files were recorded before it). Progress is read through the API, which asks the
// job's query handler while the job runs (queries leave no events).
func recordPnLJobs(t *testing.T, e *env) []execution {
	key := e.keyFor(t, "record-pnl", account.ScopeRead)
	start := func(wallet string, body any) string {
		r := e.do(t, "POST", "/v2/wallet/sol/"+wallet+"/calculate-pnl", body, "Authorization", "Bearer "+key)
		require.Equal(t, 200, r.Status, "%s", r.Body)
		jobID := r.Object(t)["jobId"].(string)
		eventually(t, 30*time.Second, "job "+jobID+" completed", func() bool {
			return e.do(t, "GET", "/v2/job/"+jobID, nil, "Authorization", "Bearer "+key).Object(t)["state"] == "completed"
		})
		return workflows.JobWorkflowID(jobID)
	}
	tokens := make([]string, 12)
	for i := range tokens {
		tokens[i] = "Tok" + string(rune('A'+i)) + strings.Repeat("1", 39)
	}
	wallet := start("RecordPnL1111111111111111111111111111111111", nil)
	named := start("RecordPnL2222222222222222222222222222222222", map[string]any{"tokenAddresses": append(tokens, tokens[0])})
	c := e.rt.Temporal
	return []execution{
		{"calculate_pnl_job_wallet_v1.json", wallet, currentRun(t, c, wallet), workflows.CalculatePnLJobWorkflowName, completed},
		{"calculate_pnl_job_tokens_v1.json", named, currentRun(t, c, named), workflows.CalculatePnLJobWorkflowName, completed},
	}
}

// recordWebhookPump: the dispatcher as dev and worker start it (StartDispatcher, a
// signal-with-start) with 1 s pump runs, 3 runs per history; a changed configuration signalled
// 0.5 s in cancels the first run (which ends gracefully) and the next run takes it. One event's
// first attempt fails in the pump's lane, which starts its retry workflow from attempt 2 (it
// fails once more, then succeeds); the first run of the loop is recorded up to its
// continue-as-new.
func recordWebhookPump(t *testing.T, e *env) []execution {
	c := e.rt.Temporal
	ctx := context.Background()
	var mu sync.Mutex
	attempts := map[string]int{}
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = io.Copy(io.Discard, req.Body)
		mu.Lock()
		id := req.Header.Get("webhook-id")
		attempts[id]++
		fail := attempts[id] <= 2
		mu.Unlock()
		if fail {
			w.WriteHeader(500)
			return
		}
		w.WriteHeader(200)
	}))
	t.Cleanup(rcv.Close)
	seen := func(id string) int {
		mu.Lock()
		defer mu.Unlock()
		return attempts[id]
	}
	require.NoError(t, temporal.StartDispatcher(ctx, c,
		workflows.DispatchInput{PollInterval: 100 * time.Millisecond, RunFor: time.Second, RoundsPerRun: 3}))
	run := currentRun(t, c, workflows.WebhookDispatchWorkflowID)
	time.Sleep(500 * time.Millisecond)
	require.NoError(t, temporal.StartDispatcher(ctx, c,
		workflows.DispatchInput{PollInterval: 50 * time.Millisecond, RunFor: time.Second, RoundsPerRun: 3}))

	key := e.keyFor(t, "record-webhook-pump", account.ScopeWebhook)
	ep := createEndpoint(t, e, key, map[string]any{"url": rcv.URL, "channels": []string{"sol.token.created"}})
	a := workflows.MessageID(publish(t, e, webhook.TokenCreated, `{"address":"So1","name":"A","symbol":"AAA","decimals":9}`))
	eventually(t, 30*time.Second, "event A delivered at attempt 3", func() bool { return seen(a) >= 3 })
	delivery := workflows.DeliveryWorkflowID(ep, a)
	deliveryRun := currentRun(t, c, delivery)
	waitStatus(t, c, delivery, deliveryRun, completed)
	return []execution{
		{"webhook_dispatch_pump_signaled.json", workflows.WebhookDispatchWorkflowID, run, workflows.WebhookDispatchWorkflowName,
			enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW},
		{"webhook_delivery_pump_retry.json", delivery, deliveryRun, workflows.WebhookDeliveryWorkflowName, completed},
	}
}

// recordMarketRefresh: the refresh loop as dev and worker start it (StartRefreshLoop, a
// signal-with-start), 4 rounds at 300 ms per run, a RefreshConfigSignal of 100 ms sent 0.5 s in
// (the timer under way is cancelled and restarted), the first run up to its continue-as-new.
func recordMarketRefresh(t *testing.T, e *env) []execution {
	c := e.rt.Temporal
	ctx := context.Background()
	require.NoError(t, temporal.StartRefreshLoop(ctx, c, workflows.RefreshInput{Interval: 300 * time.Millisecond, RunsPerHistory: 4}))
	run := currentRun(t, c, workflows.MarketRefreshWorkflowID)
	time.Sleep(500 * time.Millisecond)
	require.NoError(t, c.SignalWorkflow(ctx, workflows.MarketRefreshWorkflowID, run, workflows.RefreshConfigSignal,
		workflows.RefreshInput{Interval: 100 * time.Millisecond, RunsPerHistory: 4}))
	return []execution{{"market_refresh_v1_started.json", workflows.MarketRefreshWorkflowID, run, workflows.MarketRefreshWorkflowName,
		enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW}}
}

// workflowNames is a worker.Registry that notes the workflow names registered on it.
type workflowNames struct {
	worker.Registry // never called: the methods RegisterWorkflows uses are below
	names           []string
}

func (r *workflowNames) RegisterWorkflow(w any) {
	r.names = append(r.names, fmt.Sprintf("unnamed %T", w))
}

func (r *workflowNames) RegisterWorkflowWithOptions(_ any, o workflow.RegisterOptions) {
	r.names = append(r.names, o.Name)
}
func (r *workflowNames) RegisterActivity(any)                                      {}
func (r *workflowNames) RegisterActivityWithOptions(any, activity.RegisterOptions) {}

// TestEveryWorkflowHasAHistory: each workflow the worker registers has at least one committed
// history for workflows' replay test, so no workflow changes unreplayed.
func TestEveryWorkflowHasAHistory(t *testing.T) {
	cfg, err := config.Load()
	require.NoError(t, err)
	reg := &workflowNames{}
	wire.RegisterWorkflows(reg, &wire.Runtime{Cfg: cfg, Log: testLogger()})
	require.NotEmpty(t, reg.names)

	have := map[string][]string{}
	err = filepath.WalkDir(historyDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".json" {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		h, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if len(h.GetEvents()) == 0 {
			return errors.New(path + ": no events")
		}
		name := h.GetEvents()[0].GetWorkflowExecutionStartedEventAttributes().GetWorkflowType().GetName()
		have[name] = append(have[name], d.Name())
		return nil
	})
	require.NoError(t, err)
	for _, name := range reg.names {
		assert.NotEmpty(t, have[name], "workflow %q has no history in workflows/testdata: "+
			"add a scenario to historyScenarios and run RECORD_HISTORIES=1 go test -run TestRecordHistories ./cmd/tokenscope/", name)
	}
}
