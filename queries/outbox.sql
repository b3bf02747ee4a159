-- name: InsertOutboxEvent :exec
-- Written in the ingest transaction; a replayed event keeps its first row.
INSERT INTO outbox (event_id, channel, payload, created_at_ms) VALUES ($1, $2, $3, $4)
ON CONFLICT (event_id) DO NOTHING;

-- name: PendingOutbox :many
SELECT seq, event_id, channel, payload, created_at_ms FROM outbox
WHERE dispatched_at_ms IS NULL
ORDER BY seq
LIMIT $1;

-- name: MarkOutboxDispatched :exec
UPDATE outbox SET dispatched_at_ms = sqlc.arg(at_ms)::bigint
WHERE seq = ANY (sqlc.arg(seqs)::bigint[]) AND dispatched_at_ms IS NULL;
