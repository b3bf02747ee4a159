package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/adapters/postgres/internal/dbsqlc"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/page"
	"github.com/tokenscope/tokenscope/domain/ranking"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/ports"
)

// detailColumns are the tokens ⋈ token_market columns scanDetail reads, in its order: the select
// list of the search builder and of TokenDetails in queries/token.sql (TestDetailColumns keeps the
// two the same).
const detailColumns = `t.chain, t.address, t.decimals, t.name, t.symbol, t.vendor_coin_id, t.description, t.image_url, t.market,
	t.metadata_address, t.uri, t.dev_total_tokens, t.dev_last_token_created_at, t.created_at_ms, t.created_block_height,
	t.created_slot, t.created_tx_signature, t.creators, t.extra, t.socials, COALESCE(t.launchpad_tag, ''),
	m.price_usd, m.price_sol, m.total_supply, m.circulating_supply, m.market_cap_usd, m.market_cap_sol, m.fdv_usd, m.fdv_sol,
	m.holders, m.top10_holdings, m.top10_ratio, m.top50_holdings, m.top50_ratio, m.top100_holdings, m.top100_ratio, m.groups,
	m.completion_ratio, m.max_pool_tvl_usd, m.max_pool_tvl_sol, m.total_tvl_usd, m.total_tvl_sol, m.volume_24h_usd, m.trades_24h`

// token.Creator and token.Extra (their JSON tags) and groupJSON are the stored shapes of the JSONB columns.
type groupJSON struct {
	Holders  decimal.Decimal `json:"holders"`
	Holdings decimal.Decimal `json:"holdings"`
	Ratio    decimal.Decimal `json:"ratio"`
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// scanDetail reads detailColumns (plus extra destinations after them) into a detail whose 24h
// window holds the volume and trade count that token_market keeps for search.
func scanDetail(row pgx.Row, more ...any) (token.Detail, error) {
	var d token.Detail
	var c string
	var vendor, desc, img, market, meta, uri, sig *string
	var devLast *time.Time
	var creators, extra, socials, groups []byte
	var tag string
	var holders, trades24 int64
	var vol24 decimal.Decimal
	md := &d.MarketData
	dest := []any{&c, &d.Address, &d.Decimals, &d.Name, &d.Symbol, &vendor, &desc, &img, &market, &meta, &uri,
		&d.DevTotalTokens, &devLast, &d.CreatedAt, &d.CreatedBlockHeight, &d.CreatedSlot, &sig, &creators, &extra, &socials, &tag,
		&md.PriceInUSD, &md.PriceInSol, &md.TotalSupply, &md.CirculatingSupply, &md.MarketCapInUSD, &md.MarketCapInSol,
		&md.FDVInUSD, &md.FDVInSol, &holders, &md.Top10.TotalHoldings, &md.Top10.HoldingsRatio, &md.Top50.TotalHoldings,
		&md.Top50.HoldingsRatio, &md.Top100.TotalHoldings, &md.Top100.HoldingsRatio, &groups, &md.CompletionRatio,
		&md.MaxPoolTVLInUSD, &md.MaxPoolTVLInSol, &md.TotalTVLInUSD, &md.TotalTVLInSol, &vol24, &trades24}
	if err := row.Scan(append(dest, more...)...); err != nil {
		return d, err
	}
	d.Chain = chain.Chain(c)
	d.VendorCoinID, d.Description, d.ImageURL, d.Market = str(vendor), str(desc), str(img), str(market)
	d.MetadataAddress, d.URI, d.CreatedTxSignature = str(meta), str(uri), str(sig)
	if devLast != nil {
		t := devLast.UTC()
		d.DevLastTokenCreatedAt = &t
	}
	d.LaunchpadTag = token.CanonicalTag(tag)
	md.Holders = decimal.NewFromInt(holders)

	d.Creators = []token.Creator{}
	if err := json.Unmarshal(creators, &d.Creators); err != nil {
		return d, fmt.Errorf("token %s creators: %w", d.Address, err)
	}
	if err := json.Unmarshal(extra, &d.Extra); err != nil {
		return d, fmt.Errorf("token %s extra: %w", d.Address, err)
	}
	var links map[string]string
	if err := json.Unmarshal(socials, &links); err != nil {
		return d, fmt.Errorf("token %s socials: %w", d.Address, err)
	}
	s, err := token.NewSocials(links)
	if err != nil {
		return d, fmt.Errorf("token %s socials: %w", d.Address, err)
	}
	d.Socials = s
	var gs map[string]groupJSON
	if err := json.Unmarshal(groups, &gs); err != nil {
		return d, fmt.Errorf("token %s holder groups: %w", d.Address, err)
	}
	md.Groups = make(map[token.HolderGroup]token.GroupHolding, len(gs))
	for name, g := range gs {
		md.Groups[token.HolderGroup(name)] = token.GroupHolding{TotalHolders: g.Holders, TotalHoldings: g.Holdings, HoldingsRatio: g.Ratio}
	}
	d.Stats = map[token.Window]token.PeriodStats{token.Window24h: {TotalVolumeInUSD: vol24, Trades: trades24}}
	return d, nil
}

// searchSorts maps each sortBy key to its column. The (key, chain, address) indexes of
// migration 0020 serve every one of them in both directions.
var searchSorts = map[ports.SearchSort]keyPart{
	ports.SearchByMarketCapInUSD: {"m.market_cap_usd", "numeric"},
	ports.SearchByLiquidityInUSD: {"m.total_tvl_usd", "numeric"},
	ports.SearchByPriceInUSD:     {"m.price_usd", "numeric"},
	ports.SearchByHolderCount:    {"m.holders", "bigint"},
	ports.SearchByH24VolumeInUSD: {"m.volume_24h_usd", "numeric"},
	ports.SearchByH24Trades:      {"m.trades_24h", "bigint"},
	ports.SearchByTokenCreatedAt: {"COALESCE(t.created_at_ms, 0)", "bigint"},
}

// likePrefix escapes s for a LIKE pattern that matches strings starting with s.
func likePrefix(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(s) + "%"
}

// lazyArg returns v's placeholder in a, binding v on first use only.
func lazyArg(a *args, v any) func() string {
	var ph string
	return func() string {
		if ph == "" {
			ph = a.add(v)
		}
		return ph
	}
}

// minAddressPrefix keeps a one- or two-letter query from matching every address that starts
// with it; shorter queries still match an address exactly.
const minAddressPrefix = 4

// searchSQL builds the page query of s over one candidate set. Without a query text that is
// every token, walked along the sort key's index. With one, the set is the strong matches —
// address (exactly, or by prefix from minAddressPrefix characters), symbol or name exactly, by
// prefix or as one of s.Variants (one typo) — each an index range or probe on
// tokens_address_prefix_idx and the C-collation btrees of migration 0021; or, with similar,
// the names and symbols within trigram similarity of the query (pg_trgm's %, 0.3), only when
// there is no strong match under the same filters. A short symbol or a common word in a name is
// similar to a large share of the table, so the similarity set is a fallback, not a tail of
// every list. SearchTokens reads the similar set only when the strong one gave no rows.
//
// Relevance is a tier (exact address 10, exact symbol 8, exact name 7, prefix 4, one typo 2,
// similar only 0) plus the best trigram similarity of name or symbol (0..1), so tiers never
// overlap. Which set a query lists depends on the query and filters, never on the cursor, so
// keyset paging over it stays exact.
func searchSQL(s ports.TokenSearch, similar bool) (sql string, vals []any, kind string, err error) {
	a := &args{}
	var filters []string
	if len(s.Chains) > 0 {
		cs := make([]string, len(s.Chains))
		for i, c := range s.Chains {
			cs[i] = string(c)
		}
		filters = append(filters, "t.chain = ANY("+a.add(cs)+"::text[])")
	}
	if len(s.Protocols) > 0 {
		p := a.add(s.Protocols) + "::text[]"
		filters = append(filters, "(lower(t.launch_protocol_family) = ANY("+p+") OR lower(t.migrated_protocol_family) = ANY("+p+"))")
	}
	var ks keyset
	var with, match string
	if s.Query != "" {
		// q and lq are bound only where used: Postgres cannot type a parameter no expression
		// mentions.
		q, lq := lazyArg(a, s.Query), lazyArg(a, strings.ToLower(s.Query))
		prefix := a.add(likePrefix(strings.ToLower(s.Query)))
		var addr string
		if len(s.Query) >= minAddressPrefix {
			addr = "t.address LIKE " + a.add(likePrefix(s.Query))
		} else {
			addr = "t.address = " + q()
		}
		// COLLATE "C" (the same equality and prefixes: the collations Postgres builds are
		// deterministic) matches the C-collation btrees only. Without it the planner probes the
		// trigram GIN indexes for the typo spellings, which support = too at ~0.2 ms a probe.
		sym, name := `lower(t.symbol) COLLATE "C"`, `lower(t.name) COLLATE "C"`
		strong := []string{addr, sym + " LIKE " + prefix, name + " LIKE " + prefix}
		var variants string
		if len(s.Variants) > 0 {
			variants = a.add(s.Variants) + "::text[]"
			// Read through a subquery (an InitPlan), the list is a value the planner does not
			// see: it costs the probes as ~10 rather than ~600 and plans without a selectivity
			// estimate per spelling. Seen whole, at 30k tokens it chose a sequential scan (48 ms)
			// over the btree probes (1 ms).
			hidden := "(SELECT " + variants + ")::text[]"
			strong = append(strong, sym+" = ANY("+hidden+")", name+" = ANY("+hidden+")")
		}
		match = where(append(slices.Clone(filters), "("+strings.Join(strong, " OR ")+")"))
		if similar {
			// A CTE is planned for all its rows: the same probes as the strong query. A plain
			// NOT EXISTS is planned for its first row, as a sequential scan expected to meet a
			// match early.
			with = "WITH strong AS MATERIALIZED (SELECT FROM tokens t WHERE " + match + ")\n\t"
			match = "NOT EXISTS (SELECT FROM strong) AND " +
				where(append(slices.Clone(filters), "(lower(t.symbol) % "+lq()+" OR lower(t.name) % "+lq()+")"))
		}
		if s.SortBy == ports.SearchByRelevance {
			typo := ""
			if variants != "" {
				typo = " WHEN lower(t.symbol) = ANY(" + variants + ") OR lower(t.name) = ANY(" + variants + ") THEN 2"
			}
			rel := "(CASE WHEN t.address = " + q() + " THEN 10 WHEN lower(t.symbol) = " + lq() + " THEN 8 WHEN lower(t.name) = " + lq() +
				" THEN 7 WHEN lower(t.symbol) LIKE " + prefix + " OR lower(t.name) LIKE " + prefix + " OR " + addr + " THEN 4" +
				typo + " ELSE 0 END" +
				" + round(greatest(similarity(lower(t.name), " + lq() + "), similarity(lower(t.symbol), " + lq() + "))::numeric, 6))"
			// Ascending over the negated score, so equal scores list by chain and address ascending.
			ks = keyset{kind: "search-rel", parts: []keyPart{{"(-" + rel + ")", "numeric"}, {"t.chain", "text"}, {"t.address", "text"}}}
		}
	}
	if ks.kind == "" {
		sortBy := s.SortBy
		if sortBy == ports.SearchByRelevance {
			sortBy = ports.SearchByMarketCapInUSD
		}
		k, ok := searchSorts[sortBy]
		if !ok {
			return "", nil, "", fmt.Errorf("search: unknown sort %q", sortBy)
		}
		tail := "m."
		if strings.Contains(k.expr, "t.") {
			tail = "t."
		}
		ks = keyset{kind: "search-" + string(sortBy), desc: s.Desc,
			parts: []keyPart{k, {tail + "chain", "text"}, {tail + "address", "text"}}}
	}
	pos, err := ks.position(s.Page)
	if err != nil {
		return "", nil, "", err
	}
	cond, order := ks.clause(s.Page.Direction, pos, a)
	limit := strconv.Itoa(limitOf(s.Page))
	from := "tokens t"
	conds := append(filters, cond)
	if match != "" {
		// The page is cut from the candidates, which carry only the columns the order reads;
		// then its rows are read in full. A broad query ("t1", "moon") has thousands.
		inner := "tokens t"
		if strings.HasPrefix(ks.parts[0].expr, "m.") {
			inner += " JOIN token_market m ON m.chain = t.chain AND m.address = t.address"
		}
		from = `(` + with + `SELECT t.chain, t.address FROM ` + inner + ` WHERE ` + where([]string{match, cond}) +
			` ORDER BY ` + order + ` LIMIT ` + limit + `) p
	JOIN tokens t ON t.chain = p.chain AND t.address = p.address`
		conds = nil
	}
	sql = `SELECT ` + detailColumns + `, (` + ks.parts[0].expr + `)::text
	FROM ` + from + ` JOIN token_market m ON m.chain = t.chain AND m.address = t.address
	WHERE ` + where(conds) + ` ORDER BY ` + order + ` LIMIT ` + limit
	return sql, a.vals, ks.kind, nil
}

type searchRow struct {
	token.Detail
	key string
}

// SearchTokens implements ports.TokenReader. It reads the strong matches first and the similar
// ones only when that page is empty: then either nothing matches strongly, or the cursor is past
// the last strong match and the similarity query's NOT EXISTS gate answers nothing. It runs as
// unnamed statements so Postgres plans them with the actual patterns: a LIKE prefix can use a
// btree only when the planner sees it.
func (r *MarketReader) SearchTokens(ctx context.Context, s ports.TokenSearch) (page.Page[token.Detail], error) {
	var list []searchRow
	var kind string
	for _, similar := range []bool{false, true} {
		if similar && (s.Query == "" || len(list) > 0) {
			break
		}
		sql, vals, k, err := searchSQL(s, similar)
		if err != nil {
			return page.Page[token.Detail]{}, err
		}
		kind = k
		if list, err = r.searchRows(ctx, s, sql, vals); err != nil {
			return page.Page[token.Detail]{}, err
		}
	}
	pg := page.Build(list, limitOf(s.Page)-1, s.Page.Direction, s.Page.Cursor != "", func(sr searchRow) string {
		return page.Encode(kind, sr.key, string(sr.Chain), sr.Address)
	})
	return unwrap(pg, func(sr searchRow) token.Detail { return sr.Detail }), nil
}

func (r *MarketReader) searchRows(ctx context.Context, s ports.TokenSearch, sql string, vals []any) ([]searchRow, error) {
	// hand-built: searchSQL picks the candidate set, ORDER BY and keyset at run time.
	rows, err := r.pool.Query(ctx, sql, append([]any{pgx.QueryExecModeExec}, vals...)...)
	if err != nil {
		return nil, interpretError(err, "search tokens", s.Query)
	}
	defer rows.Close()
	var list []searchRow
	for rows.Next() {
		var sr searchRow
		d, err := scanDetail(rows, &sr.key)
		if err != nil {
			return nil, interpretError(err, "search tokens", s.Query)
		}
		sr.Detail = d
		list = append(list, sr)
	}
	if err := rows.Err(); err != nil {
		return nil, interpretError(err, "search tokens", s.Query)
	}
	return list, nil
}

// TokenDetails implements ports.TokenReader with three index lookups sent as one batch (one
// round trip): the tokens with their market data, their window statistics, and the pools on
// either side of which they trade, each a lookup by primary key (tokens, token_market,
// token_stats) or by the pools' token indexes. Statistics and pools of addresses that are not
// tokens are ignored. The statements are sqlc's (queries/token.sql); the batch and the scans
// are by hand, because sqlc's :batch* kinds send one statement per batch.
func (r *MarketReader) TokenDetails(ctx context.Context, c chain.Chain, addresses []string) ([]token.Detail, error) {
	if len(addresses) == 0 {
		return []token.Detail{}, nil
	}
	batch := &pgx.Batch{}
	batch.Queue(dbsqlc.TokenDetails, string(c), addresses)
	batch.Queue(dbsqlc.TokenStats, string(c), addresses)
	batch.Queue(dbsqlc.TokenPools, string(c), addresses)
	br := r.pool.SendBatch(ctx, batch)
	out, err := readTokenDetails(br, c)
	if cerr := br.Close(); err == nil && cerr != nil {
		err = interpretError(cerr, "token details", string(c))
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// readTokenDetails reads the three results of TokenDetails' batch in order.
func readTokenDetails(br pgx.BatchResults, c chain.Chain) ([]token.Detail, error) {
	rows, err := br.Query()
	if err != nil {
		return nil, interpretError(err, "token details", string(c))
	}
	out := []token.Detail{}
	for rows.Next() {
		d, err := scanDetail(rows)
		if err != nil {
			rows.Close()
			return nil, interpretError(err, "token details", string(c))
		}
		d.Stats = map[token.Window]token.PeriodStats{}
		d.Pools = []token.PoolLiquidity{}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, interpretError(err, "token details", string(c))
	}
	index := make(map[string]int, len(out))
	for i, d := range out {
		index[d.Address] = i
	}

	srows, err := br.Query()
	if err != nil {
		return nil, interpretError(err, "token stats", string(c))
	}
	for srows.Next() {
		var addr, w string
		var s token.PeriodStats
		if err := srows.Scan(&addr, &w, &s.Buys, &s.Sells, &s.Trades, &s.Buyers, &s.Sellers, &s.Traders, &s.BuyVolume,
			&s.SellVolume, &s.TotalVolume, &s.BuyVolumeInUSD, &s.SellVolumeInUSD, &s.TotalVolumeInUSD, &s.OpenInUSD,
			&s.CloseInUSD, &s.HighInUSD, &s.LowInUSD, &s.PriceChangeRatioInUSD, &s.CurrentLiquidityInUSD); err != nil {
			srows.Close()
			return nil, interpretError(err, "token stats", string(c))
		}
		if i, ok := index[addr]; ok {
			out[i].Stats[token.Window(w)] = s
		}
	}
	if err := srows.Err(); err != nil {
		return nil, interpretError(err, "token stats", string(c))
	}

	prows, err := br.Query()
	if err != nil {
		return nil, interpretError(err, "token pools", string(c))
	}
	for prows.Next() {
		p := token.PoolLiquidity{Chain: string(c)}
		if err := prows.Scan(&p.PoolAddress, &p.ProgramAddress, &p.ProtocolFamily, &p.ProtocolName, &p.Image, &p.TokenAAddress,
			&p.TokenBAddress, &p.TVLInUSD, &p.TVLInSol); err != nil {
			prows.Close()
			return nil, interpretError(err, "token pools", string(c))
		}
		for _, side := range []string{p.TokenAAddress, p.TokenBAddress} {
			if i, ok := index[side]; ok {
				out[i].Pools = append(out[i].Pools, p)
			}
		}
	}
	if err := prows.Err(); err != nil {
		return nil, interpretError(err, "token pools", string(c))
	}
	return out, nil
}

// HotTokens implements ports.TokenReader through hot_tokens_rank_idx.
func (r *MarketReader) HotTokens(ctx context.Context, c chain.Chain, d ranking.Duration, max int) ([]ports.HotEntry, error) {
	rows, err := r.q.HotTokens(ctx, r.pool, dbsqlc.HotTokensParams{Chain: string(c), Duration: string(d), Max: int64(max)})
	if err != nil {
		return nil, interpretError(err, "hot tokens", string(c))
	}
	out := make([]ports.HotEntry, len(rows))
	for i, e := range rows {
		out[i] = ports.HotEntry{Address: e.Address, Rank: e.Rank, Score: e.Score}
	}
	return out, nil
}
