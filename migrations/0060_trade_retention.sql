-- Trade retention (TRADES_RETENTION, docs/engine.md "Retention"): trades older than a chain's cut
-- are removed in chunks, except each token's newest successful trade (its price). Derived state
-- does not change: every wallet/token pair whose trades were removed keeps, in position_bases,
-- its position as of all its trades before the cut (the same columns as wallet_positions), from
-- which a re-derivation continues with the trades kept after it.

CREATE TABLE trade_retention (
    chain TEXT PRIMARY KEY,
    -- Every trade of the chain with block time before cut_ms is folded into position_bases; a new
    -- trade before it is refused (it could not be placed among the removed ones).
    cut_ms BIGINT NOT NULL,
    updated_at_ms BIGINT NOT NULL
);

CREATE TABLE position_bases (LIKE wallet_positions INCLUDING DEFAULTS);
ALTER TABLE position_bases ADD PRIMARY KEY (chain, wallet, token_address);
