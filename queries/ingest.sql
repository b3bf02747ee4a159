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

-- name: InsertPool :execrows
INSERT INTO pools (chain, address, program_address, protocol_family, protocol_name, image,
    token_a_address, token_b_address, token_a_decimals, token_b_decimals, is_bonding_curve, created_at_ms)
VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12) ON CONFLICT (chain, address) DO NOTHING;

-- name: InsertWalletLabel :execrows
INSERT INTO wallet_labels (chain, wallet, label) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING;

-- name: SolPriceUSD :one
-- The side-token price of the newest successful sol trade (its side token is SOL), newest in
-- trade.Compare order: time, then height, signature (bytewise) and instruction index. The newest
-- time comes first, in the order of trades_chain_time_idx (one step down it, whatever the
-- statistics say); only that millisecond's trades are sorted. Ordering all the sol trades by the
-- four keys at once let a planner on stale statistics (a bulk import) sort every sol trade.
SELECT x.side_token_price_usd FROM trades x
WHERE x.chain = 'sol' AND x.status = 'SUCCEEDED' AND x.block_timestamp_ms = (
    SELECT t.block_timestamp_ms FROM trades t WHERE t.chain = 'sol' AND t.status = 'SUCCEEDED'
    ORDER BY t.block_timestamp_ms DESC LIMIT 1)
ORDER BY x.block_height DESC, x.tx_signature COLLATE "C" DESC, x.instruction_index DESC LIMIT 1;

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
-- The holdings of the labelled wallets (chains[i], wallets[i]): a label moves them into its group
-- in every token the wallet holds (unless the wallet is in that group already as the token's
-- creator or a sniper, which labelHoldings decides from the token's creator and creation height).
SELECT p.chain, p.wallet, p.token_address, p.balance, p.first_block_height,
    COALESCE(t.creator_address, '') AS creator_address, t.created_block_height
FROM wallet_positions p
JOIN ROWS FROM (unnest(sqlc.arg(chains)::text[]), unnest(sqlc.arg(wallets)::text[])) AS l(chain, wallet)
    ON p.chain = l.chain AND p.wallet = l.wallet
LEFT JOIN tokens t ON t.chain = p.chain AND t.address = p.token_address
WHERE p.balance > 0;

-- name: ExistingTrades :many
-- Which of the trades (chains[i], signatures[i], indexes[i]) are stored already (replays), by
-- primary-key probes: the batch COPYs the others straight into trades.
SELECT t.chain, t.tx_signature, t.instruction_index FROM trades t
JOIN ROWS FROM (unnest(sqlc.arg(chains)::text[]), unnest(sqlc.arg(signatures)::text[]), unnest(sqlc.arg(indexes)::int[]))
    AS k(chain, tx_signature, instruction_index)
    ON t.chain = k.chain AND t.tx_signature = k.tx_signature AND t.instruction_index = k.instruction_index;

-- name: WalletLabels :many
-- The labels of the wallets (chains[i], wallets[i]): their holder groups besides dev and sniper.
SELECT l.chain, l.wallet, l.label FROM wallet_labels l
JOIN ROWS FROM (unnest(sqlc.arg(chains)::text[]), unnest(sqlc.arg(wallets)::text[])) AS k(chain, wallet)
    ON l.chain = k.chain AND l.wallet = k.wallet
ORDER BY l.chain, l.wallet, l.label;

-- name: TokenCreation :many
-- The creator and creation height of the tokens (chains[i], addresses[i]) that have a tokens row:
-- what the dev and sniper groups of their holders depend on.
SELECT t.chain, t.address, COALESCE(t.creator_address, '') AS creator_address, t.created_block_height
FROM ROWS FROM (unnest(sqlc.arg(chains)::text[]), unnest(sqlc.arg(addresses)::text[])) AS r(chain, address)
JOIN tokens t ON t.chain = r.chain AND t.address = r.address;

-- name: DeleteHolderGroups :exec
-- Drops the holder aggregates of the tokens (chains[i], addresses[i]) before RebuildHolderGroups.
DELETE FROM token_holder_groups g
USING ROWS FROM (unnest(sqlc.arg(chains)::text[]), unnest(sqlc.arg(addresses)::text[])) AS r(chain, address)
WHERE g.chain = r.chain AND g.address = r.address;

-- name: RebuildHolderGroups :exec
-- Rebuilds the holder aggregates of the tokens (chains[i], addresses[i]) from their positions:
-- every holder ('all'), then each group (labels, the creator as dev, a first buy within
-- sniper_blocks blocks of creation as sniper), a holder counted once per group. Run when a token
-- row arrives after trades of it (its creator and creation height were unknown until then).
INSERT INTO token_holder_groups (chain, address, holder_group, holders, holdings)
SELECT g.chain, g.token_address, g.grp, count(*), sum(g.balance)
FROM (
    SELECT DISTINCT p.chain, p.token_address, p.wallet, p.balance, x.grp
    FROM ROWS FROM (unnest(sqlc.arg(chains)::text[]), unnest(sqlc.arg(addresses)::text[])) AS r(chain, address)
    JOIN wallet_positions p ON p.chain = r.chain AND p.token_address = r.address AND p.balance > 0
    LEFT JOIN tokens t ON t.chain = p.chain AND t.address = p.token_address
    CROSS JOIN LATERAL (
        SELECT 'all'::text AS grp
        UNION SELECT l.label FROM wallet_labels l WHERE l.chain = p.chain AND l.wallet = p.wallet
        UNION SELECT 'dev' WHERE t.creator_address = p.wallet
        UNION SELECT 'sniper' WHERE p.first_block_height BETWEEN t.created_block_height
            AND t.created_block_height + sqlc.arg(sniper_blocks)::bigint
    ) x
) g
GROUP BY g.chain, g.token_address, g.grp;
