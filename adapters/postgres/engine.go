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
