-- kyt_registrations.idempotency_key never held the client's Idempotency-Key: it holds the
-- registration's external id, which domain/kyt derives from the account, the kind and the
-- Idempotency-Key (or, without one, the request's fingerprint). It is the key registrations are
-- deduplicated by, so it is named for that; its unique index follows.
ALTER TABLE kyt_registrations RENAME COLUMN idempotency_key TO dedup_key;
ALTER INDEX IF EXISTS kyt_registrations_account_id_kind_idempotency_key_key
    RENAME TO kyt_registrations_account_id_kind_dedup_key_key;
