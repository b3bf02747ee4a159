-- Wallet PnL over a period (pnl-by-token's resolution 1d/7d/30d, docs/api.md): for every UTC day
-- in which a wallet/token pair traded, its position as of all its trades before that day (before
-- the day's first trade). The pair's position at any midnight D is then its mark of the first day
-- at or after D, or its current position when it has not traded since D; a period's figures are
-- the current position minus the one at the period's start.
--
-- A mark is a function of the pair's trades only, written by the ingest engine as trades are
-- applied: an in-order trade on a new day adds that day's mark; a re-derivation (an out-of-order
-- trade, the calculate-pnl job) rewrites every mark after its base's last trade (position_bases:
-- retention), and the marks up to that day do not move, since no trade before the retention cut
-- is accepted. Retention removes trades, never marks.
CREATE TABLE position_day_marks (
    chain           TEXT NOT NULL,
    wallet          TEXT NOT NULL,
    token_address   TEXT NOT NULL,
    -- day_ms is the UTC midnight that starts the day (Unix ms).
    day_ms          BIGINT NOT NULL,
    balance         NUMERIC NOT NULL,
    cost_usd        NUMERIC NOT NULL,
    buy_amount      NUMERIC NOT NULL,
    buy_amount_usd  NUMERIC NOT NULL,
    sell_amount     NUMERIC NOT NULL,
    sell_amount_usd NUMERIC NOT NULL,
    sold_cost_usd   NUMERIC NOT NULL,
    realized_usd    NUMERIC NOT NULL,
    buys            BIGINT NOT NULL,
    sells           BIGINT NOT NULL,
    PRIMARY KEY (chain, wallet, token_address, day_ms)
);

-- A database upgraded from an older version has positions but no marks. Each pair gets the mark
-- of its last trade's day holding its position now, so its periods count the trades from the
-- upgrade on (those of that day before the upgrade are not counted) until a re-derivation (an
-- out-of-order trade, the calculate-pnl job) writes its marks from its trades. A new database has
-- no positions: nothing to do.
INSERT INTO position_day_marks (chain, wallet, token_address, day_ms, balance, cost_usd, buy_amount, buy_amount_usd,
    sell_amount, sell_amount_usd, sold_cost_usd, realized_usd, buys, sells)
SELECT chain, wallet, token_address, last_block_timestamp_ms - last_block_timestamp_ms % 86400000, balance, cost_usd,
    buy_amount, buy_amount_usd, sell_amount, sell_amount_usd, sold_cost_usd, realized_usd, buys, sells
FROM wallet_positions
WHERE buys + sells > 0;
