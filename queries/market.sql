-- The ingest batch's and the refresh's derivations of token_market and token_stats
-- (adapters/postgres/engine_*.go); their bulk writes (COPY into temporary tables) are hand-built.
-- ROWS FROM (unnest(a), unnest(b)) is multi-array unnest(a, b) in the form sqlc accepts
-- (sqlc-dev/sqlc#3507); Postgres plans the two alike.

-- name: WindowLiquidity :many
-- The liquidity stored on token_market of the tokens (chains[i], addresses[i]) that have a market row.
SELECT m.chain, m.address, m.total_tvl_usd
FROM ROWS FROM (unnest(sqlc.arg(chains)::text[]), unnest(sqlc.arg(addresses)::text[])) AS r(chain, address)
JOIN token_market m ON m.chain = r.chain AND m.address = r.address;
