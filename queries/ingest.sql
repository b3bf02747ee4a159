-- name: InsertToken :execrows
-- The ingest batch's per-event statements; its bulk paths (COPY into temporary tables) are
-- hand-built in adapters/postgres. A replayed event inserts nothing.
INSERT INTO tokens (chain, address, decimals, name, symbol, vendor_coin_id, description,
    image_url, market, metadata_address, uri, creator_address, dev_total_tokens, dev_last_token_created_at,
    created_at_ms, created_block_height, created_slot, created_tx_signature, creators, extra, socials,
    launchpad_tag, launch_protocol_family, launch_program_address, total_supply, circulating_supply,
    curve_pool_address, curve_target_native)
VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22,$23,$24,$25,$26,$27,$28)
ON CONFLICT (chain, address) DO NOTHING;

-- name: InsertTokenMarket :exec
INSERT INTO token_market (chain, address, total_supply, circulating_supply, updated_at_ms)
VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING;

-- name: InsertPool :execrows
INSERT INTO pools (chain, address, program_address, protocol_family, protocol_name, image,
    token_a_address, token_b_address, token_a_decimals, token_b_decimals, is_bonding_curve, created_at_ms)
VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12) ON CONFLICT (chain, address) DO NOTHING;

-- name: InsertWalletLabel :execrows
INSERT INTO wallet_labels (chain, wallet, label) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING;

-- name: SolPriceUSD :one
-- The side-token price of the newest successful sol trade (its side token is SOL).
SELECT side_token_price_usd FROM trades WHERE chain = 'sol' AND status = 'SUCCEEDED'
ORDER BY block_timestamp_ms DESC, seq DESC LIMIT 1;

-- name: MigrateToken :one
-- No row when the token is unknown or already migrated.
UPDATE tokens SET migrated_at_ms = $3, migrated_pool_address = $4,
    migrated_program_address = $5, migrated_protocol_family = $6, updated_at = now(),
    extra = extra || jsonb_strip_nulls(jsonb_build_object('migratedAt', $3::bigint, 'migratedToPoolAddress', $4::text,
        'migratedToProgramAddress', NULLIF($5::text, ''), 'migratedToProtocolFamily', NULLIF($6::text, '')))
WHERE chain = $1 AND address = $2 AND migrated_at_ms IS NULL RETURNING extra;

-- name: StoredTokenRecord :one
-- The token as the outbox record, with the migration fields in extra. The ::jsonb cast only
-- tells sqlc the type: Postgres drops a cast to the type an expression already has.
SELECT (jsonb_strip_nulls(jsonb_build_object('address', address, 'chain', chain, 'name', name,
    'symbol', symbol, 'decimals', decimals, 'description', description, 'imageUrl', image_url, 'uri', uri,
    'tokenCreatedAt', created_at_ms, 'tokenCreatedBlockHeight', created_block_height,
    'tokenCreatedTxSignature', created_tx_signature, 'launchpadTag', launchpad_tag))
    || jsonb_build_object('tokenCreators', creators, 'extra', extra, 'socialMedias', socials))::jsonb AS record
FROM tokens WHERE chain = $1 AND address = $2;

-- name: LabelledHoldings :many
-- The tokens the labelled wallets (chains[i], wallets[i]) hold: a label moves holdings between
-- groups of every token the wallet holds.
SELECT DISTINCT p.chain, p.token_address FROM wallet_positions p
JOIN ROWS FROM (unnest(sqlc.arg(chains)::text[]), unnest(sqlc.arg(wallets)::text[])) AS l(chain, wallet)
    ON p.chain = l.chain AND p.wallet = l.wallet
WHERE p.balance > 0;
