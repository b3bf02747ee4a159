package postgres

import (
	"context"
	"fmt"

	"github.com/tokenscope/tokenscope/domain/trade"
)

// positions folds the batch's new trades into wallet_positions. A pair whose new trades all sort
// after its last applied trade is advanced in place; any other pair (a trade arrived out of
// order) is rebuilt from every stored trade with pnl.Rederive.
func (a *applier) positions(ctx context.Context) error {
	if len(a.newTrades) == 0 {
		return nil
	}
	byKey := map[posKey][]trade.Trade{}
	var chains, wallets, tokens []string
	for _, t := range a.newTrades {
		k := posKey{t.Chain, t.Wallet, t.TokenAddress}
		if _, ok := byKey[k]; !ok {
			chains, wallets, tokens = append(chains, string(k.chain)), append(wallets, k.wallet), append(tokens, k.token)
		}
		byKey[k] = append(byKey[k], t)
	}
	// hand-built: the select list is generated from positionColumns, and sqlc rejects multi-array unnest (sqlc-dev/sqlc#3507).
	rows, err := a.tx.Query(ctx, `SELECT `+selectPositionColumns("p")+`
		FROM wallet_positions p JOIN unnest($1::text[], $2::text[], $3::text[]) AS k(chain, wallet, token)
		ON p.chain = k.chain AND p.wallet = k.wallet AND p.token_address = k.token`, chains, wallets, tokens)
	if err != nil {
		return fmt.Errorf("load positions: %w", err)
	}
	existing := map[posKey]*positionRow{}
	for rows.Next() {
		r := &positionRow{}
		k, err := r.scan(rows)
		if err != nil {
			rows.Close()
			return fmt.Errorf("load positions: %w", err)
		}
		existing[k] = r
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("load positions: %w", err)
	}

	var out [][]any
	for k, ts := range byKey {
		ts = trade.Sorted(ts)
		r := existing[k]
		if r == nil {
			r = &positionRow{}
		}
		if r.exists && trade.Compare(ts[0], r.last) <= 0 {
			rr, _, err := rederivePosition(ctx, a.tx, k)
			if err != nil {
				return err
			}
			if rr == nil { // not reached: the batch's trades of the pair are stored
				return fmt.Errorf("rederive position %s/%s: no trades", k.wallet, k.token)
			}
			r = rr
			a.res.Rederived++
		} else {
			for _, t := range ts {
				if err := r.pos.Apply(t); err != nil {
					return err
				}
				r.noteFirstBuy(t)
			}
			r.last = ts[len(ts)-1]
		}
		out = append(out, r.values(k, a.now))
	}
	return writePositions(ctx, a.tx, out)
}
