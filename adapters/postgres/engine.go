// The market engine: what an ingest batch (IngestStore.Apply, ingest.go) derives after writing its
// events, and what the refresh loop keeps current; docs/engine.md describes it. By responsibility:
//
//   - engine_positions.go: the batch's new trades folded into wallet_positions (position.go holds
//     the row, its re-derivation and its upsert, shared with the calculate-pnl job);
//   - engine_market.go: token_market of every touched token (deriveMarket);
//   - engine_window.go: token_stats, the windows of a batch and of a refresh chunk;
//   - engine_derive.go: the pure steps of both, no SQL (a market row, a holder's groups, a
//     token's windows), with the formulas of domain/stats;
//   - refresh.go: the window refresh rounds (IngestStore.RefreshWindows);
//   - ranking.go: the hot-token rankings' reads and writes;
//   - this file: what they share, the derived-state lock.

package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/tokenscope/tokenscope/adapters/postgres/internal/dbsqlc"
	"github.com/tokenscope/tokenscope/ports"
)

// refArrays splits refs into the parallel chain and address arrays the engine's unnest reads take.
func refArrays(refs []ports.TokenRef) ([]string, []string) {
	cs, as := make([]string, len(refs)), make([]string, len(refs))
	for i, r := range refs {
		cs[i], as[i] = string(r.Chain), r.Address
	}
	return cs, as
}

// derivedStateLock is the transaction-scoped advisory lock every writer of derived market state
// (ingest batches, window refreshes) holds. Those writers lock token_market, token_stats and
// positions rows of many tokens in different orders (a batch upserts market rows before its
// windows; a refresh writes windows and then the 24h figures on token_market), which deadlocked
// under `make run`'s live trading. Serialising them costs little: a batch is already one
// transaction over every token it touches. Readers never take it.
const derivedStateLock = 7_346_502

func lockDerivedState(ctx context.Context, tx pgx.Tx) error {
	if err := dbsqlc.New().AdvisoryXactLock(ctx, tx, derivedStateLock); err != nil {
		return fmt.Errorf("lock derived state: %w", err)
	}
	return nil
}

// keyedJoins makes the rest of tx join by index probes only (no hash or merge joins). Every read
// and write of an ingest batch or flush joins a batch-sized set of keys (an unnest of arrays, a
// staging table) against a large table by that table's key or one of its indexes. During a bulk
// import the tables grow faster than autovacuum re-analyzes them, and on the stale statistics the
// planner hashed the whole of trades, wallet_positions, tokens or token_holder_groups once per
// statement instead: per batch, a scan that grows with the database.
func keyedJoins(ctx context.Context, tx pgx.Tx) error {
	// hand-built: planner settings for this transaction, not a query.
	if _, err := tx.Exec(ctx, `SET LOCAL enable_hashjoin = off; SET LOCAL enable_mergejoin = off`); err != nil {
		return fmt.Errorf("planner settings: %w", err)
	}
	return nil
}
