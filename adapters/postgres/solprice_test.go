package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/adapters/postgres/pgtest"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/domain/pool"
	"github.com/tokenscope/tokenscope/domain/trade"
)

// The SOL price lookup inside the ingest transaction is zero before any sol trade, and a failed
// lookup is an error of its own instead of a silent zero that surfaces on the next statement.
func TestSOLPriceUSDReturnsItsError(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	pool := pgtest.Pool(t)
	pgtest.Truncate(t, "trades")
	ctx := context.Background()

	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	p, err := postgres.SOLPriceUSD(ctx, tx)
	require.NoError(t, err)
	assert.True(t, p.IsZero(), "no sol trade yet: zero")

	// A failed statement aborts the transaction: the lookup must say so.
	_, err = tx.Exec(ctx, `SELECT 1/0`)
	require.Error(t, err)
	_, err = postgres.SOLPriceUSD(ctx, tx)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "read the SOL price")
}

// The SOL value of an eth or bsc pool is its USD value over the SOL price, divided by the one
// rule every ratio follows (18 places, half away from zero: decimal.DivRound(…, 18), div_round18
// in SQL), not at numeric's default precision (20 / 3 was 6.6666666666666667).
func TestTVLInSolOfOtherChainsIsDividedAt18Places(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	s := postgres.NewIngestStore(pgtest.Pool(t))
	solTrade := swap("w", trade.Buy, "1", "1", time.Minute, "solprice")
	solTrade.SideTokenPriceInUSD = dec("3")
	apply(t, s, solTrade)
	pc := chainevent.PoolCreated{Pool: pool.Pool{Chain: chain.Eth, Address: "0xpool", TokenAAddress: "0xtok", TokenBAddress: "0xweth"}}
	snap := chainevent.PoolSnapshot{Snapshot: pool.Snapshot{Chain: chain.Eth, PoolAddress: "0xpool", BlockHeight: 5,
		BlockTimestamp: now.UnixMilli(), SnapshotTime: now.UnixMilli(),
		TokenA: pool.Side{TokenAddress: "0xtok", VaultAmount: "1"}, TokenB: pool.Side{TokenAddress: "0xweth", VaultAmount: "1"},
		TVLInNative: dec("1"), TVLInUSD: dec("20")}}
	apply(t, s, tokenEvent(chain.Eth, "0xtok"), pc, snap)

	want := dec("20").DivRound(dec("3"), 18).String()
	require.Equal(t, "6.666666666666666667", want)
	var poolSol, maxSol, totalSol decimal.Decimal
	require.NoError(t, pgtest.Pool(t).QueryRow(context.Background(),
		`SELECT tvl_sol FROM pools WHERE chain = 'eth' AND address = '0xpool'`).Scan(&poolSol))
	require.NoError(t, pgtest.Pool(t).QueryRow(context.Background(),
		`SELECT max_pool_tvl_sol, total_tvl_sol FROM token_market WHERE chain = 'eth' AND address = '0xtok'`).Scan(&maxSol, &totalSol))
	assert.Equal(t, want, poolSol.String(), "pools.tvl_sol")
	assert.Equal(t, want, maxSol.String(), "token_market.max_pool_tvl_sol")
	assert.Equal(t, want, totalSol.String(), "token_market.total_tvl_sol")
}
