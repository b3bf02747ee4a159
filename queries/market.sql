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

-- name: MarketInputs :many
-- The market inputs of the tokens (chains[i], addresses[i]) that have a tokens row: the tokens row,
-- the newest successful trade, the bonding-curve pool and the TVL over all the token's pools
-- (loadMarketInputs).
SELECT t.chain, t.address, COALESCE(t.creator_address, '') AS creator_address,
    t.total_supply, t.circulating_supply, t.curve_target_native, (t.migrated_at_ms IS NOT NULL)::boolean AS migrated,
    COALESCE(lt.token_price_usd, 0) AS price_usd, COALESCE(lt.token_price_native, 0) AS price_native,
    COALESCE(lt.block_timestamp_ms, 0) AS last_trade_ms,
    COALESCE(cp.reserve_b, 0) AS curve_reserve,
    COALESCE(pl.max_usd, 0)::numeric AS max_tvl_usd, COALESCE(pl.max_sol, 0)::numeric AS max_tvl_sol,
    COALESCE(pl.sum_usd, 0)::numeric AS sum_tvl_usd, COALESCE(pl.sum_sol, 0)::numeric AS sum_tvl_sol
FROM ROWS FROM (unnest(sqlc.arg(chains)::text[]), unnest(sqlc.arg(addresses)::text[])) AS r(chain, address)
JOIN tokens t ON t.chain = r.chain AND t.address = r.address
LEFT JOIN LATERAL (SELECT token_price_usd, token_price_native, block_timestamp_ms FROM trades x
    WHERE x.chain = t.chain AND x.token_address = t.address AND x.status = 'SUCCEEDED'
    ORDER BY block_timestamp_ms DESC, seq DESC LIMIT 1) lt ON true
LEFT JOIN pools cp ON cp.chain = t.chain AND cp.address = t.curve_pool_address
LEFT JOIN LATERAL (SELECT max(tvl_usd) AS max_usd, max(tvl_sol) AS max_sol, sum(tvl_usd) AS sum_usd, sum(tvl_sol) AS sum_sol
    FROM pools p WHERE p.chain = t.chain AND (p.token_a_address = t.address OR p.token_b_address = t.address)) pl ON true;

-- name: MarketHolders :many
-- In one pass over each token's positive balances, the holder count (n), the top 100 holders and
-- every holder that is labelled, the creator, or bought within sniper_blocks blocks of creation
-- (loadHolders), of the tokens (chains[i], addresses[i]) that have a tokens row.
SELECT h.chain, h.token_address, h.n, h.wallet, h.balance, COALESCE(h.labels, '{}')::text[] AS labels, h.first_block_height,
    h.created_block_height
FROM (
    SELECT w.chain, w.token_address, w.wallet, w.balance, w.first_block_height,
        (SELECT array_agg(l.label ORDER BY l.label) FROM wallet_labels l WHERE l.chain = w.chain AND l.wallet = w.wallet) AS labels,
        t.creator_address,
        t.created_block_height,
        count(*) OVER (PARTITION BY w.chain, w.token_address) AS n,
        row_number() OVER (PARTITION BY w.chain, w.token_address ORDER BY w.balance DESC, w.wallet) AS rk
    FROM ROWS FROM (unnest(sqlc.arg(chains)::text[]), unnest(sqlc.arg(addresses)::text[])) AS r(chain, address)
    JOIN tokens t ON t.chain = r.chain AND t.address = r.address
    JOIN wallet_positions w ON w.chain = r.chain AND w.token_address = r.address AND w.balance > 0
) h
WHERE h.rk <= 100 OR h.wallet = h.creator_address OR h.labels IS NOT NULL
    OR h.first_block_height BETWEEN h.created_block_height AND h.created_block_height + sqlc.arg(sniper_blocks)::bigint;
