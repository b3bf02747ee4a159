package postgres

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/adapters/postgres/internal/dbsqlc"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/domain/token"
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

// deferTrades lists the batch's new trades for their chains' next flush, one row per chain with
// the fields their derivations read (encodePending).
func (a *applier) deferTrades(ctx context.Context) error {
	if len(a.newTrades) == 0 {
		return nil
	}
	var order []chain.Chain
	byChain := map[chain.Chain][]*trade.Trade{}
	for i := range a.newTrades {
		t := &a.newTrades[i]
		if _, ok := byChain[t.Chain]; !ok {
			order = append(order, t.Chain)
		}
		byChain[t.Chain] = append(byChain[t.Chain], t)
	}
	for _, c := range order {
		ts := byChain[c]
		if err := a.q.AddPendingTrades(ctx, a.tx, dbsqlc.AddPendingTradesParams{Chain: string(c),
			Trades: int32(len(ts)), Fields: encodePending(ts)}); err != nil {
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
	return deriveDeferredThen(ctx, tx, c, now, nil)
}

// deriveDeferredThen is deriveDeferred that calls taken, when not nil, once the lists are taken
// and before anything is derived from them (a test's way into a flush's transaction).
//
// Labels listed by stored-only batches (label_pending) come first: each new label moves its
// wallet's holdings, as its positions stand before the listed trades, into the label's group of
// every token it holds; the listed trades are then derived with the label in place, so their
// changes to the wallet's balances go to its groups too. A holder group's totals are the sums
// over its holders' balances, so the order between a label and the wallet's trades does not
// change them.
func deriveDeferredThen(ctx context.Context, tx pgx.Tx, c chain.Chain, now time.Time, taken func()) ([]ports.TokenRef, error) {
	q := dbsqlc.New()
	labels, err := q.TakePendingLabels(ctx, tx, string(c))
	if err != nil {
		return nil, fmt.Errorf("pending labels: %w", err)
	}
	lists, err := q.TakePendingTrades(ctx, tx, string(c))
	if err != nil {
		return nil, fmt.Errorf("pending trades: %w", err)
	}
	if len(lists) == 0 && len(labels) == 0 {
		return nil, nil
	}
	if taken != nil {
		taken()
	}
	a := &applier{tx: tx, q: q, now: now, touched: map[ports.TokenRef]bool{},
		buckets: newBucketDeltas(now), groups: groupDeltas{}}
	n := 0
	for _, l := range lists {
		n += int(l.Trades)
	}
	a.newTrades = make([]trade.Trade, 0, n)
	for _, l := range lists {
		if a.newTrades, err = decodePending(a.newTrades, c, l.Fields, int(l.Trades)); err != nil {
			return nil, fmt.Errorf("pending trades %d: %w", l.ID, err)
		}
	}
	for i := range a.newTrades {
		t := &a.newTrades[i]
		a.touch(c, t.TokenAddress)
		if t.Succeeded() {
			a.buckets.addTrade(t)
		}
	}
	// hand-built: DDL of the per-connection temporary tables, which are not in the schema sqlc reads.
	if _, err := tx.Exec(ctx, tempTables); err != nil {
		return nil, fmt.Errorf("temp tables: %w", err)
	}
	if err := keyedJoins(ctx, tx); err != nil {
		return nil, err
	}
	added := make([]chainevent.WalletLabel, len(labels))
	for i, l := range labels {
		added[i] = chainevent.WalletLabel{Chain: c, Wallet: l.Wallet, Label: token.HolderGroup(l.Label)}
	}
	if err := a.labelHoldings(ctx, added); err != nil {
		return nil, err
	}
	if err := a.positions(ctx); err != nil {
		return nil, err
	}
	if err := a.derivedTotals(ctx); err != nil {
		return nil, err
	}
	return a.touchedRefs(), nil
}

// deferLabels lists the batch's new labels for the next derivation of their chains' listed
// trades (deriveDeferredThen), instead of moving their wallets' holdings now.
func (a *applier) deferLabels(ctx context.Context, added []chainevent.WalletLabel) error {
	if len(added) == 0 {
		return nil
	}
	ls := make([]string, len(added))
	for i, e := range added {
		ls[i] = string(e.Label)
	}
	if err := a.q.AddPendingLabels(ctx, a.tx, dbsqlc.AddPendingLabelsParams{Chains: labelChains(added),
		Wallets: labelWallets(added), Labels: ls}); err != nil {
		return fmt.Errorf("list pending labels: %w", err)
	}
	return nil
}

// encodePending encodes the fields of ts that a trade's derivations read (its chain is the
// row's): wallet, token, signature, side and status as length-prefixed text, the instruction
// index, block height and time as varints, and the token amount, its USD value and the USD price
// as decimal text (exact: the values the batch read, as the derivations of a whole batch use).
func encodePending(ts []*trade.Trade) []byte {
	b := make([]byte, 0, len(ts)*224)
	text := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	for _, t := range ts {
		text(t.Wallet)
		text(t.TokenAddress)
		text(t.TransactionSignature)
		text(string(t.Side))
		text(string(t.Status))
		b = binary.AppendVarint(b, int64(t.InstructionIndex))
		b = binary.AppendVarint(b, t.BlockHeight)
		b = binary.AppendVarint(b, t.BlockTimestamp)
		text(t.TokenAmount.String())
		text(t.TokenAmountInUSD.String())
		text(t.TokenPriceInUSD.String())
	}
	return b
}

// decodePending appends the n trades of chain c that encodePending wrote to b.
func decodePending(out []trade.Trade, c chain.Chain, b []byte, n int) ([]trade.Trade, error) {
	var failed error
	text := func() string {
		l, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < l {
			failed = errors.New("truncated text")
			b = nil
			return ""
		}
		s := string(b[k : k+int(l)])
		b = b[k+int(l):]
		return s
	}
	varint := func() int64 {
		v, k := binary.Varint(b)
		if k <= 0 {
			failed = errors.New("truncated number")
			b = nil
			return 0
		}
		b = b[k:]
		return v
	}
	dec := func() decimal.Decimal {
		d, err := decimal.NewFromString(text())
		if err != nil && failed == nil {
			failed = err
		}
		return d
	}
	for range n {
		t := trade.Trade{Chain: c, Wallet: text(), TokenAddress: text(), TransactionSignature: text()}
		t.Side, t.Status = trade.Side(text()), trade.Status(text())
		t.InstructionIndex, t.BlockHeight, t.BlockTimestamp = int32(varint()), varint(), varint()
		t.TokenAmount, t.TokenAmountInUSD, t.TokenPriceInUSD = dec(), dec(), dec()
		if failed != nil {
			return out, failed
		}
		out = append(out, t)
	}
	if len(b) != 0 {
		return out, errors.New("trailing bytes")
	}
	return out, nil
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
