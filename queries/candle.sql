-- Candle parts (domain/ohlcv): each row sums the successful trades (or the buckets) of one
-- step-long part of the window [from_ms, to_ms); the use case merges parts into candles. Open
-- and close follow trade.Compare order (time, height, signature bytewise, instruction index).

-- name: CandleTokenTrades :many
SELECT ((t.block_timestamp_ms / sqlc.arg(step_ms)::bigint) * sqlc.arg(step_ms)::bigint)::bigint AS part_ms,
    ((array_agg(CASE WHEN sqlc.arg(native)::boolean THEN t.token_price_native ELSE t.token_price_usd END
        ORDER BY t.block_timestamp_ms, t.block_height, t.tx_signature COLLATE "C", t.instruction_index))[1])::numeric AS open,
    ((array_agg(CASE WHEN sqlc.arg(native)::boolean THEN t.token_price_native ELSE t.token_price_usd END
        ORDER BY t.block_timestamp_ms DESC, t.block_height DESC, t.tx_signature COLLATE "C" DESC, t.instruction_index DESC))[1])::numeric AS close,
    max(CASE WHEN sqlc.arg(native)::boolean THEN t.token_price_native ELSE t.token_price_usd END)::numeric AS high,
    min(CASE WHEN sqlc.arg(native)::boolean THEN t.token_price_native ELSE t.token_price_usd END)::numeric AS low,
    sum(CASE WHEN sqlc.arg(native)::boolean THEN t.token_amount_native ELSE t.token_amount_usd END)::numeric AS volume,
    sum(t.token_amount)::numeric AS volume_in_token,
    count(*)::bigint AS trades
FROM trades t
WHERE t.chain = sqlc.arg(chain) AND t.token_address = sqlc.arg(address) AND t.status = 'SUCCEEDED'
    AND t.block_timestamp_ms >= sqlc.arg(from_ms) AND t.block_timestamp_ms < sqlc.arg(to_ms)
GROUP BY 1 ORDER BY 1;

-- name: CandlePoolTrades :many
SELECT ((t.block_timestamp_ms / sqlc.arg(step_ms)::bigint) * sqlc.arg(step_ms)::bigint)::bigint AS part_ms,
    ((array_agg(CASE WHEN sqlc.arg(native)::boolean THEN t.token_price_native ELSE t.token_price_usd END
        ORDER BY t.block_timestamp_ms, t.block_height, t.tx_signature COLLATE "C", t.instruction_index))[1])::numeric AS open,
    ((array_agg(CASE WHEN sqlc.arg(native)::boolean THEN t.token_price_native ELSE t.token_price_usd END
        ORDER BY t.block_timestamp_ms DESC, t.block_height DESC, t.tx_signature COLLATE "C" DESC, t.instruction_index DESC))[1])::numeric AS close,
    max(CASE WHEN sqlc.arg(native)::boolean THEN t.token_price_native ELSE t.token_price_usd END)::numeric AS high,
    min(CASE WHEN sqlc.arg(native)::boolean THEN t.token_price_native ELSE t.token_price_usd END)::numeric AS low,
    sum(CASE WHEN sqlc.arg(native)::boolean THEN t.token_amount_native ELSE t.token_amount_usd END)::numeric AS volume,
    sum(t.token_amount)::numeric AS volume_in_token,
    count(*)::bigint AS trades
FROM trades t
WHERE t.chain = sqlc.arg(chain) AND t.pool_address = sqlc.arg(address) AND t.status = 'SUCCEEDED'
    AND t.block_timestamp_ms >= sqlc.arg(from_ms) AND t.block_timestamp_ms < sqlc.arg(to_ms)
GROUP BY 1 ORDER BY 1;

-- CandlePairTrades prices the base token: a trade of the quote against the base reads the
-- base's side-token columns.
-- name: CandlePairTrades :many
SELECT ((p.block_timestamp_ms / sqlc.arg(step_ms)::bigint) * sqlc.arg(step_ms)::bigint)::bigint AS part_ms,
    ((array_agg(p.price ORDER BY p.block_timestamp_ms, p.block_height, p.tx_signature COLLATE "C", p.instruction_index))[1])::numeric AS open,
    ((array_agg(p.price ORDER BY p.block_timestamp_ms DESC, p.block_height DESC, p.tx_signature COLLATE "C" DESC,
        p.instruction_index DESC))[1])::numeric AS close,
    max(p.price)::numeric AS high,
    min(p.price)::numeric AS low,
    sum(p.value)::numeric AS volume,
    sum(p.amount)::numeric AS volume_in_token,
    count(*)::bigint AS trades
FROM (
    SELECT t.block_timestamp_ms, t.block_height, t.tx_signature, t.instruction_index,
        CASE WHEN t.token_address = sqlc.arg(base)::text
            THEN (CASE WHEN sqlc.arg(native)::boolean THEN t.token_price_native ELSE t.token_price_usd END)
            ELSE (CASE WHEN sqlc.arg(native)::boolean THEN t.side_token_price_native ELSE t.side_token_price_usd END)
        END AS price,
        CASE WHEN t.token_address = sqlc.arg(base)::text
            THEN (CASE WHEN sqlc.arg(native)::boolean THEN t.token_amount_native ELSE t.token_amount_usd END)
            ELSE (CASE WHEN sqlc.arg(native)::boolean THEN t.side_token_amount_native ELSE t.side_token_amount_usd END)
        END AS value,
        CASE WHEN t.token_address = sqlc.arg(base)::text THEN t.token_amount ELSE t.side_token_amount END AS amount
    FROM trades t
    WHERE t.chain = sqlc.arg(chain) AND t.status = 'SUCCEEDED'
        AND ((t.token_address = sqlc.arg(base)::text AND t.side_token_address = sqlc.arg(quote)::text)
            OR (t.token_address = sqlc.arg(quote)::text AND t.side_token_address = sqlc.arg(base)::text))
        AND t.block_timestamp_ms >= sqlc.arg(from_ms) AND t.block_timestamp_ms < sqlc.arg(to_ms)
) p
GROUP BY 1 ORDER BY 1;

-- CandleTokenBuckets sums a token's minute or hour buckets (USD). Buckets with only
-- distinct-wallet counters (no trade) are skipped.
-- name: CandleTokenBuckets :many
SELECT ((b.start_ms / sqlc.arg(step_ms)::bigint) * sqlc.arg(step_ms)::bigint)::bigint AS part_ms,
    ((array_agg(b.open_usd ORDER BY b.start_ms))[1])::numeric AS open,
    ((array_agg(b.close_usd ORDER BY b.start_ms DESC))[1])::numeric AS close,
    max(b.high_usd)::numeric AS high,
    min(b.low_usd)::numeric AS low,
    sum(b.buy_volume_usd + b.sell_volume_usd)::numeric AS volume,
    sum(b.buy_volume + b.sell_volume)::numeric AS volume_in_token,
    sum(b.buys + b.sells)::bigint AS trades
FROM token_buckets b
WHERE b.chain = sqlc.arg(chain) AND b.address = sqlc.arg(address) AND b.res_ms = sqlc.arg(res_ms)
    AND b.start_ms >= sqlc.arg(from_ms) AND b.start_ms < sqlc.arg(to_ms) AND b.buys + b.sells > 0
GROUP BY 1 ORDER BY 1;
