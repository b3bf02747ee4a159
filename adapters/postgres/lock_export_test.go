package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tokenscope/tokenscope/domain/chain"
)

// LockDerivedState takes, in tx, what an ingest batch over chains takes.
func LockDerivedState(ctx context.Context, tx pgx.Tx, chains ...chain.Chain) error {
	return lockDerivedState(ctx, tx, chains...)
}

// DerivedStateLock is the key an earlier version took exclusively for every writer.
const DerivedStateLock = derivedStateLock

// LockFlush takes, on conn's session, c's locks as a flush holds them, and returns their release.
func LockFlush(ctx context.Context, conn *pgxpool.Conn, c chain.Chain) (func(), error) {
	return lockFlush(ctx, conn, c)
}

// WhenFlushTakes makes s run fn inside each flush transaction once it has taken its chain's
// trade lists, before it derives them.
func (s *IngestStore) WhenFlushTakes(fn func()) { s.flushTaken = fn }
