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
-- and metadata.
SELECT p.token_address, p.balance, p.cost_usd, p.buy_amount, p.buy_amount_usd, p.sell_amount,
    p.sell_amount_usd, p.sold_cost_usd, p.realized_usd, p.buys, p.sells, p.first_buy_at_ms, p.last_sell_at_ms,
    COALESCE(m.price_usd, 0) AS price_usd, COALESCE(t.name, '') AS name, COALESCE(t.symbol, '') AS symbol,
    COALESCE(t.image_url, '') AS image_url, COALESCE(t.decimals, 0) AS decimals
FROM wallet_positions p
LEFT JOIN token_market m ON m.chain = p.chain AND m.address = p.token_address
LEFT JOIN tokens t ON t.chain = p.chain AND t.address = p.token_address
WHERE p.chain = $1 AND p.wallet = $2 AND p.token_address = ANY(sqlc.arg(tokens)::text[]) AND p.buys + p.sells > 0
ORDER BY p.token_address;
