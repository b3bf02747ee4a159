-- name: TokenDetails :many
-- The token read path's three lookups, which MarketReader.TokenDetails sends as one pgx.Batch
-- (one round trip) and scans by hand: the tokens with their market data (the select list is
-- detailColumns in adapters/postgres/read_token.go, which scanDetail reads, and the token search
-- shares), their windows, and the pools on either side of which they trade.
SELECT t.chain, t.address, t.decimals, t.name, t.symbol, t.vendor_coin_id, t.description, t.image_url, t.market,
    t.metadata_address, t.uri, t.dev_total_tokens, t.dev_last_token_created_at, t.created_at_ms, t.created_block_height,
    t.created_slot, t.created_tx_signature, t.creators, t.extra, t.socials, COALESCE(t.launchpad_tag, ''),
    m.price_usd, m.price_sol, m.total_supply, m.circulating_supply, m.market_cap_usd, m.market_cap_sol, m.fdv_usd, m.fdv_sol,
    m.holders, m.top10_holdings, m.top10_ratio, m.top50_holdings, m.top50_ratio, m.top100_holdings, m.top100_ratio, m.groups,
    m.completion_ratio, m.max_pool_tvl_usd, m.max_pool_tvl_sol, m.total_tvl_usd, m.total_tvl_sol, m.volume_24h_usd, m.trades_24h
FROM tokens t JOIN token_market m ON m.chain = t.chain AND m.address = t.address
WHERE t.chain = $1 AND t.address = ANY(sqlc.arg(addresses)::text[]) ORDER BY t.address;

-- name: TokenStats :many
SELECT address, window_name, buys, sells, trades, buyers, sellers, traders, buy_volume,
    sell_volume, total_volume, buy_volume_usd, sell_volume_usd, total_volume_usd, open_usd, close_usd, high_usd, low_usd,
    price_change_ratio_usd, current_liquidity_usd
FROM token_stats WHERE chain = $1 AND address = ANY(sqlc.arg(addresses)::text[]);

-- name: TokenPools :many
SELECT address, program_address, protocol_family, protocol_name, image, token_a_address,
    token_b_address, tvl_usd, tvl_sol
FROM pools WHERE chain = $1 AND (token_a_address = ANY(sqlc.arg(addresses)::text[]) OR token_b_address = ANY(sqlc.arg(addresses)::text[]))
ORDER BY tvl_usd DESC, address;
