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
