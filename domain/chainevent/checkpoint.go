package chainevent

import "github.com/tokenscope/tokenscope/domain/chain"

// Checkpoint is how far a chain follower has written: the last block whose events are stored.
// It is committed in the transaction of those events (ports.CheckpointedIngester), so a restart
// resumes right after it. Previous is the checkpoint's block the writer read before (-1 when
// there was none): the write fails, and the batch with it, when the stored one has moved since.
type Checkpoint struct {
	Chain    chain.Chain
	Block    int64
	Hash     string
	Previous int64
}
