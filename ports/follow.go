package ports

import (
	"context"
	"time"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
)

// BlockRef names a block (or a Solana slot) by its number and hash, with its parent's hash: what
// a follower compares to find a reorganisation.
type BlockRef struct {
	Number int64
	Hash   string
	Parent string
}

// ChainSegment is a run of consecutive blocks read from a chain: their events in chain order and
// the first and last block (First.Parent must be the hash of the block before From).
type ChainSegment struct {
	From, To int64
	First    BlockRef
	Last     BlockRef
	Events   []chainevent.Event
}

// ChainSource reads one chain's history as ingest events. The EVM adapter implements it for
// eth and bsc (Uniswap V2-style logs); a Solana source would implement the same two methods.
type ChainSource interface {
	// Head is the number of the newest block the node has.
	Head(ctx context.Context) (int64, error)
	// Read returns the events of blocks from..to. A node that refuses so wide a range makes it
	// return a shorter segment from..To (To < to); it never returns an empty one.
	Read(ctx context.Context, from, to int64) (ChainSegment, error)
}

// ChainReadAhead is a ChainSource whose next range may be read while the range before it is
// being written (the follower overlaps the node's reads with its ingest transactions). Its Read
// of a range that starts before the end of the last one read (that range was read ahead but not
// written: a failed write, a stopped step) maps those blocks as a first reading would.
type ChainReadAhead interface {
	ChainSource
	// ReadAhead is how many ranges may be read ahead of the one being written (≥ 1).
	ReadAhead() int
}

// ChainHalt is a follower stopped by a reorganisation deeper than its confirmation depth.
type ChainHalt struct {
	Chain  chain.Chain
	Block  int64
	Reason string
}

// ChainCheckpoint is a follower's stored position (chainevent.Checkpoint without Previous) and its
// halt, if any.
type ChainCheckpoint struct {
	Block  int64
	Hash   string
	Halted *ChainHalt
}

// ChainCheckpointStore keeps followers' positions and halts.
type ChainCheckpointStore interface {
	// Checkpoint returns the chain's stored position; ok is false when the chain has none.
	Checkpoint(ctx context.Context, c chain.Chain) (cp ChainCheckpoint, ok bool, err error)
	// Halt records that the chain's follower stopped at block (it stays stopped until cleared).
	Halt(ctx context.Context, h ChainHalt) error
	// Halted lists the stopped followers.
	Halted(ctx context.Context) ([]ChainHalt, error)
}

// CheckpointedIngester applies a follower's events and its checkpoint in one transaction: both or
// neither are written.
type CheckpointedIngester interface {
	IngestThrough(ctx context.Context, events []chainevent.Event, cp chainevent.Checkpoint) (chainevent.Result, error)
}

// IngestFlusher is a CheckpointedIngester whose batches leave the market data of their tokens (and
// the derivations of small batches' trades) to a flush, as a stream's batches do: Flush derives
// everything they left. A follower calls it at the end of each step.
type IngestFlusher interface {
	Flush(ctx context.Context) error
}

// CheckpointedStore is the store side of CheckpointedIngester (IngestStore.ApplyPending plus the
// checkpoint write in the batch's transaction; a moved checkpoint is a fault.Conflict).
type CheckpointedStore interface {
	ApplyThrough(ctx context.Context, b chainevent.Batch, cp chainevent.Checkpoint, now time.Time) (chainevent.Result, error)
}

// ChainMonitor hears a follower's progress and halts (metrics).
type ChainMonitor interface {
	// Progress reports the last block written, the node's head and the trades written since
	// the previous report.
	Progress(c chain.Chain, block, head int64, newTrades int)
	Halted(c chain.Chain, block int64)
}
