package ingest

import "time"

// FlushingEvery sets how often c's IngestThrough flushes (FollowFlushInterval otherwise).
func FlushingEvery(c *Checkpointed, d time.Duration) *Checkpointed {
	c.every = d
	return c
}
