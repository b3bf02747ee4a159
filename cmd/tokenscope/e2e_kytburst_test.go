package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"

	"github.com/tokenscope/tokenscope/app/config"
	"github.com/tokenscope/tokenscope/domain/kyt"
	"github.com/tokenscope/tokenscope/workflows"
)

// TestKYTBurst: 200 concurrent registrations each end either registered or refused with 503,
// and nothing is left behind: no workflow without its row (a workflow started for a request
// whose row's transaction then failed finds that out and ends, without retrying), no row
// without its workflow. 50 concurrent POSTs gave 30–32 503s and 15 workflows retrying
// RecordScreening with "registration not found".
//
// The second run gives each request only 300 ms (KYT_REGISTER_DEADLINE), so that under the same
// burst some requests run out of time after their workflow started: those must be refused and
// their workflows must end as abandoned.
func TestKYTBurst(t *testing.T) {
	t.Run("default deadline", func(t *testing.T) { kytBurst(t, newEnv(t, fastWorkflows)) })
	t.Run("a deadline that runs out during the burst", func(t *testing.T) {
		kytBurst(t, newEnv(t, fastWorkflows, func(c *config.Config) { c.KYTDeadline = 300 * time.Millisecond }))
	})
}

func kytBurst(t *testing.T, e *env) {
	const n = 200
	run := fmt.Sprintf("burst-%d-", time.Now().UnixNano())
	status := make([]int, n)
	answers := make([]resp, n)
	took := make([]time.Duration, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			began := time.Now()
			r := e.do(t, "POST", "/v2/kyt/withdrawal", withdrawalBody(fmt.Sprintf("1.%03d", i)), "Idempotency-Key", run+fmt.Sprint(i))
			status[i], answers[i], took[i] = r.Status, r, time.Since(began)
		}()
	}
	close(start)
	wg.Wait()

	ctx := t.Context()
	tc := e.rt.Temporal
	accepted, refused, orphans, abandoned := 0, 0, 0, 0
	sorted := slices.Clone(took)
	slices.Sort(sorted)
	ids := make([]string, n)
	reasons := map[string]int{}
	for i := range n {
		ids[i] = kyt.ExternalID("e2e", string(kyt.KindWithdrawal)+":"+run+fmt.Sprint(i))
		switch status[i] {
		case 200:
			accepted++
			var o map[string]any
			require.NoError(t, json.Unmarshal(answers[i].Body, &o))
			require.Equal(t, ids[i], o["externalId"], "the workflow ID is derived from the idempotency key")
		case 503:
			refused++
			body := requireErrorBody(t, answers[i], 503)
			reasons[fmt.Sprint(body["message"])]++
		default:
			t.Errorf("request %d: %d %s", i, status[i], answers[i].Body)
		}
	}
	// What the burst left, before anything is awaited: refused requests with a row or a running workflow.
	for i := range n {
		if status[i] != 503 {
			continue
		}
		d, err := tc.DescribeWorkflowExecution(ctx, workflows.KYTWorkflowID("e2e", string(kyt.KindWithdrawal), ids[i]), "")
		var nf *serviceerror.NotFound
		if err == nil && d.WorkflowExecutionInfo.Status == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			orphans++
		} else if err != nil && !assert.ErrorAs(t, err, &nf) {
			continue
		}
	}
	t.Logf("200 concurrent registrations: %d accepted, %d refused with 503 (answers p50 %s, p99 %s, slowest %s); %d refused ones had a running workflow",
		accepted, refused, sorted[n/2].Round(time.Millisecond), sorted[n*99/100].Round(time.Millisecond),
		sorted[n-1].Round(time.Millisecond), orphans)
	if len(reasons) > 0 {
		t.Logf("503 messages: %v", reasons)
	}

	for i := range n {
		wid := workflows.KYTWorkflowID("e2e", string(kyt.KindWithdrawal), ids[i])
		rows := countRows(t, e, `SELECT count(*) FROM kyt_registrations WHERE external_id = $1`, ids[i])
		if status[i] == 200 {
			var st kyt.Status
			require.NoError(t, tc.GetWorkflow(ctx, wid, "").Get(ctx, &st), "accepted %d", i)
			assert.Equal(t, kyt.StatusRegistered, st, "accepted %d", i)
			assert.Equal(t, 1, countRows(t, e, `SELECT count(*) FROM kyt_registrations WHERE external_id = $1 AND status = 'registered'`, ids[i]),
				"accepted %d has its row, registered", i)
			continue
		}
		if status[i] != 503 {
			continue
		}
		assert.Zero(t, rows, "refused %d left a row", i)
		_, err := tc.DescribeWorkflowExecution(ctx, wid, "")
		var nf *serviceerror.NotFound
		if err != nil {
			require.ErrorAs(t, err, &nf)
			continue
		}
		// A workflow was started while its row's transaction failed: it must find that out and
		// end without retrying (the run fails once with a non-retryable error), never register.
		werr := tc.GetWorkflow(ctx, wid, "").Get(ctx, nil)
		var app *temporal.ApplicationError
		if assert.ErrorAs(t, werr, &app, "refused %d: its workflow ends as abandoned", i) {
			assert.Equal(t, workflows.ErrTypeAbandoned, app.Type())
			abandoned++
		}
		assert.Zero(t, countRows(t, e, `SELECT count(*) FROM kyt_registrations WHERE external_id = $1`, ids[i]), "refused %d left a row", i)
	}
	t.Logf("workflows of refused registrations that ended as abandoned: %d", abandoned)
}
