-- Market data engine (issue 3): what the ingest engine needs beyond the base schema.

-- The bonding curve a token launched on and the native reserve at which it completes.
ALTER TABLE tokens ADD COLUMN curve_pool_address TEXT;
ALTER TABLE tokens ADD COLUMN curve_target_native NUMERIC NOT NULL DEFAULT 0;

-- Newest trade time per token: the refresh loop finds recently active tokens through it.
ALTER TABLE token_market ADD COLUMN last_trade_at_ms BIGINT NOT NULL DEFAULT 0;
CREATE INDEX token_market_last_trade_idx ON token_market (last_trade_at_ms DESC);

-- Pools take their current state from their newest snapshot only, whatever the arrival order.
ALTER TABLE pools ADD COLUMN snapshot_block_height BIGINT NOT NULL DEFAULT -1;
ALTER TABLE pools ADD COLUMN created_at_ms BIGINT NOT NULL DEFAULT 0;
