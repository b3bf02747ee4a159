package temporal

import (
	"context"

	"go.temporal.io/sdk/client"

	"github.com/tokenscope/tokenscope/domain/job"
	"github.com/tokenscope/tokenscope/ports"
	"github.com/tokenscope/tokenscope/workflows"
)

// JobRunner implements ports.JobRunner.
type JobRunner struct{ Client client.Client }

var _ ports.JobRunner = JobRunner{}

// StartCalculatePnL starts the job's workflow.
func (r JobRunner) StartCalculatePnL(ctx context.Context, j job.Job, in ports.PnLJob) error {
	return unavailable("start job", startIdempotent(ctx, r.Client, workflows.JobWorkflowID(j.ID),
		workflows.CalculatePnLJobWorkflowName, workflows.PnLJobInput{Job: j, Params: in}))
}

// Progress queries the job's workflow (which answers even after it closed, within retention).
func (r JobRunner) Progress(ctx context.Context, jobID string) (job.Job, error) {
	v, err := r.Client.QueryWorkflow(ctx, workflows.JobWorkflowID(jobID), "", workflows.JobProgressQuery)
	if err != nil {
		return job.Job{}, unavailable("query job", err)
	}
	var j job.Job
	if err := v.Get(&j); err != nil {
		return job.Job{}, err
	}
	return j, nil
}
