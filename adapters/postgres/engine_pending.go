package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tokenscope/tokenscope/adapters/postgres/internal/dbsqlc"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/ports"
)

// flushChunk is how many pending tokens one flush transaction derives.
const flushChunk = 5000

// markPending records refs in market_pending for the next Flush, with whether their windows are
// due (windowed).
func markPending(ctx context.Context, tx pgx.Tx, refs []ports.TokenRef, windowed map[ports.TokenRef]bool) error {
	if len(refs) == 0 {
		return nil
	}
	// In key order, as a flush takes and clears them: two transactions locking marks lock them in
	// one order.
	refs = slices.SortedFunc(slices.Values(refs), func(a, b ports.TokenRef) int {
		return cmp.Or(cmp.Compare(a.Chain, b.Chain), cmp.Compare(a.Address, b.Address))
	})
	cs, as := refArrays(refs)
	ws := make([]bool, len(refs))
	for i, r := range refs {
		ws[i] = windowed[r]
	}
	if err := dbsqlc.New().MarkPending(ctx, tx, dbsqlc.MarkPendingParams{Chains: cs, Addresses: as, Windows: ws}); err != nil {
		return fmt.Errorf("mark pending: %w", err)
	}
	return nil
}

// Flush derives the market data (and the windows, where due) of every pending token as of now,
// and drops their marks. Each chain with marks is flushed on its own connection, side by side
// with the others (the chains' derived state is locked per chain), in chunks of flushChunk
// tokens, one transaction each. It returns how many tokens it derived; on a failure, the first
// error (chunks committed before it stay committed).
func (s *IngestStore) Flush(ctx context.Context, now time.Time) (int, error) {
	chains, err := dbsqlc.New().PendingChains(ctx, s.pool, chain.Strings(chain.V2))
	if err != nil {
		return 0, interpretError(err, "flush market", "")
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		total    int
		firstErr error
	)
	for _, c := range chains {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := s.flushChain(ctx, chain.Chain(c), now)
			mu.Lock()
			defer mu.Unlock()
			total += n
			if firstErr == nil {
				firstErr = err
			}
		}()
	}
	wg.Wait()
	return total, firstErr
}

// flushChain flushes the pending tokens of c chunk by chunk, on one connection that holds c's
// flush locks (lockFlush) across the chunks. Each chunk is a repeatable-read transaction: it
// derives exactly the trades listed before it began, whatever stored-only batches of c commit
// while it runs (their trades are not in its snapshot, so neither a re-derived position nor a
// market row takes them in before their lists are derived). A chunk that fails to serialize
// against such a batch (both wrote one market mark) is run again.
func (s *IngestStore) flushChain(ctx context.Context, c chain.Chain, now time.Time) (int, error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return 0, interpretError(err, "flush market", "")
	}
	defer conn.Release()
	unlock, err := lockFlush(ctx, conn, c)
	if err != nil {
		return 0, interpretError(err, "flush market", "")
	}
	defer unlock()
	total := 0
	for {
		var n, marked int
		err := retryConflicts(ctx, func() error {
			return writeAnnouncedBy(ctx, repeatableRead{conn}, func(tx pgx.Tx) (marketChange, error) {
				refs, m, err := flushChunkIn(ctx, tx, c, now, s.flushTaken)
				n, marked = len(refs), m
				return tokensChanged(refs), err
			})
		})
		if err != nil {
			return total, interpretError(err, "flush market", "")
		}
		total += n
		if marked < flushChunk {
			return total, nil
		}
	}
}

// lockFlush takes, on conn's session, c's locks as a flush holds them (engine.go): the shared
// derivedStateLock and chain lock, and c's flush lock exclusively, in that order, before the
// flush's first transaction takes its snapshot (a repeatable-read transaction's snapshot is taken
// by its first statement, so the locks cannot be taken inside it). The returned function releases
// them; where a lock cannot be released (or taken), the connection is closed, which ends the
// session and every lock it holds.
func lockFlush(ctx context.Context, conn *pgxpool.Conn, c chain.Chain) (func(), error) {
	q := dbsqlc.New()
	drop := func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = conn.Conn().Close(cctx)
	}
	steps := []func() error{
		func() error { return q.AdvisoryLockShared(ctx, conn, derivedStateLock) },
		func() error { return q.AdvisoryLockShared(ctx, conn, chainLockKey(c)) },
		func() error { return q.AdvisoryLock(ctx, conn, chainSubLockKey(flushLockHigh, c)) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			drop()
			return nil, fmt.Errorf("lock derived state of %s for a flush: %w", c, err)
		}
	}
	return func() {
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		err := errors.Join(q.AdvisoryUnlock(uctx, conn, chainSubLockKey(flushLockHigh, c)),
			q.AdvisoryUnlockShared(uctx, conn, chainLockKey(c)),
			q.AdvisoryUnlockShared(uctx, conn, derivedStateLock))
		if err != nil {
			drop()
		}
	}, nil
}

// repeatableRead begins repeatable-read transactions on one connection (for writeAnnouncedBy).
type repeatableRead struct{ conn *pgxpool.Conn }

func (r repeatableRead) Begin(ctx context.Context) (pgx.Tx, error) {
	return r.conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
}

// conflictRetries is how many times a transaction that failed to serialize or deadlocked is run.
const conflictRetries = 5

// retryConflicts runs fn again while it fails with a serialization failure or a deadlock
// (SQLSTATE 40001, 40P01; its transaction was rolled back), at most conflictRetries times.
func retryConflicts(ctx context.Context, fn func() error) error {
	for i := 1; ; i++ {
		err := fn()
		var pgErr *pgconn.PgError
		if err == nil || i == conflictRetries || ctx.Err() != nil || !errors.As(err, &pgErr) ||
			(pgErr.Code != "40001" && pgErr.Code != "40P01") {
			return err
		}
	}
}

// flushChunkIn derives, in tx (c's flush locks held: marks and trade lists of c can only be added,
// not cleared, by other transactions from there on), every trade listed for c (deriveDeferred) and the
// market data of their tokens and of up to flushChunk marked tokens, and drops the marks; it
// returns the tokens derived and how many of them were marked.
func flushChunkIn(ctx context.Context, tx pgx.Tx, c chain.Chain, now time.Time, taken func()) ([]ports.TokenRef, int, error) {
	traded, err := deriveDeferredThen(ctx, tx, c, now, taken)
	if err != nil {
		return nil, 0, err
	}
	q := dbsqlc.New()
	rows, err := q.PendingTokens(ctx, tx, dbsqlc.PendingTokensParams{Chains: []string{string(c)}, Max: flushChunk})
	if err != nil {
		return nil, 0, fmt.Errorf("pending tokens: %w", err)
	}
	if len(rows) == 0 && len(traded) == 0 {
		return nil, 0, nil
	}
	// hand-built: DDL of the per-connection temporary tables, which are not in the schema sqlc reads.
	if _, err := tx.Exec(ctx, tempTables); err != nil {
		return nil, 0, fmt.Errorf("temp tables: %w", err)
	}
	if err := keyedJoins(ctx, tx); err != nil {
		return nil, 0, err
	}
	marked := make([]ports.TokenRef, len(rows))
	windowed := make(map[ports.TokenRef]bool, len(rows)+len(traded))
	var created []ports.TokenRef
	for i, r := range rows {
		marked[i] = ports.TokenRef{Chain: chain.Chain(r.Chain), Address: r.Address}
		windowed[marked[i]] = r.Windows
		if r.Windows {
			created = append(created, marked[i])
		}
	}
	// A token a streamed batch created (marked with its windows) has its holder totals rebuilt
	// from its positions, now derived: trades of it may have come before its row.
	if err := rebuildGroups(ctx, tx, created); err != nil {
		return nil, 0, err
	}
	refs := marked
	for _, r := range traded {
		if _, ok := windowed[r]; !ok {
			windowed[r] = false
			refs = append(refs, r)
		}
	}
	if err := deriveMarket(ctx, tx, refs, windowed, now); err != nil {
		return nil, 0, err
	}
	if len(marked) > 0 {
		cs, as := refArrays(marked)
		if err := q.ClearPending(ctx, tx, dbsqlc.ClearPendingParams{Chains: cs, Addresses: as}); err != nil {
			return nil, 0, fmt.Errorf("clear pending: %w", err)
		}
	}
	return refs, len(marked), nil
}
