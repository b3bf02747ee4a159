package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tokenscope/tokenscope/adapters/postgres/internal/dbsqlc"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/trade"
	"github.com/tokenscope/tokenscope/ports"
)

// Deferred trade derivations (docs/engine.md, "Streams: deferred derivations"). A streamed batch
// (ApplyPending) stores its trades and lists their keys in trade_pending; everything a trade
// derives (its position, buckets, window deltas, holder totals, and its token's market row) is
// done by the chain's next flush, for every listed trade at once, in one transaction under the
// chain's lock. Under a steady stream a flush derives the trades of every batch committed since
// the previous one: a token, a minute or hour bucket, a window and a holder group touched by many
// of them is written once, not once per batch.
//
// Every writer of positions works on derived trades only: before it reads or writes a position
// of a chain, under the chain's lock, it derives the chain's listed trades (deriveDeferred). A
// position re-derived from its stored trades (an out-of-order arrival, the calculate-pnl job)
// then never takes in a trade whose buckets and holder totals are still to be written.

// deferTrades lists the batch's new trades for their chains' next flush.
func (a *applier) deferTrades(ctx context.Context) error {
	if len(a.newTrades) == 0 {
		return nil
	}
	var order []chain.Chain
	sigs := map[chain.Chain][]string{}
	ixs := map[chain.Chain][]int32{}
	for i := range a.newTrades {
		t := &a.newTrades[i]
		if _, ok := sigs[t.Chain]; !ok {
			order = append(order, t.Chain)
		}
		sigs[t.Chain] = append(sigs[t.Chain], t.TransactionSignature)
		ixs[t.Chain] = append(ixs[t.Chain], t.InstructionIndex)
	}
	for _, c := range order {
		if err := a.q.AddPendingTrades(ctx, a.tx, dbsqlc.AddPendingTradesParams{Chain: string(c),
			Signatures: sigs[c], InstructionIndexes: ixs[c]}); err != nil {
			return fmt.Errorf("list pending trades: %w", err)
		}
	}
	return nil
}

// deriveDeferred derives, in tx, every trade listed for c's next flush, as of now, and drops the
// lists: positions, buckets, window deltas and holder totals, exactly as a batch of those trades
// would (applier.positions, applier.derivedTotals). It returns the tokens whose market rows are
// due. The caller holds c's derived-state lock.
func deriveDeferred(ctx context.Context, tx pgx.Tx, c chain.Chain, now time.Time) ([]ports.TokenRef, error) {
	q := dbsqlc.New()
	lists, err := q.TakePendingTrades(ctx, tx, string(c))
	if err != nil {
		return nil, fmt.Errorf("pending trades: %w", err)
	}
	if len(lists) == 0 {
		return nil, nil
	}
	// hand-built: DDL of the per-connection temporary tables, which are not in the schema sqlc reads.
	if _, err := tx.Exec(ctx, tempTables); err != nil {
		return nil, fmt.Errorf("temp tables: %w", err)
	}
	if err := keyedJoins(ctx, tx); err != nil {
		return nil, err
	}
	var sigs []string
	var ixs []int32
	for _, l := range lists {
		sigs = append(sigs, l.Signatures...)
		ixs = append(ixs, l.InstructionIndexes...)
	}
	rows, err := q.PendingTradeRows(ctx, tx, dbsqlc.PendingTradeRowsParams{Chain: string(c), Signatures: sigs,
		InstructionIndexes: ixs})
	if err != nil {
		return nil, fmt.Errorf("read pending trades: %w", err)
	}
	a := &applier{tx: tx, q: q, now: now, touched: map[ports.TokenRef]bool{},
		buckets: newBucketDeltas(now), groups: groupDeltas{}}
	a.newTrades = make([]trade.Trade, len(rows))
	for i, r := range rows {
		t := &a.newTrades[i]
		*t = trade.Trade{Chain: c, Wallet: r.Wallet, TokenAddress: r.TokenAddress, TransactionSignature: r.TxSignature,
			InstructionIndex: r.InstructionIndex, BlockHeight: r.BlockHeight, BlockTimestamp: r.BlockTimestampMs,
			Side: trade.Side(r.Side), Status: trade.Status(r.Status), TokenAmount: r.TokenAmount,
			TokenAmountInUSD: r.TokenAmountUsd, TokenPriceInUSD: r.TokenPriceUsd}
		a.touch(c, t.TokenAddress)
		if t.Succeeded() {
			a.buckets.addTrade(t)
		}
	}
	if err := a.positions(ctx); err != nil {
		return nil, err
	}
	if err := a.derivedTotals(ctx); err != nil {
		return nil, err
	}
	return a.touchedRefs(), nil
}

// deriveDeferredOf derives the listed trades of every chain in cs (deriveDeferred) and marks
// their tokens for the next flush's market rows: for a writer of positions other than the flush.
func deriveDeferredOf(ctx context.Context, tx pgx.Tx, now time.Time, cs ...chain.Chain) error {
	for _, c := range cs {
		refs, err := deriveDeferred(ctx, tx, c, now)
		if err != nil {
			return err
		}
		if err := markPending(ctx, tx, refs, nil); err != nil {
			return err
		}
	}
	return nil
}
