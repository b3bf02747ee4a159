package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tokenscope/tokenscope/adapters/postgres/internal/dbsqlc"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/ports"
)

// This file is the chain follower's part of the store: its checkpoints (chain_checkpoints) and
// the one addition to a batch's transaction it needs, the checkpoint write. It leaves the engine
// (chainevent.go and the engine_* files) as it is: ApplyThrough runs the same applyIn.

var (
	_ ports.CheckpointedStore    = (*IngestStore)(nil)
	_ ports.ChainCheckpointStore = (*ChainStore)(nil)
)

// ApplyThrough is ApplyPending plus cp written in the batch's transaction: both commit or neither
// does. As for a stream's batch, the market data of the tokens it touched (and the derivations of
// its trades, under deferBelow of them) are left to the next Flush, marked in the same transaction.
// A checkpoint another writer moved since cp.Previous was read (or a halted chain) is a
// fault.Conflict, and nothing of the batch is written. An empty batch writes the checkpoint alone.
func (s *IngestStore) ApplyThrough(ctx context.Context, b chainevent.Batch, cp chainevent.Checkpoint, now time.Time) (chainevent.Result, error) {
	var res chainevent.Result
	err := writeAnnouncedBy(ctx, s.pool, func(tx pgx.Tx) (marketChange, error) {
		var touched []ports.TokenRef
		if b.Len() > 0 {
			r, t, err := applyIn(ctx, tx, b, now, true)
			if err != nil {
				return nil, err
			}
			res, touched = r, t
		}
		if err := advanceCheckpoint(ctx, tx, cp, now); err != nil {
			return nil, err
		}
		return tokensChanged(touched), nil
	})
	if err != nil {
		if _, ok := fault.As(err); ok {
			return chainevent.Result{}, err
		}
		return chainevent.Result{}, interpretError(err, "ingest batch through block", strconv.FormatInt(cp.Block, 10))
	}
	res.Events = b.Len() + b.Duplicates
	res.Skipped += b.Duplicates
	return res, nil
}

func advanceCheckpoint(ctx context.Context, tx pgx.Tx, cp chainevent.Checkpoint, now time.Time) error {
	n, err := dbsqlc.New().AdvanceChainCheckpoint(ctx, tx, dbsqlc.AdvanceChainCheckpointParams{
		Chain: string(cp.Chain), BlockNumber: cp.Block, BlockHash: cp.Hash, UpdatedAt: now, PreviousBlock: cp.Previous})
	if err != nil {
		return fmt.Errorf("write checkpoint: %w", err)
	}
	if n == 0 {
		return fault.Conflict(fmt.Sprintf("the %s checkpoint is no longer at block %d (another follower, or halted)", cp.Chain, cp.Previous))
	}
	return nil
}

// ChainStore reads and halts chain followers' checkpoints.
type ChainStore struct{ pool *pgxpool.Pool }

// NewChainStore builds the store over pool.
func NewChainStore(pool *pgxpool.Pool) *ChainStore { return &ChainStore{pool: pool} }

// Checkpoint implements ports.ChainCheckpointStore.
func (s *ChainStore) Checkpoint(ctx context.Context, c chain.Chain) (ports.ChainCheckpoint, bool, error) {
	row, err := dbsqlc.New().GetChainCheckpoint(ctx, s.pool, string(c))
	if errors.Is(err, pgx.ErrNoRows) {
		return ports.ChainCheckpoint{}, false, nil
	}
	if err != nil {
		return ports.ChainCheckpoint{}, false, interpretError(err, "read checkpoint", string(c))
	}
	cp := ports.ChainCheckpoint{Block: row.BlockNumber, Hash: row.BlockHash}
	if row.HaltedBlock != nil {
		cp.Halted = &ports.ChainHalt{Chain: c, Block: *row.HaltedBlock, Reason: textOf(row.HaltedReason)}
	}
	return cp, true, nil
}

// Halt implements ports.ChainCheckpointStore.
func (s *ChainStore) Halt(ctx context.Context, h ports.ChainHalt) error {
	err := dbsqlc.New().HaltChain(ctx, s.pool, dbsqlc.HaltChainParams{Chain: string(h.Chain), At: time.Now(),
		Block: &h.Block, Reason: &h.Reason})
	return interpretError(err, "halt follower", string(h.Chain))
}

// Halted implements ports.ChainCheckpointStore.
func (s *ChainStore) Halted(ctx context.Context) ([]ports.ChainHalt, error) {
	rows, err := dbsqlc.New().ListHaltedChains(ctx, s.pool)
	if err != nil {
		return nil, interpretError(err, "list halted followers", "")
	}
	out := make([]ports.ChainHalt, 0, len(rows))
	for _, r := range rows {
		var b int64
		if r.HaltedBlock != nil {
			b = *r.HaltedBlock
		}
		out = append(out, ports.ChainHalt{Chain: chain.Chain(r.Chain), Block: b, Reason: textOf(r.HaltedReason)})
	}
	return out, nil
}

// Resume clears the chain's halt; with rewindTo set it also moves the checkpoint back to that
// block (its hash is then not compared: the follower reads from the block after it). It
// reports whether the chain had a checkpoint.
func (s *ChainStore) Resume(ctx context.Context, c chain.Chain, rewindTo *int64) (bool, error) {
	n, err := dbsqlc.New().ResumeChain(ctx, s.pool, dbsqlc.ResumeChainParams{Chain: string(c), RewindTo: rewindTo, At: time.Now()})
	if err != nil {
		return false, interpretError(err, "resume follower", string(c))
	}
	return n > 0, nil
}

func textOf(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
