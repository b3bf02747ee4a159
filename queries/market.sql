-- The ingest batch's and the refresh's derivations of token_market and token_stats
-- (adapters/postgres/engine_*.go); their bulk writes (COPY into temporary tables) are hand-built.
-- ROWS FROM (unnest(a), unnest(b)) is multi-array unnest(a, b) in the form sqlc accepts
-- (sqlc-dev/sqlc#3507); Postgres plans the two alike.

-- name: BucketSpans :many
-- The time buckets of the spans (chains[i], addresses[i], resolutions[i], [froms[i], tos[i])),
-- each a range scan of token_buckets' key: the buckets a token's windows sum (stats.Cover).
SELECT b.chain, b.address, b.res_ms, b.start_ms, b.buys, b.sells, b.buy_volume, b.sell_volume, b.buy_volume_usd,
    b.sell_volume_usd, b.open_usd, b.open_ms, b.open_height, b.open_sig, b.open_ix, b.close_usd, b.close_ms,
    b.close_height, b.close_sig, b.close_ix, b.high_usd, b.low_usd, b.last_buyers, b.last_sellers, b.last_traders
FROM ROWS FROM (unnest(sqlc.arg(chains)::text[]), unnest(sqlc.arg(addresses)::text[]),
    unnest(sqlc.arg(resolutions)::bigint[]), unnest(sqlc.arg(froms)::bigint[]), unnest(sqlc.arg(tos)::bigint[]))
    AS r(chain, address, res_ms, from_ms, to_ms)
JOIN LATERAL (SELECT * FROM token_buckets x WHERE x.chain = r.chain AND x.address = r.address AND x.res_ms = r.res_ms
    AND x.start_ms >= r.from_ms AND x.start_ms < r.to_ms) b ON true;

-- name: WindowLiquidity :many
-- The liquidity stored on token_market of the tokens (chains[i], addresses[i]) that have a market row.
SELECT m.chain, m.address, m.total_tvl_usd
FROM ROWS FROM (unnest(sqlc.arg(chains)::text[]), unnest(sqlc.arg(addresses)::text[])) AS r(chain, address)
JOIN token_market m ON m.chain = r.chain AND m.address = r.address;

-- name: MarketInputs :many
-- The market inputs of the tokens (chains[i], addresses[i]) that have a tokens row: the tokens row,
-- the newest successful trade (in trade.Compare order), the bonding-curve pool and the TVL over all the token's pools
-- (loadMarketInputs). The newest trade's time is one step down trades_token_time_idx; only that
-- millisecond's trades are sorted (as SolPriceUSD: with the four sort keys at once, a planner on
-- stale statistics sorted every trade of the token).
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
    WHERE x.chain = t.chain AND x.token_address = t.address AND x.status = 'SUCCEEDED' AND x.block_timestamp_ms = (
        SELECT y.block_timestamp_ms FROM trades y WHERE y.chain = t.chain AND y.token_address = t.address
            AND y.status = 'SUCCEEDED' ORDER BY y.block_timestamp_ms DESC LIMIT 1)
    ORDER BY block_height DESC, tx_signature COLLATE "C" DESC, instruction_index DESC LIMIT 1) lt ON true
LEFT JOIN pools cp ON cp.chain = t.chain AND cp.address = t.curve_pool_address
LEFT JOIN LATERAL (SELECT max(tvl_usd) AS max_usd, max(tvl_sol) AS max_sol, sum(tvl_usd) AS sum_usd, sum(tvl_sol) AS sum_sol
    FROM pools p WHERE p.chain = t.chain AND (p.token_a_address = t.address OR p.token_b_address = t.address)) pl ON true;

-- name: HolderAggregates :many
-- The holder aggregates of the tokens (chains[i], addresses[i]): 'all' and each holder group.
SELECT g.chain, g.address, g.holder_group, g.holders, g.holdings
FROM ROWS FROM (unnest(sqlc.arg(chains)::text[]), unnest(sqlc.arg(addresses)::text[])) AS r(chain, address)
JOIN token_holder_groups g ON g.chain = r.chain AND g.address = r.address;

-- name: TopHoldings :many
-- The sums of the 10, 50 and (at most) limits[i] largest balances of each of the tokens
-- (chains[i], addresses[i]), read from the ordered holders index (ties do not change a sum); a
-- token without a positive balance has no row. Exact: numeric sums, as reference.Holdings's in
-- Go. The caller asks for no more balances than it needs (loadHolders).
SELECT r.chain::text AS chain, r.address::text AS address,
    (sum(x.balance) FILTER (WHERE x.n <= 10))::numeric AS top10,
    (sum(x.balance) FILTER (WHERE x.n <= 50))::numeric AS top50,
    sum(x.balance)::numeric AS top100
FROM ROWS FROM (unnest(sqlc.arg(chains)::text[]), unnest(sqlc.arg(addresses)::text[]), unnest(sqlc.arg(limits)::bigint[]))
    AS r(chain, address, n)
JOIN LATERAL (SELECT p.balance, row_number() OVER (ORDER BY p.balance DESC) AS n FROM wallet_positions p
    WHERE p.chain = r.chain AND p.token_address = r.address AND p.balance > 0
    ORDER BY p.balance DESC LIMIT r.n) x ON true
GROUP BY r.chain, r.address;

-- name: MarkPending :exec
-- Marks the tokens (chains[i], addresses[i]) pending for the next flush; windows[i] says whether
-- their windows are to be derived too (a mark once with windows keeps them). A mark already there
-- is rewritten only to add windows: a flush deleting it meanwhile must not find it changed.
INSERT INTO market_pending AS p (chain, address, windows)
SELECT r.chain, r.address, r.windows
FROM ROWS FROM (unnest(sqlc.arg(chains)::text[]), unnest(sqlc.arg(addresses)::text[]), unnest(sqlc.arg(windows)::boolean[]))
    AS r(chain, address, windows)
ON CONFLICT (chain, address) DO UPDATE SET windows = true WHERE EXCLUDED.windows AND NOT p.windows;

-- name: PendingChains :many
-- Those of the chains with pending tokens or pending trades (index probes): the chain locks a flush takes
-- before reading them.
SELECT c::text AS chain FROM unnest(sqlc.arg(chains)::text[]) AS c
WHERE EXISTS (SELECT 1 FROM market_pending p WHERE p.chain = c)
   OR EXISTS (SELECT 1 FROM trade_pending t WHERE t.chain = c) ORDER BY c;

-- name: PendingTokens :many
-- The first max pending tokens of the chains in key order: one flush chunk.
SELECT chain, address, windows FROM market_pending WHERE chain = ANY(sqlc.arg(chains)::text[])
ORDER BY chain, address LIMIT sqlc.arg(max)::bigint;

-- name: ClearPending :exec
-- Drops the marks of the tokens (chains[i], addresses[i]) a flush derived.
DELETE FROM market_pending p
USING ROWS FROM (unnest(sqlc.arg(chains)::text[]), unnest(sqlc.arg(addresses)::text[])) AS r(chain, address)
WHERE p.chain = r.chain AND p.address = r.address;

-- name: AddPendingTrades :exec
-- Lists a batch's new trades of one chain (their fields encoded) for the chain's next flush.
INSERT INTO trade_pending (chain, trades, fields) VALUES ($1, $2, $3);

-- name: TakePendingTrades :many
-- Removes and returns every pending trade list of a chain, oldest first (under the chain's lock).
DELETE FROM trade_pending WHERE chain = $1
RETURNING id, trades, fields;

-- name: AddPendingLabels :exec
-- Lists wallet labels (chains[i], wallets[i], labels[i]) whose holdings the next derivation of
-- their chain's listed trades moves into the labels' groups.
INSERT INTO label_pending (chain, wallet, label)
SELECT r.chain, r.wallet, r.label
FROM ROWS FROM (unnest(sqlc.arg(chains)::text[]), unnest(sqlc.arg(wallets)::text[]), unnest(sqlc.arg(labels)::text[]))
    AS r(chain, wallet, label);

-- name: TakePendingLabels :many
-- Removes and returns the pending labels of a chain (under the chain's lock).
DELETE FROM label_pending WHERE chain = $1
RETURNING wallet, label;

