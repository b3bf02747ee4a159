package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

// procMemory reads a process's resident memory now (VmRSS) and its peak so far (VmHWM), in
// bytes, from /proc/<pid>/status.
func procMemory(pid int) (rss, hwm int64, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var kb int64
		line := sc.Text()
		switch {
		case len(line) > 6 && line[:6] == "VmRSS:":
			if _, err := fmt.Sscanf(line[6:], "%d", &kb); err == nil {
				rss = kb << 10
			}
		case len(line) > 6 && line[:6] == "VmHWM:":
			if _, err := fmt.Sscanf(line[6:], "%d", &kb); err == nil {
				hwm = kb << 10
			}
		}
	}
	if rss == 0 && hwm == 0 {
		return 0, 0, fmt.Errorf("/proc/%d/status has no VmRSS or VmHWM", pid)
	}
	return rss, hwm, nil
}

// memSampler polls a process's memory until stopped, keeping the largest figures: the
// process's own peak (VmHWM, which the kernel keeps exactly) and the largest VmRSS seen.
type memSampler struct {
	mu          sync.Mutex
	hwm, maxRSS int64
	quit, done  chan struct{}
}

func sampleMemory(pid int, every time.Duration) *memSampler {
	m := &memSampler{quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(m.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			if rss, hwm, err := procMemory(pid); err == nil {
				m.mu.Lock()
				m.hwm, m.maxRSS = max(m.hwm, hwm), max(m.maxRSS, rss)
				m.mu.Unlock()
			}
			select {
			case <-m.quit:
				return
			case <-t.C:
			}
		}
	}()
	return m
}

// stop ends the sampling and returns the peak (VmHWM) and the largest VmRSS sampled.
func (m *memSampler) stop() (peak, maxRSS int64) {
	close(m.quit)
	<-m.done
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.hwm, m.maxRSS
}
