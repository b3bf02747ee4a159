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

func TestSteppingClockMovesAtEveryReading(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	c := Stepping(t0, 2*time.Second)
	if got := c.Now(); !got.Equal(t0.Add(2 * time.Second)) {
		t.Fatalf("first Now() = %v, want t0+2s", got)
	}
	if got := c.Now(); !got.Equal(t0.Add(4 * time.Second)) {
		t.Fatalf("second Now() = %v, want t0+4s", got)
	}
	if got := c.Peek(); !got.Equal(t0.Add(4 * time.Second)) {
		t.Fatalf("Peek() = %v, want the last reading t0+4s", got)
	}
	c.Set(t0)
	if got := c.Peek(); !got.Equal(t0) {
		t.Fatalf("after Set, Peek() = %v, want t0", got)
	}
}
