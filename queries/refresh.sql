-- name: GetRefreshState :one
-- The window refresh loop's bookkeeping: refresh_state has one row (none before the first round).
SELECT windows_at_ms, round_at_ms, round_full, round_after_chain, round_after_address
FROM refresh_state;

-- name: StartRefreshRound :exec
INSERT INTO refresh_state (id, round_at_ms, round_full) VALUES (true, $1, $2)
ON CONFLICT (id) DO UPDATE SET round_at_ms = EXCLUDED.round_at_ms, round_full = EXCLUDED.round_full,
    round_after_chain = NULL, round_after_address = NULL;

-- name: SetRefreshRoundPosition :exec
-- The last token whose windows the round committed, written in that chunk's transaction.
UPDATE refresh_state SET round_after_chain = $1, round_after_address = $2;

-- name: CompleteRefreshRound :exec
UPDATE refresh_state SET windows_at_ms = round_at_ms, round_at_ms = NULL,
    round_full = false, round_after_chain = NULL, round_after_address = NULL;

-- name: ActiveTokens :many
-- In byte order of (chain, address), the order a round records its position in.
SELECT chain, address FROM token_market WHERE last_trade_at_ms >= sqlc.arg(since) OR trades_24h > 0
ORDER BY chain COLLATE "C", address COLLATE "C";

-- name: JitOff :exec
-- For the rest of the transaction (see crossedTokens).
SET LOCAL jit = off;
