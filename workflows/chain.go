package workflows

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/ports"
)

// Chain follower defaults (FollowInput's zero values take them).
const (
	// DefaultFollowRange is the most blocks one eth_getLogs covers; the EVM adapter halves it
	// while the node answers "too many results".
	DefaultFollowRange = 2000
	// DefaultFollowPoll is the sleep between steps once the follower has caught up.
	DefaultFollowPoll = 4 * time.Second
	// DefaultFollowStepsPerRun bounds the history: after this many steps the workflow continues
	// as new (a step adds about half a dozen events).
	DefaultFollowStepsPerRun = 500
	// FollowStepBudget is how long one FollowChain activity keeps reading segments before it
	// reports back (progress shows in the query at least this often during a backfill).
	FollowStepBudget = 20 * time.Second
	// FollowHeartbeatTimeout retries a step lost with its worker this soon.
	FollowHeartbeatTimeout = 30 * time.Second
)

// ChainHaltedError is the application error type of a follower stopped by a reorg deeper than
// its confirmation depth: not retried; the workflow ends with it.
const ChainHaltedError = "ChainHalted"

// FollowInput configures one chain's follower. StartBlock is where a follower without a
// checkpoint starts (negative: at the confirmed head). Status carries the query's figures
// across continue-as-new.
type FollowInput struct {
	Chain         chain.Chain
	Confirmations int64
	StartBlock    int64
	MaxRange      int64
	PollInterval  time.Duration
	StepsPerRun   int
	Status        FollowStatus
}

func (in FollowInput) withDefaults() FollowInput {
	if in.MaxRange <= 0 {
		in.MaxRange = DefaultFollowRange
	}
	if in.PollInterval <= 0 {
		in.PollInterval = DefaultFollowPoll
	}
	if in.StepsPerRun <= 0 {
		in.StepsPerRun = DefaultFollowStepsPerRun
	}
	if in.Confirmations < 0 {
		in.Confirmations = 0
	}
	return in
}

// FollowStatus is what the ChainFollowQuery reports: the last block written, the node's head,
// the lag between them, the rate of the last step (blocks and trades per second of workflow
// time), the trades written since the follower first started, and the halt if it stopped.
type FollowStatus struct {
	Chain           chain.Chain
	Block           int64
	Head            int64
	Lag             int64
	BlocksPerSecond float64
	TradesPerSecond float64
	Trades          int64
	CaughtUp        bool
	Halted          *ports.ChainHalt
	UpdatedAt       time.Time
}

// FollowStepInput is one FollowChain activity's work.
type FollowStepInput struct {
	Chain         chain.Chain
	Confirmations int64
	StartBlock    int64
	MaxRange      int64
}

// FollowStepResult reports one FollowChain activity.
type FollowStepResult struct {
	Block    int64
	Head     int64
	Blocks   int64
	Trades   int64
	Events   int64
	CaughtUp bool
}

// ChainActivities holds the follower's ports: one source per followed chain, the checkpoints,
// the checkpointed ingest path and the metrics.
type ChainActivities struct {
	Sources     map[chain.Chain]ports.ChainSource
	Checkpoints ports.ChainCheckpointStore
	Ingest      ports.CheckpointedIngester
	Monitor     ports.ChainMonitor
	Clock       ports.Clock
	Log         *slog.Logger
}

// FollowChain writes confirmed blocks after the chain's checkpoint, one segment (one batch and
// its checkpoint, one transaction) at a time, until it reaches head − Confirmations or has
// worked FollowStepBudget. Blocks newer than that are never read, so a reorg within the
// confirmation depth never reaches the engine. A segment whose first block's parent is not the
// checkpointed hash means a deeper reorg: the chain is halted (stored, so /readyz names it and
// a restart stays stopped), nothing of the segment is written, and the error is not retried.
func (a *ChainActivities) FollowChain(ctx context.Context, in FollowStepInput) (FollowStepResult, error) {
	src, ok := a.Sources[in.Chain]
	if !ok {
		return FollowStepResult{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("no source for chain %q", in.Chain), "NoChainSource", nil)
	}
	if in.MaxRange <= 0 {
		in.MaxRange = DefaultFollowRange
	}
	var workerStop <-chan struct{}
	if activity.IsActivity(ctx) {
		// From a goroutine: a range's reads and its transaction may take longer than the
		// heartbeat timeout on a slow node; the heartbeat only says the worker is alive.
		stop := heartbeatEvery(ctx, FollowHeartbeatTimeout/6)
		defer stop()
		// A stopping worker (a deploy) ends the step after the range in hand, so the next
		// step starts at once on another worker instead of after the heartbeat timeout.
		workerStop = activity.GetWorkerStopChannel(ctx)
	}
	started := a.Clock.Now()
	if f, ok := a.Ingest.(ports.IngestFlusher); ok {
		// What the step's ranges left pending is derived before the step returns (a failed
		// flush is left to the next one, or to any process's refresh round).
		defer func() { _ = f.Flush(ctx) }()
	}
	if ra, ok := src.(ports.ChainReadAhead); ok && ra.ReadAhead() > 0 {
		return a.followAhead(ctx, in, src, ra.ReadAhead(), started, workerStop)
	}
	var res FollowStepResult
	for {
		next, previous, hash, caughtUp, err := a.stepStart(ctx, in, src, &res)
		if err != nil || caughtUp {
			return res, err
		}
		seg, err := src.Read(ctx, next, min(res.Head-in.Confirmations, next+in.MaxRange-1))
		if err != nil {
			return res, fmt.Errorf("read %s blocks from %d: %w", in.Chain, next, err)
		}
		if err := a.writeRange(ctx, in, seg, previous, hash, &res); err != nil {
			return res, err
		}
		if a.Clock.Now().Sub(started) >= FollowStepBudget {
			return res, nil
		}
		select {
		case <-workerStop:
			return res, nil
		default:
		}
	}
}

// stepStart reads where a step of in stands: the checkpoint (a halted chain ends the step with
// its halt) and the head, recorded in res, and returns the next block to read, the block written
// before it (−1 for none) and that block's hash ("" for none or unknown). caughtUp: nothing is
// confirmed past the checkpoint; res says so and the progress is reported.
func (a *ChainActivities) stepStart(ctx context.Context, in FollowStepInput, src ports.ChainSource,
	res *FollowStepResult) (next, previous int64, hash string, caughtUp bool, err error) {
	cp, has, err := a.Checkpoints.Checkpoint(ctx, in.Chain)
	if err != nil {
		return 0, 0, "", false, err
	}
	if has && cp.Halted != nil {
		return 0, 0, "", false, a.halted(*cp.Halted)
	}
	head, err := src.Head(ctx)
	if err != nil {
		return 0, 0, "", false, fmt.Errorf("read %s head: %w", in.Chain, err)
	}
	res.Head = head
	target := head - in.Confirmations
	next, previous = in.StartBlock, -1
	if has {
		next, previous, hash = cp.Block+1, cp.Block, cp.Hash
		res.Block = cp.Block
	} else if next < 0 {
		next = max(target, 0)
	}
	if next > target {
		res.CaughtUp = true
		a.progress(in.Chain, *res, 0)
		return next, previous, hash, true, nil
	}
	if !has {
		res.Block = next - 1
	}
	return next, previous, hash, false, nil
}

// writeRange writes seg with the checkpoint of its last block, moved from previous, after
// checking that its first block's parent is hash, the block written before it (a mismatch is a
// reorg deeper than the confirmations: the chain is halted); res counts what was written.
func (a *ChainActivities) writeRange(ctx context.Context, in FollowStepInput, seg ports.ChainSegment, previous int64,
	hash string, res *FollowStepResult) error {
	if hash != "" && seg.First.Parent != hash {
		h := ports.ChainHalt{Chain: in.Chain, Block: res.Block, Reason: fmt.Sprintf(
			"block %d's parent is %s, not %s as written at block %d: a reorg deeper than %d confirmations",
			seg.First.Number, seg.First.Parent, hash, res.Block, in.Confirmations)}
		if err := a.Checkpoints.Halt(ctx, h); err != nil {
			return err
		}
		return a.halted(h)
	}
	w, err := a.Ingest.IngestThrough(ctx, seg.Events, chainevent.Checkpoint{Chain: in.Chain, Block: seg.To, Hash: seg.Last.Hash, Previous: previous})
	if err != nil {
		return fmt.Errorf("write %s blocks %d–%d: %w", in.Chain, seg.From, seg.To, err)
	}
	res.Blocks += seg.To - res.Block
	res.Block = seg.To
	res.Trades += int64(w.Trades)
	res.Events += int64(len(seg.Events))
	a.progress(in.Chain, *res, w.Trades)
	return nil
}

// readRange is a range the read-ahead reader of followAhead hands to the writer: a segment read
// (with the head it was read under), the end of the confirmed chain, or a failure.
type readRange struct {
	seg      ports.ChainSegment
	head     int64
	caughtUp bool
	err      error
}

// followAhead is FollowChain over a source that can be read ahead: a reader goroutine reads
// the ranges in order, up to ahead of them beyond the one the step is writing, while the step
// writes them one transaction each, in order, checking each range's first parent against the
// hash written before it (a deep reorg halts as in FollowChain; what was read ahead is dropped,
// never written). Reading stops at the confirmed head or once the step has worked
// FollowStepBudget; the ranges read by then are written. A failed read or write ends the step
// after the ranges written before it; a range read ahead and not written is read again by the
// next step.
func (a *ChainActivities) followAhead(ctx context.Context, in FollowStepInput, src ports.ChainSource, ahead int,
	started time.Time, workerStop <-chan struct{}) (FollowStepResult, error) {
	var res FollowStepResult
	next, previous, hash, caughtUp, err := a.stepStart(ctx, in, src, &res)
	if err != nil || caughtUp {
		return res, err
	}
	head := res.Head

	rctx, cancel := context.WithCancel(ctx)
	ranges := make(chan readRange, ahead-1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(ranges)
		send := func(r readRange) bool {
			select {
			case ranges <- r:
				return r.err == nil && !r.caughtUp
			case <-rctx.Done():
				return false
			}
		}
		from := next
		for {
			if from > head-in.Confirmations {
				// The head read last is reached: is there more by now?
				h, err := src.Head(rctx)
				if err != nil {
					send(readRange{err: fmt.Errorf("read %s head: %w", in.Chain, err)})
					return
				}
				head = h
				if from > head-in.Confirmations {
					send(readRange{head: head, caughtUp: true})
					return
				}
			}
			if a.Clock.Now().Sub(started) >= FollowStepBudget {
				return
			}
			seg, err := src.Read(rctx, from, min(head-in.Confirmations, from+in.MaxRange-1))
			if err != nil {
				err = fmt.Errorf("read %s blocks from %d: %w", in.Chain, from, err)
			}
			if !send(readRange{seg: seg, head: head, err: err}) {
				return
			}
			from = seg.To + 1
		}
	}()
	// The reader is done with the source before the step returns (the next step reads it).
	defer func() {
		cancel()
		<-done
	}()

	for r := range ranges {
		if r.err != nil {
			return res, r.err
		}
		res.Head = r.head
		if r.caughtUp {
			res.CaughtUp = true
			a.progress(in.Chain, res, 0)
			return res, nil
		}
		if err := a.writeRange(ctx, in, r.seg, previous, hash, &res); err != nil {
			return res, err
		}
		previous, hash = r.seg.To, r.seg.Last.Hash
		select {
		case <-workerStop:
			return res, nil
		default:
		}
	}
	// The reader stopped at the budget, or at a cancelled step.
	return res, ctx.Err()
}

// progress reports the step's position and the trades written since its last report.
func (a *ChainActivities) progress(c chain.Chain, r FollowStepResult, newTrades int) {
	if a.Monitor != nil {
		a.Monitor.Progress(c, r.Block, r.Head, newTrades)
	}
}

// halted reports a stopped follower (log and metric) and returns its non-retryable error.
func (a *ChainActivities) halted(h ports.ChainHalt) error {
	if a.Monitor != nil {
		a.Monitor.Halted(h.Chain, h.Block)
	}
	if a.Log != nil {
		a.Log.Error("chain follower stopped", "chain", string(h.Chain), "block", h.Block, "reason", h.Reason)
	}
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf("%s follower stopped at block %d: %s", h.Chain, h.Block, h.Reason),
		ChainHaltedError, nil, h)
}

// ChainFollowWorkflow (ChainFollowWorkflowName, ID ChainFollowWorkflowID(chain)) follows one
// chain: FollowChain steps back to back while behind, a PollInterval sleep between steps once
// caught up, continue-as-new after StepsPerRun steps. A failed step is retried (node or database
// down) with backoff; a ChainHaltedError ends the workflow with the halt in its status.
func ChainFollowWorkflow(ctx workflow.Context, in FollowInput) (FollowStatus, error) {
	in = in.withDefaults()
	status := in.Status
	status.Chain = in.Chain
	if err := workflow.SetQueryHandler(ctx, ChainFollowQuery, func() (FollowStatus, error) { return status, nil }); err != nil {
		return status, err
	}
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 2*FollowStepBudget + time.Minute,
		HeartbeatTimeout:    FollowHeartbeatTimeout,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute,
			NonRetryableErrorTypes: []string{ChainHaltedError}},
	})
	var a *ChainActivities
	for step := 0; step < in.StepsPerRun; step++ {
		start := workflow.Now(ctx)
		var r FollowStepResult
		err := workflow.ExecuteActivity(ctx, a.FollowChain, FollowStepInput{Chain: in.Chain, Confirmations: in.Confirmations,
			StartBlock: in.StartBlock, MaxRange: in.MaxRange}).Get(ctx, &r)
		now := workflow.Now(ctx)
		status.UpdatedAt = now
		if err != nil {
			var appErr *temporal.ApplicationError
			if errors.As(err, &appErr) && appErr.Type() == ChainHaltedError {
				var h ports.ChainHalt
				if appErr.HasDetails() && appErr.Details(&h) == nil {
					status.Halted = &h
				}
			}
			return status, err
		}
		if secs := now.Sub(start).Seconds(); secs > 0 {
			status.BlocksPerSecond = float64(r.Blocks) / secs
			status.TradesPerSecond = float64(r.Trades) / secs
		}
		status.Block, status.Head, status.Lag = r.Block, r.Head, max(r.Head-r.Block, 0)
		status.Trades += r.Trades
		status.CaughtUp = r.CaughtUp
		if r.CaughtUp {
			if err := workflow.Sleep(ctx, in.PollInterval); err != nil {
				return status, err
			}
		}
	}
	in.Status = status
	return status, workflow.NewContinueAsNewError(ctx, ChainFollowWorkflowName, in)
}
