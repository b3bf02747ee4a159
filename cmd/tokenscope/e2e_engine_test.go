package main

// Crash safety and parallel ingest of the market engine (issue 11), through the real command
// line: `tokenscope import --at TIME FILE` in child processes (this test binary re-executed with
// runMainEnv, which runs main()), each on a database of its own, compared table by table with a
// from-scratch import of the same file into a fresh database.

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/ndjson"
	"github.com/tokenscope/tokenscope/adapters/postgres/pgtest"
	"github.com/tokenscope/tokenscope/app/simulate"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
)

// runMainEnv makes the re-executed test binary run main() (see TestMain).
const runMainEnv = "TOKENSCOPE_TEST_RUN_MAIN"

// engineAt is the fixed clock of every import here (--at), the end of the simulated backfill.
var engineAt = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

// engineBatch is the import batch size: small enough that a kill lands between many commits.
const engineBatch = "1000"

var (
	engineDBMu  sync.Mutex
	engineDBs   []string
	engineFixMu sync.Mutex
	engineFix   *engineFixture
)

// engineDatabase names a database of its own on the test server; the child process creates and
// migrates it (import does), and the package drops it when its tests end.
func engineDatabase(t *testing.T, label string) string {
	t.Helper()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := "tokenscope_engine_" + label + "_" + hex.EncodeToString(b)
	u, err := url.Parse(pgtest.AdminURL())
	require.NoError(t, err)
	u.Path = "/" + name
	engineDBMu.Lock()
	engineDBs = append(engineDBs, name)
	engineDBMu.Unlock()
	return u.String()
}

// dropEngineDatabases drops the databases of the engine tests and removes their input file.
func dropEngineDatabases() {
	engineFixMu.Lock()
	if engineFix != nil {
		_ = os.RemoveAll(filepath.Dir(engineFix.file))
	}
	engineFixMu.Unlock()
	engineDBMu.Lock()
	defer engineDBMu.Unlock()
	if len(engineDBs) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, pgtest.AdminURL())
	if err != nil {
		fmt.Fprintln(os.Stderr, "engine tests: drop databases:", err)
		return
	}
	defer conn.Close(ctx)
	for _, name := range engineDBs {
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			fmt.Fprintln(os.Stderr, "engine tests: drop database:", err)
		}
	}
}

// importProc is one `tokenscope import` child process.
type importProc struct {
	cmd  *exec.Cmd
	out  *os.File
	done chan struct{} // closed once the process ended; err is then its exit
	err  error
}

// startImport runs `tokenscope import --batch B --at engineAt file` against dbURL.
func startImport(t *testing.T, dbURL, file, batch string) *importProc {
	t.Helper()
	out, err := os.CreateTemp(t.TempDir(), "import-*.log")
	require.NoError(t, err)
	cmd := exec.Command(os.Args[0], "import", "--batch", batch, "--at", engineAt.Format(time.RFC3339), file)
	cmd.Env = append(os.Environ(), runMainEnv+"=1", "DATABASE_URL="+dbURL, "LOG_LEVEL=warn", "DB_MAX_CONNS=4")
	cmd.Stdout, cmd.Stderr = out, out
	require.NoError(t, cmd.Start())
	p := &importProc{cmd: cmd, out: out, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // an error once it has ended
		<-p.done
	})
	return p
}

func (p *importProc) output() string {
	b, _ := os.ReadFile(p.out.Name())
	return strings.TrimSpace(string(b))
}

// wait waits (at most within) for the import to end and requires success.
func (p *importProc) wait(t *testing.T, what string, within time.Duration) {
	t.Helper()
	select {
	case <-p.done:
		require.NoError(t, p.err, "%s failed:\n%s", what, p.output())
	case <-time.After(within):
		_ = p.cmd.Process.Kill()
		<-p.done
		t.Fatalf("%s did not finish within %v (deadlock?):\n%s", what, within, p.output())
	}
	t.Logf("%s: %s", what, p.output())
}

// engineFixture is the shared input of the engine tests: a simulated multi-chain market as one
// NDJSON file, and a fresh database holding its from-scratch import (one process, uninterrupted).
type engineFixture struct {
	file   string
	refURL string
	trades int // trades in the file
	events []chainevent.Event
}

func engineFiles(t *testing.T) *engineFixture {
	t.Helper()
	engineFixMu.Lock()
	defer engineFixMu.Unlock()
	if engineFix != nil {
		return engineFix
	}
	dir, err := os.MkdirTemp("", "tokenscope-engine-")
	require.NoError(t, err)
	// The directory outlives the first test (the next one reuses the file); TestMain removes it.
	file := filepath.Join(dir, "market.ndjson")
	f, err := os.Create(file)
	require.NoError(t, err)
	w := bufio.NewWriter(f)
	sim := simulate.New(simulate.Config{Seed: 11, Tokens: 120, Wallets: 1500, Trades: 20_000,
		Start: engineAt.Add(-6 * time.Hour), End: engineAt})
	require.NoError(t, sim.Backfill(context.Background(), simulate.EncoderSink{Enc: ndjson.NewEncoder(w)}))
	require.NoError(t, w.Flush())
	require.NoError(t, f.Close())
	events := readEvents(t, file)
	trades := 0
	for _, e := range events {
		if e.Type() == chainevent.TypeTrade {
			trades++
		}
	}
	ref := engineDatabase(t, "ref")
	p := startImport(t, ref, file, engineBatch)
	p.wait(t, "reference import (fresh database, one process)", 5*time.Minute)
	engineFix = &engineFixture{file: file, refURL: ref, trades: trades, events: events}
	return engineFix
}

func readEvents(t *testing.T, file string) []chainevent.Event {
	t.Helper()
	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	dec := ndjson.NewDecoder(bufio.NewReader(f))
	var out []chainevent.Event
	for {
		e, err := dec.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		out = append(out, e)
	}
}

func openPool(t *testing.T, dbURL string) *pgxpool.Pool {
	t.Helper()
	p, err := pgxpool.New(context.Background(), dbURL)
	require.NoError(t, err)
	t.Cleanup(p.Close)
	return p
}

// bookkeeping are the columns that record when or in which order a row was written, not what
// it says; the comparison leaves them out.
var bookkeeping = []string{"updated_at_ms", "ingested_at_ms", "created_at_ms", "updated_at", "inserted_at", "seq"}

// derivedTables lists the tables the comparison covers: every table whose name starts with
// token_ or wallet_ (so tables a later migration adds are covered without editing this test),
// and the derived state kept on pools and red packets, with each table's primary key.
func derivedTables(t *testing.T, db *pgxpool.Pool) map[string][]string {
	t.Helper()
	rows, err := db.Query(context.Background(), `SELECT c.relname, array_agg(a.attname ORDER BY k.ord)
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		JOIN pg_index i ON i.indrelid = c.oid AND i.indisprimary
		CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
		JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
		WHERE n.nspname = 'public' AND c.relkind = 'r'
			AND (c.relname LIKE 'token\_%' OR c.relname LIKE 'wallet\_%' OR c.relname IN ('pools', 'red_packets', 'red_packet_claims'))
		GROUP BY c.relname ORDER BY c.relname`)
	require.NoError(t, err)
	out := map[string][]string{}
	for rows.Next() {
		var name string
		var pk []string
		require.NoError(t, rows.Scan(&name, &pk))
		out[name] = pk
	}
	require.NoError(t, rows.Err())
	for _, must := range []string{"wallet_positions", "token_market", "token_stats"} {
		require.Contains(t, out, must)
	}
	return out
}

// tableRows renders a table as one JSON text per row, bookkeeping columns removed, numbers at
// their shortest scale (sameScale), in primary key order. A table without a primary key is
// ordered by the whole row.
func tableRows(t *testing.T, db *pgxpool.Pool, table string, pk []string) []string {
	t.Helper()
	drop := ""
	for _, c := range bookkeeping {
		drop += " - '" + c + "'"
	}
	drop += ` - CASE WHEN to_jsonb(x)->>'chain' <> 'sol' THEN '{` + strings.Join(solOfOtherChains, ",") + `}'::text[] ELSE '{}' END`
	order := "1"
	if len(pk) > 0 {
		quoted := make([]string, len(pk))
		for i, c := range pk {
			quoted[i] = "x." + pgx.Identifier{c}.Sanitize()
		}
		order = strings.Join(quoted, ", ")
	}
	rows, err := db.Query(context.Background(), `SELECT (to_jsonb(x)`+drop+`)::text FROM `+pgx.Identifier{table}.Sanitize()+
		` x ORDER BY `+order)
	require.NoError(t, err)
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	for i, r := range out {
		out[i] = sameScale(t, r)
	}
	return out
}

// sameScale rewrites a row's JSON with every number at its shortest scale (1.50 and 1.5 are one
// value): the scale a NUMERIC keeps depends on how a value was computed (a position advanced over
// several trades in one batch keeps the trailing zeros of decimal arithmetic; one reloaded between
// batches comes back without them), and the API renders both the same. Keys come out sorted.
func sameScale(t *testing.T, row string) string {
	dec := json.NewDecoder(strings.NewReader(row))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v))
	var walk func(any) any
	walk = func(x any) any {
		switch y := x.(type) {
		case json.Number:
			return json.RawMessage(decimal.RequireFromString(y.String()).String())
		case map[string]any:
			for k, e := range y {
				y[k] = walk(e)
			}
		case []any:
			for i, e := range y {
				y[i] = walk(e)
			}
		}
		return x
	}
	b, err := json.Marshal(walk(v))
	require.NoError(t, err)
	return string(b)
}

// solOfOtherChains are the values in SOL of eth and bsc tokens and pools: USD over the SOL price
// of the newest sol trade stored when they were derived (docs/engine.md). Chains are ingested
// side by side (one lane per chain in a stream, or separate processes), so which sol trades are
// stored at that moment is a matter of timing, and the comparisons leave them out; every other
// column, USD values included, must match.
var solOfOtherChains = []string{"price_sol", "market_cap_sol", "fdv_sol", "max_pool_tvl_sol", "total_tvl_sol", "tvl_sol"}

// requireSameDerivedState compares every derived table of got with want, row by row, but for
// solOfOtherChains of rows of other chains than sol.
func requireSameDerivedState(t *testing.T, what string, got, want *pgxpool.Pool) {
	t.Helper()
	tables := derivedTables(t, want)
	require.Equal(t, tables, derivedTables(t, got), "%s: the same derived tables", what)
	ctx := context.Background()
	var gotTrades, wantTrades int
	require.NoError(t, got.QueryRow(ctx, `SELECT count(*) FROM trades`).Scan(&gotTrades))
	require.NoError(t, want.QueryRow(ctx, `SELECT count(*) FROM trades`).Scan(&wantTrades))
	assert.Equal(t, wantTrades, gotTrades, "%s: trades stored", what)
	for table, pk := range tables {
		g, w := tableRows(t, got, table, pk), tableRows(t, want, table, pk)
		if len(g) != len(w) {
			t.Errorf("%s: %s has %d rows, the from-scratch import %d", what, table, len(g), len(w))
		}
		diffs := 0
		for i := range min(len(g), len(w)) {
			if g[i] != w[i] {
				diffs++
				if diffs <= 5 {
					t.Errorf("%s: %s row %d differs:\n got: %s\nwant: %s", what, table, i, g[i], w[i])
				}
			}
		}
		if diffs > 5 {
			t.Errorf("%s: %s: %d rows differ in all", what, table, diffs)
		}
		t.Logf("%s: %s: %d rows compared, %d differ", what, table, min(len(g), len(w)), diffs)
	}
}

func countTrades(t *testing.T, db *pgxpool.Pool) int {
	var n int
	if err := db.QueryRow(context.Background(), `SELECT count(*) FROM trades`).Scan(&n); err != nil {
		return -1 // the child may not have created the schema yet
	}
	return n
}

// TestImportKilledMidStreamEqualsFromScratch kills `tokenscope import` with SIGKILL after some
// of its batches committed, runs it again on the same file until it finishes, and requires
// every derived table to equal a from-scratch import of the same file into a fresh database.
func TestImportKilledMidStreamEqualsFromScratch(t *testing.T) {
	fx := engineFiles(t)
	dbURL := engineDatabase(t, "crash")
	first := startImport(t, dbURL, fx.file, engineBatch)
	var db *pgxpool.Pool
	deadline := time.Now().Add(3 * time.Minute)
	killedAt := 0
	for killedAt == 0 {
		select {
		case <-first.done:
			t.Fatalf("the import ended (%v) before it could be killed mid-stream:\n%s", first.err, first.output())
		case <-time.After(25 * time.Millisecond):
		}
		if db == nil {
			if p, err := pgxpool.New(context.Background(), dbURL); err == nil {
				db = p
				t.Cleanup(p.Close)
			}
			continue
		}
		// Kill once a few batches (of engineBatch events) committed, well before the end.
		if n := countTrades(t, db); n >= fx.trades/4 {
			require.NoError(t, first.cmd.Process.Signal(syscall.SIGKILL))
			<-first.done
			killedAt = countTrades(t, db)
		}
		require.True(t, time.Now().Before(deadline), "no batch committed within 3 minutes:\n%s", first.output())
	}
	require.Less(t, killedAt, fx.trades, "killed mid-stream")
	t.Logf("killed with %d of %d trades committed", killedAt, fx.trades)

	second := startImport(t, dbURL, fx.file, engineBatch)
	second.wait(t, "import after the kill", 5*time.Minute)
	requireSameDerivedState(t, "killed and restarted", db, openPool(t, fx.refURL))
}

// splitByChain writes the events of the sol chain to one file and the rest (eth, bsc) to
// another, each in the original order.
func splitByChain(t *testing.T, events []chainevent.Event, dir string) (sol, evm string) {
	t.Helper()
	sol, evm = filepath.Join(dir, "sol.ndjson"), filepath.Join(dir, "evm.ndjson")
	fs, err := os.Create(sol)
	require.NoError(t, err)
	fe, err := os.Create(evm)
	require.NoError(t, err)
	ws, we := bufio.NewWriter(fs), bufio.NewWriter(fe)
	encS, encE := ndjson.NewEncoder(ws), ndjson.NewEncoder(we)
	packetChain := map[string]chain.Chain{}
	for _, e := range events {
		var c chain.Chain
		switch v := e.(type) {
		case chainevent.TokenCreated:
			c = v.Token.Chain
		case chainevent.TokenMigrated:
			c = v.Chain
		case chainevent.PoolCreated:
			c = v.Pool.Chain
		case chainevent.Trade:
			c = v.Chain
		case chainevent.PoolSnapshot:
			c = v.Chain
		case chainevent.RedPacketCreated:
			c = v.Packet.Chain
			packetChain[v.Packet.ID] = c
		case chainevent.RedPacketClaimed:
			c = v.Claim.Chain
		case chainevent.RedPacketExpired:
			c = packetChain[v.PacketID]
		case chainevent.WalletLabel:
			c = v.Chain
		}
		require.NotEmpty(t, c, "event %s without a chain", e.Type())
		enc := encE
		if c == chain.Sol {
			enc = encS
		}
		require.NoError(t, enc.Encode(e))
	}
	require.NoError(t, ws.Flush())
	require.NoError(t, we.Flush())
	require.NoError(t, fs.Close())
	require.NoError(t, fe.Close())
	return sol, evm
}

// TestTwoImportsAtOnce runs two `tokenscope import` processes at the same time against one
// database: one per chain (sol, and eth + bsc), then both on the whole file (different batch
// sizes, so their batches overlap partly). Both must finish without error or deadlock and leave
// every derived table equal to the from-scratch import of the file.
func TestTwoImportsAtOnce(t *testing.T) {
	fx := engineFiles(t)
	t.Run("one process per chain", func(t *testing.T) {
		sol, evm := splitByChain(t, fx.events, t.TempDir())
		dbURL := engineDatabase(t, "perchain")
		migrateFirst(t, dbURL)
		// The eth+bsc import starts first and the sol one joins once it committed a batch: the two
		// then run side by side, and the order a single process never sees (other chains' events
		// before any sol trade) is certain rather than a matter of timing.
		b := startImport(t, dbURL, evm, engineBatch)
		db := openPool(t, dbURL)
		deadline := time.Now().Add(3 * time.Minute)
		for countTrades(t, db) <= 0 {
			require.True(t, time.Now().Before(deadline), "no eth+bsc batch committed within 3 minutes:\n%s", b.output())
			time.Sleep(20 * time.Millisecond)
		}
		a := startImport(t, dbURL, sol, engineBatch)
		a.wait(t, "sol import", 5*time.Minute)
		b.wait(t, "eth+bsc import", 5*time.Minute)
		requireSameDerivedState(t, "two processes, one per chain", db, openPool(t, fx.refURL))
	})
	t.Run("two processes on the same file", func(t *testing.T) {
		dbURL := engineDatabase(t, "overlap")
		migrateFirst(t, dbURL)
		a, b := startImport(t, dbURL, fx.file, engineBatch), startImport(t, dbURL, fx.file, "700")
		a.wait(t, "import 1 (batches of 1000)", 5*time.Minute)
		b.wait(t, "import 2 (batches of 700)", 5*time.Minute)
		requireSameDerivedState(t, "two processes on the same file", openPool(t, dbURL), openPool(t, fx.refURL))
	})
}

// migrateFirst creates and migrates the database with `tokenscope migrate`, so two imports
// started together do not both create it (that race is not what the test is about).
func migrateFirst(t *testing.T, dbURL string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "migrate")
	cmd.Env = append(os.Environ(), runMainEnv+"=1", "DATABASE_URL="+dbURL, "LOG_LEVEL=warn")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "migrate: %s", out)
}
