package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/cmd/internal/wire"
	"github.com/tokenscope/tokenscope/workflows"
)

// TestReadinessWaitsForAWorkflowRoundTrip: a process that runs a worker (dev, worker) reports
// ready only once a no-op workflow has run through Temporal. Here the frontend answers from the
// start, but no worker polls the task queue, so nothing can run: /readyz stays 503 and names
// the workflows check; once a worker is started (and the webhook pump with it) it turns 200,
// and by then the probe workflow has completed.
func TestReadinessWaitsForAWorkflowRoundTrip(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := testConfig(t)
	pool, err := postgres.Open(ctx, cfg.DatabaseURL, 5)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	tc := sharedTemporal().GetDefaultClient()
	// The package's tests run one at a time and stop their workers when they end: nothing
	// polls the task queue until this test starts a worker.
	rt := wire.NewRuntime(cfg, testLogger(), pool, tc)
	stopProbe := wire.StartWorkflowProbe(ctx, rt)
	defer stopProbe()
	lns, err := wire.ListenHTTP(cfg)
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- wire.ServeHTTP(ctx, rt, lns, nil) }()
	defer func() { cancel(); <-served }()
	e := &env{rt: rt, base: "http://" + lns.Main.Addr().String()}

	r := e.do(t, "GET", "/readyz", nil, "Authorization", "")
	require.Equal(t, 503, r.Status, "no worker, no workflow round trip: not ready: %s", r.Body)
	checks, _ := r.Object(t)["checks"].(map[string]any)
	assert.Equal(t, "up", checks["temporal"], "the frontend itself answers")
	assert.Contains(t, checks["workflows"], "down", "the workflows check is what fails")

	startWorker(t, rt)
	// Readiness also waits for the webhook pump (the check "webhooks"), which the real
	// processes start with their loops (wire.StartLoops).
	require.NoError(t, wire.StartWebhookDispatch(ctx, rt))
	eventually(t, 30*time.Second, "/readyz answers 200 once a worker runs the probe", func() bool {
		return e.do(t, "GET", "/readyz", nil, "Authorization", "").Status == 200
	})
	d, err := tc.DescribeWorkflowExecution(ctx, rt.WorkflowProbe.ID, "")
	require.NoError(t, err)
	assert.Equal(t, workflows.NoopWorkflowName, d.GetWorkflowExecutionInfo().GetType().GetName())
	assert.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, d.GetWorkflowExecutionInfo().GetStatus())
}
