package postgres_test

import (
	"context"
	"crypto/md5"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/adapters/postgres/pgtest"
	"github.com/tokenscope/tokenscope/app/market"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/page"
	"github.com/tokenscope/tokenscope/ports"
)

// explainFixture fills the engine tables with enough rows (300k trades, 30k tokens…) that a
// sequential scan is the planner's choice whenever no index fits. It writes with
// generate_series rather than through the ingest port: only plan shapes are under test here,
// and the engine's derivations would take minutes at this size. Filling takes half a minute, so
// pgtest.Fixture builds it once per migration set and keeps it (read-only) across runs. As a
// restore does, it drops the tables' secondary indexes first and builds them again from their
// own definitions once the rows are in (a third faster than maintaining them row by row).
const explainFixture = `
CREATE TEMP TABLE explain_indexes AS SELECT c.relname AS name, pg_get_indexdef(i.indexrelid) AS def
FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
WHERE i.indrelid IN ('tokens'::regclass, 'token_market'::regclass, 'token_stats'::regclass, 'pools'::regclass,
	'trades'::regclass, 'pool_snapshots'::regclass, 'wallet_positions'::regclass, 'hot_tokens'::regclass,
	'red_packets'::regclass, 'red_packet_claims'::regclass)
AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid);
DO $$ DECLARE r record; BEGIN
	FOR r IN SELECT name FROM explain_indexes LOOP EXECUTE format('DROP INDEX %I', r.name); END LOOP;
END $$;
INSERT INTO tokens (chain, address, decimals, name, symbol, created_at_ms, launch_protocol_family)
SELECT (ARRAY['sol','eth','bsc'])[1 + i % 3], 'tok' || i, 6, 'Token ' || md5(i::text), upper(substr(md5(i::text), 1, 5)),
	1700000000000 + i * 1000, CASE WHEN i % 2 = 0 THEN 'pumpfun' ELSE 'raydium' END
FROM generate_series(1, 30000) i;
INSERT INTO token_market (chain, address, price_usd, market_cap_usd, holders, volume_24h_usd, trades_24h, total_tvl_usd)
SELECT chain, address, (random() * 100)::numeric(20, 6), (random() * 1e6)::numeric(20, 2), (random() * 1000)::bigint,
	(random() * 1e5)::numeric(20, 2), (random() * 1000)::bigint, (random() * 1e5)::numeric(20, 2) FROM tokens;
INSERT INTO token_stats (chain, address, window_name)
SELECT chain, address, w FROM tokens CROSS JOIN unnest(ARRAY['1m','5m','15m','30m','1h','4h','24h']) w;
INSERT INTO pools (chain, address, token_a_address, token_b_address)
SELECT (ARRAY['sol','eth','bsc'])[1 + i % 3], 'pool' || i, 'tok' || i, 'base' FROM generate_series(1, 3000) i;
INSERT INTO trades (chain, tx_signature, instruction_index, block_height, block_timestamp_ms, wallet, pool_address, side,
	token_address, token_amount, token_amount_native, token_amount_usd, token_price_native, token_price_usd,
	side_token_address, side_token_amount, side_token_amount_native, side_token_amount_usd, side_token_price_native,
	side_token_price_usd)
SELECT (ARRAY['sol','eth','bsc'])[1 + (i % 30000 + 1) % 3], 'sig' || i, 0, i, 1700000000000 + i * 100, 'w' || (i % 5000),
	'pool' || (i % 3000 + 1), CASE WHEN i % 3 = 0 THEN 'SELL' ELSE 'BUY' END, 'tok' || (i % 30000 + 1), 1, 1, 1, 1, 1, 'base', 1, 1, 1, 1, 1
FROM generate_series(1, 300000) i;
INSERT INTO pool_snapshots (chain, pool_address, block_height, block_timestamp_ms, snapshot_time_ms, a_token_address,
	a_decimals, a_vault_amount, a_amount_native, a_amount_usd, a_price_native, a_price_usd, b_token_address, b_decimals,
	b_vault_amount, b_amount_native, b_amount_usd, b_price_native, b_price_usd, tvl_native, tvl_usd)
SELECT 'sol', 'pool' || p, h, 1700000000000 + h * 1000, 1700000000000 + h * 1000, 'tok' || p, 6, 1, 1, 1, 1, 1, 'base', 9, 1, 1, 1, 1, 1, 2, 2
FROM generate_series(1, 600) p CROSS JOIN generate_series(1, 100) h;
INSERT INTO wallet_positions (chain, wallet, token_address, balance, buys)
SELECT 'sol', 'w' || w, 'tok' || (w * 12 + k), 1, 1 FROM generate_series(1, 5000) w CROSS JOIN generate_series(1, 12) k;
INSERT INTO hot_tokens (chain, duration, address, rank, score, computed_at_ms)
SELECT c, d, 'tok' || r, r, 1, 0 FROM unnest(ARRAY['sol','eth','bsc']) c CROSS JOIN unnest(ARRAY['1m','5m','1h','4h','24h']) d
CROSS JOIN generate_series(1, 2000) r;
INSERT INTO red_packets (id, chain, creator, mint, max_claims, total_amount, created_at_ms, expired_at_ms, expiration)
SELECT 'rp' || i, (ARRAY['sol','eth','bsc'])[1 + i % 3], 'c' || (i % 3000), 'tok1', 5, 1000, i, i + 1000, 1
FROM generate_series(1, 30000) i;
INSERT INTO red_packet_claims (packet_id, claimer, chain, mint, creator, amount, claimed_at_ms)
SELECT 'rp' || i, 'k' || k, 'sol', 'tok1', 'c', 1, i FROM generate_series(1, 15000) i CROSS JOIN generate_series(1, 2) k;
DO $$ DECLARE r record; BEGIN
	FOR r IN SELECT def FROM explain_indexes LOOP EXECUTE r.def; END LOOP;
END $$;
`

type planNode struct {
	NodeType string     `json:"Node Type"`
	Relation string     `json:"Relation Name"`
	Index    string     `json:"Index Name"`
	Plans    []planNode `json:"Plans"`
	// With ANALYZE only.
	Rows  float64 `json:"Actual Rows"`
	Loops float64 `json:"Actual Loops"`
}

func (n planNode) walk(f func(planNode)) {
	f(n)
	for _, c := range n.Plans {
		c.walk(f)
	}
}

// explain returns the plan of sql with args on db as the reader runs it (an unnamed statement,
// so the planner sees the values).
func explain(t *testing.T, db *pgxpool.Pool, sql string, args []any) planNode {
	t.Helper()
	return explainWith(t, db, "FORMAT JSON", sql, args)
}

// explainWith is explain with other options, e.g. ANALYZE to see what a plan actually read.
func explainWith(t *testing.T, db *pgxpool.Pool, options, sql string, args []any) planNode {
	t.Helper()
	var raw []byte
	err := db.QueryRow(context.Background(), "EXPLAIN ("+options+") "+sql,
		append([]any{pgx.QueryExecModeExec}, args...)...).Scan(&raw)
	require.NoError(t, err, sql)
	var out []struct {
		Plan planNode `json:"Plan"`
	}
	require.NoError(t, json.Unmarshal(raw, &out))
	require.Len(t, out, 1)
	return out[0].Plan
}

func TestReadQueryPlans(t *testing.T) {
	t.Parallel()
	// The fixture is vacuumed and analyzed: VACUUM sets the statistics GIN costing reads and the
	// visibility map index-only counts need, as autovacuum does on a live database.
	db := pgtest.Fixture(t, explainFixture)

	first := ports.PageRequest{Limit: 20, Direction: page.Next}
	tradeCursor := ports.PageRequest{Limit: 20, Direction: page.Next, Cursor: page.Encode("trade", "1700000010000000", "150000")}
	tradePrev := ports.PageRequest{Limit: 20, Direction: page.Prev, Cursor: page.Encode("trade", "1700000010000000", "150000")}
	h := int64(150000)
	type built struct {
		sql  string
		args []any
	}
	must := func(sql string, args []any, err error) built {
		require.NoError(t, err)
		return built{sql, args}
	}
	mustSearch := func(sql string, args []any, _ string, err error) built {
		require.NoError(t, err)
		return built{sql, args}
	}
	// The symbol of tok7: an exact match, and a few one-typo symbols among 30k random ones.
	sym7 := strings.ToUpper(fmt.Sprintf("%x", md5.Sum([]byte("7")))[:5])
	bySymbol := ports.TokenSearch{Query: sym7, Variants: market.Typos(strings.ToLower(sym7)), Page: first}
	bySymbolNext := bySymbol
	bySymbolNext.Page = ports.PageRequest{Limit: 20, Direction: page.Next, Cursor: page.Encode("search-rel", "-4.5", "sol", "tok1")}
	bySymbolCap := bySymbol
	bySymbolCap.SortBy, bySymbolCap.Desc = ports.SearchByMarketCapInUSD, true
	// Nothing starts with or is one typo from this: only the similarity fallback can answer.
	unmatched := ports.TokenSearch{Query: "qqqqqqqqqqqqqq", Page: first}
	strongIdx := []string{"tokens_symbol_lower_c_idx", "tokens_name_lower_c_idx"}
	trgmIdx := []string{"tokens_symbol_trgm_idx", "tokens_name_trgm_idx"}
	tests := []struct {
		name string
		q    built
		// want lists acceptable indexes; the plan must use one of them.
		want []string
	}{
		{"trades newest", must(postgres.TradesSQL(ports.TradeFilter{Chain: chain.Sol}, first)), []string{"trades_chain_time_idx"}},
		{"trades next page", must(postgres.TradesSQL(ports.TradeFilter{Chain: chain.Sol}, tradeCursor)), []string{"trades_chain_time_idx"}},
		{"trades prev page", must(postgres.TradesSQL(ports.TradeFilter{Chain: chain.Sol}, tradePrev)), []string{"trades_chain_time_idx"}},
		{"trades by token", must(postgres.TradesSQL(ports.TradeFilter{Chain: chain.Sol, TokenAddress: "tok3"}, tradeCursor)), []string{"trades_token_time_idx"}},
		{"trades by wallet", must(postgres.TradesSQL(ports.TradeFilter{Chain: chain.Sol, Wallet: "w7", Side: "BUY"}, first)), []string{"trades_wallet_time_idx", "trades_wallet_token_idx"}},
		{"trades by pool", must(postgres.TradesSQL(ports.TradeFilter{Chain: chain.Sol, PoolAddress: "pool9"}, first)), []string{"trades_pool_time_idx"}},
		{"trades by signature", must(postgres.TradesSQL(ports.TradeFilter{Chain: chain.Sol, Signatures: []string{"sig5", "sig8"}}, first)), []string{"trades_pkey"}},
		{"trades by height", must(postgres.TradesSQL(ports.TradeFilter{Chain: chain.Sol, MaxHeight: &h}, first)), []string{"trades_chain_time_idx", "trades_block_idx"}},
		{"search relevance", mustSearch(postgres.SearchSQL(bySymbol, false)), strongIdx},
		{"search relevance, next page", mustSearch(postgres.SearchSQL(bySymbolNext, false)), strongIdx},
		{"search relevance, similarity fallback", mustSearch(postgres.SearchSQL(unmatched, true)), trgmIdx},
		{"search with a query by market cap", mustSearch(postgres.SearchSQL(bySymbolCap, false)), strongIdx},
		{"search by market cap", mustSearch(postgres.SearchSQL(ports.TokenSearch{SortBy: ports.SearchByMarketCapInUSD, Desc: true, Page: first}, false)),
			[]string{"token_market_mcap_all_idx"}},
		{"search by holders on sol, next page", mustSearch(postgres.SearchSQL(ports.TokenSearch{SortBy: ports.SearchByHolderCount,
			Chains: []chain.Chain{chain.Sol}, Page: ports.PageRequest{Limit: 20, Direction: page.Next,
				Cursor: page.Encode("search-holderCount", "500", "sol", "tok99")}}, false)),
			[]string{"token_market_holders_all_idx", "token_market_holders_idx"}},
		{"search by creation", mustSearch(postgres.SearchSQL(ports.TokenSearch{SortBy: ports.SearchByTokenCreatedAt, Desc: true, Page: first}, false)),
			[]string{"tokens_created_all_idx"}},
		{"search by 24h volume ascending", mustSearch(postgres.SearchSQL(ports.TokenSearch{SortBy: ports.SearchByH24VolumeInUSD, Page: first}, false)),
			[]string{"token_market_vol_all_idx"}},
		{"snapshots", must(postgres.SnapshotsSQL(chain.Sol, "pool7", nil, first)), []string{"pool_snapshots_time_idx"}},
		{"snapshots at a time", must(postgres.SnapshotsSQL(chain.Sol, "pool7", &h, first)), []string{"pool_snapshots_time_idx"}},
		{"positions", built{postgres.PositionsSQL, []any{"sol", "w7", []string{"tok85", "tok86"}}}, []string{"wallet_positions_pkey"}},
		{"token details", built{postgres.TokenDetailsSQL, []any{"sol", []string{"tok3", "tok6"}}}, []string{"tokens_pkey"}},
		{"token stats", built{postgres.TokenStatsSQL, []any{"sol", []string{"tok3", "tok6"}}}, []string{"token_stats_pkey"}},
		{"token pools", built{postgres.TokenPoolsSQL, []any{"sol", []string{"tok3", "tok6"}}}, []string{"pools_token_a_idx", "pools_token_b_idx"}},
		{"hot tokens", built{postgres.HotTokensSQL, []any{"sol", "4h", 1000}}, []string{"hot_tokens_rank_idx", "hot_tokens_pkey"}},
		{"red packets by creator", must(postgres.PacketsSQL(ports.RedPacketFilter{Creator: "c7"}, first)), []string{"red_packets_creator_idx", "red_packets_creator_chain_idx"}},
		{"red packets by creator and chain", must(postgres.PacketsSQL(ports.RedPacketFilter{Creator: "c7", Chain: chain.Eth}, first)), []string{"red_packets_creator_chain_idx"}},
		{"red packets by chain", must(postgres.PacketsSQL(ports.RedPacketFilter{Chain: chain.Eth}, first)), []string{"red_packets_chain_idx", "red_packets_seq_key"}},
		{"claims", must(postgres.ClaimsSQL("rp9", first)), []string{"red_packet_claims_packet_idx", "red_packet_claims_pkey"}},
	}
	big := map[string]bool{"trades": true, "tokens": true, "token_market": true, "token_stats": true, "pools": true,
		"pool_snapshots": true, "wallet_positions": true, "hot_tokens": true, "red_packets": true, "red_packet_claims": true}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plan := explain(t, db, tc.q.sql, tc.q.args)
			var used []string
			plan.walk(func(n planNode) {
				if n.NodeType == "Seq Scan" && big[n.Relation] {
					t.Errorf("sequential scan of %s", n.Relation)
				}
				if n.Index != "" {
					used = append(used, n.Index)
				}
			})
			ok := false
			for _, w := range tc.want {
				for _, u := range used {
					ok = ok || u == w
				}
			}
			assert.True(t, ok, "plan uses %s, want one of %s", strings.Join(used, ", "), strings.Join(tc.want, ", "))
		})
	}
	// A selective search must read a bounded number of rows at every step, not a share of the
	// table: the strong matches from btree probes, the market data and full rows for the page by
	// primary key. The similarity query (SearchTokens runs it when the strong page is empty) first
	// checks for a strong match the same way and reads the trigram indexes only when there is none.
	t.Run("search reads a bounded candidate set", func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			s      ports.TokenSearch
			strong bool // whether something matches strongly
		}{
			{"exact symbol", bySymbol, true},
			{"exact symbol, next page", bySymbolNext, true},
			{"exact symbol by market cap", bySymbolCap, true},
			{"typo of a symbol", ports.TokenSearch{Query: sym7[1:] + sym7[:1], Variants: market.Typos(strings.ToLower(sym7[1:] + sym7[:1])), Page: first}, true},
			{"name prefix", ports.TokenSearch{Query: "Token " + strings.ToLower(sym7), Variants: market.Typos("token " + strings.ToLower(sym7)), Page: first}, true},
			{"no strong match", unmatched, false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				for _, similar := range []bool{false, true} {
					sql, args, _, err := postgres.SearchSQL(tc.s, similar)
					require.NoError(t, err)
					ran := map[string]bool{}
					explainWith(t, db, "ANALYZE, FORMAT JSON", sql, args).walk(func(n planNode) {
						assert.NotEqual(t, "Seq Scan", n.NodeType, "similar=%v: sequential scan of %s", similar, n.Relation)
						assert.NotEqual(t, "Hash Join", n.NodeType, "similar=%v", similar)
						assert.LessOrEqual(t, n.Rows*n.Loops, 200.0, "similar=%v: %s %s%s reads %v rows", similar, n.NodeType,
							n.Relation, n.Index, n.Rows*n.Loops)
						if n.Loops > 0 && n.Index != "" {
							ran[n.Index] = true
						}
					})
					assert.True(t, ran["tokens_symbol_lower_c_idx"] && ran["tokens_name_lower_c_idx"], "similar=%v: strong matches by btree, ran %v", similar, ran)
					for _, idx := range trgmIdx {
						assert.Equal(t, similar && !tc.strong, ran[idx], "similar=%v: %s ran", similar, idx)
					}
				}
			})
		}
	})
	t.Run("counts are bounded by an index", func(t *testing.T) {
		for _, f := range []ports.RedPacketFilter{{Creator: "c7"}, {Creator: "c7", Chain: chain.Sol}, {Chain: chain.Bsc}} {
			sql, args := postgres.PacketsCountSQL(f)
			explain(t, db, sql, args).walk(func(n planNode) {
				assert.NotEqual(t, "Seq Scan", n.NodeType, "count of %+v scans %s", f, n.Relation)
			})
		}
	})
}
