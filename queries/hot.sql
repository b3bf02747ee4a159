-- name: HotCandidates :many
-- The current (mid_ms, end_ms] and previous (start_ms, mid_ms] window of a duration for every
-- token of a chain traded in them, in one range scan of the (chain, time) index. The ::numeric
-- casts only tell sqlc the type: Postgres drops a cast to the type an expression already has.
-- Only tokens the ranking read can serve (a tokens row with its market row, TokenDetails' join)
-- are candidates: a token whose trades came before its token.created is ranked once it has one.
SELECT token_address,
    count(DISTINCT wallet) FILTER (WHERE block_timestamp_ms > sqlc.arg(mid_ms) AND side = 'BUY') AS current_buyers,
    COALESCE(sum(token_amount_usd) FILTER (WHERE block_timestamp_ms > sqlc.arg(mid_ms)), 0)::numeric AS current_volume_usd,
    count(*) FILTER (WHERE block_timestamp_ms > sqlc.arg(mid_ms)) AS current_trades,
    count(DISTINCT wallet) FILTER (WHERE block_timestamp_ms <= sqlc.arg(mid_ms) AND side = 'BUY') AS prev_buyers,
    COALESCE(sum(token_amount_usd) FILTER (WHERE block_timestamp_ms <= sqlc.arg(mid_ms)), 0)::numeric AS prev_volume_usd,
    count(*) FILTER (WHERE block_timestamp_ms <= sqlc.arg(mid_ms)) AS prev_trades
FROM trades
WHERE trades.chain = sqlc.arg(chain) AND block_timestamp_ms > sqlc.arg(start_ms) AND block_timestamp_ms <= sqlc.arg(end_ms)
  AND trades.status = 'SUCCEEDED'
GROUP BY token_address
HAVING EXISTS (SELECT 1 FROM tokens k JOIN token_market m ON m.chain = k.chain AND m.address = k.address
    WHERE k.chain = sqlc.arg(chain) AND k.address = trades.token_address)
ORDER BY token_address;

-- name: HotRankingTimes :many
SELECT r.chain, r.duration, r.computed_at_ms,
    (SELECT count(*) FROM hot_tokens h WHERE h.chain = r.chain AND h.duration = r.duration) AS entries
FROM hot_rankings r ORDER BY r.chain, r.duration;

-- name: DeleteHotTokens :exec
DELETE FROM hot_tokens WHERE chain = $1 AND duration = $2;

-- name: CopyHotTokens :copyfrom
INSERT INTO hot_tokens (chain, duration, address, rank, score, computed_at_ms) VALUES ($1, $2, $3, $4, $5, $6);

-- name: UpsertHotRanking :exec
INSERT INTO hot_rankings (chain, duration, computed_at_ms) VALUES ($1, $2, $3)
ON CONFLICT (chain, duration) DO UPDATE SET computed_at_ms = EXCLUDED.computed_at_ms;

-- name: HotTokens :many
-- One stored ranking through hot_tokens_rank_idx. The ::bigint cast only tells sqlc the type
-- Postgres gives a LIMIT parameter anyway.
SELECT address, rank, score FROM hot_tokens WHERE chain = $1 AND duration = $2
ORDER BY rank, address LIMIT sqlc.arg(max)::bigint;
