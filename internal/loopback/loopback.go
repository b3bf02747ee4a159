// Package loopback finds TCP ports that a child process or an embedded server can bind a moment
// later. Asking the kernel for port 0 and closing it hands out a port from the ephemeral range,
// the same range outgoing connections (to Postgres, to Temporal) take their local ports from, so
// one of them can hold it by the time it is bound. Ports are therefore drawn from below that
// range, where nothing is assigned implicitly, and each is checked by binding it.
package loopback

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
)

// The range ports are drawn from: registered ports below Linux's default ephemeral range
// (32768–60999) and above the common fixed ports of development servers (8080, 7233, 5432).
const (
	lowest  = 20000
	highest = 32767
)

var (
	mu    sync.Mutex
	given = map[string]bool{} // host:port already handed out by this process
	// candidate draws the next port to try; tests replace it.
	candidate = func() int { return lowest + rand.IntN(highest-lowest+1) }
)

// FreePorts returns n distinct ports on host that could be bound just now and that this process
// has not handed out before.
func FreePorts(host string, n int) ([]int, error) {
	mu.Lock()
	defer mu.Unlock()
	ports := make([]int, 0, n)
	for tries := 0; len(ports) < n; tries++ {
		if tries > 1000 {
			return nil, errors.New("loopback: no free port found in 1000 tries")
		}
		p := candidate()
		addr := net.JoinHostPort(host, strconv.Itoa(p))
		if given[addr] {
			continue
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		if err := ln.Close(); err != nil {
			return nil, fmt.Errorf("loopback: close %s: %w", addr, err)
		}
		given[addr] = true
		ports = append(ports, p)
	}
	return ports, nil
}
