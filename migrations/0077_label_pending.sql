-- Wallet labels added by a streamed batch that derives nothing itself (docs/engine.md, "Flushes
-- beside stored-only batches"): the label's row is in wallet_labels at once; moving the wallet's
-- holdings into the label's holder group of every token it holds is left to whoever next derives
-- the chain's listed trades (a flush, a batch that derives), before those trades, in its
-- transaction, which deletes the rows. One row per new label.
CREATE TABLE label_pending (
    id BIGSERIAL PRIMARY KEY,
    chain TEXT NOT NULL,
    wallet TEXT NOT NULL,
    label TEXT NOT NULL
);
CREATE INDEX label_pending_chain_idx ON label_pending (chain, id);
