-- Deferred trade derivations (docs/engine.md "Streams: deferred derivations"): a streamed batch
-- (import, POST /v2/ingest) stores its trades and lists their keys here, in its own transaction;
-- the chain's next flush derives them (positions, buckets, windows, holder totals, market rows)
-- all at once and deletes the rows, in its transaction. One row per batch and chain.
CREATE TABLE trade_pending (
    id BIGSERIAL PRIMARY KEY,
    chain TEXT NOT NULL,
    signatures TEXT[] NOT NULL,
    instruction_indexes INTEGER[] NOT NULL,
    CHECK (cardinality(signatures) = cardinality(instruction_indexes))
);
CREATE INDEX trade_pending_chain_idx ON trade_pending (chain, id);
