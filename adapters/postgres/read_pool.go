package postgres

import (
	"context"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/page"
	"github.com/tokenscope/tokenscope/domain/pool"
	"github.com/tokenscope/tokenscope/ports"
)

// snapshotKeys orders a pool's snapshots newest first, as pool_snapshots_time_idx stores them.
var snapshotKeys = keyset{kind: "snapshot", desc: true, parts: []keyPart{
	{"s.snapshot_time_ms", "bigint"}, {"s.block_height", "bigint"},
}}

func snapshotsSQL(c chain.Chain, poolAddress string, atMs *int64, p ports.PageRequest) (string, []any, error) {
	pos, err := snapshotKeys.position(p)
	if err != nil {
		return "", nil, err
	}
	a := &args{}
	conds := []string{"s.chain = " + a.add(string(c)), "s.pool_address = " + a.add(poolAddress)}
	if atMs != nil {
		conds = append(conds, "s.snapshot_time_ms <= "+a.add(*atMs))
	}
	cond, order := snapshotKeys.clause(p.Direction, pos, a)
	conds = append(conds, cond)
	return `SELECT s.block_height, s.block_slot, s.block_timestamp_ms, s.snapshot_time_ms,
		s.a_token_address, s.a_decimals, s.a_vault_amount, s.a_amount_native, s.a_amount_usd, s.a_price_native, s.a_price_usd,
		s.b_token_address, s.b_decimals, s.b_vault_amount, s.b_amount_native, s.b_amount_usd, s.b_price_native, s.b_price_usd,
		s.tvl_native, s.tvl_usd
	FROM pool_snapshots s WHERE ` + where(conds) + ` ORDER BY ` + order + ` LIMIT ` + strconv.Itoa(limitOf(p)), a.vals, nil
}

// ListSnapshots implements ports.PoolReader.
func (r *MarketReader) ListSnapshots(ctx context.Context, c chain.Chain, poolAddress string, atMs *int64, p ports.PageRequest) (page.Page[pool.Snapshot], error) {
	sql, vals, err := snapshotsSQL(c, poolAddress, atMs, p)
	if err != nil {
		return page.Page[pool.Snapshot]{}, err
	}
	// hand-built: keyset page (snapshotsSQL), next or prev from a cursor.
	rows, err := r.pool.Query(ctx, sql, vals...)
	if err != nil {
		return page.Page[pool.Snapshot]{}, interpretError(err, "list pool snapshots", poolAddress)
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (pool.Snapshot, error) {
		s := pool.Snapshot{Chain: c, PoolAddress: poolAddress}
		var va, vb decimal.Decimal
		err := row.Scan(&s.BlockHeight, &s.BlockSlot, &s.BlockTimestamp, &s.SnapshotTime,
			&s.TokenA.TokenAddress, &s.TokenA.Decimals, &va, &s.TokenA.AmountInNative, &s.TokenA.AmountInUSD,
			&s.TokenA.PriceNative, &s.TokenA.PriceUSD,
			&s.TokenB.TokenAddress, &s.TokenB.Decimals, &vb, &s.TokenB.AmountInNative, &s.TokenB.AmountInUSD,
			&s.TokenB.PriceNative, &s.TokenB.PriceUSD, &s.TVLInNative, &s.TVLInUSD)
		s.TokenA.VaultAmount, s.TokenB.VaultAmount = pool.VaultAmount(va.Truncate(0).String()), pool.VaultAmount(vb.Truncate(0).String())
		return s, err
	})
	if err != nil {
		return page.Page[pool.Snapshot]{}, interpretError(err, "list pool snapshots", poolAddress)
	}
	return page.Build(list, limitOf(p)-1, p.Direction, p.Cursor != "", func(s pool.Snapshot) string {
		return page.Encode(snapshotKeys.kind, strconv.FormatInt(s.SnapshotTime, 10), strconv.FormatInt(s.BlockHeight, 10))
	}), nil
}
