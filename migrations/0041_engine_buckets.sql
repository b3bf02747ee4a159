-- The incremental engine (docs/engine.md): per-token time buckets from which every window is a
-- sum, each wallet's last activity per token (whose bucketed counts give exact distinct
-- buyers/sellers/traders), and per-token holder aggregates kept on balance changes. Existing data
-- is carried over: the buckets, activity times and aggregates are built here from the stored
-- trades and positions, so a database migrated with data serves the same numbers (second buckets
-- only for the last two hours, stats.SecondsKept, as the engine keeps them).

CREATE TABLE token_buckets (
    chain           TEXT NOT NULL,
    address         TEXT NOT NULL,
    res_ms          BIGINT NOT NULL,  -- 1000, 60000 or 3600000
    start_ms        BIGINT NOT NULL,
    buys            BIGINT NOT NULL DEFAULT 0,
    sells           BIGINT NOT NULL DEFAULT 0,
    buy_volume      NUMERIC NOT NULL DEFAULT 0,
    sell_volume     NUMERIC NOT NULL DEFAULT 0,
    buy_volume_usd  NUMERIC NOT NULL DEFAULT 0,
    sell_volume_usd NUMERIC NOT NULL DEFAULT 0,
    -- open and close: the first and last trade in trade.Compare order (time, height, signature
    -- bytewise, instruction index) and its USD price; NULL while the bucket has no trade.
    open_usd        NUMERIC,
    open_ms         BIGINT,
    open_height     BIGINT,
    open_sig        TEXT COLLATE "C",
    open_ix         INTEGER,
    close_usd       NUMERIC,
    close_ms        BIGINT,
    close_height    BIGINT,
    close_sig       TEXT COLLATE "C",
    close_ix        INTEGER,
    high_usd        NUMERIC,
    low_usd         NUMERIC,
    -- wallets whose latest buy / sell / trade of the token lies in this bucket.
    last_buyers     BIGINT NOT NULL DEFAULT 0,
    last_sellers    BIGINT NOT NULL DEFAULT 0,
    last_traders    BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (chain, address, res_ms, start_ms)
) WITH (fillfactor = 70);

-- holder_group 'all' is every holder (holders = the token's holder count); the others are the
-- token.HolderGroup values (dev, sniper and the wallet labels).
CREATE TABLE token_holder_groups (
    chain        TEXT NOT NULL,
    address      TEXT NOT NULL,
    holder_group TEXT NOT NULL,
    holders      BIGINT NOT NULL DEFAULT 0,
    holdings     NUMERIC NOT NULL DEFAULT 0,
    PRIMARY KEY (chain, address, holder_group)
) WITH (fillfactor = 50);

ALTER TABLE wallet_positions
    ADD COLUMN last_buy_ms   BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN last_sell_ms  BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN last_trade_ms BIGINT NOT NULL DEFAULT 0;

-- token_stats is rewritten for every touched token at every batch: free space on its pages lets
-- those updates stay heap-only (no new index entries, since only the key is indexed), and its
-- foreign key to tokens (never deleted) cost every new window row a key-share lock on the token.
ALTER TABLE token_stats SET (fillfactor = 50);
ALTER TABLE token_stats DROP CONSTRAINT IF EXISTS token_stats_chain_address_fkey;

-- seq is only ever read behind another index's key (time, then seq); its own unique index cost
-- every trade insert an index entry and served no query.
DROP INDEX IF EXISTS trades_seq_idx;

UPDATE wallet_positions p SET last_buy_ms = a.buy_ms, last_sell_ms = a.sell_ms, last_trade_ms = a.trade_ms
FROM (
    SELECT chain, wallet, token_address,
        COALESCE(max(block_timestamp_ms) FILTER (WHERE side = 'BUY'), 0) AS buy_ms,
        COALESCE(max(block_timestamp_ms) FILTER (WHERE side = 'SELL'), 0) AS sell_ms,
        max(block_timestamp_ms) AS trade_ms
    FROM trades WHERE status = 'SUCCEEDED' GROUP BY chain, wallet, token_address
) a
WHERE p.chain = a.chain AND p.wallet = a.wallet AND p.token_address = a.token_address;

INSERT INTO token_buckets (chain, address, res_ms, start_ms, buys, sells, buy_volume, sell_volume, buy_volume_usd,
    sell_volume_usd, high_usd, low_usd)
SELECT t.chain, t.token_address, r.res, (t.block_timestamp_ms / r.res) * r.res,
    count(*) FILTER (WHERE t.side = 'BUY'), count(*) FILTER (WHERE t.side = 'SELL'),
    COALESCE(sum(t.token_amount) FILTER (WHERE t.side = 'BUY'), 0), COALESCE(sum(t.token_amount) FILTER (WHERE t.side = 'SELL'), 0),
    COALESCE(sum(t.token_amount_usd) FILTER (WHERE t.side = 'BUY'), 0),
    COALESCE(sum(t.token_amount_usd) FILTER (WHERE t.side = 'SELL'), 0),
    max(t.token_price_usd), min(t.token_price_usd)
FROM trades t CROSS JOIN (VALUES (1000::bigint), (60000), (3600000)) AS r(res)
WHERE t.status = 'SUCCEEDED'
AND (r.res > 1000 OR t.block_timestamp_ms >= (extract(epoch FROM now()) * 1000)::bigint - 7200000)
GROUP BY t.chain, t.token_address, r.res, (t.block_timestamp_ms / r.res) * r.res;

UPDATE token_buckets b SET open_usd = o.token_price_usd, open_ms = o.block_timestamp_ms, open_height = o.block_height,
    open_sig = o.tx_signature, open_ix = o.instruction_index
FROM (
    SELECT DISTINCT ON (t.chain, t.token_address, r.res, (t.block_timestamp_ms / r.res) * r.res)
        t.chain, t.token_address, r.res, (t.block_timestamp_ms / r.res) * r.res AS start_ms, t.token_price_usd,
        t.block_timestamp_ms, t.block_height, t.tx_signature, t.instruction_index
    FROM trades t CROSS JOIN (VALUES (1000::bigint), (60000), (3600000)) AS r(res)
    WHERE t.status = 'SUCCEEDED'
        AND (r.res > 1000 OR t.block_timestamp_ms >= (extract(epoch FROM now()) * 1000)::bigint - 7200000)
    ORDER BY t.chain, t.token_address, r.res, (t.block_timestamp_ms / r.res) * r.res,
        t.block_timestamp_ms, t.block_height, t.tx_signature COLLATE "C", t.instruction_index
) o
WHERE b.chain = o.chain AND b.address = o.token_address AND b.res_ms = o.res AND b.start_ms = o.start_ms;

UPDATE token_buckets b SET close_usd = c.token_price_usd, close_ms = c.block_timestamp_ms, close_height = c.block_height,
    close_sig = c.tx_signature, close_ix = c.instruction_index
FROM (
    SELECT DISTINCT ON (t.chain, t.token_address, r.res, (t.block_timestamp_ms / r.res) * r.res)
        t.chain, t.token_address, r.res, (t.block_timestamp_ms / r.res) * r.res AS start_ms, t.token_price_usd,
        t.block_timestamp_ms, t.block_height, t.tx_signature, t.instruction_index
    FROM trades t CROSS JOIN (VALUES (1000::bigint), (60000), (3600000)) AS r(res)
    WHERE t.status = 'SUCCEEDED'
        AND (r.res > 1000 OR t.block_timestamp_ms >= (extract(epoch FROM now()) * 1000)::bigint - 7200000)
    ORDER BY t.chain, t.token_address, r.res, (t.block_timestamp_ms / r.res) * r.res,
        t.block_timestamp_ms DESC, t.block_height DESC, t.tx_signature COLLATE "C" DESC, t.instruction_index DESC
) c
WHERE b.chain = c.chain AND b.address = c.token_address AND b.res_ms = c.res AND b.start_ms = c.start_ms;

INSERT INTO token_buckets AS b (chain, address, res_ms, start_ms, last_buyers, last_sellers, last_traders)
SELECT chain, token_address, res, start_ms, sum(buyers), sum(sellers), sum(traders)
FROM (
    SELECT p.chain, p.token_address, r.res, (a.ms / r.res) * r.res AS start_ms,
        (a.kind = 'buy')::int AS buyers, (a.kind = 'sell')::int AS sellers, (a.kind = 'trade')::int AS traders
    FROM wallet_positions p
    CROSS JOIN LATERAL (VALUES ('buy', p.last_buy_ms), ('sell', p.last_sell_ms), ('trade', p.last_trade_ms)) AS a(kind, ms)
    CROSS JOIN (VALUES (1000::bigint), (60000), (3600000)) AS r(res)
    WHERE a.ms > 0 AND (r.res > 1000 OR a.ms >= (extract(epoch FROM now()) * 1000)::bigint - 7200000)
) x
GROUP BY chain, token_address, res, start_ms
ON CONFLICT (chain, address, res_ms, start_ms) DO UPDATE SET last_buyers = EXCLUDED.last_buyers,
    last_sellers = EXCLUDED.last_sellers, last_traders = EXCLUDED.last_traders;

-- Holder aggregates: every holder, then each group (labels, the creator as dev, first buys within
-- stats.SniperBlocks = 3 blocks of creation as sniper), a holder counted once per group.
INSERT INTO token_holder_groups (chain, address, holder_group, holders, holdings)
SELECT chain, token_address, 'all', count(*), sum(balance) FROM wallet_positions WHERE balance > 0
GROUP BY chain, token_address;

INSERT INTO token_holder_groups (chain, address, holder_group, holders, holdings)
SELECT g.chain, g.token_address, g.grp, count(*), sum(g.balance)
FROM (
    SELECT DISTINCT p.chain, p.token_address, p.wallet, p.balance, x.grp
    FROM wallet_positions p
    LEFT JOIN tokens t ON t.chain = p.chain AND t.address = p.token_address
    CROSS JOIN LATERAL (
        SELECT l.label AS grp FROM wallet_labels l WHERE l.chain = p.chain AND l.wallet = p.wallet
        UNION SELECT 'dev' WHERE t.creator_address = p.wallet
        UNION SELECT 'sniper' WHERE p.first_block_height BETWEEN t.created_block_height AND t.created_block_height + 3
    ) x
    WHERE p.balance > 0
) g
GROUP BY g.chain, g.token_address, g.grp;

-- Tokens whose market data and windows a streamed batch left to the next flush
-- (IngestStore.ApplyPending / Flush): written in the batch's transaction, deleted by the flush
-- that derives them, so a crash in between leaves them for the next flush.
CREATE TABLE market_pending (
    chain   TEXT NOT NULL,
    address TEXT NOT NULL,
    windows BOOLEAN NOT NULL DEFAULT false,
    PRIMARY KEY (chain, address)
) WITH (fillfactor = 50);
