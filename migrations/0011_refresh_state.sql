-- Refresh loop state: what lets a round recompute only what time changed since the last one.

-- One row. windows_at_ms is the time (Unix ms) of the last completed window refresh round: every
-- token's windows are exact as of it or later (NULL: no round completed, the next one recomputes
-- every active token). It is written only once all of a round's window chunks committed, so a
-- round that fails leaves it unchanged. round_* describe a round in progress: its start time,
-- whether it recomputes every active token, and the last token (in byte order) whose windows it
-- committed, written in the same transaction as those windows, so a round that did not finish
-- (e.g. one that outlived its activity timeout) is continued from there; once it finishes,
-- windows_at_ms becomes its start time.
CREATE TABLE refresh_state (
    id                  BOOLEAN PRIMARY KEY DEFAULT true CHECK (id),
    windows_at_ms       BIGINT,
    round_at_ms         BIGINT,
    round_full          BOOLEAN NOT NULL DEFAULT false,
    round_after_chain   TEXT,
    round_after_address TEXT
);

-- When each hot-token ranking was last computed (also for an empty ranking, which has no
-- hot_tokens rows to carry computed_at_ms). Written in the transaction that swaps the ranking.
CREATE TABLE hot_rankings (
    chain          TEXT NOT NULL,
    duration       TEXT NOT NULL,
    computed_at_ms BIGINT NOT NULL,
    PRIMARY KEY (chain, duration)
);
