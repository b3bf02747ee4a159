// Package fakeclock is the ports.Clock of the tests: it moves only when told to (Advance, Set)
// or, built by Stepping, by a fixed step at every reading. It is safe for concurrent use.
package fakeclock

import (
	"sync"
	"time"
)

// Clock reads the time it was set to.
type Clock struct {
	mu   sync.Mutex
	now  time.Time
	step time.Duration
}

// At returns a clock standing at t.
func At(t time.Time) *Clock { return &Clock{now: t} }

// Stepping returns a clock standing at t that moves on by step at every reading before it
// answers: the first Now returns t+step, the next t+2·step.
func Stepping(t time.Time, step time.Duration) *Clock { return &Clock{now: t, step: step} }

// Now returns the clock's time (a stepping clock first moves on by its step).
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(c.step)
	return c.now
}

// Peek returns the clock's time without moving a stepping clock: the last reading of Now.
func (c *Clock) Peek() time.Time {
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

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}
