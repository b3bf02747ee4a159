package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/adapters/postgres/internal/dbsqlc"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/stats"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/ports"
)

// token_holder_groups: per token, the holder count and total held of every holder ('all') and of
// each holder group, kept by adding each changed position's new contribution and removing its old
// one (groupDeltas). The top holdings are read from the ordered holders index instead (100 rows
// at most), so nothing scans a token's holder set.

// allHolders is the token_holder_groups row of every holder.
const allHolders = "all"

// tokenCreation is what a holder's dev and sniper groups depend on: the token's creator and
// creation height (unknown for a token without a tokens row).
type tokenCreation struct {
	creator string
	height  *int64
}

// heldGroups names the rows of token_holder_groups a holder counts in: all, then its groups
// (stats.HolderGroupsOf: labels, dev, sniper when its first buy landed within
// stats.SniperBlocks blocks of creation).
func heldGroups(wallet string, labels []token.HolderGroup, c tokenCreation, firstBuyHeight *int64) []string {
	sniped := firstBuyHeight != nil && c.height != nil && stats.IsSniper(*c.height, *firstBuyHeight)
	gs := stats.HolderGroupsOf(wallet, labels, c.creator, sniped)
	out := make([]string, 0, len(gs)+1)
	out = append(out, allHolders)
	for _, g := range gs {
		out = append(out, string(g))
	}
	return out
}

type groupKey struct {
	ref   ports.TokenRef
	group string
}

// groupDeltas are a batch's changes to token_holder_groups.
type groupDeltas map[groupKey]*stats.GroupTotal

// add adds (sign +1) or removes (−1) a holder of balance from the groups of the token ref; a
// zero balance is no holder and changes nothing.
func (d groupDeltas) add(ref ports.TokenRef, groups []string, balance decimal.Decimal, sign int64) {
	if !balance.IsPositive() {
		return
	}
	for _, g := range groups {
		k := groupKey{ref, g}
		t := d[k]
		if t == nil {
			t = &stats.GroupTotal{}
			d[k] = t
		}
		t.Holders += sign
		if sign < 0 {
			// balance × −1, exponent kept, as Mul by −1 gives (one allocation, not three).
			t.Holdings = t.Holdings.Sub(balance)
		} else {
			t.Holdings = t.Holdings.Add(balance)
		}
	}
}

var groupColumns = []string{"chain", "address", "holder_group", "holders", "holdings"}

const groupStaging = `CREATE TEMP TABLE IF NOT EXISTS ingest_groups (LIKE token_holder_groups) ON COMMIT DELETE ROWS`

// writeGroups adds the deltas to token_holder_groups (COPY, then one INSERT … ON CONFLICT).
func writeGroups(ctx context.Context, tx pgx.Tx, d groupDeltas) error {
	rows := newCopyRows(len(d) * 96)
	for k, t := range d {
		if t.Holders == 0 && t.Holdings.IsZero() {
			continue
		}
		rows.row(len(groupColumns))
		rows.text(string(k.ref.Chain))
		rows.text(k.ref.Address)
		rows.text(k.group)
		rows.int8(t.Holders)
		rows.numeric(t.Holdings)
	}
	if rows.rows == 0 {
		return nil
	}
	if err := copyStagedRows(ctx, tx, groupStaging, "ingest_groups", groupColumns, rows, "holder groups"); err != nil {
		return err
	}
	// hand-built: ingest_groups is a temporary table.
	if _, err := tx.Exec(ctx, `INSERT INTO token_holder_groups AS g (chain, address, holder_group, holders, holdings)
		SELECT chain, address, holder_group, holders, holdings FROM ingest_groups
		ON CONFLICT (chain, address, holder_group) DO UPDATE SET holders = g.holders + EXCLUDED.holders,
			holdings = g.holdings + EXCLUDED.holdings`); err != nil {
		return fmt.Errorf("merge holder groups: %w", err)
	}
	// A group left without holders has no row, as after a rebuild: the table is the same whatever
	// order the deltas came in (a flush may derive trades listed before a rebuild after it).
	// hand-built: ingest_groups is a temporary table.
	if _, err := tx.Exec(ctx, `DELETE FROM token_holder_groups g USING ingest_groups s
		WHERE g.chain = s.chain AND g.address = s.address AND g.holder_group = s.holder_group
			AND g.holders = 0 AND g.holdings = 0`); err != nil {
		return fmt.Errorf("drop empty holder groups: %w", err)
	}
	return nil
}

// rebuildGroups recomputes the holder aggregates of refs from their positions: for tokens whose
// tokens row arrived in this batch, after trades of them (their dev and sniper holders were not
// known when those trades were applied).
func rebuildGroups(ctx context.Context, tx pgx.Tx, refs []ports.TokenRef) error {
	if len(refs) == 0 {
		return nil
	}
	cs, as := refArrays(refs)
	q := dbsqlc.New()
	if err := q.DeleteHolderGroups(ctx, tx, dbsqlc.DeleteHolderGroupsParams{Chains: cs, Addresses: as}); err != nil {
		return fmt.Errorf("rebuild holder groups: %w", err)
	}
	if err := q.RebuildHolderGroups(ctx, tx, dbsqlc.RebuildHolderGroupsParams{Chains: cs, Addresses: as,
		SniperBlocks: stats.SniperBlocks}); err != nil {
		return fmt.Errorf("rebuild holder groups: %w", err)
	}
	return nil
}

// walletLabels reads the labels of the wallets of keys, by (chain, wallet).
func walletLabels(ctx context.Context, tx pgx.Tx, chains, wallets []string) (map[[2]string][]token.HolderGroup, error) {
	rows, err := dbsqlc.New().WalletLabels(ctx, tx, dbsqlc.WalletLabelsParams{Chains: chains, Wallets: wallets})
	if err != nil {
		return nil, fmt.Errorf("wallet labels: %w", err)
	}
	out := map[[2]string][]token.HolderGroup{}
	for _, r := range rows {
		k := [2]string{r.Chain, r.Wallet}
		out[k] = append(out[k], token.HolderGroup(r.Label))
	}
	return out, nil
}

// tokenCreations reads the creator and creation height of the tokens (cs, as) that have a row.
func tokenCreations(ctx context.Context, tx pgx.Tx, cs, as []string) (map[ports.TokenRef]tokenCreation, error) {
	rows, err := dbsqlc.New().TokenCreation(ctx, tx, dbsqlc.TokenCreationParams{Chains: cs, Addresses: as})
	if err != nil {
		return nil, fmt.Errorf("token creation: %w", err)
	}
	out := make(map[ports.TokenRef]tokenCreation, len(rows))
	for _, r := range rows {
		out[ports.TokenRef{Chain: chain.Chain(r.Chain), Address: r.Address}] = tokenCreation{r.CreatorAddress, r.CreatedBlockHeight}
	}
	return out, nil
}

// topBalancesNeeded is how many of a token's largest balances its top 10/50/100 sums need read,
// given its holders: none up to 10 (every sum is all its holdings), 10 up to 50 (the 50 and 100
// sums are all its holdings), 50 up to 100, else 100.
func topBalancesNeeded(holders int64) int64 {
	switch {
	case holders <= 10:
		return 0
	case holders <= 50:
		return 10
	case holders <= 100:
		return 50
	default:
		return 100
	}
}

// tokenHolders are the holder totals of one token its market row is computed from.
type tokenHolders struct {
	count  int64
	top    stats.TopHoldings
	groups map[token.HolderGroup]stats.GroupTotal
}

// loadHolders reads the holder totals of the tokens (cs, as): the kept aggregates and the sums
// of the 10, 50 and 100 largest balances. A token's holders group `all` holds the number and the
// sum of its positive balances, so a token with at most 10 holders needs no balance read (each top
// sum is that sum), one with at most 50 only its 10 largest, one with at most 100 its 50 largest;
// the others' are summed by Postgres over the ordered holders index (TopHoldings, one row per
// token). Tokens without holders are absent.
func loadHolders(ctx context.Context, tx pgx.Tx, cs, as []string) (map[ports.TokenRef]*tokenHolders, error) {
	q := dbsqlc.New()
	aggs, err := q.HolderAggregates(ctx, tx, dbsqlc.HolderAggregatesParams{Chains: cs, Addresses: as})
	if err != nil {
		return nil, fmt.Errorf("holder aggregates: %w", err)
	}
	out := map[ports.TokenRef]*tokenHolders{}
	get := func(c, a string) *tokenHolders {
		ref := ports.TokenRef{Chain: chain.Chain(c), Address: a}
		h := out[ref]
		if h == nil {
			h = &tokenHolders{groups: map[token.HolderGroup]stats.GroupTotal{}}
			out[ref] = h
		}
		return h
	}
	var rc, ra []string
	var limits []int64
	for _, r := range aggs {
		h := get(r.Chain, r.Address)
		if r.HolderGroup != allHolders {
			h.groups[token.HolderGroup(r.HolderGroup)] = stats.GroupTotal{Holders: r.Holders, Holdings: r.Holdings}
			continue
		}
		h.count = r.Holders
		all := r.Holdings
		h.top = stats.TopHoldings{Top10: all, Top50: all, Top100: all}
		if n := topBalancesNeeded(r.Holders); n > 0 {
			rc, ra, limits = append(rc, r.Chain), append(ra, r.Address), append(limits, n)
		}
	}
	if len(limits) == 0 {
		return out, nil
	}
	top, err := q.TopHoldings(ctx, tx, dbsqlc.TopHoldingsParams{Chains: rc, Addresses: ra, Limits: limits})
	if err != nil {
		return nil, fmt.Errorf("top holdings: %w", err)
	}
	for _, r := range top {
		h := get(r.Chain, r.Address)
		h.top.Top10 = r.Top10
		if h.count > 50 {
			h.top.Top50 = r.Top50
		}
		if h.count > 100 {
			h.top.Top100 = r.Top100
		}
	}
	return out, nil
}
