// The market engine: what an ingest batch (IngestStore.Apply, chainevent.go) derives after writing its
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
	"hash/fnv"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/tokenscope/tokenscope/adapters/postgres/internal/dbsqlc"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
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

// derivedStateLock guards derived market state. Its writers (ingest batches, flushes, window
// refreshes, position re-derivation) lock token_market, token_stats and positions rows of many
// tokens in different orders (a batch upserts market rows before its windows; a refresh writes
// windows and then the 24h figures on token_market), which deadlocked under `make run`'s live
// trading while nothing serialised them. Every derived row belongs to one chain, so the lock is
// one per chain: a writer holds the lock of each chain it writes (transaction-scoped advisory
// locks, taken in chain order at the start of the transaction, so two writers never wait on
// each other in a cycle), and writers of different chains run side by side on their own
// backends. All of them also hold derivedStateLock itself in shared mode: a process of an
// earlier version, which takes it exclusively, still excludes them all. Readers take nothing.
const derivedStateLock = 7_346_502

// chainLockKey is the advisory lock key of c's derived state: derivedStateLock in the high
// half, a hash of the chain in the low half (a collision only serialises two chains).
func chainLockKey(c chain.Chain) int64 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(c))
	return derivedStateLock<<32 | int64(h.Sum32())
}

// A chain's derived-state lock is held exclusively by every writer of its derived state except
// two kinds, which hold it shared and exclude only their own kind with a second lock each:
//
//   - a stored-only batch (ApplyPending of a batch that defers its derivations, deferBelow)
//     writes events, lists of trades and labels, and marks, and no derived row; it holds the chain's
//     store lock exclusively, so the chain's stored-only batches apply one at a time (a batch's
//     COPY into trades relies on no other insert of the chain's trades meanwhile);
//   - a flush holds the chain's flush lock exclusively and derives in repeatable-read
//     transactions: it sees the trades and lists committed before it started, and nothing a
//     stored-only batch commits while it runs (such a batch's trades wait, listed, for the next
//     flush).
//
// So a live stream's batches are stored while the chain's flush derives the previous ones.
const (
	storeLockHigh = derivedStateLock + 1
	flushLockHigh = derivedStateLock + 2
)

// chainSubLockKey is the key of c's store or flush lock (high: storeLockHigh or flushLockHigh).
func chainSubLockKey(high int64, c chain.Chain) int64 {
	return high<<32 | chainLockKey(c)&0xffffffff
}

// lockStoredOnly takes, in tx, the locks of a stored-only batch of chains: derivedStateLock and
// each chain's lock shared, and each chain's store lock exclusively, in chain order.
func lockStoredOnly(ctx context.Context, tx pgx.Tx, chains ...chain.Chain) error {
	return lockChains(ctx, tx, storeLockHigh, chains)
}

// lockChains takes derivedStateLock shared, then, in chain order, each chain's lock: exclusively
// when high is 0, else shared followed by the chain's second lock of kind high (storeLockHigh,
// flushLockHigh) exclusively.
func lockChains(ctx context.Context, tx pgx.Tx, high int64, chains []chain.Chain) error {
	q := dbsqlc.New()
	if err := q.AdvisoryXactLockShared(ctx, tx, derivedStateLock); err != nil {
		return fmt.Errorf("lock derived state: %w", err)
	}
	lock := q.AdvisoryXactLock
	if high != 0 {
		lock = q.AdvisoryXactLockShared
	}
	sorted := slices.Clone(chains)
	slices.Sort(sorted)
	for _, c := range slices.Compact(sorted) {
		if err := lock(ctx, tx, chainLockKey(c)); err != nil {
			return fmt.Errorf("lock derived state of %s: %w", c, err)
		}
		if high == 0 {
			continue
		}
		if err := q.AdvisoryXactLock(ctx, tx, chainSubLockKey(high, c)); err != nil {
			return fmt.Errorf("lock derived state of %s (%x): %w", c, high, err)
		}
	}
	return nil
}

// lockAsFlush takes, in tx, the locks a flush holds (derivedStateLock and each chain's lock
// shared, each chain's flush lock exclusively, in chain order), for a writer of derived rows that
// reads nothing a stored-only batch writes: a window refresh chunk (it recomputes windows from
// buckets, which only flushes write). Such a writer runs beside the chains' stored-only batches,
// one at a time with their flushes.
func lockAsFlush(ctx context.Context, tx pgx.Tx, chains ...chain.Chain) error {
	return lockChains(ctx, tx, flushLockHigh, chains)
}

// lockDerivedState takes, in tx, the derived-state locks of chains (in any order, repeats
// allowed): derivedStateLock shared, then each chain's lock in chain order.
func lockDerivedState(ctx context.Context, tx pgx.Tx, chains ...chain.Chain) error {
	return lockChains(ctx, tx, 0, chains)
}

// batchChains is every chain whose derived state b may write: the chains its events name.
// A red packet expiry names none; it writes only its packet's row, which the store locks.
func batchChains(b chainevent.Batch) []chain.Chain {
	var cs []chain.Chain
	for _, e := range b.TokensCreated {
		cs = append(cs, e.Token.Chain)
	}
	for _, e := range b.TokensMigrated {
		cs = append(cs, e.Chain)
	}
	for _, e := range b.PoolsCreated {
		cs = append(cs, e.Pool.Chain)
	}
	for _, t := range b.Trades {
		cs = append(cs, t.Chain)
	}
	for _, s := range b.Snapshots {
		cs = append(cs, s.Chain)
	}
	for _, e := range b.RedPacketsCreated {
		cs = append(cs, e.Packet.Chain)
	}
	for _, e := range b.Claims {
		cs = append(cs, e.Claim.Chain)
	}
	for _, e := range b.Labels {
		cs = append(cs, e.Chain)
	}
	slices.Sort(cs)
	return slices.Compact(cs)
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

// chainsOfRefs is the chains of refs (repeats included).
func chainsOfRefs(refs []ports.TokenRef) []chain.Chain {
	cs := make([]chain.Chain, len(refs))
	for i, r := range refs {
		cs[i] = r.Chain
	}
	return cs
}
