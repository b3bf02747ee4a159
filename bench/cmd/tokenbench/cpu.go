package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// The CPU the ingest costs, per trade: the service process's CPU time (user + system, from
// /proc/<pid>/stat) plus the database's (its backends connected to the bench database and the
// cluster's shared writers: WAL writer, checkpointer, background writer), read at the start and
// the end of a phase. Backends born during a phase count from zero; one that exits during a phase
// takes its time with it (the service keeps its pool's connections open, so few do).

// clockTicks is the kernel's USER_HZ, the unit of /proc/<pid>/stat's times: 100 on every Linux
// this project runs on (the value glibc's sysconf(_SC_CLK_TCK) reports).
const clockTicks = 100

// procCPU is a process's user + system CPU time so far.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces: fields are counted after
	// its closing parenthesis, where field 3 (state) starts.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 13 { // utime and stime are fields 14 and 15, f[11] and f[12]
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	u, err1 := strconv.ParseInt(string(f[11]), 10, 64)
	s, err2 := strconv.ParseInt(string(f[12]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: utime %q stime %q", pid, f[11], f[12])
	}
	return time.Duration(u+s) * time.Second / clockTicks, nil
}

// cpuSample is the CPU time of the service and of each database process at one moment.
type cpuSample struct {
	at  time.Time
	svc time.Duration
	db  map[int]time.Duration
}

// cpuMeter samples the service process (svcPid; 0: none) and the database processes that serve
// the bench database.
type cpuMeter struct {
	svcPid int
	pool   *pgxpool.Pool
}

// dbPids lists the bench database's backends and the cluster's shared writers.
func (m cpuMeter) dbPids(ctx context.Context) ([]int, error) {
	rows, err := m.pool.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = current_database()
		OR backend_type IN ('walwriter', 'checkpointer', 'background writer')`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int
	for rows.Next() {
		var pid int
		if err := rows.Scan(&pid); err != nil {
			return nil, err
		}
		out = append(out, pid)
	}
	return out, rows.Err()
}

func (m cpuMeter) sample(ctx context.Context) (cpuSample, error) {
	s := cpuSample{at: time.Now(), db: map[int]time.Duration{}}
	if m.svcPid > 0 {
		t, err := procCPU(m.svcPid)
		if err != nil {
			return s, err
		}
		s.svc = t
	}
	pids, err := m.dbPids(ctx)
	if err != nil {
		return s, fmt.Errorf("database processes: %w", err)
	}
	for _, pid := range pids {
		if t, err := procCPU(pid); err == nil { // a backend that just exited is simply absent
			s.db[pid] = t
		}
	}
	return s, nil
}

// cpuUse is the CPU spent between two samples.
type cpuUse struct {
	wall    time.Duration
	svc, db time.Duration
}

// since is the CPU spent from a to b: a process absent from a counts from zero.
func (b cpuSample) since(a cpuSample) cpuUse {
	u := cpuUse{wall: b.at.Sub(a.at), svc: b.svc - a.svc}
	for pid, t := range b.db {
		u.db += t - a.db[pid]
	}
	return u
}

// perTrade is the CPU per trade of a phase that spent busy while trades were acknowledged, less
// the share of readers measured alone in idle (scaled to the phase's length). Zero when there is
// nothing to divide by.
func perTrade(busy, idle cpuUse, trades int) (total, svc, db time.Duration) {
	if trades <= 0 {
		return 0, 0, 0
	}
	scale := 0.0
	if idle.wall > 0 {
		scale = float64(busy.wall) / float64(idle.wall)
	}
	svcNet := float64(busy.svc) - scale*float64(idle.svc)
	dbNet := float64(busy.db) - scale*float64(idle.db)
	svc, db = time.Duration(svcNet/float64(trades)), time.Duration(dbNet/float64(trades))
	return svc + db, svc, db
}

// cpuTracker polls the database processes' CPU until stopped, so backends that exit before the
// end of a phase (an import's connections close with it) still count up to their last poll.
type cpuTracker struct {
	meter      cpuMeter
	mu         sync.Mutex
	first      map[int]time.Duration // a process's CPU when first seen (0 for one born after the start)
	last       map[int]time.Duration
	start      time.Time
	quit, done chan struct{}
}

// trackCPU starts polling every interval.
func trackCPU(ctx context.Context, m cpuMeter, every time.Duration) *cpuTracker {
	t := &cpuTracker{meter: m, first: map[int]time.Duration{}, last: map[int]time.Duration{}, start: time.Now(),
		quit: make(chan struct{}), done: make(chan struct{})}
	t.poll(ctx, true)
	go func() {
		defer close(t.done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-t.quit:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				t.poll(ctx, false)
			}
		}
	}()
	return t
}

func (t *cpuTracker) poll(ctx context.Context, initial bool) {
	s, err := t.meter.sample(ctx)
	if err != nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for pid, c := range s.db {
		if _, seen := t.first[pid]; !seen {
			if initial {
				t.first[pid] = c
			} else {
				t.first[pid] = 0
			}
		}
		t.last[pid] = c
	}
}

// stop ends the polling (after a last poll) and returns the database's CPU since the start.
func (t *cpuTracker) stop(ctx context.Context) cpuUse {
	close(t.quit)
	<-t.done
	t.poll(ctx, false)
	t.mu.Lock()
	defer t.mu.Unlock()
	u := cpuUse{wall: time.Since(t.start)}
	for pid, c := range t.last {
		u.db += c - t.first[pid]
	}
	return u
}
