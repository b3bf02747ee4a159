-- name: ListPositionTrades :many
-- Every stored trade of one wallet and token, with the fields a position is derived from.
SELECT tx_signature, instruction_index, block_height, block_timestamp_ms, side, status,
       token_amount, token_amount_usd, token_price_usd
FROM trades
WHERE chain = $1 AND wallet = $2 AND token_address = $3;

-- name: LockPosition :exec
-- Locks the pair's row (when there is one) until the transaction ends.
SELECT 1 FROM wallet_positions WHERE chain = $1 AND wallet = $2 AND token_address = $3 FOR UPDATE;

-- name: DeletePosition :exec
DELETE FROM wallet_positions WHERE chain = $1 AND wallet = $2 AND token_address = $3;

-- name: PricedPositions :many
-- At most 100 positions by primary key (chain, wallet, token_address), with the token's price
-- and metadata. The price is the market row's; a token without one (its trades came before its
-- token.created, which may never come) is priced the same way, at its newest successful trade in
-- trade order (time, height, signature, instruction index), read only for such a token.
SELECT p.token_address, p.balance, p.cost_usd, p.buy_amount, p.buy_amount_usd, p.sell_amount,
    p.sell_amount_usd, p.sold_cost_usd, p.realized_usd, p.buys, p.sells, p.first_buy_at_ms, p.last_sell_at_ms,
    p.last_trade_ms,
    COALESCE(m.price_usd, (SELECT tr.token_price_usd FROM trades tr
        WHERE tr.chain = p.chain AND tr.token_address = p.token_address AND tr.status = 'SUCCEEDED'
        ORDER BY tr.block_timestamp_ms DESC, tr.block_height DESC, tr.tx_signature COLLATE "C" DESC, tr.instruction_index DESC
        LIMIT 1), 0)::numeric AS price_usd, COALESCE(t.name, '') AS name, COALESCE(t.symbol, '') AS symbol,
    COALESCE(t.image_url, '') AS image_url, COALESCE(t.decimals, 0) AS decimals
FROM wallet_positions p
LEFT JOIN token_market m ON m.chain = p.chain AND m.address = p.token_address
LEFT JOIN tokens t ON t.chain = p.chain AND t.address = p.token_address
WHERE p.chain = $1 AND p.wallet = $2 AND p.token_address = ANY(sqlc.arg(tokens)::text[]) AND p.buys + p.sells > 0
ORDER BY p.token_address;

-- name: PositionsAtDays :many
-- For each start (a UTC midnight) and each of the tokens, the pair's position as of its trades
-- before that start: its mark of the first day at or after the start. A pair without one has not
-- traded since the start (its position then is the current one).
SELECT s.start_ms::bigint AS start_ms, m.token_address, m.balance, m.cost_usd, m.buy_amount, m.buy_amount_usd,
    m.sell_amount, m.sell_amount_usd, m.sold_cost_usd, m.realized_usd, m.buys, m.sells
FROM unnest(sqlc.arg(starts)::bigint[]) AS s(start_ms)
CROSS JOIN LATERAL (
    SELECT DISTINCT ON (d.token_address) d.token_address, d.balance, d.cost_usd, d.buy_amount, d.buy_amount_usd,
        d.sell_amount, d.sell_amount_usd, d.sold_cost_usd, d.realized_usd, d.buys, d.sells
    FROM position_day_marks d
    WHERE d.chain = $1 AND d.wallet = $2 AND d.token_address = ANY(sqlc.arg(tokens)::text[]) AND d.day_ms >= s.start_ms
    ORDER BY d.token_address, d.day_ms
) m;

-- name: DeletePositionMarksFrom :exec
-- Drops the pair's marks of days from from_ms on, which a re-derivation writes again.
DELETE FROM position_day_marks
WHERE chain = $1 AND wallet = $2 AND token_address = $3 AND day_ms >= sqlc.arg(from_ms);

-- name: PositionDayRealized :many
-- Every day mark of the wallet's pairs in the tokens, by pair and day: the realized profit before
-- each day in which the pair traded, from which a day's realized profit is the next mark's (or the
-- current position's) minus its own.
SELECT token_address, day_ms, realized_usd
FROM position_day_marks
WHERE chain = $1 AND wallet = $2 AND token_address = ANY(sqlc.arg(tokens)::text[])
ORDER BY token_address, day_ms;
