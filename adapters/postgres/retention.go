package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tokenscope/tokenscope/adapters/postgres/internal/dbsqlc"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/trade"
	"github.com/tokenscope/tokenscope/ports"
)

// Trade retention (docs/engine.md, "Retention"). A chain's trades are folded into the positions'
// bases and removed in chunks, oldest first, each one short transaction under the chain's
// derived-state lock (ingest batches of the chain wait at most one chunk):
//
//   - every trade of the chunk is applied, in trade.Compare order, to its wallet/token pair's base
//     (position_bases, the wallet_positions columns): the pair's position as of all its trades
//     before the chain's cut. A re-derivation (an out-of-order trade, the calculate-pnl job) starts
//     from the base and replays only the trades after it, so it gives what replaying every trade
//     ever ingested gives;
//   - each token's newest successful trade is kept (its price is what the market row, wallet PnL
//     and the SOL price read), folded into the base all the same;
//   - the chain's cut moves past the chunk. A new trade before the cut is refused (Invalid): it
//     would sort among removed trades, where no position could place it. A replay of a kept trade
//     is still skipped.
//
// Nothing else changes: buckets, windows, holder totals, market rows and positions are derived
// state kept in their own tables, and no reader re-derives them from trades older than the
// windows (24 h) and rankings (48 h) look at, which TRADES_RETENTION's minimum keeps.

var _ ports.TradeRetainer = (*IngestStore)(nil)

// retainChunk is how many trades one retention transaction folds and removes (a chunk never
// splits a millisecond, so it may hold more).
const retainChunk = 5000

// RetainTrades implements ports.TradeRetainer.
func (s *IngestStore) RetainTrades(ctx context.Context, before time.Time, budget time.Duration) (ports.RetainResult, error) {
	deadline := time.Now().Add(budget)
	res := ports.RetainResult{Done: true}
	for _, c := range chain.V2 {
		for {
			removed, kept, done, err := s.retainChunkOf(ctx, c, before.UnixMilli())
			res.Removed += removed
			res.Kept += kept
			if err != nil {
				return res, interpretError(err, "retain trades", string(c))
			}
			if done {
				break
			}
			if !time.Now().Before(deadline) {
				res.Done = false
				return res, nil
			}
		}
	}
	return res, nil
}

// retainChunkOf folds and removes the next chunk of chain c's trades before beforeMs, and reports
// whether none is left.
func (s *IngestStore) retainChunkOf(ctx context.Context, c chain.Chain, beforeMs int64) (removed, kept int, done bool, err error) {
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := lockDerivedState(ctx, tx, c); err != nil {
			return err
		}
		if err := keyedJoins(ctx, tx); err != nil {
			return err
		}
		q := dbsqlc.New()
		// Trades waiting for the flush are derived before any is folded (a position's base must
		// hold every trade before the cut): under a steady stream some always wait, so skipping
		// the chain until none does would never retain it. They are derived as of the wall clock,
		// as the service's flushes derive them; their market rows are left to the next flush.
		if err := deriveDeferredOf(ctx, tx, time.Now(), c); err != nil {
			return err
		}
		cuts, err := retentionCuts(ctx, tx, []string{string(c)})
		if err != nil {
			return err
		}
		from := cuts[c]
		if from >= beforeMs {
			done = true
			return nil
		}
		// The chunk is [from, end]: up to the retainChunk-th trade's millisecond, or everything
		// before beforeMs when fewer are left.
		end, err := q.RetentionChunkEnd(ctx, tx, dbsqlc.RetentionChunkEndParams{Chain: string(c), FromMs: from,
			BeforeMs: beforeMs, N: retainChunk})
		if errors.Is(err, pgx.ErrNoRows) {
			end, done = beforeMs-1, true
		} else if err != nil {
			return fmt.Errorf("retention chunk: %w", err)
		}
		rows, err := q.RetentionChunkTrades(ctx, tx, dbsqlc.RetentionChunkTradesParams{Chain: string(c), FromMs: from, ToMs: end})
		if err != nil {
			return fmt.Errorf("retention chunk trades: %w", err)
		}
		removed, kept, err = foldAndRemove(ctx, tx, c, rows)
		if err != nil {
			return err
		}
		return q.SaveRetentionCut(ctx, tx, dbsqlc.SaveRetentionCutParams{Chain: string(c), CutMs: end + 1,
			UpdatedAtMs: time.Now().UnixMilli()})
	})
	return removed, kept, done, err
}

// foldAndRemove applies the chunk's trades to their pairs' bases, writes the bases, and deletes
// the trades but each token's newest successful one.
func foldAndRemove(ctx context.Context, tx pgx.Tx, c chain.Chain, rows []dbsqlc.RetentionChunkTradesRow) (removed, kept int, err error) {
	if len(rows) == 0 {
		return 0, 0, nil
	}
	byPair := map[posKey][]trade.Trade{}
	var tokens []string
	seenToken := map[string]bool{}
	for _, r := range rows {
		k := posKey{c, r.Wallet, r.TokenAddress}
		byPair[k] = append(byPair[k], trade.Trade{Chain: c, Wallet: r.Wallet, TokenAddress: r.TokenAddress,
			TransactionSignature: r.TxSignature, InstructionIndex: r.InstructionIndex, BlockHeight: r.BlockHeight,
			BlockTimestamp: r.BlockTimestampMs, Side: trade.Side(r.Side), Status: trade.Status(r.Status),
			TokenAmount: r.TokenAmount, TokenAmountInUSD: r.TokenAmountUsd, TokenPriceInUSD: r.TokenPriceUsd})
		if !seenToken[r.TokenAddress] {
			seenToken[r.TokenAddress] = true
			tokens = append(tokens, r.TokenAddress)
		}
	}
	var cs, ws, ts []string
	for k := range byPair {
		cs, ws, ts = append(cs, string(k.chain)), append(ws, k.wallet), append(ts, k.token)
	}
	bases, err := loadPositionRows(ctx, tx, "position_bases", cs, ws, ts)
	if err != nil {
		return 0, 0, err
	}
	out := newCopyRows(len(byPair) * 512)
	now := time.Now()
	for k, trades := range byPair {
		b := bases[k]
		if b == nil {
			b = &positionRow{}
		}
		if err := b.applyAfter(trade.Sorted(trades)); err != nil {
			return 0, 0, err
		}
		b.copyTo(out, k, now)
	}
	if err := upsertPositionRows(ctx, tx, "position_bases", "retain_bases", out); err != nil {
		return 0, 0, err
	}
	newest, err := dbsqlc.New().NewestSuccessfulTrades(ctx, tx, dbsqlc.NewestSuccessfulTradesParams{Chain: string(c), Tokens: tokens})
	if err != nil {
		return 0, 0, fmt.Errorf("newest trades: %w", err)
	}
	keep := make(map[trade.Key]bool, len(newest))
	for _, n := range newest {
		keep[trade.Key{Chain: c, TransactionSignature: n.TxSignature, InstructionIndex: n.InstructionIndex}] = true
	}
	var sigs []string
	var ixs []int32
	for _, r := range rows {
		if keep[trade.Key{Chain: c, TransactionSignature: r.TxSignature, InstructionIndex: r.InstructionIndex}] {
			kept++
			continue
		}
		sigs, ixs = append(sigs, r.TxSignature), append(ixs, r.InstructionIndex)
	}
	n, err := dbsqlc.New().DeleteTrades(ctx, tx, dbsqlc.DeleteTradesParams{Chain: string(c), Signatures: sigs, Indexes: ixs})
	if err != nil {
		return 0, 0, fmt.Errorf("delete trades: %w", err)
	}
	return int(n), kept, nil
}

// retentionCuts reads the retention cut of each of the chains that has one.
func retentionCuts(ctx context.Context, db dbsqlc.DBTX, chains []string) (map[chain.Chain]int64, error) {
	rows, err := dbsqlc.New().RetentionCuts(ctx, db, chains)
	if err != nil {
		return nil, fmt.Errorf("retention cuts: %w", err)
	}
	out := make(map[chain.Chain]int64, len(rows))
	for _, r := range rows {
		out[chain.Chain(r.Chain)] = r.CutMs
	}
	return out, nil
}

// refuseBeforeCut fails with Invalid when one of trades, not stored already (a replay of a kept
// trade is skipped as any replay), lies before its chain's retention cut: it would sort among
// trades that retention folded into the positions' bases and removed.
func (a *applier) refuseBeforeCut(ctx context.Context, trades []trade.Trade) error {
	// Every chain's cut at once: the table holds a row per chain at most.
	cuts, err := retentionCuts(ctx, a.tx, chain.Strings(chain.V2))
	if err != nil || len(cuts) == 0 {
		return err
	}
	var early []trade.Trade
	for _, t := range trades {
		if t.BlockTimestamp < cuts[t.Chain] {
			early = append(early, t)
		}
	}
	if len(early) == 0 {
		return nil
	}
	stored, err := a.existingTrades(ctx, early)
	if err != nil {
		return err
	}
	for _, t := range early {
		if !stored[t.Key()] {
			return fault.Invalid("blockTimestamp", strconv.FormatInt(t.BlockTimestamp, 10), fmt.Sprintf(
				"trade %s lies before %d, where the trades kept on %s start (TRADES_RETENTION removed the older ones)",
				t.Key(), cuts[t.Chain], t.Chain))
		}
	}
	return nil
}
