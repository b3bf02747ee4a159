// Package postgres implements the ports over PostgreSQL with pgx/v5 and sqlc. The generated
// code stays private in internal/dbsqlc; every store takes a pool and runs its own
// transactions, so callers never see pgx. It may import domain, ports and pgx.
//
// Every static statement is in queries/, where `make sqlc-check` holds it to the schema in
// migrations/. SQL built or sent by hand is where sqlc cannot express it (keyset pages, COPY
// into temporary tables, column lists kept in Go, the migration runner's own table); each such
// call carries a `// hand-built: <reason>` comment.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"sort"
	"strings"
	"unicode/utf8"

	pgxdecimal "github.com/jackc/pgx-shopspring-decimal"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tokenscope/tokenscope/adapters/postgres/internal/dbsqlc"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/migrations"
)

// Open connects a pool and registers shopspring/decimal for NUMERIC on every connection.
func Open(ctx context.Context, dsn string, maxConns int32) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("parse DATABASE_URL: %w", err)
	}
	if maxConns > 0 {
		cfg.MaxConns = maxConns
	}
	cfg.AfterConnect = func(_ context.Context, c *pgx.Conn) error {
		pgxdecimal.Register(c.TypeMap())
		registerDecimalScan(c.TypeMap())
		return nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect postgres: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("ping postgres: %w", err)
	}
	return pool, nil
}

// EnsureDatabase creates the database named in dsn when it does not exist, connecting to the
// server's "postgres" database to do so.
func EnsureDatabase(ctx context.Context, dsn string) error {
	u, err := url.Parse(dsn)
	if err != nil {
		return fmt.Errorf("parse DATABASE_URL: %w", err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	if name == "" {
		return errors.New("DATABASE_URL names no database")
	}
	admin := *u
	admin.Path = "/postgres"
	conn, err := pgx.Connect(ctx, admin.String())
	if err != nil {
		return fmt.Errorf("connect postgres: %w", err)
	}
	defer conn.Close(ctx)
	exists, err := dbsqlc.New().DatabaseExists(ctx, conn, name)
	if err != nil {
		return fmt.Errorf("look up database: %w", err)
	}
	if exists {
		return nil
	}
	// hand-built: the database name is an identifier, which no bind parameter can carry.
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42P04" { // created concurrently
		return nil
	}
	if err != nil {
		return fmt.Errorf("create database %s: %w", name, err)
	}
	return nil
}

// migrationLock serialises concurrent migrators (several replicas starting at once).
const migrationLock = 7_346_501

// Migrate applies every migration not yet recorded, each in its own transaction, in name order.
// It returns the names it applied.
func Migrate(ctx context.Context, pool *pgxpool.Pool) ([]string, error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	defer conn.Release()
	q := dbsqlc.New()
	if err := q.AdvisoryLock(ctx, conn, migrationLock); err != nil {
		return nil, fmt.Errorf("migrate lock: %w", err)
	}
	defer q.AdvisoryUnlock(context.WithoutCancel(ctx), conn, migrationLock) //nolint:errcheck
	// hand-built: schema_migrations is the runner's own table, not in the migrations/ schema sqlc reads.
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		name TEXT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`); err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	names, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var applied []string
	for _, name := range names {
		var done bool
		// hand-built: schema_migrations is the runner's own table, not in the migrations/ schema sqlc reads.
		if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE name = $1)", name).Scan(&done); err != nil {
			return applied, fmt.Errorf("migrate: %w", err)
		}
		if done {
			continue
		}
		body, err := migrations.FS.ReadFile(name)
		if err != nil {
			return applied, err
		}
		err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			// hand-built: the statement is the migration file itself.
			if _, err := tx.Exec(ctx, string(body)); err != nil {
				return err
			}
			// hand-built: schema_migrations is the runner's own table, not in the migrations/ schema sqlc reads.
			_, err := tx.Exec(ctx, "INSERT INTO schema_migrations (name) VALUES ($1)", name)
			return err
		})
		if err != nil {
			return applied, fmt.Errorf("migration %s: %w", name, err)
		}
		applied = append(applied, name)
	}
	return applied, nil
}

// Pinger adapts a pool to ports.Pinger.
type Pinger struct{ Pool *pgxpool.Pool }

// Ping checks the database answers.
func (p Pinger) Ping(ctx context.Context) error { return p.Pool.Ping(ctx) }

// interpretError turns driver errors into domain faults at the boundary.
func interpretError(err error, what, id string) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return fault.NotFound(what, id)
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "23505":
			return &fault.Error{Kind: fault.KindConflict, Message: what + " already exists", Err: err}
		case "23514", "22003", "22P02":
			return &fault.Error{Kind: fault.KindInvalid, Message: what + ": value out of range", Err: err}
		case "22021": // character_not_in_repertoire: a NUL byte or invalid UTF-8 in a text value
			return &fault.Error{Kind: fault.KindInvalid, Message: what + ": text must be valid UTF-8 without NUL bytes", Err: err}
		}
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return fault.Unavailable("database did not answer in time", 0, err)
	}
	if Unavailable(err) {
		return AsUnavailable(err)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// unstorableID reports whether id could never be a row's key: a text column holds no NUL byte
// and no invalid UTF-8, and Postgres refuses such a value instead of finding nothing. A lookup
// by such an id is NotFound without a query.
func unstorableID(id string) bool { return !utf8.ValidString(id) || strings.IndexByte(id, 0) >= 0 }
