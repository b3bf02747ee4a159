package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tokenscope/tokenscope/adapters/postgres/internal/dbsqlc"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/ports"
)

// WalletRederiver implements ports.WalletRederiver for the calculate-pnl job.
type WalletRederiver struct {
	pool *pgxpool.Pool
	q    *dbsqlc.Queries
}

var _ ports.WalletRederiver = (*WalletRederiver)(nil)

// NewWalletRederiver builds it over pool.
func NewWalletRederiver(pool *pgxpool.Pool) *WalletRederiver {
	return &WalletRederiver{pool: pool, q: dbsqlc.New()}
}

// WalletTokens lists the tokens the wallet traded on c.
func (r *WalletRederiver) WalletTokens(ctx context.Context, c chain.Chain, wallet string) ([]string, error) {
	ts, err := r.q.WalletTradedTokens(ctx, r.pool, dbsqlc.WalletTradedTokensParams{Chain: string(c), Wallet: wallet})
	return ts, interpretError(err, "wallet tokens", wallet)
}

// RederivePosition replays every stored trade of the pair into a fresh position and its day
// marks, the way ingest rebuilds a pair hit by an out-of-order trade. The existing row is locked first, so an ingest
// batch touching the same pair either commits before the trades are read (and is included) or
// waits for this transaction.
func (r *WalletRederiver) RederivePosition(ctx context.Context, c chain.Chain, wallet, token string, now time.Time) (int, error) {
	n := 0
	err := pgx.BeginFunc(ctx, r.pool, func(tx pgx.Tx) error {
		// Serialised with ingest batches, which insert new pairs without a conflict check.
		if err := lockDerivedState(ctx, tx, c); err != nil {
			return err
		}
		// The pair is re-derived from its stored trades: those still waiting for the flush are
		// derived first (their buckets and holder totals with them).
		if err := deriveDeferredOf(ctx, tx, now, c); err != nil {
			return err
		}
		if err := r.q.LockPosition(ctx, tx, dbsqlc.LockPositionParams{Chain: string(c), Wallet: wallet, TokenAddress: token}); err != nil {
			return fmt.Errorf("lock position: %w", err)
		}
		k := posKey{c, wallet, token}
		row, replayed, err := rederivePosition(ctx, tx, k)
		if err != nil {
			return err
		}
		n = replayed
		if err := dropMarks(ctx, tx, k, row); err != nil {
			return err
		}
		if row == nil {
			return r.q.DeletePosition(ctx, tx, dbsqlc.DeletePositionParams{Chain: string(c), Wallet: wallet, TokenAddress: token})
		}
		rows, marks := newCopyRows(512), newCopyRows(256)
		row.copyTo(rows, k, now)
		row.copyMarks(marks, k)
		if err := writeMarks(ctx, tx, marks); err != nil {
			return err
		}
		return writePositions(ctx, tx, rows)
	})
	if err != nil {
		return 0, interpretError(err, "rederive position", wallet+"/"+token)
	}
	return n, nil
}
