-- name: EnqueueWebhookDeliveries :exec
-- One row per (endpoint, outbox event); an endpoint deleted meanwhile gets none.
INSERT INTO webhook_queue (endpoint_id, outbox_seq)
SELECT d.endpoint_id, d.outbox_seq
FROM ROWS FROM (unnest(sqlc.arg(endpoint_ids)::text[]), unnest(sqlc.arg(seqs)::bigint[])) AS d (endpoint_id, outbox_seq)
JOIN webhook_endpoints e ON e.id = d.endpoint_id
ON CONFLICT DO NOTHING;

-- name: QueuedWebhookEndpoints :many
SELECT DISTINCT endpoint_id FROM webhook_queue;

-- name: ListWebhookQueue :many
SELECT o.seq, o.event_id, o.channel, o.payload, o.created_at_ms
FROM webhook_queue q JOIN outbox o ON o.seq = q.outbox_seq
WHERE q.endpoint_id = $1
ORDER BY q.outbox_seq
LIMIT $2;

-- name: DeleteWebhookQueue :exec
DELETE FROM webhook_queue WHERE endpoint_id = $1 AND outbox_seq = ANY (sqlc.arg(seqs)::bigint[]);

-- name: InsertWebhookAttempts :exec
-- Attempts in bulk; 0 status and '' error mean none. A repeat of the same number is ignored.
INSERT INTO webhook_attempts (endpoint_id, event_id, attempt, status_code, latency_ms, error, succeeded, attempted_at)
SELECT a.endpoint_id, a.event_id, a.attempt, NULLIF(a.status_code, 0), a.latency_ms, NULLIF(a.error, ''), a.succeeded, a.attempted_at
FROM ROWS FROM (unnest(sqlc.arg(endpoint_ids)::text[]), unnest(sqlc.arg(event_ids)::text[]), unnest(sqlc.arg(attempts)::int[]),
               unnest(sqlc.arg(status_codes)::int[]), unnest(sqlc.arg(latencies_ms)::bigint[]), unnest(sqlc.arg(errors)::text[]),
               unnest(sqlc.arg(succeeded)::boolean[]), unnest(sqlc.arg(attempted_at)::timestamptz[]))
    AS a (endpoint_id, event_id, attempt, status_code, latency_ms, error, succeeded, attempted_at)
ON CONFLICT (endpoint_id, event_id, attempt) DO NOTHING;

-- name: WebhookQueueDepth :one
-- Deliveries queued for the pump (first attempts not made yet), and outbox events not yet
-- fanned out to them, for /metrics.
SELECT (SELECT count(*) FROM webhook_queue)::bigint AS queued,
    (SELECT count(*) FROM outbox WHERE dispatched_at_ms IS NULL)::bigint AS undispatched;
