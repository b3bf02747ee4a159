-- Windows kept by deltas (issue 11): an ingest batch adds its trades to the stored windows of the
-- tokens it trades (token_stats), instead of the next flush reading every window's time buckets
-- back. Merging a delta into a stored window, as token_buckets merges, needs the window's open
-- and close trade keys (trade.Compare order), so token_stats keeps them as token_buckets does.
ALTER TABLE token_stats
    ADD COLUMN open_ms BIGINT,
    ADD COLUMN open_height BIGINT,
    ADD COLUMN open_sig TEXT COLLATE "C",
    ADD COLUMN open_ix INTEGER,
    ADD COLUMN close_ms BIGINT,
    ADD COLUMN close_height BIGINT,
    ADD COLUMN close_sig TEXT COLLATE "C",
    ADD COLUMN close_ix INTEGER;

-- Stored windows have no keys yet: the next refresh round recomputes every active token's windows
-- from its buckets, keys included (a round with no completed predecessor is a full one). Until it
-- has, a delta merged into a window without keys keeps its open and takes the delta's close.
UPDATE refresh_state SET windows_at_ms = NULL, round_at_ms = NULL, round_full = false, round_after_chain = NULL,
    round_after_address = NULL;

-- a / b rounded half away from zero to 18 decimal places, 0 when b is 0: the domain's division
-- (stats.Scale, shopspring's DivRound) done exactly in SQL, for the price change of a window that
-- a delta merge moved. div() truncates the exact quotient; the remainder decides the last digit.
CREATE FUNCTION div_round18(a NUMERIC, b NUMERIC) RETURNS NUMERIC
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT CASE WHEN b = 0 THEN 0::numeric ELSE
        (div(a * 1e18, b) + CASE WHEN 2 * abs(a * 1e18 - div(a * 1e18, b) * b) >= abs(b)
            THEN sign(a) * sign(b) ELSE 0 END) * 1e-18 END
$$;
