-- tokenscope schema, version 1. Amounts, prices and ratios are NUMERIC (decimal.Decimal in Go);
-- integer timestamps named *_ms are Unix milliseconds; timestamptz columns are bookkeeping.

CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- Accounts own API keys, webhook endpoints, jobs and KYT registrations.
CREATE TABLE accounts (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Only the SHA-256 of a key is stored; prefix is the visible part used to find the row.
CREATE TABLE api_keys (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name         TEXT NOT NULL DEFAULT '',
    prefix       TEXT NOT NULL UNIQUE,
    key_hash     BYTEA NOT NULL,
    scopes       TEXT[] NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    revoked_at   TIMESTAMPTZ,
    last_used_at TIMESTAMPTZ
);
CREATE INDEX api_keys_account_idx ON api_keys (account_id);

-- Tokens: the v2 identity and metadata record.
CREATE TABLE tokens (
    chain                    TEXT NOT NULL,
    address                  TEXT NOT NULL,
    decimals                 INTEGER NOT NULL,
    name                     TEXT NOT NULL,
    symbol                   TEXT NOT NULL,
    vendor_coin_id           TEXT,
    description              TEXT,
    image_url                TEXT,
    market                   TEXT,
    metadata_address         TEXT,
    uri                      TEXT,
    creator_address          TEXT,
    dev_total_tokens         BIGINT,
    dev_last_token_created_at TIMESTAMPTZ,
    created_at_ms            BIGINT,
    created_block_height     BIGINT,
    created_slot             BIGINT,
    created_tx_signature     TEXT,
    creators                 JSONB NOT NULL DEFAULT '[]',
    extra                    JSONB NOT NULL DEFAULT '{}',
    socials                  JSONB NOT NULL DEFAULT '{}',
    launchpad_tag            TEXT,
    launch_protocol_family   TEXT,
    launch_program_address   TEXT,
    total_supply             NUMERIC NOT NULL DEFAULT 0,
    circulating_supply       NUMERIC NOT NULL DEFAULT 0,
    migrated_at_ms           BIGINT,
    migrated_pool_address    TEXT,
    migrated_program_address TEXT,
    migrated_protocol_family TEXT,
    inserted_at              TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at               TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (chain, address)
);
CREATE INDEX tokens_name_trgm_idx ON tokens USING gin (lower(name) gin_trgm_ops);
CREATE INDEX tokens_symbol_trgm_idx ON tokens USING gin (lower(symbol) gin_trgm_ops);
CREATE INDEX tokens_address_prefix_idx ON tokens (address text_pattern_ops);
CREATE INDEX tokens_created_idx ON tokens (chain, created_at_ms DESC, address);
CREATE INDEX tokens_creator_idx ON tokens (chain, creator_address);

-- Market data per token, kept current by the ingest engine.
CREATE TABLE token_market (
    chain                 TEXT NOT NULL,
    address               TEXT NOT NULL,
    price_usd             NUMERIC NOT NULL DEFAULT 0,
    price_sol             NUMERIC NOT NULL DEFAULT 0,
    total_supply          NUMERIC NOT NULL DEFAULT 0,
    circulating_supply    NUMERIC NOT NULL DEFAULT 0,
    market_cap_usd        NUMERIC NOT NULL DEFAULT 0,
    market_cap_sol        NUMERIC NOT NULL DEFAULT 0,
    fdv_usd               NUMERIC NOT NULL DEFAULT 0,
    fdv_sol               NUMERIC NOT NULL DEFAULT 0,
    holders               BIGINT NOT NULL DEFAULT 0,
    top10_holdings        NUMERIC NOT NULL DEFAULT 0,
    top10_ratio           NUMERIC NOT NULL DEFAULT 0,
    top50_holdings        NUMERIC NOT NULL DEFAULT 0,
    top50_ratio           NUMERIC NOT NULL DEFAULT 0,
    top100_holdings       NUMERIC NOT NULL DEFAULT 0,
    top100_ratio          NUMERIC NOT NULL DEFAULT 0,
    dev_holdings          NUMERIC NOT NULL DEFAULT 0,
    dev_ratio             NUMERIC NOT NULL DEFAULT 0,
    -- {"<group>": {"holders": "n", "holdings": "d", "ratio": "d"}} for the nine holder groups.
    groups                JSONB NOT NULL DEFAULT '{}',
    completion_ratio      NUMERIC NOT NULL DEFAULT 0,
    max_pool_tvl_usd      NUMERIC NOT NULL DEFAULT 0,
    max_pool_tvl_sol      NUMERIC NOT NULL DEFAULT 0,
    total_tvl_usd         NUMERIC NOT NULL DEFAULT 0,
    total_tvl_sol         NUMERIC NOT NULL DEFAULT 0,
    volume_24h_usd        NUMERIC NOT NULL DEFAULT 0,
    trades_24h            BIGINT NOT NULL DEFAULT 0,
    updated_at_ms         BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (chain, address),
    FOREIGN KEY (chain, address) REFERENCES tokens (chain, address) ON DELETE CASCADE
);
CREATE INDEX token_market_mcap_idx ON token_market (chain, market_cap_usd DESC, address);
CREATE INDEX token_market_price_idx ON token_market (chain, price_usd DESC, address);
CREATE INDEX token_market_liq_idx ON token_market (chain, total_tvl_usd DESC, address);
CREATE INDEX token_market_holders_idx ON token_market (chain, holders DESC, address);
CREATE INDEX token_market_vol_idx ON token_market (chain, volume_24h_usd DESC, address);
CREATE INDEX token_market_trades_idx ON token_market (chain, trades_24h DESC, address);

-- Rolling per-window statistics (window in 1m,5m,15m,30m,1h,4h,24h).
CREATE TABLE token_stats (
    chain                  TEXT NOT NULL,
    address                TEXT NOT NULL,
    window_name            TEXT NOT NULL,
    buys                   BIGINT NOT NULL DEFAULT 0,
    sells                  BIGINT NOT NULL DEFAULT 0,
    trades                 BIGINT NOT NULL DEFAULT 0,
    buyers                 BIGINT NOT NULL DEFAULT 0,
    sellers                BIGINT NOT NULL DEFAULT 0,
    traders                BIGINT NOT NULL DEFAULT 0,
    buy_volume             NUMERIC NOT NULL DEFAULT 0,
    sell_volume            NUMERIC NOT NULL DEFAULT 0,
    total_volume           NUMERIC NOT NULL DEFAULT 0,
    buy_volume_usd         NUMERIC NOT NULL DEFAULT 0,
    sell_volume_usd        NUMERIC NOT NULL DEFAULT 0,
    total_volume_usd       NUMERIC NOT NULL DEFAULT 0,
    open_usd               NUMERIC NOT NULL DEFAULT 0,
    close_usd              NUMERIC NOT NULL DEFAULT 0,
    high_usd               NUMERIC NOT NULL DEFAULT 0,
    low_usd                NUMERIC NOT NULL DEFAULT 0,
    price_change_ratio_usd NUMERIC NOT NULL DEFAULT 0,
    current_liquidity_usd  NUMERIC NOT NULL DEFAULT 0,
    updated_at_ms          BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (chain, address, window_name),
    FOREIGN KEY (chain, address) REFERENCES tokens (chain, address) ON DELETE CASCADE
);

-- DEX pools and their current state.
CREATE TABLE pools (
    chain            TEXT NOT NULL,
    address          TEXT NOT NULL,
    program_address  TEXT NOT NULL DEFAULT '',
    protocol_family  TEXT NOT NULL DEFAULT '',
    protocol_name    TEXT NOT NULL DEFAULT '',
    image            TEXT NOT NULL DEFAULT '',
    token_a_address  TEXT NOT NULL,
    token_b_address  TEXT NOT NULL,
    token_a_decimals INTEGER NOT NULL DEFAULT 0,
    token_b_decimals INTEGER NOT NULL DEFAULT 0,
    reserve_a        NUMERIC NOT NULL DEFAULT 0,
    reserve_b        NUMERIC NOT NULL DEFAULT 0,
    tvl_usd          NUMERIC NOT NULL DEFAULT 0,
    tvl_sol          NUMERIC NOT NULL DEFAULT 0,
    is_bonding_curve BOOLEAN NOT NULL DEFAULT false,
    updated_at_ms    BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (chain, address)
);
CREATE INDEX pools_token_a_idx ON pools (chain, token_a_address);
CREATE INDEX pools_token_b_idx ON pools (chain, token_b_address);

-- Liquidity snapshots, one per pool and block.
CREATE TABLE pool_snapshots (
    chain              TEXT NOT NULL,
    pool_address       TEXT NOT NULL,
    block_height       BIGINT NOT NULL,
    block_slot         BIGINT,
    block_timestamp_ms BIGINT NOT NULL,
    snapshot_time_ms   BIGINT NOT NULL,
    a_token_address    TEXT NOT NULL,
    a_decimals         INTEGER NOT NULL,
    a_vault_amount     NUMERIC NOT NULL,
    a_amount_native    NUMERIC NOT NULL,
    a_amount_usd       NUMERIC NOT NULL,
    a_price_native     NUMERIC NOT NULL,
    a_price_usd        NUMERIC NOT NULL,
    b_token_address    TEXT NOT NULL,
    b_decimals         INTEGER NOT NULL,
    b_vault_amount     NUMERIC NOT NULL,
    b_amount_native    NUMERIC NOT NULL,
    b_amount_usd       NUMERIC NOT NULL,
    b_price_native     NUMERIC NOT NULL,
    b_price_usd        NUMERIC NOT NULL,
    tvl_native         NUMERIC NOT NULL,
    tvl_usd            NUMERIC NOT NULL,
    PRIMARY KEY (chain, pool_address, block_height)
);
CREATE INDEX pool_snapshots_time_idx ON pool_snapshots (chain, pool_address, snapshot_time_ms DESC, block_height DESC);

-- Trades. seq orders rows that share a block timestamp and gives the keyset a unique tail.
CREATE TABLE trades (
    seq                   BIGINT GENERATED ALWAYS AS IDENTITY,
    chain                 TEXT NOT NULL,
    tx_signature          TEXT NOT NULL,
    instruction_index     INTEGER NOT NULL,
    block_height          BIGINT NOT NULL,
    block_slot            BIGINT,
    block_timestamp_ms    BIGINT NOT NULL,
    wallet                TEXT NOT NULL,
    pool_address          TEXT NOT NULL,
    side                  TEXT NOT NULL CHECK (side IN ('BUY', 'SELL')),
    status                TEXT NOT NULL DEFAULT 'SUCCEEDED',
    token_address         TEXT NOT NULL,
    token_amount          NUMERIC NOT NULL,
    token_amount_native   NUMERIC NOT NULL,
    token_amount_usd      NUMERIC NOT NULL,
    token_price_native    NUMERIC NOT NULL,
    token_price_usd       NUMERIC NOT NULL,
    side_token_address    TEXT NOT NULL,
    side_token_amount     NUMERIC NOT NULL,
    side_token_amount_native NUMERIC NOT NULL,
    side_token_amount_usd NUMERIC NOT NULL,
    side_token_price_native NUMERIC NOT NULL,
    side_token_price_usd  NUMERIC NOT NULL,
    dex_image             TEXT NOT NULL DEFAULT '',
    dex_program_address   TEXT NOT NULL DEFAULT '',
    dex_protocol_family   TEXT NOT NULL DEFAULT '',
    ingested_at_ms        BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (chain, tx_signature, instruction_index)
);
CREATE UNIQUE INDEX trades_seq_idx ON trades (seq);
CREATE INDEX trades_chain_time_idx ON trades (chain, block_timestamp_ms DESC, seq DESC);
CREATE INDEX trades_token_time_idx ON trades (chain, token_address, block_timestamp_ms DESC, seq DESC);
CREATE INDEX trades_wallet_time_idx ON trades (chain, wallet, block_timestamp_ms DESC, seq DESC);
CREATE INDEX trades_pool_time_idx ON trades (chain, pool_address, block_timestamp_ms DESC, seq DESC);
CREATE INDEX trades_wallet_token_idx ON trades (chain, wallet, token_address, block_timestamp_ms, block_height);
CREATE INDEX trades_block_idx ON trades (chain, block_height DESC, seq DESC);

-- Wallet labels feed the holder groups (bluechip, bundle, dev, fresh, insider, kol, pro, sandwish, sniper).
CREATE TABLE wallet_labels (
    chain  TEXT NOT NULL,
    wallet TEXT NOT NULL,
    label  TEXT NOT NULL,
    PRIMARY KEY (chain, wallet, label)
);

-- Positions per wallet and token under weighted average cost; also the holder balances.
CREATE TABLE wallet_positions (
    chain              TEXT NOT NULL,
    wallet             TEXT NOT NULL,
    token_address      TEXT NOT NULL,
    balance            NUMERIC NOT NULL DEFAULT 0 CHECK (balance >= 0),
    cost_usd           NUMERIC NOT NULL DEFAULT 0,
    buy_amount         NUMERIC NOT NULL DEFAULT 0,
    buy_amount_usd     NUMERIC NOT NULL DEFAULT 0,
    sell_amount        NUMERIC NOT NULL DEFAULT 0,
    sell_amount_usd    NUMERIC NOT NULL DEFAULT 0,
    sold_cost_usd      NUMERIC NOT NULL DEFAULT 0,
    realized_usd       NUMERIC NOT NULL DEFAULT 0,
    buys               BIGINT NOT NULL DEFAULT 0,
    sells              BIGINT NOT NULL DEFAULT 0,
    first_buy_at_ms    BIGINT,
    last_sell_at_ms    BIGINT,
    -- ordering key of the last applied trade; an older trade forces a re-derivation.
    last_block_timestamp_ms BIGINT NOT NULL DEFAULT 0,
    last_block_height  BIGINT NOT NULL DEFAULT 0,
    last_tx_signature  TEXT NOT NULL DEFAULT '',
    last_instruction_index INTEGER NOT NULL DEFAULT 0,
    first_block_height BIGINT,
    updated_at_ms      BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (chain, wallet, token_address)
);
CREATE INDEX wallet_positions_holders_idx ON wallet_positions (chain, token_address, balance DESC) WHERE balance > 0;

-- Hot-token ranking, refreshed by a durable loop; the endpoint reads only this table.
CREATE TABLE hot_tokens (
    chain         TEXT NOT NULL,
    duration      TEXT NOT NULL,
    address       TEXT NOT NULL,
    rank          INTEGER NOT NULL,
    score         NUMERIC NOT NULL,
    computed_at_ms BIGINT NOT NULL,
    PRIMARY KEY (chain, duration, address)
);
CREATE INDEX hot_tokens_rank_idx ON hot_tokens (chain, duration, rank);

-- Red packets and their claims.
CREATE TABLE red_packets (
    seq             BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
    id              TEXT PRIMARY KEY,
    chain           TEXT NOT NULL,
    creator         TEXT NOT NULL,
    claim_authority TEXT NOT NULL DEFAULT '',
    mint            TEXT NOT NULL,
    max_claims      INTEGER NOT NULL CHECK (max_claims > 0),
    claimed_count   INTEGER NOT NULL DEFAULT 0,
    total_amount    NUMERIC NOT NULL,
    claimed_amount  NUMERIC NOT NULL DEFAULT 0,
    refunded_amount NUMERIC NOT NULL DEFAULT 0,
    created_at_ms   BIGINT NOT NULL,
    expired_at_ms   BIGINT NOT NULL,
    expiration      BIGINT NOT NULL,
    expired         BOOLEAN NOT NULL DEFAULT false,
    memo            TEXT NOT NULL DEFAULT '',
    share_id        TEXT NOT NULL DEFAULT '',
    tx_hash         TEXT NOT NULL DEFAULT '',
    CHECK (claimed_amount + refunded_amount <= total_amount)
);
CREATE INDEX red_packets_creator_idx ON red_packets (creator, seq DESC);
CREATE INDEX red_packets_chain_idx ON red_packets (chain, seq DESC);

CREATE TABLE red_packet_claims (
    seq           BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
    packet_id     TEXT NOT NULL REFERENCES red_packets (id) ON DELETE CASCADE,
    claimer       TEXT NOT NULL,
    chain         TEXT NOT NULL,
    mint          TEXT NOT NULL,
    creator       TEXT NOT NULL,
    amount        NUMERIC NOT NULL,
    claimed_at_ms BIGINT NOT NULL,
    tx_hash       TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (packet_id, claimer)
);
CREATE INDEX red_packet_claims_packet_idx ON red_packet_claims (packet_id, seq DESC);
CREATE INDEX red_packet_claims_claimer_idx ON red_packet_claims (claimer, seq DESC);

-- Transactional outbox: token lifecycle events written in the ingest transaction, drained
-- by the webhook dispatcher. Nothing is deleted before it is dispatched.
CREATE TABLE outbox (
    seq           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id      TEXT NOT NULL UNIQUE,
    channel       TEXT NOT NULL,
    payload       JSONB NOT NULL,
    created_at_ms BIGINT NOT NULL,
    dispatched_at_ms BIGINT
);
CREATE INDEX outbox_pending_idx ON outbox (seq) WHERE dispatched_at_ms IS NULL;

-- KYT registrations (withdrawal attempts and transfers), one per account and idempotency key.
CREATE TABLE kyt_registrations (
    external_id     UUID PRIMARY KEY,
    account_id      TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    kind            TEXT NOT NULL CHECK (kind IN ('withdrawal', 'transfer')),
    idempotency_key TEXT NOT NULL,
    fingerprint     TEXT NOT NULL,
    request         JSONB NOT NULL,
    usd_amount      NUMERIC,
    status          TEXT NOT NULL DEFAULT 'pending',
    rating          TEXT,
    alerts          JSONB NOT NULL DEFAULT '[]',
    failure         TEXT,
    created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (account_id, kind, idempotency_key)
);

-- Webhook endpoints; secrets are stored because the receiver needs the same key to verify.
CREATE TABLE webhook_endpoints (
    seq              BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
    id               TEXT PRIMARY KEY,
    account_id       TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    url              TEXT NOT NULL,
    description      TEXT,
    channels         TEXT[],
    filter_types     TEXT[],
    filter           TEXT,
    metadata         JSONB NOT NULL DEFAULT '{}',
    rate_limit       INTEGER CHECK (rate_limit >= 0),
    disabled         BOOLEAN NOT NULL DEFAULT false,
    secret           TEXT NOT NULL,
    previous_secret  TEXT,
    previous_secret_expires_at TIMESTAMPTZ,
    first_failure_at TIMESTAMPTZ,
    created_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at       TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX webhook_endpoints_account_idx ON webhook_endpoints (account_id, seq);

CREATE TABLE webhook_attempts (
    seq          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    endpoint_id  TEXT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    event_id     TEXT NOT NULL,
    attempt      INTEGER NOT NULL,
    status_code  INTEGER,
    latency_ms   BIGINT NOT NULL DEFAULT 0,
    error        TEXT,
    succeeded    BOOLEAN NOT NULL,
    attempted_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    UNIQUE (endpoint_id, event_id, attempt)
);
CREATE INDEX webhook_attempts_endpoint_idx ON webhook_attempts (endpoint_id, seq DESC);

-- Jobs are Temporal workflows; this row keeps the final state after the workflow is gone.
CREATE TABLE jobs (
    id          TEXT PRIMARY KEY,
    account_id  TEXT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    kind        TEXT NOT NULL,
    status      TEXT NOT NULL DEFAULT 'pending',
    progress    JSONB NOT NULL DEFAULT '{}',
    result      JSONB,
    workflow_id TEXT NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX jobs_account_idx ON jobs (account_id, created_at DESC);
