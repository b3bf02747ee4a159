-- name: InsertKYTRegistration :execrows
INSERT INTO kyt_registrations (external_id, account_id, kind, dedup_key, fingerprint, request, usd_amount,
    status, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)
ON CONFLICT DO NOTHING;

-- name: GetKYTRegistration :one
SELECT * FROM kyt_registrations WHERE external_id = $1 AND account_id = $2 AND kind = $3;

-- name: GetKYTRegistrationForUpdate :one
SELECT * FROM kyt_registrations WHERE external_id = $1 FOR UPDATE;

-- name: FindKYTRegistrationByKey :one
SELECT * FROM kyt_registrations WHERE account_id = $1 AND kind = $2 AND dedup_key = $3;

-- name: UpdateKYTRegistration :exec
UPDATE kyt_registrations
SET usd_amount = $2, status = $3, rating = $4, alerts = $5, failure = $6, updated_at = $7
WHERE external_id = $1;

-- name: MarketPriceBySymbol :one
SELECT m.price_usd FROM tokens t JOIN token_market m ON m.chain = t.chain AND m.address = t.address
WHERE t.chain = $1 AND upper(t.symbol) = upper(sqlc.arg(symbol)::text) AND m.price_usd > 0
ORDER BY m.market_cap_usd DESC, t.address
LIMIT 1;

-- name: NativePriceUSD :one
SELECT side_token_price_usd FROM trades
WHERE chain = $1 AND side_token_price_usd > 0
ORDER BY block_timestamp_ms DESC, seq DESC
LIMIT 1;
