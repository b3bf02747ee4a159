-- Per-key rate limit overrides (docs: README "Rate limits"). NULL means the process default
-- (RATE_LIMIT_PER_MINUTE, RATE_LIMIT_BURST); a key created with `apikey create --rate N` stores N.
ALTER TABLE api_keys
    ADD COLUMN rate_per_minute INTEGER CHECK (rate_per_minute > 0),
    ADD COLUMN rate_burst      INTEGER CHECK (rate_burst >= 0);
