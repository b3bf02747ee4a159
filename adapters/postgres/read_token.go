package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/page"
	"github.com/tokenscope/tokenscope/domain/ranking"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/ports"
)

// detailColumns are the tokens ⋈ token_market columns scanDetail reads, in its order.
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
	d.LaunchpadTag = token.Tag(tag)
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

// minAddressPrefix keeps a one- or two-letter query from matching every address that starts
// with it; shorter queries still match an address exactly.
const minAddressPrefix = 4

// searchSQL builds the page query of s. With a query text the candidates come from the
// trigram and pattern indexes on name and symbol and the address index; relevance is a tier
// (exact address 10, exact symbol 8, exact name 7, prefix 4, one typo 2) plus the best trigram
// similarity of name or symbol (0..1), so tiers never overlap.
func searchSQL(s ports.TokenSearch) (sql string, vals []any, kind string, err error) {
	a := &args{}
	var conds []string
	if len(s.Chains) > 0 {
		cs := make([]string, len(s.Chains))
		for i, c := range s.Chains {
			cs[i] = string(c)
		}
		conds = append(conds, "t.chain = ANY("+a.add(cs)+"::text[])")
	}
	if len(s.Protocols) > 0 {
		p := a.add(s.Protocols) + "::text[]"
		conds = append(conds, "(lower(t.launch_protocol_family) = ANY("+p+") OR lower(t.migrated_protocol_family) = ANY("+p+"))")
	}
	var ks keyset
	if s.Query != "" {
		// q is bound only where used: Postgres cannot type a parameter no expression mentions.
		var qph string
		q := func() string {
			if qph == "" {
				qph = a.add(s.Query)
			}
			return qph
		}
		lq := a.add(strings.ToLower(s.Query))
		prefix := a.add(likePrefix(strings.ToLower(s.Query)))
		variants := a.add(s.Variants) + "::text[]"
		var addr string
		if len(s.Query) >= minAddressPrefix {
			addr = "t.address LIKE " + a.add(likePrefix(s.Query))
		} else {
			addr = "t.address = " + q()
		}
		conds = append(conds, "("+addr+" OR lower(t.symbol) LIKE "+prefix+" OR lower(t.name) LIKE "+prefix+
			" OR lower(t.symbol) = ANY("+variants+") OR lower(t.name) = ANY("+variants+")"+
			" OR lower(t.symbol) % "+lq+" OR lower(t.name) % "+lq+")")
		rel := func() string {
			return "(CASE WHEN t.address = " + q() + " THEN 10 WHEN lower(t.symbol) = " + lq + " THEN 8 WHEN lower(t.name) = " + lq +
				" THEN 7 WHEN lower(t.symbol) LIKE " + prefix + " OR lower(t.name) LIKE " + prefix + " OR " + addr + " THEN 4" +
				" WHEN lower(t.symbol) = ANY(" + variants + ") OR lower(t.name) = ANY(" + variants + ") THEN 2 ELSE 0 END" +
				" + round(greatest(similarity(lower(t.name), " + lq + "), similarity(lower(t.symbol), " + lq + "))::numeric, 6))"
		}
		if s.SortBy == ports.SearchByRelevance {
			rel := rel()
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
	conds = append(conds, cond)
	sql = `SELECT ` + detailColumns + `, (` + ks.parts[0].expr + `)::text
	FROM tokens t JOIN token_market m ON m.chain = t.chain AND m.address = t.address
	WHERE ` + where(conds) + ` ORDER BY ` + order + ` LIMIT ` + strconv.Itoa(limitOf(s.Page))
	return sql, a.vals, ks.kind, nil
}

type searchRow struct {
	token.Detail
	key string
}

// SearchTokens implements ports.TokenReader. It runs as an unnamed statement so Postgres plans
// it with the actual pattern: a LIKE prefix can use a btree only when the planner sees it.
func (r *MarketReader) SearchTokens(ctx context.Context, s ports.TokenSearch) (page.Page[token.Detail], error) {
	sql, vals, kind, err := searchSQL(s)
	if err != nil {
		return page.Page[token.Detail]{}, err
	}
	rows, err := r.pool.Query(ctx, sql, append([]any{pgx.QueryExecModeExec}, vals...)...)
	if err != nil {
		return page.Page[token.Detail]{}, interpretError(err, "search tokens", s.Query)
	}
	defer rows.Close()
	var list []searchRow
	for rows.Next() {
		var sr searchRow
		d, err := scanDetail(rows, &sr.key)
		if err != nil {
			return page.Page[token.Detail]{}, interpretError(err, "search tokens", s.Query)
		}
		sr.Detail = d
		list = append(list, sr)
	}
	if err := rows.Err(); err != nil {
		return page.Page[token.Detail]{}, interpretError(err, "search tokens", s.Query)
	}
	pg := page.Build(list, limitOf(s.Page)-1, s.Page.Direction, s.Page.Cursor != "", func(sr searchRow) string {
		return page.Encode(kind, sr.key, string(sr.Chain), sr.Address)
	})
	return unwrap(pg, func(sr searchRow) token.Detail { return sr.Detail }), nil
}

// The detail queries are lookups by primary key (tokens, token_market, token_stats) and by
// the pools' token indexes; hot_tokens_rank_idx serves the ranking.
const (
	tokenDetailsSQL = `SELECT ` + detailColumns + `
	FROM tokens t JOIN token_market m ON m.chain = t.chain AND m.address = t.address
	WHERE t.chain = $1 AND t.address = ANY($2::text[]) ORDER BY t.address`
	tokenStatsSQL = `SELECT address, window_name, buys, sells, trades, buyers, sellers, traders, buy_volume,
	sell_volume, total_volume, buy_volume_usd, sell_volume_usd, total_volume_usd, open_usd, close_usd, high_usd, low_usd,
	price_change_ratio_usd, current_liquidity_usd
	FROM token_stats WHERE chain = $1 AND address = ANY($2::text[])`
	tokenPoolsSQL = `SELECT address, program_address, protocol_family, protocol_name, image, token_a_address,
	token_b_address, tvl_usd, tvl_sol
	FROM pools WHERE chain = $1 AND (token_a_address = ANY($2::text[]) OR token_b_address = ANY($2::text[]))
	ORDER BY tvl_usd DESC, address`
	hotTokensSQL = `SELECT address, rank, score FROM hot_tokens WHERE chain = $1 AND duration = $2
	ORDER BY rank, address LIMIT $3`
)

// TokenDetails implements ports.TokenReader with three index lookups: the tokens with their
// market data, their window statistics, and the pools on either side of which they trade.
func (r *MarketReader) TokenDetails(ctx context.Context, c chain.Chain, addresses []string) ([]token.Detail, error) {
	if len(addresses) == 0 {
		return []token.Detail{}, nil
	}
	rows, err := r.pool.Query(ctx, tokenDetailsSQL, string(c), addresses)
	if err != nil {
		return nil, interpretError(err, "token details", string(c))
	}
	var out []token.Detail
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
	if len(out) == 0 {
		return []token.Detail{}, nil
	}
	index := make(map[string]int, len(out))
	found := make([]string, len(out))
	for i, d := range out {
		index[d.Address] = i
		found[i] = d.Address
	}

	srows, err := r.pool.Query(ctx, tokenStatsSQL, string(c), found)
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
		out[index[addr]].Stats[token.Window(w)] = s
	}
	if err := srows.Err(); err != nil {
		return nil, interpretError(err, "token stats", string(c))
	}

	prows, err := r.pool.Query(ctx, tokenPoolsSQL, string(c), found)
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
	rows, err := r.pool.Query(ctx, hotTokensSQL, string(c), string(d), max)
	if err != nil {
		return nil, interpretError(err, "hot tokens", string(c))
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ports.HotEntry, error) {
		var e ports.HotEntry
		err := row.Scan(&e.Address, &e.Rank, &e.Score)
		return e, err
	})
	if err != nil {
		return nil, interpretError(err, "hot tokens", string(c))
	}
	return out, nil
}
