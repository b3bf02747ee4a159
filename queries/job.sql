-- name: InsertJob :exec
INSERT INTO jobs (id, account_id, kind, status, progress, result, workflow_id, created_at, updated_at, work_key)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10);

-- LockAccountJobs serialises the job inserts of one account until the transaction ends. The
-- two-key form keeps these locks apart from the single-key ones of migrations and the engine;
-- 1785684595 is "jobs" in ASCII.
-- name: LockAccountJobs :exec
SELECT pg_advisory_xact_lock(1785684595, hashtext(@account_id::text));

-- name: UnfinishedJobByWorkKey :one
SELECT * FROM jobs
WHERE account_id = $1 AND work_key = $2 AND status NOT IN ('completed', 'failed');

-- name: CountUnfinishedJobs :one
SELECT count(*) FROM jobs WHERE account_id = $1 AND status NOT IN ('completed', 'failed');

-- name: GetJob :one
SELECT * FROM jobs WHERE id = $1 AND account_id = $2;

-- name: SaveJob :execrows
UPDATE jobs SET status = $2, progress = $3, result = $4, updated_at = $5
WHERE id = $1 AND status NOT IN ('completed', 'failed');

-- name: WalletTradedTokens :many
SELECT DISTINCT token_address FROM trades WHERE chain = $1 AND wallet = $2 ORDER BY token_address;
