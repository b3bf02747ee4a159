package postgres

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/adapters/postgres/internal/dbsqlc"

	"github.com/tokenscope/tokenscope/domain/stats"
	"github.com/tokenscope/tokenscope/domain/trade"
	"github.com/tokenscope/tokenscope/ports"
)

// positions folds the batch's new trades into wallet_positions and their day marks into
// position_day_marks. A pair whose new trades all sort after its last applied trade is advanced
// in place; any other pair (a trade arrived out of order) is rebuilt from every stored trade with
// pnl.Rederive, its marks too. Each pair's change also moves its
// wallet's last activity in the token's buckets and its balance between the token's holder
// totals (the groups before and after, with the labels as of this batch).
func (a *applier) positions(ctx context.Context) error {
	if len(a.newTrades) == 0 {
		return nil
	}
	byKey, chains, wallets, tokens := tradesByPosition(a.newTrades)
	existing, err := loadPositions(ctx, a.tx, chains, wallets, tokens)
	if err != nil {
		return err
	}
	labels, err := walletLabels(ctx, a.tx, chains, wallets)
	if err != nil {
		return err
	}
	creations, err := tokenCreations(ctx, a.tx, chains, tokens)
	if err != nil {
		return err
	}
	fresh, out := newCopyRows((len(byKey)-len(existing))*512), newCopyRows(len(existing)*512)
	marks := newCopyRows(len(byKey) * 256)
	var ts []*trade.Trade
	for k, ix := range byKey {
		ts = ts[:0]
		for _, i := range ix {
			ts = append(ts, &a.newTrades[i])
		}
		if len(ts) > 1 {
			slices.SortStableFunc(ts, func(x, y *trade.Trade) int { return trade.Compare(*x, *y) })
		}
		stored := existing[k]
		var oldBalance decimal.Decimal
		var oldFirst *int64
		var oldAct stats.LastActivity
		if r := stored; r != nil {
			oldBalance, oldAct = r.pos.Balance, r.act
			if r.firstHeight != nil {
				h := *r.firstHeight
				oldFirst = &h
			}
		}
		r, err := a.advancePosition(ctx, k, ts, stored)
		if err != nil {
			return err
		}
		ref := ports.TokenRef{Chain: k.chain, Address: k.token}
		a.buckets.moveActivity(ref, oldAct, r.act)
		ls, c := labels[[2]string{string(k.chain), k.wallet}], creations[ref]
		a.groups.add(ref, heldGroups(k.wallet, ls, c, oldFirst), oldBalance, -1)
		a.groups.add(ref, heldGroups(k.wallet, ls, c, r.firstHeight), r.pos.Balance, 1)
		if stored == nil {
			r.copyTo(fresh, k, a.now)
		} else {
			r.copyTo(out, k, a.now)
		}
		if err := dropMarks(ctx, a.tx, k, r); err != nil {
			return err
		}
		r.copyMarks(marks, k)
	}
	// New pairs go straight into wallet_positions: no other transaction writes a pair meanwhile
	// (ingest batches and the calculate-pnl job hold the derived-state lock).
	if _, err := fresh.copyInto(ctx, a.tx, "wallet_positions", positionColumns); err != nil {
		return fmt.Errorf("copy new positions: %w", err)
	}
	if err := writeMarks(ctx, a.tx, marks); err != nil {
		return err
	}
	return writePositions(ctx, a.tx, out)
}

// tradesByPosition groups trades by (chain, wallet, token), as indexes into trades in their
// order there, and lists the keys, in the order they first appear, as the parallel arrays
// loadPositions takes.
func tradesByPosition(trades []trade.Trade) (byKey map[posKey][]int32, chains, wallets, tokens []string) {
	byKey = make(map[posKey][]int32, len(trades))
	for i := range trades {
		t := &trades[i]
		k := posKey{t.Chain, t.Wallet, t.TokenAddress}
		ix, ok := byKey[k]
		if !ok {
			chains, wallets, tokens = append(chains, string(k.chain)), append(wallets, k.wallet), append(tokens, k.token)
		}
		byKey[k] = append(ix, int32(i))
	}
	return byKey, chains, wallets, tokens
}

// loadPositions reads the stored positions of the keys (chains, wallets, tokens); a key without
// one is absent.
func loadPositions(ctx context.Context, tx pgx.Tx, chains, wallets, tokens []string) (map[posKey]*positionRow, error) {
	return loadPositionRows(ctx, tx, "wallet_positions", chains, wallets, tokens)
}

// loadPositionRows reads the rows of table (wallet_positions, or position_bases, which has its
// columns) of the keys (chains, wallets, tokens); a key without one is absent.
func loadPositionRows(ctx context.Context, db dbsqlc.DBTX, table string, chains, wallets, tokens []string) (map[posKey]*positionRow, error) {
	// hand-built: the select list is generated from positionColumns, the column list writePositions'
	// COPY and UPDATE use, so positionRow.scan reads back every column positionRow.values writes;
	// table is one of two constant names.
	rows, err := db.Query(ctx, `SELECT `+selectPositionColumns("p")+`
		FROM `+table+` p JOIN unnest($1::text[], $2::text[], $3::text[]) AS k(chain, wallet, token)
		ON p.chain = k.chain AND p.wallet = k.wallet AND p.token_address = k.token`, chains, wallets, tokens)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", table, err)
	}
	existing := map[posKey]*positionRow{}
	for rows.Next() {
		r := &positionRow{}
		k, err := r.scan(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("load %s: %w", table, err)
		}
		existing[k] = r
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load %s: %w", table, err)
	}
	return existing, nil
}

// advancePosition applies the pair k's new trades ts (sorted) to its stored position r (nil for a
// new pair) when they all sort after its last applied trade, and otherwise rebuilds it from every
// stored trade (counted as rederived).
func (a *applier) advancePosition(ctx context.Context, k posKey, ts []*trade.Trade, r *positionRow) (*positionRow, error) {
	if r == nil {
		r = &positionRow{}
	}
	if r.exists && trade.Compare(*ts[0], r.last) <= 0 {
		rr, _, err := rederivePosition(ctx, a.tx, k)
		if err != nil {
			return nil, err
		}
		if rr == nil { // not reached: the batch's trades of the pair are stored
			return nil, fmt.Errorf("rederive position %s/%s: no trades", k.wallet, k.token)
		}
		a.res.Rederived++
		return rr, nil
	}
	applied := r.exists
	for _, t := range ts {
		r.markDay(t, applied)
		if err := r.pos.Apply(*t); err != nil {
			return nil, err
		}
		r.noteFirstBuy(t)
		r.act.Note(*t)
		r.last, applied = *t, true
	}
	return r, nil
}
