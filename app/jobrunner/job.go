// Package jobrunner is the jobs use case: start a calculate-pnl job (a workflow), read a job's state
// and follow it live (Hub, which backs the SSE stream of operation 12). It may import domain
// and ports.
package jobrunner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/job"
	"github.com/tokenscope/tokenscope/ports"
)

// Service starts and reads jobs.
type Service struct {
	store  ports.JobStore
	runner ports.JobRunner
	clock  ports.Clock
	limits Limits
}

// Limits bounds a Service; the zero value sets no deadline and DefaultMaxRunning.
type Limits struct {
	// StartDeadline bounds the request path of a start (store + workflow start); 0 for none.
	StartDeadline time.Duration
	// QueryTimeout bounds one progress query; past it the stored state answers. 0 for none.
	QueryTimeout time.Duration
	// MaxRunning caps an account's unfinished jobs (JOB_MAX_RUNNING); 0 means DefaultMaxRunning.
	MaxRunning int
}

// New builds the service over its ports.
func New(store ports.JobStore, runner ports.JobRunner, clock ports.Clock, limits Limits) *Service {
	return &Service{store: store, runner: runner, clock: clock, limits: limits}
}

// MaxTokens bounds the tokenAddresses of a calculate-pnl request.
const MaxTokens = 100

// DefaultMaxRunning is the per-account cap on unfinished jobs when none is configured.
const DefaultMaxRunning = 4

// CalculatePnL starts re-deriving the wallet's positions (only tokens, when given). While the
// account has an unfinished job for the same work (job.PnLKey), that job is the answer and
// nothing new starts; an account with Limits.MaxRunning unfinished jobs is refused with a
// fault.KindRateLimited error.
func (s *Service) CalculatePnL(ctx context.Context, accountID string, c chain.Chain, wallet string, tokens []string) (job.Job, error) {
	wallet = strings.TrimSpace(wallet)
	if wallet == "" {
		return job.Job{}, fault.Missing("walletAddress")
	}
	if len(wallet) > 128 || !utf8.ValidString(wallet) || strings.ContainsAny(wallet, " \t\r\n/") {
		return job.Job{}, fault.Invalid("walletAddress", wallet, "must be an address of at most 128 characters")
	}
	if len(tokens) > MaxTokens {
		return job.Job{}, fault.Invalid("tokenAddresses", "…", "at most 100 addresses").WithCode(fault.CodeAddressesExceeded)
	}
	for _, t := range tokens {
		if t == "" || len(t) > 128 || strings.ContainsAny(t, " \t\r\n") {
			return job.Job{}, fault.Invalid("tokenAddresses", t, "must be addresses of at most 128 characters")
		}
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	j, err := job.New("job_"+hex.EncodeToString(b), accountID, job.KindCalculatePnL, s.clock.Now())
	if err != nil {
		return job.Job{}, err
	}
	if s.limits.StartDeadline > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.limits.StartDeadline)
		defer cancel()
	}
	limit := s.limits.MaxRunning
	if limit <= 0 {
		limit = DefaultMaxRunning
	}
	got, err := s.store.Insert(ctx, j, job.PnLKey(c, wallet, tokens), limit, func(ctx context.Context) error {
		return s.runner.StartCalculatePnL(ctx, j, ports.PnLJob{Chain: c, Wallet: wallet, Tokens: tokens})
	})
	if err != nil {
		if ctx.Err() != nil && !fault.Is(err, fault.KindUnavailable) {
			err = fault.Unavailable("job could not be started in time, retry later", 2*time.Second, err)
		}
		return job.Job{}, err
	}
	return got, nil
}

// Get returns the account's job in its freshest known state: the workflow's answer while it
// can give one, else the stored row (a finished job, or a worker that is down).
func (s *Service) Get(ctx context.Context, accountID, id string) (job.Job, error) {
	stored, err := s.store.Get(ctx, accountID, id)
	if err != nil {
		return job.Job{}, err
	}
	return s.fresh(ctx, stored), nil
}

func (s *Service) fresh(ctx context.Context, stored job.Job) job.Job {
	if stored.Status.Terminal() {
		return stored
	}
	if s.limits.QueryTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.limits.QueryTimeout)
		defer cancel()
	}
	live, err := s.runner.Progress(ctx, stored.ID)
	if err != nil || live.ID != stored.ID {
		return stored
	}
	return live
}
