// Package pgtest gives every test package its own freshly migrated database on the real
// Postgres, and drops it when the package's tests end. Postgres being unreachable fails the
// run: no test skips itself green. Tests only.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tokenscope/tokenscope/adapters/postgres"
)

// AdminURL is the server tests create their databases on; TEST_DATABASE_URL overrides it.
func AdminURL() string {
	if u := os.Getenv("TEST_DATABASE_URL"); u != "" {
		return u
	}
	return "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
}

var (
	mu      sync.Mutex
	dbURL   string
	dbName  string
	pool    *pgxpool.Pool
	initErr error
)

// Main wraps testing.M: run the package's tests, run cleanups (e.g. stopping a shared server),
// then drop the package database if one was made.
// Use it as `func TestMain(m *testing.M) { pgtest.Main(m) }`.
func Main(m interface{ Run() int }, cleanups ...func()) {
	code := m.Run()
	for _, c := range cleanups {
		c()
	}
	mu.Lock()
	if pool != nil {
		pool.Close()
	}
	name := dbName
	mu.Unlock()
	if name != "" {
		if err := drop(name); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest: drop database:", err)
		}
	}
	os.Exit(code)
}

// URL returns the connection string of this package's migrated database, creating it once.
func URL(t testing.TB) string {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if dbURL == "" && initErr == nil {
		initErr = create()
	}
	if initErr != nil {
		t.Fatalf("pgtest: Postgres is required (start it with `pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start`): %v", initErr)
	}
	return dbURL
}

// Pool returns a pool on this package's database (shared by the package's tests).
func Pool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	u := URL(t)
	mu.Lock()
	defer mu.Unlock()
	if pool == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		p, err := postgres.Open(ctx, u, 20)
		if err != nil {
			t.Fatalf("pgtest: %v", err)
		}
		pool = p
	}
	return pool
}

// Truncate empties the named tables (CASCADE) so a test starts from a known state.
func Truncate(t testing.TB, tables ...string) {
	t.Helper()
	p := Pool(t)
	if _, err := p.Exec(context.Background(), "TRUNCATE "+strings.Join(tables, ", ")+" RESTART IDENTITY CASCADE"); err != nil {
		t.Fatalf("pgtest: truncate: %v", err)
	}
}

func create() error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := "tokenscope_test_" + hex.EncodeToString(b)
	u, err := url.Parse(AdminURL())
	if err != nil {
		return err
	}
	u.Path = "/" + name
	if err := postgres.EnsureDatabase(ctx, u.String()); err != nil {
		return err
	}
	dbName = name
	p, err := postgres.Open(ctx, u.String(), 4)
	if err != nil {
		return err
	}
	defer p.Close()
	if _, err := postgres.Migrate(ctx, p); err != nil {
		return err
	}
	dbURL = u.String()
	return nil
}

func drop(name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, AdminURL())
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	return err
}
