package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// queued is a dbsqlc.DBTX that queues the statements sqlc's methods execute into one pgx.Batch
// instead of running them, so that a batch's per-event statements (one token, pool or label each)
// go to the server in one round trip, with sqlc keeping their SQL and argument order. Only Exec
// is queued; the methods that read rows cannot be.
type queued struct{ b pgx.Batch }

var errNotQueueable = errors.New("queued: only statements without rows can be queued")

func (q *queued) Exec(_ context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	q.b.Queue(sql, args...)
	return pgconn.CommandTag{}, nil
}

func (q *queued) Query(context.Context, string, ...any) (pgx.Rows, error) {
	return nil, errNotQueueable
}

func (q *queued) QueryRow(context.Context, string, ...any) pgx.Row { return errRow{} }

func (q *queued) CopyFrom(context.Context, pgx.Identifier, []string, pgx.CopyFromSource) (int64, error) {
	return 0, errNotQueueable
}

type errRow struct{}

func (errRow) Scan(...any) error { return errNotQueueable }

// send runs the queued statements in tx, in order, and returns the rows each affected.
func (q *queued) send(ctx context.Context, tx pgx.Tx) ([]int64, error) {
	n := q.b.Len()
	if n == 0 {
		return nil, nil
	}
	br := tx.SendBatch(ctx, &q.b)
	out := make([]int64, 0, n)
	for i := 0; i < n; i++ {
		tag, err := br.Exec()
		if err != nil {
			_ = br.Close()
			return nil, fmt.Errorf("statement %d of %d: %w", i+1, n, err)
		}
		out = append(out, tag.RowsAffected())
	}
	return out, br.Close()
}
