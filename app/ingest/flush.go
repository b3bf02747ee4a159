package ingest

import (
	"context"
	"sync"
	"time"
)

// sharedFlush runs the service's flushes (ports.IngestStore.Flush) one at a time and lets
// concurrent callers share them: a caller waits for the first flush that starts after its call,
// so everything it committed before calling is derived when it returns, and every caller that
// arrives while a flush runs is served by the next one. Under many concurrent streams (POSTs to
// /v2/ingest) one flush derives the trades of all of them at once instead of one flush each
// (docs/engine.md, "Streams: deferred derivations and flushes").
type sharedFlush struct {
	mu      sync.Mutex
	next    *flushRound // the round callers join; it starts when the running one ends
	running bool
}

// flushRound is one flush and the callers waiting for it.
type flushRound struct {
	done    chan struct{}
	err     error
	waiters int // callers served by it
}

// do waits for a flush that starts after the call (run, in a goroutine of its own, without the
// caller's cancellation: a flush is always safe to finish, and other callers may wait for it)
// and returns its error, or ctx's when ctx ends first.
func (f *sharedFlush) do(ctx context.Context, run func(context.Context) error) error {
	f.mu.Lock()
	r := f.next
	if r == nil {
		r = &flushRound{done: make(chan struct{})}
		f.next = r
	}
	r.waiters++
	if !f.running {
		f.running = true
		go f.loop(context.WithoutCancel(ctx), run)
	}
	f.mu.Unlock()
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// loop runs rounds back to back while callers wait for one.
func (f *sharedFlush) loop(ctx context.Context, run func(context.Context) error) {
	for {
		f.mu.Lock()
		r := f.next
		f.next = nil
		if r == nil {
			f.running = false
			f.mu.Unlock()
			return
		}
		f.mu.Unlock()
		r.err = run(ctx)
		close(r.done)
	}
}

// background runs the flushes that StreamCommitted's streams leave to the service: kick asks for
// one, and a goroutine of its own runs them, each starting at least the service's flush interval
// after the previous one, for as long as kicks keep coming (kicks that arrive while a flush waits
// or runs ask for the next one only). The flushes go through sharedFlush, so a stream waiting for
// its own flush (Stream) shares them. A failed flush leaves its lists and marks for the next one
// (the next kick's, or the refresh loop's: every refresh round flushes first).
type background struct {
	mu        sync.Mutex
	running   bool
	kicked    bool
	lastStart time.Time
}

// kick asks for a background flush of s.
func (b *background) kick(s *Service) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.kicked = true
	if !b.running {
		b.running = true
		go b.loop(s)
	}
}

func (b *background) loop(s *Service) {
	for {
		b.mu.Lock()
		if !b.kicked {
			b.running = false
			b.mu.Unlock()
			return
		}
		b.kicked = false
		wait := time.Until(b.lastStart.Add(s.flushEvery))
		b.mu.Unlock()
		if wait > 0 {
			time.Sleep(wait)
		}
		b.mu.Lock()
		b.lastStart = time.Now()
		b.mu.Unlock()
		if err := s.flush(context.Background()); err != nil {
			s.backgroundFailures.Add(1)
			if s.onBackgroundError != nil {
				s.onBackgroundError(err)
			}
		}
	}
}
