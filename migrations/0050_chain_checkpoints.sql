-- The chain follower's position per chain (docs/engine.md, "Chain follower"): the last block whose
-- events are written, committed in the same transaction as those events, so a restart resumes
-- after it with neither a gap nor a duplicate. halted_* is set when the follower met a reorg
-- deeper than its confirmation depth: it stops there until an operator clears it (README,
-- "Following a chain in production").
CREATE TABLE chain_checkpoints (
    chain          TEXT PRIMARY KEY,
    block_number   BIGINT NOT NULL CHECK (block_number >= 0),
    block_hash     TEXT NOT NULL,
    updated_at     TIMESTAMPTZ NOT NULL,
    halted_block   BIGINT,
    halted_reason  TEXT,
    halted_at      TIMESTAMPTZ
);
