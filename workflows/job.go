package workflows

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/job"
	"github.com/tokenscope/tokenscope/ports"
)

// PnLJobInput is a calculate-pnl job as the API accepted it.
type PnLJobInput struct {
	Job    job.Job
	Params ports.PnLJob
}

// Job tuning: tokens re-derived per activity, and how often (in batches) progress is
// written to the jobs row besides the query handler.
const (
	pnlBatchSize      = 10
	pnlSaveEveryBatch = 5
)

// pnlDistinctChange marks the change that re-derives each listed token once and counts only the
// positions that have trades (workflow.GetVersion). Runs started before it keep the old path:
// every listed address, repeats included, counted as a position.
const (
	pnlDistinctChange  = "pnl-distinct-positions"
	pnlDistinctVersion = 1
)

// Rederived is what re-deriving a batch of tokens replayed: the positions that have trades (a
// token the wallet never traded is none) and their trades.
type Rederived struct {
	Positions int
	Trades    int
}

// JobActivities holds the ports of the job workflows.
type JobActivities struct {
	Jobs      ports.JobStore
	Positions ports.WalletRederiver
	Clock     ports.Clock
}

// WalletTokens lists the tokens to re-derive.
func (a *JobActivities) WalletTokens(ctx context.Context, c chain.Chain, wallet string) ([]string, error) {
	ts, err := a.Positions.WalletTokens(ctx, c, wallet)
	return ts, activityError(err)
}

// RederiveTokens rebuilds the positions of a batch of tokens and returns the trades replayed.
// Re-running it after a crash rebuilds the same positions again: it is idempotent.
func (a *JobActivities) RederiveTokens(ctx context.Context, c chain.Chain, wallet string, tokens []string) (int, error) {
	total := 0
	for _, t := range tokens {
		n, err := a.Positions.RederivePosition(ctx, c, wallet, t, a.Clock.Now())
		if err != nil {
			return total, activityError(err)
		}
		total += n
	}
	return total, nil
}

// RederivePositions rebuilds the positions of a batch of distinct tokens and counts those that
// have trades, and their trades. Like RederiveTokens it is idempotent.
func (a *JobActivities) RederivePositions(ctx context.Context, c chain.Chain, wallet string, tokens []string) (Rederived, error) {
	var out Rederived
	for _, t := range tokens {
		n, err := a.Positions.RederivePosition(ctx, c, wallet, t, a.Clock.Now())
		if err != nil {
			return out, activityError(err)
		}
		if n > 0 {
			out.Positions++
			out.Trades += n
		}
	}
	return out, nil
}

// SaveJob writes the job's state to its row, which outlives the workflow.
func (a *JobActivities) SaveJob(ctx context.Context, j job.Job) error {
	return a.Jobs.Save(ctx, j)
}

// CalculatePnLJobWorkflow re-derives one wallet's positions from its trades, batch by batch,
// answering JobProgressQuery with the job's state at every point.
func CalculatePnLJobWorkflow(ctx workflow.Context, in PnLJobInput) (job.Job, error) {
	state := in.Job
	if err := workflow.SetQueryHandler(ctx, JobProgressQuery, func() (job.Job, error) { return state, nil }); err != nil {
		return state, err
	}
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout:    time.Minute,
		ScheduleToCloseTimeout: time.Hour,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    30 * time.Second,
		},
	})
	var a *JobActivities
	save := func() error { return workflow.ExecuteActivity(ctx, a.SaveJob, state).Get(ctx, nil) }
	fail := func(err error) (job.Job, error) {
		reason := err.Error()
		if r, ok := permanent(err); ok {
			reason = r
		}
		if ferr := state.Fail(reason, workflow.Now(ctx)); ferr != nil {
			return state, ferr
		}
		return state, save()
	}

	version := workflow.GetVersion(ctx, pnlDistinctChange, workflow.DefaultVersion, pnlDistinctVersion)
	p := in.Params
	tokens := p.Tokens
	if len(tokens) == 0 {
		if err := workflow.ExecuteActivity(ctx, a.WalletTokens, p.Chain, p.Wallet).Get(ctx, &tokens); err != nil {
			return fail(err)
		}
	}
	if version == pnlDistinctVersion {
		tokens = distinct(tokens)
	}
	total := int64(len(tokens))
	if err := state.Advance(0, total, "re-deriving positions", workflow.Now(ctx)); err != nil {
		return fail(err)
	}
	if err := save(); err != nil {
		return fail(err)
	}
	trades, positions := 0, 0
	for i, batch := 0, 0; i < len(tokens); i, batch = i+pnlBatchSize, batch+1 {
		end := min(i+pnlBatchSize, len(tokens))
		if version == pnlDistinctVersion {
			var r Rederived
			if err := workflow.ExecuteActivity(ctx, a.RederivePositions, p.Chain, p.Wallet, tokens[i:end]).Get(ctx, &r); err != nil {
				return fail(err)
			}
			positions += r.Positions
			trades += r.Trades
		} else {
			var n int
			if err := workflow.ExecuteActivity(ctx, a.RederiveTokens, p.Chain, p.Wallet, tokens[i:end]).Get(ctx, &n); err != nil {
				return fail(err)
			}
			trades += n
		}
		if err := state.Advance(int64(end), total, "re-deriving positions", workflow.Now(ctx)); err != nil {
			return fail(err)
		}
		if (batch+1)%pnlSaveEveryBatch == 0 {
			if err := save(); err != nil {
				return fail(err)
			}
		}
	}
	data, _ := json.Marshal(map[string]int64{"tokens": total, "trades": int64(trades)}) // ints only: cannot fail
	msg := "re-derived " + strconv.FormatInt(total, 10) + " positions from " + strconv.Itoa(trades) + " trades"
	if version == pnlDistinctVersion {
		// docs/api.md, "Jobs": tokens re-derived, positions that have trades, their trades.
		data, _ = json.Marshal(map[string]int64{"tokens": total, "positions": int64(positions), "trades": int64(trades)})
		msg = "re-derived " + strconv.Itoa(positions) + " positions from " + strconv.Itoa(trades) + " trades"
	}
	if err := state.Complete(msg, data, workflow.Now(ctx)); err != nil {
		return fail(err)
	}
	return state, save()
}

// distinct is tokens without repeats, in the order of their first occurrence.
func distinct(tokens []string) []string {
	seen := make(map[string]bool, len(tokens))
	out := make([]string, 0, len(tokens))
	for _, t := range tokens {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}
