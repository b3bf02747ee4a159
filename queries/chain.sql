-- name: GetChainCheckpoint :one
SELECT chain, block_number, block_hash, updated_at, halted_block, halted_reason, halted_at
FROM chain_checkpoints WHERE chain = $1;

-- name: AdvanceChainCheckpoint :execrows
-- Moves the checkpoint forward, in the transaction of the blocks' events. It writes nothing (0
-- rows) when the stored checkpoint is not the one the caller read (another follower of the
-- chain moved it, or it is halted), so the caller rolls the whole batch back.
INSERT INTO chain_checkpoints (chain, block_number, block_hash, updated_at)
VALUES (sqlc.arg(chain), sqlc.arg(block_number), sqlc.arg(block_hash), sqlc.arg(updated_at))
ON CONFLICT (chain) DO UPDATE
SET block_number = EXCLUDED.block_number, block_hash = EXCLUDED.block_hash, updated_at = EXCLUDED.updated_at
WHERE chain_checkpoints.block_number = sqlc.arg(previous_block)::bigint
  AND chain_checkpoints.halted_block IS NULL;

-- name: HaltChain :exec
-- Records a reorg deeper than the confirmation depth; the checkpoint itself is left as it was.
INSERT INTO chain_checkpoints (chain, block_number, block_hash, updated_at, halted_block, halted_reason, halted_at)
VALUES (sqlc.arg(chain), 0, '', sqlc.arg(at), sqlc.arg(block), sqlc.arg(reason), sqlc.arg(at))
ON CONFLICT (chain) DO UPDATE
SET halted_block = EXCLUDED.halted_block, halted_reason = EXCLUDED.halted_reason, halted_at = EXCLUDED.halted_at;

-- name: ListHaltedChains :many
SELECT chain, halted_block, halted_reason FROM chain_checkpoints WHERE halted_block IS NOT NULL ORDER BY chain;

-- name: ResumeChain :execrows
-- Clears a halt and, when rewind_to is not null, moves the checkpoint back to that block (its
-- hash is then read again from the chain by the follower: an empty hash is not compared).
UPDATE chain_checkpoints
SET halted_block = NULL, halted_reason = NULL, halted_at = NULL,
    block_number = COALESCE(sqlc.narg(rewind_to)::bigint, block_number),
    block_hash = CASE WHEN sqlc.narg(rewind_to)::bigint IS NULL THEN block_hash ELSE '' END,
    updated_at = sqlc.arg(at)
WHERE chain = sqlc.arg(chain);
