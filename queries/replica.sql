-- name: PrimaryWalLSN :one
-- The primary's current WAL position as a byte offset (adapters/postgres/replica.go): every
-- transaction committed before it was read is at or below it.
SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint AS lsn;

-- name: StandbyReplay :one
-- A standby's replayed WAL position as a byte offset, and whether it is still a standby (a
-- promoted one serves no replica reads: it is no longer following the primary).
SELECT COALESCE((pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::bigint, 0)::bigint AS lsn,
	pg_is_in_recovery() AS in_recovery;
