package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/tokenscope/tokenscope/domain/chain"
)

// LockDerivedState takes, in tx, what an ingest batch over chains takes.
func LockDerivedState(ctx context.Context, tx pgx.Tx, chains ...chain.Chain) error {
	return lockDerivedState(ctx, tx, chains...)
}

// DerivedStateLock is the key an earlier version took exclusively for every writer.
const DerivedStateLock = derivedStateLock
