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

-- name: CrossedTokens :many
-- The tokens with a successful trade in one of the spans (los[i], his[i]] and the bitwise OR of
-- those spans' window sets (crossedTokens): range scans of the (chain, block time) index for every
-- chain that has trades, found by skipping through the same index. OFFSET 0 keeps each scan a
-- parameterised index range scan. ROWS FROM (unnest, unnest, unnest) is planned exactly as
-- unnest(los, his, sets), which the shape was measured with (same EXPLAIN VERBOSE).
WITH RECURSIVE chains AS (
    SELECT min(chain) AS chain FROM trades
    UNION ALL
    SELECT (SELECT min(t.chain) FROM trades t WHERE t.chain > c.chain) FROM chains c WHERE c.chain IS NOT NULL)
SELECT x.chain, x.token_address, bit_or(s.windows)::int AS windows
FROM chains c
CROSS JOIN ROWS FROM (unnest(sqlc.arg(los)::bigint[]), unnest(sqlc.arg(his)::bigint[]), unnest(sqlc.arg(sets)::int[]))
    AS s(lo, hi, windows)
CROSS JOIN LATERAL (SELECT t.chain, t.token_address FROM trades t
    WHERE t.chain = c.chain AND t.block_timestamp_ms > s.lo AND t.block_timestamp_ms <= s.hi
        AND t.status = 'SUCCEEDED' OFFSET 0) x
WHERE c.chain IS NOT NULL
GROUP BY 1, 2
ORDER BY x.chain COLLATE "C", x.token_address COLLATE "C";
