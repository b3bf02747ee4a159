-- Deferred trade derivations (docs/engine.md "Streams: deferred derivations"): a streamed batch
-- (import, POST /v2/ingest) stores its trades and lists them here, in its own transaction, with
-- the fields their derivations read (adapters/postgres/engine_deferred.go encodes them); the
-- chain's next flush derives them (positions, buckets, windows, holder totals, market rows) all
-- at once and deletes the rows, in its transaction. One row per batch and chain.
CREATE TABLE trade_pending (
    id BIGSERIAL PRIMARY KEY,
    chain TEXT NOT NULL,
    trades INTEGER NOT NULL,
    fields BYTEA NOT NULL
);
-- Written once and read once: stored out of line without compression (cheaper than pglz).
ALTER TABLE trade_pending ALTER COLUMN fields SET STORAGE EXTERNAL;
CREATE INDEX trade_pending_chain_idx ON trade_pending (chain, id);
