package postgres

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

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

// flushChain flushes the pending tokens of c chunk by chunk.
func (s *IngestStore) flushChain(ctx context.Context, c chain.Chain, now time.Time) (int, error) {
	total := 0
	for {
		var n, marked int
		err := writeAnnouncedBy(ctx, s.pool, func(tx pgx.Tx) (marketChange, error) {
			refs, m, err := flushChunkIn(ctx, tx, c, now)
			n, marked = len(refs), m
			return tokensChanged(refs), err
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

// flushChunkIn derives, in tx under c's lock (marks and trade lists of c can only be added or
// cleared by this transaction from there on), every trade listed for c (deriveDeferred) and the
// market data of their tokens and of up to flushChunk marked tokens, and drops the marks; it
// returns the tokens derived and how many of them were marked.
func flushChunkIn(ctx context.Context, tx pgx.Tx, c chain.Chain, now time.Time) ([]ports.TokenRef, int, error) {
	if err := lockDerivedState(ctx, tx, c); err != nil {
		return nil, 0, err
	}
	traded, err := deriveDeferred(ctx, tx, c, now)
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
	for i, r := range rows {
		marked[i] = ports.TokenRef{Chain: chain.Chain(r.Chain), Address: r.Address}
		windowed[marked[i]] = r.Windows
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
