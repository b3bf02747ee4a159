-- The ingest batch's and the refresh's derivations of token_market and token_stats
-- (adapters/postgres/engine_*.go); their bulk writes (COPY into temporary tables) are hand-built.
-- ROWS FROM (unnest(a), unnest(b)) is multi-array unnest(a, b) in the form sqlc accepts
-- (sqlc-dev/sqlc#3507); Postgres plans the two alike.

-- name: WindowTrades :many
-- The trades of the tokens (chains[i], addresses[i]) in (start_ms, end_ms], every status, read
-- through the (chain, token, time) index: the ingest batch's window derivation (computeWindows).
SELECT r.chain::text AS chain, r.address::text AS address, x.tx_signature, x.instruction_index, x.block_height,
    x.block_timestamp_ms, x.wallet, x.side, x.status, x.token_amount, x.token_amount_usd, x.token_price_usd
FROM ROWS FROM (unnest(sqlc.arg(chains)::text[]), unnest(sqlc.arg(addresses)::text[])) AS r(chain, address)
JOIN LATERAL (SELECT * FROM trades t WHERE t.chain = r.chain AND t.token_address = r.address
    AND t.block_timestamp_ms > sqlc.arg(start_ms) AND t.block_timestamp_ms <= sqlc.arg(end_ms)) x ON true;

-- name: RefreshWindowTrades :many
-- The successful trades of the tokens (chains[i], addresses[i]) in (starts[i], end_ms]: the
-- refresh's window derivation (refreshWindows). Its rows convert to WindowTradesRow.
SELECT r.chain::text AS chain, r.address::text AS address, x.tx_signature, x.instruction_index, x.block_height,
    x.block_timestamp_ms, x.wallet, x.side, x.status, x.token_amount, x.token_amount_usd, x.token_price_usd
FROM ROWS FROM (unnest(sqlc.arg(chains)::text[]), unnest(sqlc.arg(addresses)::text[]), unnest(sqlc.arg(starts)::bigint[]))
    AS r(chain, address, start)
JOIN LATERAL (SELECT * FROM trades t WHERE t.chain = r.chain AND t.token_address = r.address
    AND t.block_timestamp_ms > r.start AND t.block_timestamp_ms <= sqlc.arg(end_ms) AND t.status = 'SUCCEEDED') x ON true;

-- name: WindowLiquidity :many
-- The liquidity stored on token_market of the tokens (chains[i], addresses[i]) that have a market row.
SELECT m.chain, m.address, m.total_tvl_usd
FROM ROWS FROM (unnest(sqlc.arg(chains)::text[]), unnest(sqlc.arg(addresses)::text[])) AS r(chain, address)
JOIN token_market m ON m.chain = r.chain AND m.address = r.address;
