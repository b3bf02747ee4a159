package main

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/tokenscope/tokenscope/adapters/evm"
	"github.com/tokenscope/tokenscope/adapters/evm/evmtest"
	"github.com/tokenscope/tokenscope/adapters/ndjson"
	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/app/ingest"
	"github.com/tokenscope/tokenscope/bench/report"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/domain/dexlog"
	"github.com/tokenscope/tokenscope/ports"
	"github.com/tokenscope/tokenscope/workflows"
)

// followSize sizes the follow rows: swaps made on the simulated chain across pools (one
// WETH/USDC stable pool, the rest TKNi/WETH), from wallets, perBlock swaps a block.
type followSize struct{ swaps, pools, wallets, perBlock int }

// followGoal is issue 25's goal for the chain follower's backfill.
const followGoal = "≥ 0.8× the import of the same trades"

// followRows measures the chain follower's backfill (the follow group): a go-ethereum simulated
// chain, built in this process with the real Uniswap V2 factory and pairs and served over
// JSON-RPC on a loopback HTTP port, is followed from block 0 into a fresh database by the
// worker's FollowChain activity (the source, the ingest path and the checkpoint, without the
// Temporal round trips between steps); the events it wrote are then imported from NDJSON by
// `tokenscope import` into another fresh database. Both rates count the trades written.
func (b *bench) followRows(ctx context.Context, size followSize) report.Row {
	row := report.Row{Op: "chain follower backfill (simulated chain over loopback JSON-RPC, Uniswap V2 swaps)",
		Data: fmt.Sprintf("%s swaps, %s pools", thousands(int64(size.swaps)), thousands(int64(size.pools))),
		Goal: &report.Goal{Text: followGoal, Baseline: 0, Metric: report.Rate, Min: 0.8}}
	fail := func(what string, err error) report.Row {
		b.logf("follow: %s: %v", what, err)
		row.Subject = report.Measure{Name: "FollowChain", Unit: "swaps/s", Errors: 1, Calls: 1, FirstError: what + ": " + err.Error()}
		return row
	}
	tb := &chainTB{}
	defer tb.close()
	built := time.Now()
	sim, err := buildChain(ctx, tb, size, b.logf)
	if err != nil {
		return fail("build the chain", err)
	}
	b.logf("follow: chain of %d blocks with %d swaps built in %s", sim.head, sim.swaps, time.Since(built).Round(time.Second))

	fdb, err := b.st.scratch(ctx, "follow")
	if err != nil {
		return fail("follow database", err)
	}
	defer fdb.drop()
	pool, err := postgres.Open(ctx, fdb.dbURL, 4)
	if err != nil {
		return fail("open the follow database", err)
	}
	defer pool.Close()
	node, err := evm.Dial(ctx, sim.chain.URL)
	if err != nil {
		return fail("dial the chain", err)
	}
	defer node.Close()
	store := postgres.NewIngestStore(pool)
	rec := &recordingIngest{next: ingest.New(store, wallClock{}, 0).Checkpointed(store)}
	acts := &workflows.ChainActivities{Sources: map[chain.Chain]ports.ChainSource{chain.Eth: evm.NewSource(node, sim.cfg)},
		Checkpoints: postgres.NewChainStore(pool), Ingest: rec, Clock: wallClock{}}
	start := time.Now()
	steps := 0
	for {
		r, err := acts.FollowChain(ctx, workflows.FollowStepInput{Chain: chain.Eth, StartBlock: 0, MaxRange: 2000})
		if err != nil {
			return fail("follow", err)
		}
		steps++
		if r.CaughtUp {
			break
		}
	}
	took := time.Since(start)
	var trades int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM trades WHERE chain = 'eth'").Scan(&trades); err != nil {
		return fail("count the followed trades", err)
	}
	row.Subject = report.Measure{Name: "FollowChain from block 0", Calls: trades, Unit: "swaps/s", Rate: float64(trades) / took.Seconds(), P50: took}
	b.logf("follow: %d trades in %s (%d steps, %s in the %d ingest transactions)", trades, took.Round(time.Millisecond), steps,
		rec.spent.Round(time.Millisecond), rec.calls)

	file := filepath.Join(b.st.dir, "follow.ndjson")
	if err := writeEvents(file, rec.events); err != nil {
		return fail("write the followed events", err)
	}
	defer os.Remove(file)
	idb, err := b.st.scratch(ctx, "followimport")
	if err != nil {
		return fail("import database", err)
	}
	defer idb.drop()
	out, _, _, err := idb.toolMeasured(ctx, "import", file)
	if err != nil {
		return fail("import", err)
	}
	m := importLine.FindStringSubmatch(out)
	if m == nil {
		return fail("import", fmt.Errorf("tokenscope import printed %q", out))
	}
	imported, _ := strconv.Atoi(m[2])
	secs, _ := strconv.ParseFloat(m[3], 64)
	itook := time.Duration(secs * float64(time.Second))
	row.Baselines = []report.Measure{{Name: "tokenscope import of the same events (NDJSON)", Calls: imported, Unit: "swaps/s",
		Rate: float64(imported) / itook.Seconds(), P50: itook}}
	row.Note = fmt.Sprintf("%s swaps from %d wallets in %d blocks (%d swaps a block) over %s V2 pools, built in this process "+
		"before the timing (%s); the follower's time covers every eth_getLogs over HTTP, the JSON-RPC batches of headers, "+
		"transaction lookups (each swap's sender) and eth_calls (new pairs and tokens), the mapping and %d ingest transactions "+
		"(%s of it; the next range is read while one is written), in %d FollowChain steps of up to 2,000 blocks; the import's is its own stream time over the %s events the follower wrote; the p50 column "+
		"holds each total time; %d swaps made, %d trades followed, %d imported",
		thousands(int64(sim.swaps)), size.wallets, sim.head, size.perBlock, thousands(int64(size.pools)), sim.took.Round(time.Second),
		rec.calls, rec.spent.Round(time.Millisecond), steps, thousands(int64(len(rec.events))), sim.swaps, trades, imported)
	if trades != sim.swaps || imported != trades {
		row.Subject.Errors, row.Subject.FirstError = 1, fmt.Sprintf("%d swaps made, %d trades followed, %d imported", sim.swaps, trades, imported)
	}
	b.logf("follow: import of the same events: %d trades in %s", imported, itook.Round(time.Millisecond))
	return row
}

// scratch is a stack on a new empty database of the run (name suffix), migrated; drop removes it.
func (s *stack) scratch(ctx context.Context, suffix string) (*stack, error) {
	c := *s
	c.dbName = s.dbName + "_" + suffix
	var err error
	if c.dbURL, err = withDatabase(s.adminURL, c.dbName); err != nil {
		return nil, err
	}
	if err := c.createDatabase(ctx); err != nil {
		return nil, err
	}
	if _, err := c.tool(ctx, "migrate"); err != nil {
		_ = c.dropDatabase()
		return nil, err
	}
	return &c, nil
}

func (s *stack) drop() {
	if err := s.dropDatabase(); err != nil {
		logf("drop database %s: %v", s.dbName, err)
	}
}

// recordingIngest passes the follower's batches on, keeping their events (for the import of the
// same events) and the time spent in them.
type recordingIngest struct {
	next   ports.CheckpointedIngester
	events []chainevent.Event
	spent  time.Duration
	calls  int
}

func (r *recordingIngest) IngestThrough(ctx context.Context, evs []chainevent.Event, cp chainevent.Checkpoint) (chainevent.Result, error) {
	start := time.Now()
	res, err := r.next.IngestThrough(ctx, evs, cp)
	r.spent += time.Since(start)
	r.calls++
	if err == nil {
		r.events = append(r.events, evs...)
	}
	return res, err
}

func writeEvents(file string, evs []chainevent.Event) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	enc := ndjson.NewEncoder(w)
	for _, e := range evs {
		if err := enc.Encode(e); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// simChain is the chain the follow rows read.
type simChain struct {
	chain *evmtest.Chain
	cfg   dexlog.Config
	swaps int
	head  int64
	took  time.Duration
}

// chainTB is evmtest's TB for a program: the first failure is kept and ends the building (a
// panic buildChain recovers); cleanups run at close.
type chainTB struct {
	err      error
	cleanups []func()
}

type chainFailed struct{}

func (t *chainTB) Helper() {}
func (t *chainTB) Errorf(format string, args ...any) {
	if t.err == nil {
		t.err = fmt.Errorf(format, args...)
	}
}
func (t *chainTB) FailNow()         { panic(chainFailed{}) }
func (t *chainTB) Cleanup(f func()) { t.cleanups = append(t.cleanups, f) }
func (t *chainTB) close() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
}

// buildChain makes the chain (it stops between blocks when ctx ends): WETH and USDC, a WETH/USDC stable pool at 3,000 USDC per WETH,
// pools−1 tokens each in a pool with 100 WETH and 1,000,000 of it, wallets holding 1,000 WETH
// each, a first swap of 0.1 WETH in each pool by the deployer, then the swaps, perBlock a block: mostly buys of a pool's token for 0.1 WETH, a sell of
// half of what the wallet holds of it every third time it has some, and every 50th swap a sale
// of 0.1 WETH for USDC in the stable pool (the ETH price moves).
func buildChain(ctx context.Context, tb *chainTB, size followSize, logf func(string, ...any)) (sim simChain, err error) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(chainFailed); !ok {
				panic(r)
			}
			err = tb.err
		}
	}()
	start := time.Now()
	keys := make([]*ecdsa.PrivateKey, size.wallets)
	for i := range keys {
		keys[i] = evmtest.NewKey(tb)
	}
	c := evmtest.NewChain(tb, true, keys...)
	m := evmtest.NewMarket(tb, c)
	weth := m.Token("Wrapped Ether", "WETH", 10_000_000)
	usdc := m.Token("USD Coin", "USDC", 1_000_000_000)
	stable := m.Pair(weth, usdc)
	m.Liquidity(stable, weth, evmtest.Units(10_000), usdc, evmtest.Units(30_000_000))
	tokens := m.Tokens(size.pools-1, 1_000_000_000)
	pairs := m.Pairs(weth, tokens)
	m.LiquidityEach(pairs, weth, evmtest.Units(100), tokens, evmtest.Units(1_000_000))
	for i, k := range keys {
		m.Transfer(m.Deployer, weth, evmtest.Addr(k), evmtest.Units(1_000))
		if i%200 == 199 {
			m.Commit()
		}
	}
	m.Commit()
	// A swap that writes a new storage slot (a pair's first: its price accumulators; a wallet's
	// first of a token: its balance) costs about 400k gas on this chain, the others about 110k:
	// the deployer swaps once in each pool first, and the measured swaps get 600k each, 60 to a
	// block (under the 30M gas target, so the base fee does not climb).
	tenth := new(big.Int).Div(evmtest.Units(1), big.NewInt(10))
	made := 0
	for i, p := range append([]common.Address{stable}, pairs...) {
		m.Swap(m.Deployer, p, weth, tenth)
		made++
		if i%50 == 49 {
			m.Commit()
		}
	}
	m.Commit()
	logf("follow: %d pools deployed in %s", size.pools, time.Since(start).Round(time.Second))
	c.TxGas = 600_000
	held := map[[2]int]*big.Int{} // wallet, pool → tokens held
	for n := range size.swaps {
		w := n % len(keys)
		if n%50 == 49 {
			m.Swap(keys[w], stable, weth, tenth)
		} else {
			p := (n*7919 + w) % len(pairs)
			h := held[[2]int{w, p}]
			if h != nil && h.Sign() > 0 && n%3 == 0 {
				half := new(big.Int).Div(h, big.NewInt(2))
				m.Swap(keys[w], pairs[p], tokens[p], half)
				h.Sub(h, half)
			} else {
				s := m.Swap(keys[w], pairs[p], weth, tenth)
				if h == nil {
					h = new(big.Int)
					held[[2]int{w, p}] = h
				}
				h.Add(h, s.AmountOut)
			}
		}
		if n%size.perBlock == size.perBlock-1 || n == size.swaps-1 {
			m.Commit()
			if ctx.Err() != nil { // Ctrl-C: the run's databases are dropped on the way out
				return simChain{}, ctx.Err()
			}
		}
		if n%10_000 == 9_999 {
			logf("follow: %d swaps made", n+1)
		}
	}
	head := m.Commit()
	lower := func(a common.Address) string { return evmtest.Lower(a) }
	return simChain{chain: c, cfg: dexlog.Config{Chain: chain.Eth, Native: lower(weth), Stables: []string{lower(usdc)}, StablePool: lower(stable)},
		swaps: made + size.swaps, head: head.Number.Int64(), took: time.Since(start)}, nil
}
