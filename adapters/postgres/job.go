package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tokenscope/tokenscope/adapters/postgres/internal/dbsqlc"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/job"
	"github.com/tokenscope/tokenscope/ports"
)

// JobStore implements ports.JobStore.
type JobStore struct {
	pool *pgxpool.Pool
	q    *dbsqlc.Queries
	// WorkflowID names a job's workflow (the Temporal adapter's rule, injected to keep this
	// package free of it).
	WorkflowID func(jobID string) string
}

var _ ports.JobStore = (*JobStore)(nil)

// NewJobStore builds the store over pool.
func NewJobStore(pool *pgxpool.Pool, workflowID func(string) string) *JobStore {
	return &JobStore{pool: pool, q: dbsqlc.New(), WorkflowID: workflowID}
}

// jobResultJSON is the result column.
type jobResultJSON struct {
	Success bool            `json:"success"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Insert writes the job under key and commits only when started succeeds. The account's
// advisory lock, held until the commit, serialises its inserts: an identical unfinished job
// found under the lock is returned as is, and the unfinished jobs counted under it are all
// there are, so neither check can be raced by a concurrent insert.
func (s *JobStore) Insert(ctx context.Context, j job.Job, key string, maxRunning int, started func(context.Context) error) (job.Job, error) {
	progress, result, err := jobColumns(j)
	if err != nil {
		return job.Job{}, err
	}
	var workKey *string
	if key != "" {
		workKey = &key
	}
	out := j
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := s.q.LockAccountJobs(ctx, tx, j.AccountID); err != nil {
			return err
		}
		if workKey != nil {
			r, err := s.q.UnfinishedJobByWorkKey(ctx, tx, dbsqlc.UnfinishedJobByWorkKeyParams{AccountID: j.AccountID, WorkKey: workKey})
			if err == nil {
				out, err = jobOfRow(r)
				return err
			}
			if !errors.Is(err, pgx.ErrNoRows) {
				return err
			}
		}
		if maxRunning > 0 {
			n, err := s.q.CountUnfinishedJobs(ctx, tx, j.AccountID)
			if err != nil {
				return err
			}
			if n >= int64(maxRunning) {
				return job.TooManyRunning(maxRunning)
			}
		}
		if err := s.q.InsertJob(ctx, tx, dbsqlc.InsertJobParams{ID: j.ID, AccountID: j.AccountID, Kind: string(j.Kind),
			Status: string(j.Status), Progress: progress, Result: result, WorkflowID: s.WorkflowID(j.ID),
			CreatedAt: j.CreatedAt, UpdatedAt: j.UpdatedAt, WorkKey: workKey}); err != nil {
			return err
		}
		return started(ctx)
	})
	if _, ok := fault.As(err); ok {
		return job.Job{}, err
	}
	if err != nil {
		return job.Job{}, interpretError(err, "job", j.ID)
	}
	return out, nil
}

// Get reads the account's job.
func (s *JobStore) Get(ctx context.Context, accountID, id string) (job.Job, error) {
	if unstorableID(id) {
		return job.Job{}, fault.NotFound("job", id)
	}
	r, err := s.q.GetJob(ctx, s.pool, dbsqlc.GetJobParams{ID: id, AccountID: accountID})
	if err != nil {
		return job.Job{}, interpretError(err, "job", id)
	}
	return jobOfRow(r)
}

func jobOfRow(r dbsqlc.Job) (job.Job, error) {
	j := job.Job{ID: r.ID, AccountID: r.AccountID, Kind: job.Kind(r.Kind), Status: job.Status(r.Status),
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
	if err := json.Unmarshal(r.Progress, &j.Progress); err != nil {
		return job.Job{}, fmt.Errorf("decode job %s progress: %w", r.ID, err)
	}
	if len(r.Result) > 0 {
		var res jobResultJSON
		if err := json.Unmarshal(r.Result, &res); err != nil {
			return job.Job{}, fmt.Errorf("decode job %s result: %w", r.ID, err)
		}
		j.Result = &job.Result{Success: res.Success, Message: res.Message, Data: res.Data}
	}
	return j, nil
}

// Save writes the state unless the row is already terminal: a replayed save of an older
// state can never move a finished job backwards.
func (s *JobStore) Save(ctx context.Context, j job.Job) error {
	progress, result, err := jobColumns(j)
	if err != nil {
		return err
	}
	_, err = s.q.SaveJob(ctx, s.pool, dbsqlc.SaveJobParams{ID: j.ID, Status: string(j.Status), Progress: progress,
		Result: result, UpdatedAt: j.UpdatedAt})
	return interpretError(err, "job", j.ID)
}

func jobColumns(j job.Job) (progress, result []byte, err error) {
	progress, err = json.Marshal(j.Progress)
	if err != nil {
		return nil, nil, fmt.Errorf("encode job progress: %w", err)
	}
	if j.Result != nil {
		result, err = json.Marshal(jobResultJSON{Success: j.Result.Success, Message: j.Result.Message, Data: j.Result.Data})
		if err != nil {
			return nil, nil, fmt.Errorf("encode job result: %w", err)
		}
	}
	return progress, result, nil
}
