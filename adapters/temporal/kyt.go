package temporal

import (
	"context"
	"errors"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/kyt"
	"github.com/tokenscope/tokenscope/ports"
	"github.com/tokenscope/tokenscope/workflows"
)

// RetryAfter is the hint given to callers when Temporal does not answer.
const RetryAfter = 2 * time.Second

// unavailable maps a failed call to Temporal to the 503 the API answers. Faults pass through.
func unavailable(what string, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := fault.As(err); ok {
		return err
	}
	return fault.Unavailable(what+": workflow service unavailable, retry later", RetryAfter, err)
}

// startIdempotent starts a workflow under a deterministic ID. A running one is reused
// (conflict policy UseExisting); a closed one is not started again (reuse policy
// RejectDuplicate), and that refusal is a success: the work it stood for is done.
func startIdempotent(ctx context.Context, c client.Client, id, name string, arg any) error {
	return startWithReuse(ctx, c, id, name, arg, enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE)
}

// startWithReuse is startIdempotent with another reuse policy for a closed workflow.
func startWithReuse(ctx context.Context, c client.Client, id, name string, arg any, reuse enumspb.WorkflowIdReusePolicy) error {
	_, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                       id,
		TaskQueue:                workflows.TaskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    reuse,
	}, name, arg)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		return nil
	}
	return err
}

// KYTStarter implements ports.KYTStarter.
type KYTStarter struct{ Client client.Client }

var _ ports.KYTStarter = KYTStarter{}

// StartRegistration starts the registration's workflow, or finds the one already started. The
// store inserts the row after this start, within ctx's deadline, which the workflow gets as
// CommitBy: a row still missing after it (and a margin) never comes, and the workflow ends as
// abandoned. Such a failed run does not block the key: a retried request (the same externalId)
// starts a new run (reuse policy AllowDuplicateFailedOnly); a run that completed, registered or
// refused by the provider, is never started again.
func (s KYTStarter) StartRegistration(ctx context.Context, reg kyt.Registration) error {
	id := workflows.KYTWorkflowID(reg.AccountID, string(reg.Kind), reg.ExternalID)
	in := workflows.KYTInput{Registration: reg}
	if d, ok := ctx.Deadline(); ok {
		in.CommitBy = d
		// The SDK gives one call half of its context's remaining time, keeping the rest for a
		// retry: under KYT_REGISTER_DEADLINE (5 s) a start the server answered after 2.5 s (a
		// burst on a loaded machine) failed with "context deadline exceeded", and often had
		// started the workflow anyway. The call gets a deadline twice as far, so that one
		// attempt may use the whole budget, and is cancelled when the caller's context ends.
		sctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), d.Add(time.Until(d)))
		defer cancel()
		defer context.AfterFunc(ctx, cancel)()
		ctx = sctx
	}
	return unavailable("start kyt registration", startWithReuse(ctx, s.Client, id,
		workflows.KYTRegistrationWorkflowName, in, enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY))
}
