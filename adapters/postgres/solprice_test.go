package postgres_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/adapters/postgres/pgtest"
)

// The SOL price lookup inside the ingest transaction is zero before any sol trade, and a failed
// lookup is an error of its own instead of a silent zero that surfaces on the next statement.
func TestSOLPriceUSDReturnsItsError(t *testing.T) {
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
