// Package fakeclock is a ports.Clock for tests that moves only when told to, safe for
// concurrent use.
package fakeclock

import (
	"sync"
	"time"
)

// Clock reads the time it was set to.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// At returns a clock standing at t.
func At(t time.Time) *Clock { return &Clock{now: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}
