package temporal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/tokenscope/tokenscope/workflows"
)

// WorkflowProbe makes readiness mean that a workflow can run, not only that the frontend
// answers: Run starts a no-op workflow on the task queue and waits for its result, attempt
// after attempt, until one round trip succeeds; Ping fails until then. A frontend can accept
// connections (and answer its health check) while history or matching cannot serve yet, and a
// process without a worker polling the queue cannot run anything; both fail the probe.
//
// The result is kept: one round trip per process, at start. Later outages show in the
// frontend check (Pinger) and in the workflows' own retries, not here.
type WorkflowProbe struct {
	Client client.Client
	// ID is the probe workflow's ID (default readiness/<host>/<pid>/<start time>). Every
	// attempt of one process reuses the running probe workflow (conflict policy UseExisting).
	ID string
	// Attempt bounds one start and wait for the result (default 5 s).
	Attempt time.Duration

	mu      sync.Mutex
	ok      bool
	lastErr error
}

// NewWorkflowProbe returns a probe with a workflow ID unique to this process.
func NewWorkflowProbe(c client.Client) *WorkflowProbe {
	host, _ := os.Hostname()
	return &WorkflowProbe{Client: c,
		ID: fmt.Sprintf("readiness/%s/%d/%d", host, os.Getpid(), time.Now().UnixNano())}
}

// Run repeats round trips until one succeeds (it returns nil) or ctx ends (ctx's error).
func (p *WorkflowProbe) Run(ctx context.Context) error {
	attempt := p.Attempt
	if attempt <= 0 {
		attempt = 5 * time.Second
	}
	for {
		err := p.roundTrip(ctx, attempt)
		p.mu.Lock()
		p.ok, p.lastErr = err == nil, err
		p.mu.Unlock()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (p *WorkflowProbe) roundTrip(ctx context.Context, within time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	run, err := p.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:        p.ID,
		TaskQueue: workflows.TaskQueue,
		// A probe nobody runs (no worker) ends on its own instead of staying open.
		WorkflowExecutionTimeout: time.Minute,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
	}, workflows.NoopWorkflowName)
	if err != nil {
		return fmt.Errorf("start no-op workflow: %w", err)
	}
	if err := run.Get(ctx, nil); err != nil {
		return fmt.Errorf("no-op workflow: %w", err)
	}
	return nil
}

// Ping reports nil once a round trip has succeeded, else why not yet.
func (p *WorkflowProbe) Ping(context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.ok:
		return nil
	case p.lastErr != nil:
		return fmt.Errorf("no workflow round trip yet: %w", p.lastErr)
	default:
		return errors.New("no workflow round trip yet")
	}
}
