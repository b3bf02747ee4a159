// Package pgtest gives tests freshly migrated databases on the real Postgres, and drops them when
// the tests end. Postgres being unreachable fails the run: no test skips itself green. Tests only.
//
// Migrations run once per migration set, not once per package or test: the first process that
// needs them builds a template database named by the hash of migrations/ (tokenscope_tmpl_…,
// kept across runs, like the Go build cache), and every database a test gets is a copy of it
// (CREATE DATABASE … TEMPLATE, a fraction of a second). Concurrent test processes share the
// template safely: it is built under an advisory lock and marked a template only once complete.
//
// A package's tests share one database (URL, Pool) unless a test asks for its own (Fresh): a
// test that writes rows others read, truncates, counts sessions or listens calls Fresh and may
// then run in parallel with the rest.
package pgtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/migrations"
)

// AdminURL is the server tests create their databases on; TEST_DATABASE_URL overrides it.
func AdminURL() string {
	if u := os.Getenv("TEST_DATABASE_URL"); u != "" {
		return u
	}
	return "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
}

// database is one copy of the template and the pool on it.
type database struct {
	name, url string
	pool      *pgxpool.Pool
}

var (
	mu         sync.Mutex
	shared     *database // the package's database, made on first use
	sharedOnce sync.Once
	initErr    error                    // why shared could not be made
	fresh      = map[string]*database{} // by the name of the test that asked (Fresh)
	made       []string                 // every database this process made and has not dropped
)

// Main wraps testing.M: run the package's tests, run cleanups (e.g. stopping a shared server),
// then drop every database the package made. Unless -test.parallel is given, tests that call
// t.Parallel run 4 per core: they wait on Postgres far more than they compute.
// Use it as `func TestMain(m *testing.M) { pgtest.Main(m) }`.
func Main(m interface{ Run() int }, cleanups ...func()) {
	if !flag.Parsed() {
		flag.Parse()
	}
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if f := flag.Lookup("test.parallel"); f != nil && !set {
		_ = f.Value.Set(fmt.Sprint(4 * runtime.GOMAXPROCS(0)))
	}
	code := m.Run()
	for _, c := range cleanups {
		c()
	}
	mu.Lock()
	if shared != nil && shared.pool != nil {
		shared.pool.Close()
	}
	for _, d := range fresh {
		if d.pool != nil {
			d.pool.Close()
		}
	}
	names := made
	made = nil
	mu.Unlock()
	// At once: concurrent drops share their checkpoints.
	var wg sync.WaitGroup
	for _, n := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := drop(n); err != nil {
				fmt.Fprintln(os.Stderr, "pgtest: drop database:", err)
			}
		}()
	}
	wg.Wait()
	os.Exit(code)
}

// URL returns the connection string of t's database: the one Fresh gave t or a test it runs
// in, else the package's shared database (made on first use).
func URL(t testing.TB) string {
	t.Helper()
	return of(t).url
}

// Pool returns a pool on t's database (see URL); the pool is shared by the tests on it.
func Pool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	d := of(t)
	mu.Lock()
	defer mu.Unlock()
	if d.pool == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		p, err := postgres.Open(ctx, d.url, 20)
		if err != nil {
			t.Fatalf("pgtest: %v", err)
		}
		d.pool = p
	}
	return d.pool
}

// Fresh gives t (and its subtests) a database of its own, as freshly migrated as a new copy of
// the template, and returns a pool on it; URL and Pool called with t or its subtests return it
// too. A test that calls Fresh disturbs no other, and none disturbs it: it may call t.Parallel.
//
// Copying the template takes a fraction of a second, but dropping a database one or two (Postgres
// checkpoints and waits for every backend of the server), so when t ends its database is emptied
// instead and given to the next test that asks: every table that holds rows is truncated and
// every sequence restarted, once no session is left on it. A database whose schema t changed
// (tables, columns, triggers, functions or recorded migrations differ from the template's) is
// dropped instead. Main drops the rest.
func Fresh(t testing.TB) *pgxpool.Pool {
	t.Helper()
	d, err := take()
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	mu.Lock()
	if _, dup := fresh[t.Name()]; dup {
		mu.Unlock()
		t.Fatalf("pgtest: Fresh called twice in %s", t.Name())
	}
	fresh[t.Name()] = d
	mu.Unlock()
	t.Cleanup(func() {
		mu.Lock()
		delete(fresh, t.Name())
		p := d.pool
		d.pool = nil
		mu.Unlock()
		if p != nil {
			p.Close()
		}
		if err := reset(d); err != nil {
			t.Logf("pgtest: %s is dropped, not reused: %v", d.name, err)
			if err := drop(d.name); err != nil {
				t.Errorf("pgtest: drop %s: %v", d.name, err)
				return
			}
			forget(d.name)
			return
		}
		mu.Lock()
		idle = append(idle, d)
		mu.Unlock()
	})
	return Pool(t)
}

var (
	idle   []*database // emptied by reset, waiting for the next Fresh
	schema string      // the template's schema fingerprint, read from the first copy
)

// take returns an idle database, or a new copy of the template.
func take() (*database, error) {
	mu.Lock()
	if n := len(idle); n > 0 {
		d := idle[n-1]
		idle = idle[:n-1]
		mu.Unlock()
		return d, nil
	}
	known := schema != ""
	mu.Unlock()
	d, err := clone()
	if err != nil || known {
		return d, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, d.url)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	var f string
	if err := conn.QueryRow(ctx, fingerprintSQL).Scan(&f); err != nil {
		return nil, err
	}
	mu.Lock()
	schema = f
	mu.Unlock()
	return d, nil
}

// fingerprintSQL digests what a test could change of the schema: every relation with its kind
// and column count, every trigger, every function, and the migrations recorded as applied.
const fingerprintSQL = `SELECT md5(string_agg(x, ',' ORDER BY x)) FROM (
	SELECT 'r:' || c.relname || ':' || c.relkind::text || ':' || c.relnatts FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema()
	UNION ALL SELECT 't:' || tgname || ':' || tgrelid::regclass::text || ':' || tgenabled::text FROM pg_trigger
	UNION ALL SELECT 'p:' || p.oid::regprocedure::text FROM pg_proc p
		JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = current_schema()
	UNION ALL SELECT 'm:' || name FROM schema_migrations) s(x)`

// reset empties d for the next test: it waits until every session of the test has ended, then
// truncates every table holding rows (schema_migrations aside) and restarts every sequence. It
// fails when d's schema no longer matches the template's.
func reset(d *database) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := pgx.Connect(ctx, AdminURL())
	if err != nil {
		return err
	}
	defer admin.Close(context.Background())
	// A closed connection's backend exits a moment later; until then it may hold a session's
	// advisory lock or a LISTEN.
	for {
		var n int
		if err := admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = $1`, d.name).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d sessions still open: %w", n, ctx.Err())
		case <-time.After(5 * time.Millisecond): // a poll interval
		}
	}
	conn, err := pgx.Connect(ctx, d.url)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	var f string
	if err := conn.QueryRow(ctx, fingerprintSQL).Scan(&f); err != nil {
		return err
	}
	mu.Lock()
	want := schema
	mu.Unlock()
	if f != want {
		return errors.New("the test changed the schema")
	}
	var probe string
	if err := conn.QueryRow(ctx, `SELECT string_agg(format('SELECT %L::text WHERE EXISTS (SELECT 1 FROM %I)', relname, relname), ' UNION ALL ')
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND c.relname <> 'schema_migrations'`).Scan(&probe); err != nil {
		return err
	}
	rows, err := conn.Query(ctx, probe)
	if err != nil {
		return err
	}
	full, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	var seqs []string
	rows, err = conn.Query(ctx, `SELECT format('%I', sequencename) FROM pg_sequences WHERE schemaname = current_schema() AND last_value IS NOT NULL`)
	if err != nil {
		return err
	}
	if seqs, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if len(full) > 0 {
			ids := make([]string, len(full))
			for i, n := range full {
				ids[i] = pgx.Identifier{n}.Sanitize()
			}
			if _, err := tx.Exec(ctx, "TRUNCATE "+strings.Join(ids, ", ")+" CASCADE"); err != nil {
				return err
			}
		}
		for _, s := range seqs {
			if _, err := tx.Exec(ctx, "ALTER SEQUENCE "+s+" RESTART"); err != nil {
				return err
			}
		}
		return nil
	})
}

// fixturePrefix starts the name of every database Fixture builds.
const fixturePrefix = "tokenscope_fixture_"

// fixtureLock is the advisory lock (on the admin database) builders of fixtures hold.
const fixtureLock = templateLock + 1

// Fixture returns a pool on a read-only database holding the migrated schema and the rows sql
// writes, vacuumed and analyzed (so its statistics and visibility map are those of a settled
// database). It is built once per migration set and sql and kept across runs, as the template is:
// a fixture of a few hundred thousand rows costs its first run half a minute and later runs
// nothing. Every session on it is read-only (default_transaction_read_only), so tests and test
// processes may share it.
func Fixture(t testing.TB, sql string) *pgxpool.Pool {
	t.Helper()
	h := sha256.Sum256([]byte(migrationsHash() + "\x00" + sql))
	name := fixturePrefix + hex.EncodeToString(h[:])[:16]
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := ensureFixture(ctx, name, sql); err != nil {
		t.Fatalf("pgtest: fixture %s: %v", name, err)
	}
	u, err := dbURL(name)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	p, err := postgres.Open(ctx, u, 4)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(p.Close)
	return p
}

// ensureFixture builds the fixture name from sql unless it exists; it is complete once its
// comment records its build time.
func ensureFixture(ctx context.Context, name, sql string) error {
	conn, err := pgx.Connect(ctx, AdminURL())
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	ready := func() (bool, error) {
		var ok bool
		err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database d JOIN pg_shdescription c
			ON c.objoid = d.oid AND c.classoid = 'pg_database'::regclass WHERE d.datname = $1)`, name).Scan(&ok)
		return ok, err
	}
	if ok, err := ready(); err != nil || ok {
		return err
	}
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, fixtureLock); err != nil {
		return err
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, fixtureLock) //nolint:errcheck
	if ok, err := ready(); err != nil || ok {
		return err
	}
	tmpl := TemplateName()
	if err := ensureTemplate(ctx, conn, tmpl); err != nil {
		return err
	}
	id := pgx.Identifier{name}.Sanitize()
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+id+" WITH (FORCE)"); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+id+" TEMPLATE "+pgx.Identifier{tmpl}.Sanitize()); err != nil {
		return err
	}
	u, err := dbURL(name)
	if err != nil {
		return err
	}
	fill, err := pgx.Connect(ctx, u)
	if err != nil {
		return err
	}
	defer fill.Close(context.Background())
	if _, err := fill.Exec(ctx, sql); err != nil {
		return err
	}
	// VACUUM sets what autovacuum would on a live database: the statistics the planner costs
	// with and the visibility map index-only scans count on.
	if _, err := fill.Exec(ctx, "VACUUM ANALYZE"); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "ALTER DATABASE "+id+" SET default_transaction_read_only = on"); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, fmt.Sprintf("COMMENT ON DATABASE %s IS 'built %d'", id, time.Now().Unix())); err != nil {
		return err
	}
	return dropStale(ctx, conn, fixturePrefix, name)
}

// Truncate empties the named tables of t's database (CASCADE) so a test starts from a known state.
func Truncate(t testing.TB, tables ...string) {
	t.Helper()
	p := Pool(t)
	if _, err := p.Exec(context.Background(), "TRUNCATE "+strings.Join(tables, ", ")+" RESTART IDENTITY CASCADE"); err != nil {
		t.Fatalf("pgtest: truncate: %v", err)
	}
}

// of returns t's database: Fresh's for t or its nearest ancestor that called it, else shared.
func of(t testing.TB) *database {
	t.Helper()
	mu.Lock()
	for name := t.Name(); ; {
		if d, ok := fresh[name]; ok {
			mu.Unlock()
			return d
		}
		i := strings.LastIndexByte(name, '/')
		if i < 0 {
			break
		}
		name = name[:i]
	}
	mu.Unlock()
	sharedOnce.Do(func() {
		d, err := clone()
		mu.Lock()
		shared, initErr = d, err
		mu.Unlock()
	})
	mu.Lock()
	defer mu.Unlock()
	if initErr != nil {
		t.Fatalf("pgtest: Postgres is required (start it with `pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start`): %v", initErr)
	}
	return shared
}

func forget(name string) {
	mu.Lock()
	defer mu.Unlock()
	for i, n := range made {
		if n == name {
			made = append(made[:i], made[i+1:]...)
			return
		}
	}
}

// dbURL is AdminURL naming database name.
func dbURL(name string) (string, error) {
	u, err := url.Parse(AdminURL())
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
}

// clone makes a new database from the template (building the template first if needed).
func clone() (*database, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, AdminURL())
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "tokenscope_test_" + hex.EncodeToString(b)
	tmpl := TemplateName()
	for attempt := 0; ; attempt++ {
		if err := ensureTemplate(ctx, conn, tmpl); err != nil {
			return nil, err
		}
		_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+" TEMPLATE "+pgx.Identifier{tmpl}.Sanitize())
		var pgErr *pgconn.PgError
		// The template was dropped (by another process's clean-up) between the check and the copy:
		// build it again.
		if errors.As(err, &pgErr) && pgErr.Code == "3D000" && attempt < 3 {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("copy template %s: %w", tmpl, err)
		}
		break
	}
	mu.Lock()
	made = append(made, name)
	mu.Unlock()
	// Nothing here needs to survive a crash: commits that wait for no disk flush make the
	// commit-per-statement tests several times faster. Test tables are small, so compiling a
	// query (JIT, for plans the planner costs high on empty tables' guesses) only burns CPU.
	// Neither changes anything a test can observe.
	for _, set := range []string{"synchronous_commit = off", "jit = off"} {
		if _, err := conn.Exec(ctx, "ALTER DATABASE "+pgx.Identifier{name}.Sanitize()+" SET "+set); err != nil {
			return nil, err
		}
	}
	u, err := dbURL(name)
	if err != nil {
		return nil, err
	}
	return &database{name: name, url: u}, nil
}

// templatePrefix starts the name of every template this package builds.
const templatePrefix = "tokenscope_tmpl_"

// TemplateName is the template database of the current migrations: templatePrefix and a hash of
// every migration file's name and content.
func TemplateName() string {
	return templatePrefix + migrationsHash()[:16]
}

var migrationsHash = sync.OnceValue(func() string {
	h := sha256.New()
	names, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		panic(err)
	}
	sort.Strings(names)
	for _, n := range names {
		body, err := migrations.FS.ReadFile(n)
		if err != nil {
			panic(err)
		}
		fmt.Fprintf(h, "%s\x00%d\x00", n, len(body))
		h.Write(body)
	}
	return hex.EncodeToString(h.Sum(nil))
})

// templateLock is the advisory lock (on the admin database) builders of templates hold.
const templateLock = 7_346_502

// ensureTemplate builds the template tmpl unless it exists. A template is marked one
// (datistemplate) only once migrated, so a process that crashed midway leaves a database the
// next builder drops and builds again.
func ensureTemplate(ctx context.Context, conn *pgx.Conn, tmpl string) error {
	ready := func() (bool, error) {
		var ok bool
		err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1 AND datistemplate)`, tmpl).Scan(&ok)
		return ok, err
	}
	if ok, err := ready(); err != nil || ok {
		return err
	}
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, templateLock); err != nil {
		return err
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, templateLock) //nolint:errcheck
	if ok, err := ready(); err != nil || ok {
		return err
	}
	id := pgx.Identifier{tmpl}.Sanitize()
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+id+" WITH (FORCE)"); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+id); err != nil {
		return err
	}
	u, err := dbURL(tmpl)
	if err != nil {
		return err
	}
	p, err := postgres.Open(ctx, u, 2)
	if err != nil {
		return err
	}
	_, err = postgres.Migrate(ctx, p)
	p.Close()
	if err != nil {
		return fmt.Errorf("migrate template %s: %w", tmpl, err)
	}
	if _, err := conn.Exec(ctx, fmt.Sprintf("COMMENT ON DATABASE %s IS 'built %d'", id, time.Now().Unix())); err != nil {
		return err
	}
	// No connections: CREATE DATABASE … TEMPLATE refuses a template someone is connected to.
	if _, err := conn.Exec(ctx, "ALTER DATABASE "+id+" WITH IS_TEMPLATE true ALLOW_CONNECTIONS false"); err != nil {
		return err
	}
	return dropStale(ctx, conn, templatePrefix, tmpl)
}

// staleAfter is how old a template or fixture of another migration set must be to be dropped. A
// branch with other migrations may still use it; it builds its own again when it next needs it,
// so two branches tested at once do not drop each other's templates back and forth.
const staleAfter = 24 * time.Hour

// dropStale drops the databases named prefix… but keep built more than staleAfter ago (each
// records its build time in its comment); one in use is left for a later run.
func dropStale(ctx context.Context, conn *pgx.Conn, prefix, keep string) error {
	rows, err := conn.Query(ctx, `SELECT d.datname FROM pg_database d
		LEFT JOIN pg_shdescription c ON c.objoid = d.oid AND c.classoid = 'pg_database'::regclass
		WHERE d.datname LIKE $1 || '%' AND d.datname <> $2
		AND (c.description IS NULL OR c.description !~ '^built [0-9]+$'
			OR substr(c.description, 7)::bigint < $3)`,
		prefix, keep, time.Now().Add(-staleAfter).Unix())
	if err != nil {
		return err
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	for _, n := range names {
		id := pgx.Identifier{n}.Sanitize()
		if _, err := conn.Exec(ctx, "ALTER DATABASE "+id+" WITH IS_TEMPLATE false"); err != nil {
			return err
		}
		_, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+id)
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "55006" { // being accessed
			continue
		}
		if err != nil {
			return err
		}
	}
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
