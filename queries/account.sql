-- name: CreateAccount :exec
INSERT INTO accounts (id, name) VALUES ($1, $2)
ON CONFLICT (id) DO NOTHING;

-- name: CreateAPIKey :exec
INSERT INTO api_keys (id, account_id, name, prefix, key_hash, scopes, created_at, rate_per_minute, rate_burst, expires_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10);

-- name: GetAPIKeyByPrefix :one
SELECT id, account_id, name, prefix, key_hash, scopes, created_at, revoked_at, last_used_at, rate_per_minute, rate_burst, expires_at
FROM api_keys WHERE prefix = $1;

-- name: ListAPIKeys :many
SELECT id, account_id, name, prefix, key_hash, scopes, created_at, revoked_at, last_used_at, rate_per_minute, rate_burst, expires_at
FROM api_keys
WHERE (sqlc.narg(account_id)::text IS NULL OR account_id = sqlc.narg(account_id)::text)
ORDER BY created_at, id;

-- name: RevokeAPIKey :execrows
UPDATE api_keys SET revoked_at = now() WHERE (id = $1 OR prefix = $1) AND revoked_at IS NULL;

-- name: TouchAPIKey :exec
UPDATE api_keys SET last_used_at = now()
WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute');
