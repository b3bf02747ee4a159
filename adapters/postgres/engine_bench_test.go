package postgres_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/ndjson"
	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/adapters/postgres/pgtest"
	"github.com/tokenscope/tokenscope/app/ingest"
	"github.com/tokenscope/tokenscope/app/simulate"
	"github.com/tokenscope/tokenscope/domain/chainevent"
)

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

// benchSpan is how far back the simulated trades go: TOKENSCOPE_BENCH_SPAN (a Go duration),
// one week by default. A short span puts every trade in the 24 h windows, as live trading does.
func benchSpan() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("TOKENSCOPE_BENCH_SPAN")); err == nil && d > 0 {
		return d
	}
	return 7 * 24 * time.Hour
}

// benchFlush is how often the ingest derives pending market rows: TOKENSCOPE_BENCH_FLUSH (a Go
// duration), one minute by default (a bulk import); 1s is what a live stream does.
func benchFlush() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("TOKENSCOPE_BENCH_FLUSH")); err == nil && d > 0 {
		return d
	}
	return time.Minute
}

func benchTrades() int {
	if n, err := strconv.Atoi(os.Getenv("TOKENSCOPE_BENCH_TRADES")); err == nil && n > 0 {
		return n
	}
	return 1_000_000
}

// BenchmarkIngestVersusCopy writes a simulated NDJSON file of TOKENSCOPE_BENCH_TRADES trades (one
// week of history ending now), ingests it with every derivation, then COPYs the same trades into
// an unindexed table, and reports both rates, their ratio and the on-disk size per million trades.
func BenchmarkIngestVersusCopy(b *testing.B) {
	ctx := context.Background()
	pool := pgtest.Pool(b)
	pgtest.Truncate(b, engineTables...)
	n := benchTrades()
	file := filepath.Join(b.TempDir(), "market.ndjson")
	f, err := os.Create(file)
	require.NoError(b, err)
	w := bufio.NewWriterSize(f, 1<<20)
	end := time.Now().UTC()
	tokens, wallets := max(n/1000, 50), max(n/50, 500)
	if v, err := strconv.Atoi(os.Getenv("TOKENSCOPE_BENCH_TOKENS")); err == nil && v > 0 {
		tokens, wallets = v, 2*v
	}
	sim := simulate.New(simulate.Config{Seed: 3, Tokens: tokens, Wallets: wallets, Trades: n,
		Start: end.Add(-benchSpan()), End: end})
	require.NoError(b, sim.Backfill(ctx, simulate.EncoderSink{Enc: ndjson.NewEncoder(w)}))
	require.NoError(b, w.Flush())
	require.NoError(b, f.Close())

	for i := 0; i < b.N; i++ {
		in, err := os.Open(file)
		require.NoError(b, err)
		svc := ingest.New(postgres.NewIngestStore(pool), wallClock{}, ingest.DefaultBatchSize).WithFlushInterval(benchFlush())
		stopProfile := profileIngest(b)
		cpu0 := cpuNow(b, ctx, pool)
		start := time.Now()
		res, err := svc.Stream(ctx, ndjson.NewDecoder(bufio.NewReaderSize(in, 1<<20)), nil)
		ingestTook := time.Since(start)
		goCPU, dbCPU := cpuNow(b, ctx, pool).since(cpu0)
		stopProfile()
		in.Close()
		require.NoError(b, err)

		// Raw COPY of the same trade rows into a table with no index, no key, no derivation.
		_, err = pool.Exec(ctx, `DROP TABLE IF EXISTS bench_raw_trades; CREATE TABLE bench_raw_trades (LIKE trades);
			ALTER TABLE bench_raw_trades DROP COLUMN seq`)
		require.NoError(b, err)
		in, err = os.Open(file)
		require.NoError(b, err)
		dec := ndjson.NewDecoder(bufio.NewReaderSize(in, 1<<20))
		var rows [][]any
		for {
			e, err := dec.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(b, err)
			if tr, ok := e.(chainevent.Trade); ok {
				t := tr.Trade
				rows = append(rows, []any{string(t.Chain), t.TransactionSignature, t.InstructionIndex, t.BlockHeight, t.BlockSlot,
					t.BlockTimestamp, t.Wallet, t.PoolAddress, string(t.Side), string(t.Status), t.TokenAddress, t.TokenAmount,
					t.TokenAmountInNative, t.TokenAmountInUSD, t.TokenPriceInNative, t.TokenPriceInUSD, t.SideTokenAddress,
					t.SideTokenAmount, t.SideTokenAmountInNative, t.SideTokenAmountInUSD, t.SideTokenPriceInNative,
					t.SideTokenPriceInUSD, t.DexImage, t.DexProgramAddress, t.DexProtocolFamily, int64(0)})
			}
		}
		in.Close()
		start = time.Now()
		copied, err := pool.CopyFrom(ctx, pgx.Identifier{"bench_raw_trades"}, tradeCopyColumns, pgx.CopyFromRows(rows))
		copyTook := time.Since(start)
		require.NoError(b, err)

		// The same rows into a table shaped like trades, its key and every index included: what
		// writing the trades alone costs, the ceiling of the ingest's ratio to the raw COPY.
		_, err = pool.Exec(ctx, `DROP TABLE IF EXISTS bench_indexed_trades; CREATE TABLE bench_indexed_trades (LIKE trades INCLUDING ALL)`)
		require.NoError(b, err)
		start = time.Now()
		_, err = pool.CopyFrom(ctx, pgx.Identifier{"bench_indexed_trades"}, tradeCopyColumns, pgx.CopyFromRows(rows))
		indexedTook := time.Since(start)
		require.NoError(b, err)
		_, err = pool.Exec(ctx, `DROP TABLE bench_indexed_trades`)
		require.NoError(b, err)

		ingestRate := float64(res.Trades) / ingestTook.Seconds()
		copyRate := float64(copied) / copyTook.Seconds()
		b.ReportMetric(ingestRate, "ingest_trades/s")
		b.ReportMetric(copyRate, "copy_trades/s")
		b.ReportMetric(ingestRate/copyRate, "ratio")
		b.ReportMetric(float64(copied)/indexedTook.Seconds()/copyRate, "indexed_copy_ratio")
		// CPU seconds per 100k trades, of this process and of the database's server processes: what
		// the ingest costs, much less disturbed by other load on a shared machine than wall time.
		b.ReportMetric(goCPU.Seconds()*1e5/float64(res.Trades), "go_cpu_s/100k")
		b.ReportMetric(dbCPU.Seconds()*1e5/float64(res.Trades), "db_cpu_s/100k")
		var tradesBytes, allBytes int64
		require.NoError(b, pool.QueryRow(ctx, `SELECT pg_total_relation_size('trades'),
			pg_total_relation_size('trades') + pg_total_relation_size('wallet_positions') + pg_total_relation_size('token_stats')
			+ pg_total_relation_size('token_market') + pg_total_relation_size('pool_snapshots')`).Scan(&tradesBytes, &allBytes))
		b.ReportMetric(float64(tradesBytes)/float64(res.Trades)*1e6/(1<<20), "trades_MiB/Mtrades")
		b.ReportMetric(float64(allBytes)/float64(res.Trades)*1e6/(1<<20), "engine_MiB/Mtrades")
		b.Logf("events=%d trades=%d ingest=%s copy=%s indexed copy=%s", res.Events, res.Trades, ingestTook, copyTook, indexedTook)
	}
}

// tradeCopyColumns are the columns the raw and indexed COPYs write (every trades column but seq).
var tradeCopyColumns = []string{
	"chain", "tx_signature", "instruction_index", "block_height", "block_slot", "block_timestamp_ms", "wallet",
	"pool_address", "side", "status", "token_address", "token_amount", "token_amount_native", "token_amount_usd",
	"token_price_native", "token_price_usd", "side_token_address", "side_token_amount", "side_token_amount_native",
	"side_token_amount_usd", "side_token_price_native", "side_token_price_usd", "dex_image", "dex_program_address",
	"dex_protocol_family", "ingested_at_ms"}

// profileIngest writes a CPU profile of the ingest alone (not the simulation that writes its
// input, nor the raw COPY it is compared with) to TOKENSCOPE_BENCH_CPUPROFILE when that is set;
// the returned function stops it. Do not combine it with go test's -cpuprofile.
func profileIngest(b *testing.B) (stop func()) {
	path := os.Getenv("TOKENSCOPE_BENCH_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	require.NoError(b, err)
	require.NoError(b, pprof.StartCPUProfile(f))
	return func() {
		pprof.StopCPUProfile()
		require.NoError(b, f.Close())
	}
}

// BenchmarkFreshness ingests live trades one step at a time at TOKENSCOPE_BENCH_RATE steps per
// second for TOKENSCOPE_BENCH_SECONDS on top of whatever the database holds, and reports the p50
// and p99 delay between handing a trade to the ingest port and its commit, which is when the
// token's 1m window, the wallet's position and the trade list all show it (one transaction). A
// sample of trades is read back to check that.
func BenchmarkFreshness(b *testing.B) {
	ctx := context.Background()
	pool := pgtest.Pool(b)
	rate, _ := strconv.Atoi(os.Getenv("TOKENSCOPE_BENCH_RATE"))
	if rate <= 0 {
		rate = 50
	}
	secs, _ := strconv.Atoi(os.Getenv("TOKENSCOPE_BENCH_SECONDS"))
	if secs <= 0 {
		secs = 30
	}
	svc := ingest.New(postgres.NewIngestStore(pool), wallClock{}, 0)
	end := time.Now().UTC()
	sim := simulate.New(simulate.Config{Seed: 9, Tokens: 100, Wallets: 1000, Trades: 2000, Start: end.Add(-10 * time.Minute), End: end})
	require.NoError(b, sim.Backfill(ctx, &simulate.IngestSink{Ingester: svc}))
	rec := &recordingSink{svc: svc}
	for i := 0; i < b.N; i++ {
		deadline := time.Now().Add(time.Duration(secs) * time.Second)
		tick := time.NewTicker(time.Second / time.Duration(rate))
		for time.Now().Before(deadline) {
			<-tick.C
			require.NoError(b, sim.Step(ctx, rec, time.Now()))
			require.NoError(b, rec.Flush(ctx))
			if len(rec.delays)%100 == 1 && rec.last != nil {
				var seen bool
				require.NoError(b, pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM trades WHERE chain = $1 AND tx_signature = $2)
					AND EXISTS (SELECT 1 FROM token_stats WHERE chain = $1 AND address = $3 AND window_name = '1m' AND trades > 0)
					AND EXISTS (SELECT 1 FROM wallet_positions WHERE chain = $1 AND wallet = $4 AND token_address = $3)`,
					string(rec.last.Chain), rec.last.TransactionSignature, rec.last.TokenAddress, rec.last.Wallet).Scan(&seen))
				require.True(b, seen, "a committed trade shows in trades, 1m stats and positions")
			}
		}
		tick.Stop()
	}
	sort.Slice(rec.delays, func(i, j int) bool { return rec.delays[i] < rec.delays[j] })
	p := func(q int) time.Duration { return rec.delays[(len(rec.delays)-1)*q/100] }
	b.ReportMetric(float64(p(50).Microseconds())/1000, "p50_ms")
	b.ReportMetric(float64(p(99).Microseconds())/1000, "p99_ms")
	b.ReportMetric(float64(len(rec.delays)), "batches")
}

// cpuSample is the CPU time used so far by this process and by the server processes of the
// test database's connections (read from /proc: the database runs on this machine).
type cpuSample struct {
	self time.Duration
	db   map[int]time.Duration
}

func cpuNow(b *testing.B, ctx context.Context, pool *pgxpool.Pool) cpuSample {
	var ru syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	s := cpuSample{self: time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), db: map[int]time.Duration{}}
	rows, err := pool.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = current_database()`)
	require.NoError(b, err)
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	require.NoError(b, err)
	for _, pid := range pids {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue // ended meanwhile
		}
		// Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
		f := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+2:]))
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		s.db[int(pid)] = time.Duration(ut+st) * time.Second / 100 // clock ticks (USER_HZ = 100)
	}
	return s
}

// since is the CPU time used between s0 and s, by this process and by the database's processes
// (a process that started meanwhile counts from zero).
func (s cpuSample) since(s0 cpuSample) (self, db time.Duration) {
	for pid, t := range s.db {
		db += t - s0.db[pid]
	}
	return s.self - s0.self, db
}

type recordingSink struct {
	svc    *ingest.Service
	buf    []chainevent.Event
	delays []time.Duration
	last   *chainevent.Trade
}

func (r *recordingSink) Emit(_ context.Context, e chainevent.Event) error {
	r.buf = append(r.buf, e)
	return nil
}

func (r *recordingSink) Flush(ctx context.Context) error {
	if len(r.buf) == 0 {
		return nil
	}
	start := time.Now()
	if _, err := r.svc.Ingest(ctx, r.buf); err != nil {
		return err
	}
	r.delays = append(r.delays, time.Since(start))
	for _, e := range r.buf {
		if tr, ok := e.(chainevent.Trade); ok && tr.Succeeded() {
			t := tr
			r.last = &t
		}
	}
	r.buf = r.buf[:0]
	return nil
}
