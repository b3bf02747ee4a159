package main

import (
	"os"
	"testing"
	"time"
)

func TestPerTradeTakesTheReadersShareOut(t *testing.T) {
	// 60 s under ingest: service 15 s, Postgres 30 s; readers alone for 10 s: 1 s and 0.5 s, so
	// 6 s and 3 s of the busy phase are theirs.
	busy := cpuUse{wall: 60 * time.Second, svc: 15 * time.Second, db: 30 * time.Second}
	idle := cpuUse{wall: 10 * time.Second, svc: time.Second, db: 500 * time.Millisecond}
	total, svc, db := perTrade(busy, idle, 36_000)
	if svc != 250*time.Microsecond || db != 750*time.Microsecond || total != time.Millisecond {
		t.Fatalf("per trade = %v (svc %v, db %v), want 1ms (250µs, 750µs)", total, svc, db)
	}
	if total, _, _ := perTrade(busy, idle, 0); total != 0 {
		t.Fatalf("no trade: %v, want 0", total)
	}
}

func TestSampleSinceCountsNewProcessesFromZero(t *testing.T) {
	a := cpuSample{at: time.Unix(0, 0), svc: time.Second, db: map[int]time.Duration{1: 2 * time.Second, 2: time.Second}}
	b := cpuSample{at: time.Unix(5, 0), svc: 3 * time.Second, db: map[int]time.Duration{1: 4 * time.Second, 3: 700 * time.Millisecond}}
	u := b.since(a)
	// pid 1: +2 s; pid 3 (born in between): 0.7 s; pid 2 (gone) is lost.
	if u.wall != 5*time.Second || u.svc != 2*time.Second || u.db != 2700*time.Millisecond {
		t.Fatalf("since = %+v", u)
	}
}

func TestProcCPUReadsThisProcess(t *testing.T) {
	before, err := procCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// Spin until the kernel has charged this process 50 ms more (a few clock ticks), however
	// busy the machine is; the time it reports never goes back.
	deadline := time.Now().Add(30 * time.Second)
	for {
		after, err := procCPU(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		if after < before {
			t.Fatalf("CPU time went back from %v to %v", before, after)
		}
		if after-before >= 50*time.Millisecond {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("30 s of spinning moved the CPU time by %v", after-before)
		}
		for i := 0; i < 1_000_000; i++ {
			spin += i
		}
	}
	if _, err := procCPU(-1); err == nil {
		t.Fatal("no error for a process that does not exist")
	}
}

var spin int
