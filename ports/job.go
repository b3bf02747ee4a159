package ports

import (
	"context"
	"time"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/job"
)

// JobStore keeps jobs; the row outlives the workflow.
type JobStore interface {
	// Insert stores j under key, committing only when started succeeds (see KYTStore.Insert),
	// and returns it. Inserts of one account are serialised, so that: while one of the account's
	// unfinished jobs has the same key, Insert returns that job and stores and starts nothing;
	// while the account has maxRunning unfinished jobs, it returns job.TooManyRunning's error.
	// An empty key matches nothing; maxRunning ≤ 0 caps nothing.
	Insert(ctx context.Context, j job.Job, key string, maxRunning int, started func(context.Context) error) (job.Job, error)
	// Get returns the account's job; another account's is NotFound.
	Get(ctx context.Context, accountID, id string) (job.Job, error)
	// Save writes j's status, progress and result.
	Save(ctx context.Context, j job.Job) error
}

// PnLJob says which wallet a calculate-pnl job re-derives.
type PnLJob struct {
	Chain  chain.Chain
	Wallet string
	// Tokens limits the job to these tokens; empty means every token the wallet traded.
	Tokens []string
}

// JobRunner runs jobs as workflows and reads their live state.
type JobRunner interface {
	StartCalculatePnL(ctx context.Context, j job.Job, in PnLJob) error
	// Progress asks the running (or recently closed) workflow for the job's state.
	Progress(ctx context.Context, jobID string) (job.Job, error)
}

// WalletRederiver rebuilds one wallet's positions from its stored trades.
type WalletRederiver interface {
	// WalletTokens lists the tokens the wallet traded on c, in address order.
	WalletTokens(ctx context.Context, c chain.Chain, wallet string) ([]string, error)
	// RederivePosition replaces the (c, wallet, token) position with the one replayed from
	// every stored trade; it returns the number of trades replayed.
	RederivePosition(ctx context.Context, c chain.Chain, wallet, token string, now time.Time) (int, error)
}
