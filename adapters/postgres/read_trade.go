package postgres

import (
	"context"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/tokenscope/tokenscope/domain/page"
	"github.com/tokenscope/tokenscope/domain/trade"
	"github.com/tokenscope/tokenscope/ports"
)

// tradeKeys orders trades newest first; seq breaks ties inside one millisecond. Every
// (chain[, token|wallet|pool], block_timestamp_ms DESC, seq DESC) index of the base schema
// serves this order.
var tradeKeys = keyset{kind: "trade", desc: true, parts: []keyPart{
	{"t.block_timestamp_ms", "bigint"}, {"t.seq", "bigint"},
}}

type tradeRow struct {
	trade.Trade
	seq int64
}

// tradesSQL builds the page query of f. The inner query finds the page through an index; the
// names of both tokens are joined to those few rows only.
func tradesSQL(f ports.TradeFilter, p ports.PageRequest) (string, []any, error) {
	pos, err := tradeKeys.position(p)
	if err != nil {
		return "", nil, err
	}
	a := &args{}
	conds := []string{"t.chain = " + a.add(string(f.Chain))}
	if f.TokenAddress != "" {
		conds = append(conds, "t.token_address = "+a.add(f.TokenAddress))
	}
	if f.Wallet != "" {
		conds = append(conds, "t.wallet = "+a.add(f.Wallet))
	}
	if f.PoolAddress != "" {
		conds = append(conds, "t.pool_address = "+a.add(f.PoolAddress))
	}
	if len(f.Signatures) > 0 {
		conds = append(conds, "t.tx_signature = ANY("+a.add(f.Signatures)+"::text[])")
	}
	if f.FromMs != nil {
		conds = append(conds, "t.block_timestamp_ms >= "+a.add(*f.FromMs))
	}
	if f.ToMs != nil {
		conds = append(conds, "t.block_timestamp_ms <= "+a.add(*f.ToMs))
	}
	if f.MinHeight != nil {
		conds = append(conds, "t.block_height >= "+a.add(*f.MinHeight))
	}
	if f.MaxHeight != nil {
		conds = append(conds, "t.block_height <= "+a.add(*f.MaxHeight))
	}
	if f.Side != "" {
		conds = append(conds, "t.side = "+a.add(string(f.Side)))
	}
	cond, order := tradeKeys.clause(p.Direction, pos, a)
	conds = append(conds, cond)
	sql := `SELECT t.seq, t.tx_signature, t.instruction_index, t.block_height, COALESCE(t.block_slot, 0), t.block_timestamp_ms,
		t.wallet, t.pool_address, t.side, t.status, t.token_address, t.token_amount, t.token_amount_native, t.token_amount_usd,
		t.token_price_native, t.token_price_usd, t.side_token_address, t.side_token_amount, t.side_token_amount_native,
		t.side_token_amount_usd, t.side_token_price_native, t.side_token_price_usd, t.dex_image, t.dex_program_address,
		t.dex_protocol_family, COALESCE(tk.name, ''), COALESCE(tk.symbol, ''), COALESCE(tk.image_url, ''),
		COALESCE(st.name, ''), COALESCE(st.symbol, ''), COALESCE(st.image_url, '')
	FROM (SELECT * FROM trades t WHERE ` + where(conds) + ` ORDER BY ` + order + ` LIMIT ` + strconv.Itoa(limitOf(p)) + `) t
	LEFT JOIN tokens tk ON tk.chain = t.chain AND tk.address = t.token_address
	LEFT JOIN tokens st ON st.chain = t.chain AND st.address = t.side_token_address
	ORDER BY ` + order
	return sql, a.vals, nil
}

// ListTrades implements ports.TradeReader.
func (r *MarketReader) ListTrades(ctx context.Context, f ports.TradeFilter, p ports.PageRequest) (page.Page[trade.Trade], error) {
	sql, vals, err := tradesSQL(f, p)
	if err != nil {
		return page.Page[trade.Trade]{}, err
	}
	// hand-built: keyset page (tradesSQL) with optional filters, next or prev from a cursor.
	rows, err := r.pool.Query(ctx, sql, vals...)
	if err != nil {
		return page.Page[trade.Trade]{}, interpretError(err, "list trades", string(f.Chain))
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (tradeRow, error) {
		tr := tradeRow{Trade: trade.Trade{Chain: f.Chain}}
		t := &tr.Trade
		var side, status string
		err := row.Scan(&tr.seq, &t.TransactionSignature, &t.InstructionIndex, &t.BlockHeight, &t.BlockSlot, &t.BlockTimestamp,
			&t.Wallet, &t.PoolAddress, &side, &status, &t.TokenAddress, &t.TokenAmount, &t.TokenAmountInNative,
			&t.TokenAmountInUSD, &t.TokenPriceInNative, &t.TokenPriceInUSD, &t.SideTokenAddress, &t.SideTokenAmount,
			&t.SideTokenAmountInNative, &t.SideTokenAmountInUSD, &t.SideTokenPriceInNative, &t.SideTokenPriceInUSD,
			&t.DexImage, &t.DexProgramAddress, &t.DexProtocolFamily, &t.TokenName, &t.TokenSymbol, &t.TokenImageURL,
			&t.SideTokenName, &t.SideTokenSymbol, &t.SideTokenImageURL)
		t.Side, t.Status = trade.Side(side), trade.Status(status)
		return tr, err
	})
	if err != nil {
		return page.Page[trade.Trade]{}, interpretError(err, "list trades", string(f.Chain))
	}
	pg := page.Build(list, limitOf(p)-1, p.Direction, p.Cursor != "", func(t tradeRow) string {
		return page.Encode(tradeKeys.kind, strconv.FormatInt(t.BlockTimestamp, 10), strconv.FormatInt(t.seq, 10))
	})
	return unwrap(pg, func(t tradeRow) trade.Trade { return t.Trade }), nil
}

// unwrap maps the items of a page, keeping its cursors and flags.
func unwrap[A, B any](p page.Page[A], f func(A) B) page.Page[B] {
	out := page.Page[B]{StartCursor: p.StartCursor, EndCursor: p.EndCursor, HasNext: p.HasNext, HasPrev: p.HasPrev,
		Items: make([]B, len(p.Items))}
	for i, v := range p.Items {
		out.Items[i] = f(v)
	}
	return out
}
