-- name: LockAccount :one
SELECT id FROM accounts WHERE id = $1 FOR UPDATE;

-- name: CountWebhookEndpoints :one
SELECT count(*) FROM webhook_endpoints WHERE account_id = $1;

-- name: InsertWebhookEndpoint :exec
INSERT INTO webhook_endpoints (id, account_id, url, description, channels, filter_types, filter, metadata,
    rate_limit, disabled, secret, previous_secret, previous_secret_expires_at, first_failure_at, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16);

-- name: GetWebhookEndpoint :one
SELECT * FROM webhook_endpoints
WHERE id = $1 AND (sqlc.narg(account_id)::text IS NULL OR account_id = sqlc.narg(account_id)::text);

-- name: GetWebhookEndpointForUpdate :one
SELECT * FROM webhook_endpoints
WHERE id = $1 AND (sqlc.narg(account_id)::text IS NULL OR account_id = sqlc.narg(account_id)::text)
FOR UPDATE;

-- name: UpdateWebhookEndpoint :exec
UPDATE webhook_endpoints
SET url = $2, description = $3, channels = $4, filter_types = $5, filter = $6, metadata = $7, rate_limit = $8,
    disabled = $9, secret = $10, previous_secret = $11, previous_secret_expires_at = $12, first_failure_at = $13,
    updated_at = $14
WHERE id = $1;

-- name: DeleteWebhookEndpoint :execrows
DELETE FROM webhook_endpoints WHERE id = $1 AND account_id = $2;

-- name: ListWebhookEndpointsAsc :many
SELECT e.* FROM webhook_endpoints e
WHERE e.account_id = $1
  AND (sqlc.narg(cursor)::text IS NULL OR e.seq > (SELECT c.seq FROM webhook_endpoints c WHERE c.id = sqlc.narg(cursor)::text))
ORDER BY e.seq
LIMIT $2;

-- name: ListWebhookEndpointsDesc :many
SELECT e.* FROM webhook_endpoints e
WHERE e.account_id = $1
  AND (sqlc.narg(cursor)::text IS NULL OR e.seq < (SELECT c.seq FROM webhook_endpoints c WHERE c.id = sqlc.narg(cursor)::text))
ORDER BY e.seq DESC
LIMIT $2;

-- name: ListWebhookSubscribers :many
SELECT * FROM webhook_endpoints
WHERE NOT disabled
  AND (channels IS NULL OR sqlc.arg(channel)::text = ANY (channels))
  AND (filter_types IS NULL OR sqlc.arg(channel)::text = ANY (filter_types))
ORDER BY seq;

-- name: InsertWebhookAttempt :exec
INSERT INTO webhook_attempts (endpoint_id, event_id, attempt, status_code, latency_ms, error, succeeded, attempted_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
ON CONFLICT (endpoint_id, event_id, attempt) DO NOTHING;

-- name: ListWebhookAttempts :many
SELECT * FROM webhook_attempts
WHERE endpoint_id = $1 AND (sqlc.arg(cursor)::bigint = 0 OR seq < sqlc.arg(cursor)::bigint)
ORDER BY seq DESC
LIMIT $2;

-- name: ListWebhookAttemptsByNumber :many
SELECT * FROM webhook_attempts
WHERE endpoint_id = $1 AND event_id = ANY (sqlc.arg(event_ids)::text[]) AND attempt = $2;
