package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tokenscope/tokenscope/adapters/ndjson"
	"github.com/tokenscope/tokenscope/bench/load"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/internal/loopback"
)

// stack is what one run owns: a temporary directory, a database and the service process.
type stack struct {
	bin      string // production binary: apikey, simulate, import
	devBin   string // tokenscope-dev: the service
	adminURL string // a loopback Postgres, database postgres
	dbName   string
	dbURL    string
	dir      string
	logFile  *os.File

	svc          *exec.Cmd
	svcDone      chan error
	httpURL      string
	dexURL       string
	temporalAddr string
	adminHTTP    string // the service's /metrics listener
	key          string
	pool         *pgxpool.Pool
	// svcEnv is extra environment of the service (the replica rows' DATA_DIR and standby URLs).
	svcEnv []string
}

// withDatabase returns dsn with its database replaced by name.
func withDatabase(dsn, name string) (string, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return "", err
	}
	if addr := net.ParseIP(cfg.Host); addr == nil || !addr.IsLoopback() {
		return "", fmt.Errorf("postgres host %q is not a loopback address: tokenbench only uses a local Postgres", cfg.Host)
	}
	i := strings.Index(dsn, "://")
	if i < 0 {
		return "", fmt.Errorf("postgres URL %q: use the postgres://host:port/db form", dsn)
	}
	rest := dsn[i+3:]
	slash := strings.IndexByte(rest, '/')
	q := ""
	if j := strings.IndexByte(rest, '?'); j >= 0 {
		q = rest[j:]
		rest = rest[:j]
	}
	if slash >= 0 {
		rest = rest[:slash]
	}
	return dsn[:i+3] + rest + "/" + name + q, nil
}

// createDatabase creates the run's own database; it fails if the name is taken, so a run never
// adopts (and later drops) a database it did not create.
func (s *stack) createDatabase(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, s.adminURL)
	if err != nil {
		return fmt.Errorf("connect to postgres: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{s.dbName}.Sanitize()); err != nil {
		return fmt.Errorf("create database %s: %w", s.dbName, err)
	}
	return nil
}

// dropDatabase drops the run's database, disconnecting whoever is left.
func (s *stack) dropDatabase() error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.adminURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{s.dbName}.Sanitize()+" WITH (FORCE)")
	return err
}

// serviceEnv is the environment of every tokenscope process the run starts: the inherited
// environment minus tokenscope's own settings, plus the run's.
func (s *stack) serviceEnv(extra ...string) []string {
	own := map[string]bool{}
	for _, kv := range extra {
		own[kv[:strings.IndexByte(kv, '=')]] = true
	}
	var env []string
	for _, kv := range os.Environ() {
		k := kv[:max(strings.IndexByte(kv, '='), 0)]
		if own[k] || k == "TEMPORAL_ADDRESS" || k == "DATABASE_URL" || k == "DATA_DIR" {
			continue
		}
		env = append(env, kv)
	}
	base := []string{"DATABASE_URL=" + s.dbURL, "DATA_DIR=" + filepath.Join(s.dir, "data"), "LOG_FORMAT=json", "LOG_LEVEL=warn"}
	for _, kv := range base {
		if !own[kv[:strings.IndexByte(kv, '=')]] {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// tool runs a short tokenscope subcommand and returns its stdout; stderr goes to the run's log.
func (s *stack) tool(ctx context.Context, args ...string) (string, error) {
	out, _, _, err := s.toolMeasured(ctx, args...)
	return out, err
}

// toolMeasured is tool that also returns the subcommand's peak resident memory in bytes: the
// largest VmHWM sampled from /proc every 100 ms, or the kernel's maximum RSS of the waited
// child (rusage) when that is larger (a peak after the last sample).
func (s *stack) toolMeasured(ctx context.Context, args ...string) (string, int64, time.Duration, error) {
	cmd := exec.CommandContext(ctx, s.bin, args...)
	cmd.Env = s.serviceEnv()
	cmd.Stderr = s.logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	var out bytes.Buffer
	cmd.Stdout = &out
	done, err := startLocked(cmd)
	var peak int64
	var cpu time.Duration
	if err == nil {
		mem := sampleMemory(cmd.Process.Pid, 100*time.Millisecond)
		err = <-done
		peak, _ = mem.stop()
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			peak = max(peak, ru.Maxrss<<10) // Linux reports ru_maxrss in KiB
		}
		cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if err != nil {
		return out.String(), peak, cpu, fmt.Errorf("tokenscope %s: %w (see %s)", strings.Join(args, " "), err, s.logFile.Name())
	}
	return out.String(), peak, cpu, nil
}

// startLocked starts cmd from a goroutine locked to its OS thread and keeps that thread until
// cmd exits. Pdeathsig fires when the *thread* that forked the child ends, not the process, and
// the Go runtime may end an idle thread: without the lock the service got SIGTERM mid-run.
func startLocked(cmd *exec.Cmd) (<-chan error, error) {
	started := make(chan error, 1)
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		done <- cmd.Wait()
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return done, nil
}

// startService runs tokenscope-dev on free loopback ports (its own embedded Temporal, no UI,
// no simulated market) and waits until /readyz answers 200. A start that fails before it is
// ready (a port taken between the check and the bind, say) is tried again on other ports, up to
// three times; the log file keeps every attempt.
func (s *stack) startService(ctx context.Context) error {
	var err error
	for attempt := 1; attempt <= 3; attempt++ {
		if err = s.startServiceOnce(ctx); err == nil || ctx.Err() != nil || !errors.Is(err, errExitedEarly) {
			return err
		}
		fmt.Fprintf(s.logFile, "\n== tokenbench: start attempt %d failed: %v; retrying on other ports\n", attempt, err)
	}
	return err
}

// errExitedEarly marks a service that ended before it answered /readyz.
var errExitedEarly = errors.New("tokenscope-dev exited before it was ready")

func (s *stack) startServiceOnce(ctx context.Context) error {
	ports, err := loopback.FreePorts("127.0.0.1", 4)
	if err != nil {
		return err
	}
	s.httpURL = fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	s.dexURL = fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	s.temporalAddr = fmt.Sprintf("127.0.0.1:%d", ports[2])
	s.adminHTTP = fmt.Sprintf("http://127.0.0.1:%d", ports[3])
	cmd := exec.Command(s.devBin)
	cmd.Env = s.serviceEnv(append([]string{
		fmt.Sprintf("HTTP_ADDR=127.0.0.1:%d", ports[0]),
		fmt.Sprintf("DEX_HTTP_ADDR=127.0.0.1:%d", ports[1]),
		fmt.Sprintf("TEMPORAL_PORT=%d", ports[2]),
		// /metrics (read by the replica rows) on a free port: its fixed default could collide with another service.
		fmt.Sprintf("ADMIN_HTTP_ADDR=127.0.0.1:%d", ports[3]),
		"TEMPORAL_UI_PORT=0",
		"DEV_SIMULATE=false",
		"SHUTDOWN_TIMEOUT=10s",
		// The job-start row measures the start path at the run's concurrency, not the
		// per-account cap, which would answer most of its requests 429.
		"JOB_MAX_RUNNING=1000000",
		// Rate limits stay on, so the reads pay the middleware as served, at a rate no row
		// reaches (the default would answer the load rows 429).
		"RATE_LIMIT_PER_MINUTE=1000000000",
		"RATE_LIMIT_BURST=1000000",
	}, s.svcEnv...)...)
	cmd.Stdout = s.logFile
	cmd.Stderr = s.logFile
	// Its own process group: a Ctrl-C at the terminal reaches tokenbench, which then stops the
	// service in order. No Pdeathsig here: a long-lived child must not depend on one thread.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	done, err := startLocked(cmd)
	if err != nil {
		return fmt.Errorf("start tokenscope-dev: %w", err)
	}
	s.svc = cmd
	s.svcDone = make(chan error, 1)
	go func() { s.svcDone <- <-done }()

	deadline := time.Now().Add(180 * time.Second)
	c := load.Client(1)
	for {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := load.Do(rctx, c, load.Request{Method: "GET", URL: s.httpURL + "/readyz"})
		cancel()
		if err == nil {
			return nil
		}
		select {
		case err := <-s.svcDone:
			s.svcDone <- err
			s.svc = nil
			return fmt.Errorf("%w: %v (see %s)", errExitedEarly, err, s.logFile.Name())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("tokenscope-dev not ready after 180 s: %v (see %s)", err, s.logFile.Name())
		}
	}
}

// exited reports, without blocking, whether the service process has ended and how.
func (s *stack) exited() (bool, error) {
	if s.svc == nil {
		return true, nil
	}
	select {
	case err := <-s.svcDone:
		s.svc = nil
		return true, err
	default:
		return false, nil
	}
}

// stopService sends SIGTERM, waits for the drain and kills the process if it hangs.
func (s *stack) stopService() error {
	if s.svc == nil || s.svc.Process == nil {
		return nil
	}
	_ = s.svc.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.svcDone:
		s.svc = nil
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil // a signalled exit is the expected one
		}
		return err
	case <-time.After(45 * time.Second):
		_ = syscall.Kill(-s.svc.Process.Pid, syscall.SIGKILL)
		<-s.svcDone
		s.svc = nil
		return errors.New("tokenscope-dev did not stop within 45 s; killed")
	}
}

// createKey makes an API key with every scope through `tokenscope apikey create`.
func (s *stack) createKey(ctx context.Context) error {
	out, err := s.tool(ctx, "apikey", "create", "--account", benchAccount, "--name", "tokenbench", "--scopes", "read,kyt,webhook,ingest")
	if err != nil {
		return err
	}
	s.key = strings.TrimSpace(out)
	if !strings.HasPrefix(s.key, "tsk_") {
		return fmt.Errorf("apikey create printed %q, not a key", s.key)
	}
	return nil
}

// fill is one simulated market written through the ingest path.
type fill struct {
	Seed                    uint64
	Tokens, Wallets, Trades int
}

var importLine = regexp.MustCompile(`events=(\d+) .*trades=(\d+) .*seconds=([0-9.]+)`)

// imported is what one fill's `tokenscope import` did.
type imported struct {
	file string
	// events is every line of the file; trades the trade rows the import reported new.
	events, trades int
	// took is the import's own timing of its stream (decoding and every batch commit; the
	// process start and the migration check before it are not in it).
	took time.Duration
	// peakRSS is the import process's peak resident memory in bytes.
	peakRSS int64
	// cpu is the import process's CPU (svc: user + system over its whole life) and the database's
	// while it ran (db: the bench database's backends, polled, and the cluster's shared writers).
	cpu cpuUse
}

// ingestFill generates the fill as NDJSON with `tokenscope simulate --ndjson` and ingests it with
// `tokenscope import` (the ingest port, batches of 5,000 with every derivation).
func (s *stack) ingestFill(ctx context.Context, f fill, end time.Time) (imported, error) {
	file := filepath.Join(s.dir, fmt.Sprintf("fill-%d.ndjson", f.Seed))
	if _, err := s.tool(ctx, "simulate", "--seed", strconv.FormatUint(f.Seed, 10), "--tokens", strconv.Itoa(f.Tokens),
		"--wallets", strconv.Itoa(f.Wallets), "--trades", strconv.Itoa(f.Trades), "--span", fillSpan.String(),
		"--end", end.UTC().Format(time.RFC3339), "--ndjson", file); err != nil {
		return imported{}, err
	}
	pool, err := pgxpool.New(ctx, s.dbURL)
	if err != nil {
		return imported{}, err
	}
	defer pool.Close()
	track := trackCPU(ctx, cpuMeter{pool: pool}, 200*time.Millisecond)
	out, peak, procCPU, err := s.toolMeasured(ctx, "import", file)
	dbCPU := track.stop(context.WithoutCancel(ctx))
	if err != nil {
		return imported{}, err
	}
	m := importLine.FindStringSubmatch(out)
	if m == nil {
		return imported{}, fmt.Errorf("tokenscope import printed %q", out)
	}
	events, _ := strconv.Atoi(m[1])
	trades, _ := strconv.Atoi(m[2])
	secs, _ := strconv.ParseFloat(m[3], 64)
	return imported{file: file, events: events, trades: trades, took: time.Duration(secs * float64(time.Second)), peakRSS: peak,
		cpu: cpuUse{wall: dbCPU.wall, svc: procCPU, db: dbCPU.db}}, nil
}

// copyColumns are the trade columns the raw COPY writes: the trade record itself.
var copyColumns = []string{"chain", "tx_signature", "instruction_index", "block_height", "block_slot",
	"block_timestamp_ms", "wallet", "pool_address", "side", "status", "token_address", "token_amount",
	"token_amount_native", "token_amount_usd", "token_price_native", "token_price_usd", "side_token_address",
	"side_token_amount", "side_token_amount_native", "side_token_amount_usd", "side_token_price_native",
	"side_token_price_usd", "dex_image", "dex_program_address", "dex_protocol_family"}

const copyTable = `CREATE TABLE tokenbench_copy (
	chain TEXT, tx_signature TEXT, instruction_index INTEGER, block_height BIGINT, block_slot BIGINT,
	block_timestamp_ms BIGINT, wallet TEXT, pool_address TEXT, side TEXT, status TEXT, token_address TEXT,
	token_amount NUMERIC, token_amount_native NUMERIC, token_amount_usd NUMERIC, token_price_native NUMERIC,
	token_price_usd NUMERIC, side_token_address TEXT, side_token_amount NUMERIC, side_token_amount_native NUMERIC,
	side_token_amount_usd NUMERIC, side_token_price_native NUMERIC, side_token_price_usd NUMERIC,
	dex_image TEXT, dex_program_address TEXT, dex_protocol_family TEXT)`

// copyTrades decodes the trades of file and COPYs them into a fresh table with no index, key
// or derivation (the baseline of ingest); only the COPY is timed.
func (s *stack) copyTrades(ctx context.Context, file string) (n int, raw, indexed time.Duration, err error) {
	in, err := os.Open(file)
	if err != nil {
		return 0, 0, 0, err
	}
	defer in.Close()
	dec := ndjson.NewDecoder(bufio.NewReaderSize(in, 1<<20))
	var rows [][]any
	for {
		e, err := dec.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, 0, 0, err
		}
		tr, ok := e.(chainevent.Trade)
		if !ok {
			continue
		}
		t := tr.Trade
		rows = append(rows, []any{string(t.Chain), t.TransactionSignature, t.InstructionIndex, t.BlockHeight,
			t.BlockSlot, t.BlockTimestamp, t.Wallet, t.PoolAddress, string(t.Side), string(t.Status), t.TokenAddress,
			t.TokenAmount, t.TokenAmountInNative, t.TokenAmountInUSD, t.TokenPriceInNative, t.TokenPriceInUSD,
			t.SideTokenAddress, t.SideTokenAmount, t.SideTokenAmountInNative, t.SideTokenAmountInUSD,
			t.SideTokenPriceInNative, t.SideTokenPriceInUSD, t.DexImage, t.DexProgramAddress, t.DexProtocolFamily})
	}
	if _, err := s.pool.Exec(ctx, "DROP TABLE IF EXISTS tokenbench_copy; "+copyTable); err != nil {
		return 0, 0, 0, err
	}
	defer s.pool.Exec(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS tokenbench_copy") //nolint:errcheck
	start := time.Now()
	copied, err := s.pool.CopyFrom(ctx, pgx.Identifier{"tokenbench_copy"}, copyColumns, pgx.CopyFromRows(rows))
	took := time.Since(start)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("copy trades: %w", err)
	}
	// The same rows into an empty table shaped like trades, its key and every index included:
	// what writing the trade rows alone costs, before any derivation.
	if _, err := s.pool.Exec(ctx, "DROP TABLE IF EXISTS tokenbench_copy_indexed; CREATE TABLE tokenbench_copy_indexed (LIKE trades INCLUDING ALL)"); err != nil {
		return 0, 0, 0, err
	}
	defer s.pool.Exec(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS tokenbench_copy_indexed") //nolint:errcheck
	start = time.Now()
	if _, err := s.pool.CopyFrom(ctx, pgx.Identifier{"tokenbench_copy_indexed"}, copyColumns, pgx.CopyFromRows(rows)); err != nil {
		return 0, 0, 0, fmt.Errorf("copy trades into an indexed table: %w", err)
	}
	return int(copied), took, time.Since(start), nil
}

// waitRanking waits (bounded) until the refresh loop has written a ranking newer than after.
func (s *stack) waitRanking(ctx context.Context, after time.Time, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		var n int
		err := s.pool.QueryRow(ctx, `SELECT count(*) FROM hot_tokens WHERE computed_at_ms >= $1`, after.UnixMilli()).Scan(&n)
		if err == nil && n > 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no ranking computed within %s (%v)", limit, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}
