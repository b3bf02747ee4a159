package postgres_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/ndjson"
	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/adapters/postgres/pgtest"
	"github.com/tokenscope/tokenscope/app/ingest"
	"github.com/tokenscope/tokenscope/app/simulate"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/trade"
	"github.com/tokenscope/tokenscope/internal/fakeclock"
)

// positionRowSQL is one wallet_positions row as jsonb, without the time it was written.
const positionRowSQL = `SELECT (to_jsonb(p) - 'updated_at_ms')::text FROM wallet_positions p
	WHERE chain = $1 AND wallet = $2 AND token_address = $3`

// positionSnapshot is the (sol, wallet, tok1) row as jsonb text; "" when there is none.
func positionSnapshot(t *testing.T, wallet string) string {
	t.Helper()
	var s string
	err := pgtest.Pool(t).QueryRow(context.Background(), positionRowSQL, "sol", wallet, "tok1").Scan(&s)
	if errors.Is(err, pgx.ErrNoRows) {
		return ""
	}
	require.NoError(t, err)
	return s
}

// assertPosition checks the (sol, wallet, tok1) row equals want, numbers by value (jsonb
// equality compares numerics as numbers, so 100 and 100.0 are the same position).
func assertPosition(t *testing.T, wallet, want string) {
	t.Helper()
	var same bool
	var got string
	require.NoError(t, pgtest.Pool(t).QueryRow(context.Background(),
		`SELECT $4::jsonb = (to_jsonb(p) - 'updated_at_ms'), (to_jsonb(p) - 'updated_at_ms')::text FROM wallet_positions p
		WHERE chain = $1 AND wallet = $2 AND token_address = $3`, "sol", wallet, "tok1", want).Scan(&same, &got))
	assert.True(t, same, "position\n got %s\nwant %s", got, want)
}

func batchOf(events ...chainevent.Event) chainevent.Batch { return chainevent.NewBatch(events) }

// corruptPosition overwrites the figures of the (sol, wallet, tok1) row with nonsense.
func corruptPosition(t *testing.T, wallet string) {
	t.Helper()
	tag, err := pgtest.Pool(t).Exec(context.Background(), `UPDATE wallet_positions SET balance = 999, cost_usd = 1,
		realized_usd = -5, buys = 0, sells = 7, last_tx_signature = 'bogus', first_block_height = NULL
		WHERE chain = 'sol' AND wallet = $1 AND token_address = 'tok1'`, wallet)
	require.NoError(t, err)
	require.Equal(t, int64(1), tag.RowsAffected())
}

// seedRederive ingests wallet w's three trades of the ingest suite's example (buy 100 at $1,
// buy 100 at $3, sell 150 at $4) and returns the position the engine derived.
func seedRederive(t *testing.T) (s *postgres.IngestStore, want string) {
	t.Helper()
	pgtest.Truncate(t, engineTables...)
	s = postgres.NewIngestStore(pgtest.Pool(t))
	apply(t, s, tokenEvent(chain.Sol, "tok1"), tokenEvent(chain.Sol, "tok2"), tokenEvent(chain.Eth, "tokE"))
	apply(t, s, swap("w", trade.Buy, "100", "1", 40*time.Second, "a"), swap("w", trade.Buy, "100", "3", 30*time.Second, "b"),
		swap("w", trade.Sell, "150", "4", 20*time.Second, "c"))
	want = positionSnapshot(t, "w")
	require.NotEmpty(t, want)
	p := position(t, "w")
	require.Equal(t, "50", p.Balance.String()) // the ingest suite's worked example
	require.True(t, dec("300").Equal(p.RealizedProfitInUSD))
	return s, want
}

func TestWalletRederiverWalletTokens(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	s, _ := seedRederive(t)
	other := swap("w", trade.Buy, "1", "1", 10*time.Second, "d")
	other.TokenAddress = "tok2"
	eth := swap("w", trade.Buy, "1", "1", 10*time.Second, "e")
	eth.Chain, eth.TokenAddress = chain.Eth, "tokE"
	apply(t, s, other, eth, swap("x", trade.Buy, "1", "1", 10*time.Second, "f"))

	r := postgres.NewWalletRederiver(pgtest.Pool(t))
	for _, tc := range []struct {
		c      chain.Chain
		wallet string
		want   []string
	}{
		{chain.Sol, "w", []string{"tok1", "tok2"}},
		{chain.Eth, "w", []string{"tokE"}},
		{chain.Sol, "x", []string{"tok1"}},
		{chain.Sol, "nobody", nil},
	} {
		got, err := r.WalletTokens(context.Background(), tc.c, tc.wallet)
		require.NoError(t, err)
		if tc.want == nil {
			assert.Empty(t, got, "%s/%s", tc.c, tc.wallet)
			continue
		}
		assert.Equal(t, tc.want, got, "%s/%s", tc.c, tc.wallet)
	}
}

func TestWalletRederiverRederivePosition(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	ctx := context.Background()
	r := postgres.NewWalletRederiver(pgtest.Pool(t))

	t.Run("a damaged position is rebuilt from the trades", func(t *testing.T) {
		_, want := seedRederive(t)
		corruptPosition(t, "w")
		n, err := r.RederivePosition(ctx, chain.Sol, "w", "tok1", now)
		require.NoError(t, err)
		assert.Equal(t, 3, n)
		assertPosition(t, "w", want)
	})

	t.Run("a missing position is recreated", func(t *testing.T) {
		_, want := seedRederive(t)
		_, err := pgtest.Pool(t).Exec(ctx, `DELETE FROM wallet_positions WHERE wallet = 'w'`)
		require.NoError(t, err)
		n, err := r.RederivePosition(ctx, chain.Sol, "w", "tok1", now)
		require.NoError(t, err)
		assert.Equal(t, 3, n)
		assertPosition(t, "w", want)
	})

	t.Run("a position without trades is removed", func(t *testing.T) {
		seedRederive(t)
		_, err := pgtest.Pool(t).Exec(ctx, `INSERT INTO wallet_positions (chain, wallet, token_address, balance, buys)
			VALUES ('sol', 'ghost', 'tok1', 5, 1)`)
		require.NoError(t, err)
		n, err := r.RederivePosition(ctx, chain.Sol, "ghost", "tok1", now)
		require.NoError(t, err)
		assert.Zero(t, n)
		assert.Empty(t, positionSnapshot(t, "ghost"))
	})

	t.Run("a cancelled context changes nothing", func(t *testing.T) {
		seedRederive(t)
		corruptPosition(t, "w")
		damaged := positionSnapshot(t, "w")
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_, err := r.RederivePosition(cctx, chain.Sol, "w", "tok1", now)
		assert.Equal(t, fault.KindUnavailable, fault.KindOf(err), "%v", err)
		assertPosition(t, "w", damaged)
	})
}

// TestWalletRederiverWaitsForAnIngestOfThePair: an ingest batch that has written a new trade of
// the pair but not committed holds the position row; the re-deriver queues on that row and,
// once the batch commits, replays the new trade too. The batch is held half-way by the test's
// lock on the token's market row, which the batch updates after the positions.
func TestWalletRederiverWaitsForAnIngestOfThePair(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	ctx := context.Background()
	s, _ := seedRederive(t)
	r := postgres.NewWalletRederiver(pgtest.Pool(t))

	release := holdRowLock(t, `SELECT 1 FROM token_market WHERE chain = 'sol' AND address = 'tok1' FOR UPDATE`)
	var wg sync.WaitGroup
	var ingestErr, rederiveErr error
	var replayed int
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, ingestErr = s.Apply(ctx, batchOf(swap("w", trade.Buy, "10", "5", 10*time.Second, "late")), now)
	}()
	awaitLockWaiters(t, 1) // the batch, at the market row
	wg.Add(1)
	go func() {
		defer wg.Done()
		replayed, rederiveErr = r.RederivePosition(ctx, chain.Sol, "w", "tok1", now)
	}()
	awaitLockWaiters(t, 2) // and the re-deriver, at the position row
	release()
	wg.Wait()
	require.NoError(t, ingestErr)
	require.NoError(t, rederiveErr)
	assert.Equal(t, 4, replayed, "the batch's trade is replayed")
	// 50 left costing $100, plus 10 bought at $5: 60 costing $150; realized stays $300.
	p := position(t, "w")
	assert.Equal(t, "60", p.Balance.String())
	assert.True(t, dec("150").Equal(p.CostInUSD), "cost %s", p.CostInUSD)
	assert.True(t, dec("300").Equal(p.RealizedProfitInUSD), "realized %s", p.RealizedProfitInUSD)
	assert.Equal(t, int64(3), p.Buys)
}

// TestWalletRederiverConcurrentRederivesAgree: re-derivations of one pair queued together run
// one after the other and all land on the same position.
func TestWalletRederiverConcurrentRederivesAgree(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	_, want := seedRederive(t)
	corruptPosition(t, "w")
	r := postgres.NewWalletRederiver(pgtest.Pool(t))
	const callers = 6

	release := holdRowLock(t, `SELECT 1 FROM wallet_positions WHERE chain = 'sol' AND wallet = 'w' AND token_address = 'tok1' FOR UPDATE`)
	ns, errs := make([]int, callers), make([]error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ns[i], errs[i] = r.RederivePosition(context.Background(), chain.Sol, "w", "tok1", now)
		}()
	}
	awaitLockWaiters(t, callers)
	release()
	wg.Wait()
	for i := range callers {
		require.NoError(t, errs[i], "caller %d", i)
		assert.Equal(t, 3, ns[i], "caller %d", i)
	}
	assertPosition(t, "w", want)
}

// TestRederiveAndIngestWriteTheSameRows: the calculate-pnl job's re-derivation and ingest share
// one position path, so for the same trades they write the same wallet_positions rows, every
// column (updated_at_ms included: both write at now). The rows are re-derived after being
// deleted and after every column but the key was overwritten, so a column that only ingest
// wrote would show as a default or as the overwritten value. Each case has a database of its
// own, so the two run at once; the re-derivations of one chain run in order, the chains side by
// side (each holds its own chain's lock).
func TestRederiveAndIngestWriteTheSameRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	type pair struct{ Chain, Wallet, Token string }
	// seed ingests the simulated trades into t's database and returns every row as a jsonb
	// array and the pairs traded.
	seed := func(t *testing.T) (pool *pgxpool.Pool, want string, pairs []pair) {
		t.Helper()
		pool = pgtest.Fresh(t)
		var file bytes.Buffer
		sim := simulate.New(simulate.Config{Seed: 7, Tokens: 8, Wallets: 60, Trades: 1500, Start: now.Add(-3 * time.Hour), End: now})
		require.NoError(t, sim.Backfill(ctx, simulate.EncoderSink{Enc: ndjson.NewEncoder(&file)}))
		_, err := ingest.New(postgres.NewIngestStore(pool), fakeclock.At(now), 300).Stream(ctx, ndjson.NewDecoder(bytes.NewReader(file.Bytes())), nil)
		require.NoError(t, err)
		// One pair whose trades arrive out of order, so ingest's own re-derivation is compared too.
		s := postgres.NewIngestStore(pool)
		apply(t, s, tokenEvent(chain.Sol, "tok1"))
		apply(t, s, swap("w", trade.Sell, "150", "4", 20*time.Second, "c"))
		apply(t, s, swap("w", trade.Buy, "100", "3", 30*time.Second, "b"))
		require.Equal(t, 1, apply(t, s, swap("w", trade.Buy, "100", "1", 40*time.Second, "a")).Rederived)

		require.NoError(t, pool.QueryRow(ctx, `SELECT jsonb_agg(to_jsonb(p))::text FROM wallet_positions p`).Scan(&want))
		require.Greater(t, strings.Count(want, `"wallet"`), 50)
		q, err := pool.Query(ctx, `SELECT DISTINCT chain, wallet, token_address FROM trades`)
		require.NoError(t, err)
		pairs, err = pgx.CollectRows(q, pgx.RowToStructByPos[pair])
		require.NoError(t, err)
		return pool, want, pairs
	}
	// diff lists the rows that differ from want, numbers compared by value as jsonb does (ingest
	// may store 3 where a re-derivation stores 3.000).
	diff := func(t *testing.T, pool *pgxpool.Pool, want string) string {
		t.Helper()
		var d string
		require.NoError(t, pool.QueryRow(ctx, `SELECT COALESCE(string_agg(format(E'want %s\n got %s', w.r, g.r), E'\n'), '')
			FROM jsonb_array_elements($1::jsonb) AS w(r)
			FULL JOIN (SELECT to_jsonb(p) AS r FROM wallet_positions p) g ON w.r->>'chain' = g.r->>'chain'
				AND w.r->>'wallet' = g.r->>'wallet' AND w.r->>'token_address' = g.r->>'token_address'
			WHERE w.r IS DISTINCT FROM g.r`, want).Scan(&d))
		return d
	}
	rederiveAll := func(t *testing.T, pool *pgxpool.Pool, pairs []pair) {
		t.Helper()
		r := postgres.NewWalletRederiver(pool)
		byChain := map[string][]pair{}
		for _, p := range pairs {
			byChain[p.Chain] = append(byChain[p.Chain], p)
		}
		var wg sync.WaitGroup
		errs := make(chan error, len(pairs))
		for _, ps := range byChain {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for _, p := range ps {
					if _, err := r.RederivePosition(ctx, chain.Chain(p.Chain), p.Wallet, p.Token, now); err != nil {
						errs <- fmt.Errorf("%s/%s/%s: %w", p.Chain, p.Wallet, p.Token, err)
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	}

	t.Run("deleted rows", func(t *testing.T) {
		t.Parallel()
		pool, want, pairs := seed(t)
		_, err := pool.Exec(ctx, `DELETE FROM wallet_positions`)
		require.NoError(t, err)
		rederiveAll(t, pool, pairs)
		assert.Empty(t, diff(t, pool, want))
	})

	t.Run("every column overwritten", func(t *testing.T) {
		t.Parallel()
		pool, want, pairs := seed(t)
		q, err := pool.Query(ctx, `SELECT column_name, data_type FROM information_schema.columns
			WHERE table_schema = current_schema() AND table_name = 'wallet_positions'
			AND column_name NOT IN ('chain', 'wallet', 'token_address')`)
		require.NoError(t, err)
		cols, err := pgx.CollectRows(q, pgx.RowToStructByPos[struct{ Name, Type string }])
		require.NoError(t, err)
		var set []string
		for _, c := range cols {
			switch c.Type {
			case "text":
				set = append(set, c.Name+" = "+c.Name+" || 'x'")
			case "numeric", "bigint", "integer":
				set = append(set, c.Name+" = COALESCE("+c.Name+", 0) + 1")
			default:
				t.Fatalf("no way to overwrite %s of type %s", c.Name, c.Type)
			}
		}
		_, err = pool.Exec(ctx, `UPDATE wallet_positions SET `+strings.Join(set, ", "))
		require.NoError(t, err)
		require.NotEmpty(t, diff(t, pool, want))
		rederiveAll(t, pool, pairs)
		assert.Empty(t, diff(t, pool, want))
	})
}
