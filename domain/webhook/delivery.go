package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/text"
)

// MaxPayloadBytes bounds a delivered body. Standard Webhooks asks to stay under 20 KB; an
// event above it is refused when it is built, never truncated.
const MaxPayloadBytes = 20_000

// Event is one message to deliver. ID is its message id (the webhook-id header): the same on
// every retry and for every endpoint, so receivers can deduplicate. Timestamp is Unix ms.
type Event struct {
	ID        string
	Channel   Channel
	Timestamp int64
	Data      json.RawMessage
}

// NewEvent validates an event: an id of 1–64 characters without '.' (the signed content uses
// '.' as separator), a known channel, data that is valid JSON, and a payload within
// MaxPayloadBytes. Data is compacted so the delivered bytes are stable.
func NewEvent(id string, ch Channel, timestampMs int64, data json.RawMessage) (Event, error) {
	if id == "" {
		return Event{}, fault.Missing("id")
	}
	if len(id) > MaxIDLen || strings.ContainsAny(id, ". \t\r\n") {
		return Event{}, fault.Invalid("id", id, "must be at most 64 characters without '.' or spaces")
	}
	if _, err := ParseChannel("channel", string(ch)); err != nil {
		return Event{}, err
	}
	var buf bytes.Buffer
	if len(bytes.TrimSpace(data)) == 0 {
		buf.WriteString("null")
	} else if err := json.Compact(&buf, data); err != nil {
		return Event{}, fault.Invalid("data", text.Cut(string(data)), "must be valid JSON")
	}
	e := Event{ID: id, Channel: ch, Timestamp: timestampMs, Data: buf.Bytes()}
	if n := len(Payload(e)); n > MaxPayloadBytes {
		return Event{}, fault.TooLarge("webhook payload of " + strconv.Itoa(n) + " bytes exceeds " + strconv.Itoa(MaxPayloadBytes))
	}
	return e, nil
}

// Payload is the delivered body, {"channel":…,"timestamp":<ms>,"data":…}, the shape of the
// public API's deliveries (the same as its WebSocket pushes). Sign exactly these bytes.
func Payload(e Event) []byte {
	ch, _ := json.Marshal(string(e.Channel)) // a string: cannot fail
	data := bytes.TrimSpace(e.Data)
	if len(data) == 0 {
		data = []byte("null")
	}
	var b bytes.Buffer
	b.WriteString(`{"channel":`)
	b.Write(ch)
	b.WriteString(`,"timestamp":`)
	b.WriteString(strconv.FormatInt(e.Timestamp, 10))
	b.WriteString(`,"data":`)
	b.Write(data)
	b.WriteString(`}`)
	return b.Bytes()
}

// Result classifies one attempt's outcome.
type Result struct {
	// Success is true for a 2xx response without transport error, and only then; a 3xx is a
	// failure because redirects are never followed.
	Success bool
	// Throttled marks a 429 or a timeout: the receiver is overloaded, so the next retry waits
	// at least the schedule's overload penalty.
	Throttled bool
	// Gone marks 410: the receiver asks to stop. The caller disables the endpoint at once, as
	// Standard Webhooks prescribes, instead of waiting for the auto-disable rule.
	Gone bool
	// Reason is a short label for logs and the attempt record.
	Reason string
}

// Outcome classifies an attempt from the response status (0 when there was none) and the
// transport error. A timeout is recognised through the error's Timeout() method, which
// net.Error and context.DeadlineExceeded provide.
func Outcome(statusCode int, err error) Result {
	if err != nil {
		var te interface{ Timeout() bool }
		if errors.As(err, &te) && te.Timeout() {
			return Result{Throttled: true, Reason: "timeout"}
		}
		return Result{Reason: "error: " + err.Error()}
	}
	switch {
	case statusCode >= 200 && statusCode <= 299:
		return Result{Success: true, Reason: "http " + strconv.Itoa(statusCode)}
	case statusCode == 429:
		return Result{Throttled: true, Reason: "http 429"}
	case statusCode == 410:
		return Result{Gone: true, Reason: "http 410"}
	case statusCode == 0:
		return Result{Reason: "no response"}
	}
	return Result{Reason: "http " + strconv.Itoa(statusCode)}
}

// Attempt is the record of one delivery attempt.
type Attempt struct {
	EndpointID string
	EventID    string
	Number     int // 1 for the first attempt
	StatusCode int // 0 when no response arrived
	Latency    time.Duration
	Error      string // empty on success
	At         time.Time
	Result     Result
}

// NewAttempt records attempt number of event to endpoint.
func NewAttempt(endpointID, eventID string, number, statusCode int, err error, latency time.Duration, at time.Time) Attempt {
	r := Outcome(statusCode, err)
	a := Attempt{EndpointID: endpointID, EventID: eventID, Number: number, StatusCode: statusCode,
		Latency: latency, At: at.UTC(), Result: r}
	if !r.Success {
		a.Error = r.Reason
	}
	return a
}

// RetrySchedule says when failed deliveries are retried. The first attempt is immediate;
// Delays[i] is the wait after attempt i+1 failed, so there are len(Delays)+1 attempts.
type RetrySchedule struct {
	Delays []time.Duration
	// Jitter is the relative spread applied to every wait: 0.2 makes a 5 s wait 4–6 s, so
	// endpoints that failed together do not all retry together.
	Jitter float64
	// OverloadPenalty is the minimum wait after a Throttled result.
	OverloadPenalty time.Duration
}

// DefaultRetrySchedule is Svix's: immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h
// (8 attempts over about 27.6 h), ±20% jitter, 60 s overload penalty.
func DefaultRetrySchedule() RetrySchedule {
	return RetrySchedule{
		Delays: []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour,
			5 * time.Hour, 10 * time.Hour, 10 * time.Hour},
		Jitter:          0.2,
		OverloadPenalty: time.Minute,
	}
}

// ParseRetrySchedule reads a comma-separated list of Go durations ("50ms,100ms,200ms") for
// configuration; jitter and penalty take the defaults.
func ParseRetrySchedule(s string) (RetrySchedule, error) {
	rs := DefaultRetrySchedule()
	rs.Delays = nil
	for _, part := range strings.Split(s, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(part))
		if err != nil || d < 0 {
			return RetrySchedule{}, fault.Invalid("retrySchedule", s, "must be a comma-separated list of non-negative durations such as 5s,5m,30m")
		}
		rs.Delays = append(rs.Delays, d)
	}
	return rs, nil
}

// MaxAttempts is the number of attempts including the first.
func (s RetrySchedule) MaxAttempts() int { return len(s.Delays) + 1 }

// NextDelay is the wait after attempt number attempt (1-based) failed; ok is false when it was
// the last one. attempt 0 (nothing tried yet) gives 0: the first attempt is immediate.
// jitter returns a value in [0, 1) (nil means none); 0.5 leaves the delay unchanged.
func (s RetrySchedule) NextDelay(attempt int, jitter func() float64) (time.Duration, bool) {
	if attempt <= 0 {
		return 0, true
	}
	if attempt > len(s.Delays) {
		return 0, false
	}
	return s.jittered(s.Delays[attempt-1], jitter), true
}

// NextDelayAfter is NextDelay adjusted for the receiver's answer, as Svix's worker does: after
// a Throttled result the base wait is at least OverloadPenalty; a Retry-After hint (0 when
// absent) is honoured but clamped into [base, 2×base]; jitter applies last.
func (s RetrySchedule) NextDelayAfter(attempt int, r Result, retryAfter time.Duration, jitter func() float64) (time.Duration, bool) {
	if attempt <= 0 {
		return 0, true
	}
	if attempt > len(s.Delays) {
		return 0, false
	}
	d := s.Delays[attempt-1]
	if r.Throttled && d < s.OverloadPenalty {
		d = s.OverloadPenalty
	}
	if retryAfter > 0 {
		d = min(max(retryAfter, d), 2*d)
	}
	return s.jittered(d, jitter), true
}

func (s RetrySchedule) jittered(d time.Duration, jitter func() float64) time.Duration {
	if jitter == nil || s.Jitter == 0 {
		return d
	}
	r := min(max(jitter(), 0), 1)
	return time.Duration(float64(d) * (1 + s.Jitter*(2*r-1)))
}

// AutoDisable is the rule that switches off an endpoint that keeps failing: when the first
// failure of an unbroken run (no success since) lies more than After before now, the endpoint
// is disabled. Svix counts only messages that exhausted their retries and waits 5 days.
type AutoDisable struct{ After time.Duration }

// Due reports whether an endpoint failing since firstFailureAt (zero: not failing) must be
// disabled at now.
func (a AutoDisable) Due(firstFailureAt, now time.Time) bool {
	return !firstFailureAt.IsZero() && now.Sub(firstFailureAt) > a.After
}
