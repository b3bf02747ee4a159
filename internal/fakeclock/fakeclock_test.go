package fakeclock

import (
	"testing"
	"time"
)

func TestClockMovesOnlyWhenTold(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	c := At(t0)
	if got := c.Now(); !got.Equal(t0) {
		t.Fatalf("Now() = %v, want %v", got, t0)
	}
	c.Advance(1500 * time.Millisecond)
	if got := c.Now(); !got.Equal(t0.Add(1500 * time.Millisecond)) {
		t.Fatalf("after Advance, Now() = %v", got)
	}
}
