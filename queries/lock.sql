-- name: AdvisoryLock :exec
-- Session advisory locks keyed by the callers' constants (migrationLock, refreshRoundLock);
-- LockAccountJobs (job.sql) has a two-key form of its own.
SELECT pg_advisory_lock(sqlc.arg(key));

-- name: AdvisoryUnlock :exec
SELECT pg_advisory_unlock(sqlc.arg(key));

-- name: AdvisoryXactLock :exec
-- Held until the transaction ends (derivedStateLock).
SELECT pg_advisory_xact_lock(sqlc.arg(key));

-- name: AdvisoryXactLockShared :exec
-- Held until the transaction ends; shared holders do not exclude each other (derivedStateLock
-- under the per-chain locks).
SELECT pg_advisory_xact_lock_shared(sqlc.arg(key));

-- name: AdvisoryLockShared :exec
-- Session advisory lock in shared mode: a flush holds its chain's derived-state lock this way
-- across its repeatable-read transactions (adapters/postgres/engine_pending.go).
SELECT pg_advisory_lock_shared(sqlc.arg(key));

-- name: AdvisoryUnlockShared :exec
SELECT pg_advisory_unlock_shared(sqlc.arg(key));
