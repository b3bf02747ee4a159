package jobrunner

import (
	"context"
	"sync"
	"time"

	"github.com/tokenscope/tokenscope/domain/job"
)

// Hub fans one poll per job out to every stream following it: however many clients watch a
// job, its state is read once per Interval, and the poller stops when the last one leaves or
// the job ends.
type Hub struct {
	service  *Service
	interval time.Duration
	// heartbeat is how often streams send a comment line (15 s in production); it is also how
	// a stream notices its client has gone.
	heartbeat time.Duration

	mu      sync.Mutex
	watches map[string]*watch
}

type watch struct {
	subs map[chan job.Job]struct{}
	last job.Job
}

// NewHub builds a hub reading jobs through service every interval (250 ms when 0); heartbeat
// is what Heartbeat reports (15 s when 0).
func NewHub(service *Service, interval, heartbeat time.Duration) *Hub {
	if interval <= 0 {
		interval = 250 * time.Millisecond
	}
	if heartbeat <= 0 {
		heartbeat = 15 * time.Second
	}
	return &Hub{service: service, interval: interval, heartbeat: heartbeat}
}

// Heartbeat is how often a stream sends a comment line; it is also how a stream notices its
// client has gone.
func (h *Hub) Heartbeat() time.Duration { return h.heartbeat }

// Subscribe follows the job: the channel carries every new state (only the latest is kept
// for a slow reader). cancel must be called when the stream ends.
func (h *Hub) Subscribe(accountID string, current job.Job) (updates <-chan job.Job, cancel func()) {
	ch := make(chan job.Job, 1)
	h.mu.Lock()
	if h.watches == nil {
		h.watches = map[string]*watch{}
	}
	w, ok := h.watches[current.ID]
	if !ok {
		w = &watch{subs: map[chan job.Job]struct{}{}, last: current}
		h.watches[current.ID] = w
		go h.poll(accountID, current.ID, w)
	}
	w.subs[ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		delete(w.subs, ch)
		h.mu.Unlock()
	}
}

func (h *Hub) poll(accountID, id string, w *watch) {
	interval := h.interval
	t := time.NewTicker(interval)
	defer t.Stop()
	for range t.C {
		h.mu.Lock()
		idle := len(w.subs) == 0
		if idle {
			delete(h.watches, id)
		}
		h.mu.Unlock()
		if idle {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), interval+2*time.Second)
		j, err := h.service.Get(ctx, accountID, id)
		cancel()
		if err != nil || !job.Changed(w.last, j) {
			continue
		}
		w.last = j
		h.mu.Lock()
		for ch := range w.subs {
			select {
			case <-ch: // drop the unread older state: only the newest matters
			default:
			}
			ch <- j
		}
		if j.Status.Terminal() {
			delete(h.watches, id)
		}
		h.mu.Unlock()
		if j.Status.Terminal() {
			return
		}
	}
}
