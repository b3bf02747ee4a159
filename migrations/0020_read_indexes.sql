-- Read API (issue 4): indexes the read paths need beyond the base schema.

-- Token search without a chain filter walks one of these in sort order (either direction), so
-- the first page of "every token by market cap" reads ~limit rows instead of sorting the table.
-- (chain, address) after the key gives the keyset a unique tail in the same direction.
CREATE INDEX token_market_mcap_all_idx ON token_market (market_cap_usd, chain, address);
CREATE INDEX token_market_liq_all_idx ON token_market (total_tvl_usd, chain, address);
CREATE INDEX token_market_price_all_idx ON token_market (price_usd, chain, address);
CREATE INDEX token_market_holders_all_idx ON token_market (holders, chain, address);
CREATE INDEX token_market_vol_all_idx ON token_market (volume_24h_usd, chain, address);
CREATE INDEX token_market_trades_all_idx ON token_market (trades_24h, chain, address);
CREATE INDEX tokens_created_all_idx ON tokens ((COALESCE(created_at_ms, 0)), chain, address);

-- Search: exact and one-typo matches of a symbol or name, and prefixes (text_pattern_ops lets
-- LIKE 'abc%' use the btree under a non-C collation).
CREATE INDEX tokens_symbol_lower_idx ON tokens (lower(symbol) text_pattern_ops);
CREATE INDEX tokens_name_lower_idx ON tokens (lower(name) text_pattern_ops);

-- Red packets filtered by creator and chain together, newest first, and their exact count.
CREATE INDEX red_packets_creator_chain_idx ON red_packets (creator, chain, seq DESC);
