-- Trade retention (adapters/postgres/retention.go).

-- name: RetentionCuts :many
-- The retention cut of each of the chains that has one.
SELECT chain, cut_ms FROM trade_retention WHERE chain = ANY(sqlc.arg(chains)::text[]);

-- name: SaveRetentionCut :exec
INSERT INTO trade_retention (chain, cut_ms, updated_at_ms) VALUES ($1, $2, $3)
ON CONFLICT (chain) DO UPDATE SET cut_ms = EXCLUDED.cut_ms, updated_at_ms = EXCLUDED.updated_at_ms;

-- name: RetentionChunkEnd :one
-- The block time of the n-th oldest trade of the chain in [from_ms, before_ms), read up
-- trades_chain_time_idx; no row when there are fewer.
SELECT block_timestamp_ms FROM trades
WHERE chain = $1 AND block_timestamp_ms >= sqlc.arg(from_ms) AND block_timestamp_ms < sqlc.arg(before_ms)
ORDER BY block_timestamp_ms, seq
OFFSET sqlc.arg(n)::bigint - 1 LIMIT 1;

-- name: RetentionChunkTrades :many
-- Every trade of the chain with block time in [from_ms, to_ms], with the fields a position is
-- derived from.
SELECT wallet, token_address, tx_signature, instruction_index, block_height, block_timestamp_ms, side, status,
       token_amount, token_amount_usd, token_price_usd
FROM trades
WHERE chain = $1 AND block_timestamp_ms >= sqlc.arg(from_ms) AND block_timestamp_ms <= sqlc.arg(to_ms);

-- name: NewestSuccessfulTrades :many
-- The newest successful trade (trade.Compare order) of each of the chain's tokens, which retention
-- keeps: the token's price stays readable however old it is.
SELECT r.address::text AS token_address, x.tx_signature, x.instruction_index
FROM unnest(sqlc.arg(tokens)::text[]) AS r(address)
CROSS JOIN LATERAL (SELECT y.tx_signature, y.instruction_index FROM trades y
    WHERE y.chain = $1 AND y.token_address = r.address AND y.status = 'SUCCEEDED' AND y.block_timestamp_ms = (
        SELECT z.block_timestamp_ms FROM trades z WHERE z.chain = $1 AND z.token_address = r.address
            AND z.status = 'SUCCEEDED' ORDER BY z.block_timestamp_ms DESC LIMIT 1)
    ORDER BY y.block_height DESC, y.tx_signature COLLATE "C" DESC, y.instruction_index DESC LIMIT 1) x;

-- name: DeleteTrades :execrows
-- Deletes the chain's trades with the keys (signatures[i], indexes[i]).
DELETE FROM trades t
USING ROWS FROM (unnest(sqlc.arg(signatures)::text[]), unnest(sqlc.arg(indexes)::int[])) AS k(sig, ix)
WHERE t.chain = $1 AND t.tx_signature = k.sig AND t.instruction_index = k.ix;
