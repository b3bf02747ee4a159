package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/adapters/postgres/pgtest"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/domain/trade"
)

// TestPendingBatchesWaitForTheFlush: a batch applied pending writes its trades, positions,
// buckets and window deltas (its trades count in the windows at once) but leaves the token's
// market data, marked in market_pending, to Flush; Flush derives it as if the batch had been
// applied whole, clears the marks and announces the tokens it derived; a second Flush has nothing
// to do. The refresh loop flushes first.
func TestPendingBatchesWaitForTheFlush(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	ctx := context.Background()
	v := following(t)
	s := postgres.NewIngestStore(pgtest.Pool(t))
	db := pgtest.Pool(t)
	count := func(sql string) (n int) {
		t.Helper()
		require.NoError(t, db.QueryRow(ctx, sql).Scan(&n))
		return n
	}

	_, err := s.ApplyPending(ctx, chainevent.NewBatch([]chainevent.Event{tokenEvent(chain.Sol, "tok1"),
		swap("a", trade.Buy, "10", "2", 30*time.Second, "p1")}), now)
	require.NoError(t, err)
	assert.Equal(t, 1, count(`SELECT count(*) FROM trades`), "operation 3 serves the trade at once")
	assert.Equal(t, 1, count(`SELECT count(*) FROM trade_pending`), "the trade is listed for the flush")
	assert.Equal(t, 1, count(`SELECT count(*) FROM market_pending WHERE windows`), "the new token is marked")
	assert.Equal(t, 0, count(`SELECT count(*) FROM wallet_positions`), "its position waits for the flush")
	assert.Equal(t, 0, count(`SELECT count(*) FROM token_buckets`), "so do its buckets")
	assert.Equal(t, 0, count(`SELECT count(*) FROM token_stats WHERE address = 'tok1'`), "and the new token's windows")
	assert.Equal(t, 0, count(`SELECT count(*) FROM token_market`), "and its market row")

	before := v.TokensVersion(chain.Sol, []string{"tok1"})
	n, err := s.Flush(ctx, now)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.Greater(t, v.TokensVersion(chain.Sol, []string{"tok1"}), before, "the flush announces the tokens it derived")
	assert.Equal(t, 0, count(`SELECT count(*) FROM market_pending`))
	assert.Equal(t, 0, count(`SELECT count(*) FROM trade_pending`))
	assert.Equal(t, 1, count(`SELECT count(*) FROM wallet_positions`))
	assert.Equal(t, 1, count(`SELECT trades FROM token_stats WHERE address = 'tok1' AND window_name = '1m'`))
	assert.Equal(t, 1, count(`SELECT holders FROM token_market WHERE address = 'tok1'`))
	n, err = s.Flush(ctx, now)
	require.NoError(t, err)
	assert.Zero(t, n)

	// Trades another batch listed, on a token already derived, wait for the flush too.
	_, err = s.ApplyPending(ctx, chainevent.NewBatch([]chainevent.Event{swap("b", trade.Buy, "5", "3", 20*time.Second, "p2")}), now)
	require.NoError(t, err)
	assert.Equal(t, 0, count(`SELECT count(*) FROM market_pending`), "a token only traded is not marked: its trades are listed")
	assert.Equal(t, 1, count(`SELECT trades FROM token_stats WHERE address = 'tok1' AND window_name = '1m'`))
	assert.Equal(t, 1, count(`SELECT holders FROM token_market WHERE address = 'tok1'`))
	// A list left behind (a stream that died before its flush) is derived by the next refresh round.
	_, err = s.RefreshWindows(ctx, now)
	require.NoError(t, err)
	assert.Equal(t, 0, count(`SELECT count(*) FROM trade_pending`))
	assert.Equal(t, 2, count(`SELECT count(*) FROM wallet_positions`))
	assert.Equal(t, 2, count(`SELECT trades FROM token_stats WHERE address = 'tok1' AND window_name = '1m'`))
	assert.Equal(t, 2, count(`SELECT holders FROM token_market WHERE address = 'tok1'`))
}

// TestFlushDerivesEveryChain: tokens left pending on several chains are all derived by one
// Flush (each chain on its own connection), and their marks are dropped.
func TestFlushDerivesEveryChain(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	ctx := context.Background()
	db := pgtest.Pool(t)
	s := postgres.NewIngestStore(db)
	ethTrade := swap("w", trade.Buy, "4", "3", 10*time.Second, "0xe1")
	ethTrade.Chain, ethTrade.TokenAddress, ethTrade.PoolAddress = chain.Eth, "0xtok", "0xpool"
	_, err := s.ApplyPending(ctx, chainevent.NewBatch([]chainevent.Event{tokenEvent(chain.Sol, "tok1"), tokenEvent(chain.Eth, "0xtok"),
		tokenEvent(chain.Bsc, "0xbsc"), swap("a", trade.Buy, "10", "2", 30*time.Second, "p1"), ethTrade}), now)
	require.NoError(t, err)
	n, err := s.Flush(ctx, now)
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	var pending, markets int
	require.NoError(t, db.QueryRow(ctx, `SELECT count(*) FROM market_pending`).Scan(&pending))
	require.NoError(t, db.QueryRow(ctx, `SELECT count(*) FROM token_market WHERE (chain, address) IN (('sol','tok1'),('eth','0xtok'),('bsc','0xbsc'))`).Scan(&markets))
	assert.Zero(t, pending)
	assert.Equal(t, 3, markets)
	var trades int
	require.NoError(t, db.QueryRow(ctx, `SELECT trades FROM token_stats WHERE chain = 'eth' AND address = '0xtok' AND window_name = '1m'`).Scan(&trades))
	assert.Equal(t, 1, trades)
}
