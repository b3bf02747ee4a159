-- name: InsertJob :exec
INSERT INTO jobs (id, account_id, kind, status, progress, result, workflow_id, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9);

-- name: GetJob :one
SELECT * FROM jobs WHERE id = $1 AND account_id = $2;

-- name: SaveJob :execrows
UPDATE jobs SET status = $2, progress = $3, result = $4, updated_at = $5
WHERE id = $1 AND status NOT IN ('completed', 'failed');

-- name: WalletTradedTokens :many
SELECT DISTINCT token_address FROM trades WHERE chain = $1 AND wallet = $2 ORDER BY token_address;
