package postgres

import (
	"context"
	"encoding/json"
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

// Insert writes the job and commits only when started succeeds.
func (s *JobStore) Insert(ctx context.Context, j job.Job, started func(context.Context) error) error {
	progress, result, err := jobColumns(j)
	if err != nil {
		return err
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := s.q.InsertJob(ctx, tx, dbsqlc.InsertJobParams{ID: j.ID, AccountID: j.AccountID, Kind: string(j.Kind),
			Status: string(j.Status), Progress: progress, Result: result, WorkflowID: s.WorkflowID(j.ID),
			CreatedAt: j.CreatedAt, UpdatedAt: j.UpdatedAt}); err != nil {
			return err
		}
		return started(ctx)
	})
	if _, ok := fault.As(err); ok {
		return err
	}
	return interpretError(err, "job", j.ID)
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
	j := job.Job{ID: r.ID, AccountID: r.AccountID, Kind: job.Kind(r.Kind), Status: job.Status(r.Status),
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
	if err := json.Unmarshal(r.Progress, &j.Progress); err != nil {
		return job.Job{}, fmt.Errorf("decode job %s progress: %w", id, err)
	}
	if len(r.Result) > 0 {
		var res jobResultJSON
		if err := json.Unmarshal(r.Result, &res); err != nil {
			return job.Job{}, fmt.Errorf("decode job %s result: %w", id, err)
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
