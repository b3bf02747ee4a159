package postgres

import "time"

// SetVersionsRetry sets how long v's Run waits before listening again after a lost connection.
func SetVersionsRetry(v *MarketVersions, d time.Duration) { v.retry = d }
