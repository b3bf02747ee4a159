package market

// SetHotWaitHook makes every request that starts waiting for another request's read of a
// ranking call f first; tests use it to know that callers are queued on one read.
func SetHotWaitHook(s *Service, f func()) {
	s.hot.mu.Lock()
	s.hot.onWait = f
	s.hot.mu.Unlock()
}
