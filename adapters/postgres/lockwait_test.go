package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/postgres/pgtest"
)

// The store suites make concurrency deterministic with database state instead of sleeps: the
// test takes a row lock in a transaction of its own, starts the concurrent callers, waits until
// Postgres reports every one of them queued on a lock, and only then lets go. Every caller has
// then certainly read nothing before the others, so a missing lock in a store shows as a wrong
// outcome on every run, not on an unlucky one.

// lockWaitersSQL counts the other client sessions of this test database that wait for a
// heavyweight lock (a row, a transaction id or an advisory lock). Every test that counts has
// a database of its own (pgtest.Fresh), so they are the test's own callers; autovacuum workers
// are not counted.
const lockWaitersSQL = `SELECT count(*) FROM pg_stat_activity
	WHERE datname = current_database() AND backend_type = 'client backend' AND wait_event_type = 'Lock'
	AND pid <> pg_backend_pid()`

// waitForLockWaiters returns once at least n sessions wait for a lock, or with ctx's error.
// It counts on a connection of its own, so callers holding every pooled connection cannot
// starve it. It is safe to call from any goroutine.
func waitForLockWaiters(ctx context.Context, dbURL string, n int) error {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return fmt.Errorf("count lock waiters: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	for {
		var got int
		if err := conn.QueryRow(ctx, lockWaitersSQL).Scan(&got); err != nil {
			return fmt.Errorf("count lock waiters (want %d): %w", n, err)
		}
		if got >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %d lock waiters (have %d): %w", n, got, ctx.Err())
		case <-time.After(2 * time.Millisecond): // a poll interval, not an assumption about timing
		}
	}
}

// awaitLockWaiters is waitForLockWaiters for the test goroutine; it gives up (failing the
// test) only when something is genuinely stuck.
func awaitLockWaiters(t *testing.T, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, waitForLockWaiters(ctx, pgtest.URL(t), n))
}

// holdRowLock runs sql (a SELECT … FOR UPDATE, or any statement that locks rows) in a
// transaction of its own and returns release, which commits it. A test that fails before
// releasing has the transaction rolled back by cleanup.
func holdRowLock(t *testing.T, sql string, args ...any) (release func()) {
	t.Helper()
	ctx := context.Background()
	tx, err := pgtest.Pool(t).Begin(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
	rows, err := tx.Query(ctx, sql, args...)
	require.NoError(t, err)
	n := 0
	for rows.Next() {
		n++
	}
	require.NoError(t, rows.Err())
	require.Positive(t, n, "the statement locked no row: %s", sql)
	return func() {
		t.Helper()
		require.NoError(t, tx.Commit(ctx))
	}
}

// freshAccounts (re)creates the accounts the store rows reference, without any rows of an
// earlier run (deleting an account cascades to its endpoints, registrations and jobs), so a
// suite can run any number of times on the package database.
func freshAccounts(t *testing.T, ids ...string) {
	t.Helper()
	ctx := context.Background()
	_, err := pgtest.Pool(t).Exec(ctx, `DELETE FROM accounts WHERE id = ANY($1)`, ids)
	require.NoError(t, err)
	for _, id := range ids {
		_, err := pgtest.Pool(t).Exec(ctx, `INSERT INTO accounts (id, name) VALUES ($1, $1)`, id)
		require.NoError(t, err)
	}
}
