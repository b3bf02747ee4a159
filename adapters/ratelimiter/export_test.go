package ratelimiter

// NewLocalAt is NewLocal on a clock the test moves (nanoseconds).
func NewLocalAt(now func() int64) *Local {
	l := NewLocal()
	l.now = now
	return l
}

// Len is the number of buckets held.
func (l *Local) Len() int {
	n := 0
	for i := range l.shard {
		l.shard[i].mu.Lock()
		n += len(l.shard[i].tat)
		l.shard[i].mu.Unlock()
	}
	return n
}
