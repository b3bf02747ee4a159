package jobrunner

// Functions only the tests use: nothing reachable from the binaries calls them (make deadcode).

// Watching reports how many jobs are being polled (for tests and metrics).
func (h *Hub) Watching() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.watches)
}
