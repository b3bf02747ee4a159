-- name: InsertRedPacket :execrows
INSERT INTO red_packets (id, chain, creator, claim_authority, mint, max_claims, total_amount,
    created_at_ms, expired_at_ms, expiration, memo, share_id, tx_hash)
VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13) ON CONFLICT (id) DO NOTHING;

-- name: LockRedPacket :one
-- A packet and its claimers under a row lock. The ::text[] cast only tells sqlc the type:
-- Postgres drops a cast to the type an expression already has.
SELECT id, chain, creator, claim_authority, mint, max_claims, claimed_count, total_amount,
    claimed_amount, refunded_amount, created_at_ms, expired_at_ms, expiration, expired, memo, share_id, tx_hash,
    ARRAY(SELECT claimer FROM red_packet_claims WHERE packet_id = sqlc.arg(id))::text[] AS claimers
FROM red_packets WHERE id = sqlc.arg(id) FOR UPDATE;

-- name: SaveRedPacket :exec
UPDATE red_packets SET claimed_count = $2, claimed_amount = $3, refunded_amount = $4, expired = $5
WHERE id = $1;

-- name: InsertRedPacketClaim :exec
INSERT INTO red_packet_claims (packet_id, claimer, chain, mint, creator, amount,
    claimed_at_ms, tx_hash) VALUES ($1,$2,$3,$4,$5,$6,$7,$8);

-- name: RedPacketClaimedCount :one
SELECT claimed_count FROM red_packets WHERE id = $1;

-- name: CountRedPacketClaims :one
-- Bounded by the packet's maxClaims.
SELECT count(*) FROM red_packet_claims WHERE packet_id = $1;

-- name: LockRedPackets :exec
-- Locks the packets' rows in id order before a batch's claims and expiries read them one by
-- one, so two batches over the same packets wait for each other instead of deadlocking.
SELECT id FROM red_packets WHERE id = ANY(sqlc.arg(ids)::text[]) ORDER BY id FOR UPDATE;
