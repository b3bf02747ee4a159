// Package ratelimit models a per-key request allowance: a Limit (a sustained rate per minute
// plus a burst on top of it) and the Decision of spending one request, with the generic cell
// rate algorithm (GCRA) step the in-process limiter runs. The Redis limiter runs the same
// algorithm in a script, so both answer alike. Times are integer nanoseconds, never floats.
// Standard library and domain/fault only.
package ratelimit

import (
	"strconv"
	"time"

	"github.com/tokenscope/tokenscope/domain/fault"
)

// Period is the window a Limit's rate is counted in.
const Period = time.Minute

// Bounds of a Limit: they keep every product of the GCRA step inside an int64.
const (
	MaxPerMinute = 1_000_000_000
	MaxBurst     = 1_000_000
)

// Limit is a token bucket: PerMinute requests a minute sustained, and a full bucket holds
// PerMinute+Burst, so a key idle for a minute may send that many at once. The zero Limit means
// "not set" (a key without an override takes the default; a zero default turns limits off).
type Limit struct {
	PerMinute int
	Burst     int
}

// New validates a limit; param names the setting or flag in the error.
func New(param string, perMinute, burst int) (Limit, error) {
	if perMinute < 1 || perMinute > MaxPerMinute {
		return Limit{}, fault.Invalid(param, strconv.Itoa(perMinute), "must be between 1 and "+strconv.Itoa(MaxPerMinute)+" requests per minute")
	}
	if burst < 0 || burst > MaxBurst {
		return Limit{}, fault.Invalid(param+" burst", strconv.Itoa(burst), "must be between 0 and "+strconv.Itoa(MaxBurst))
	}
	return Limit{PerMinute: perMinute, Burst: burst}, nil
}

// IsZero reports a limit that is not set.
func (l Limit) IsZero() bool { return l.PerMinute <= 0 }

// Or returns l, or def when l is not set.
func (l Limit) Or(def Limit) Limit {
	if l.IsZero() {
		return def
	}
	return l
}

// Capacity is the most requests a full bucket allows at once: RateLimit-Limit.
func (l Limit) Capacity() int { return l.PerMinute + l.Burst }

// String is what a 429 names: "120 requests per minute, burst 30".
func (l Limit) String() string {
	return strconv.Itoa(l.PerMinute) + " requests per minute, burst " + strconv.Itoa(l.Burst)
}

// Decision is the answer to spending one request.
type Decision struct {
	Allowed bool
	// Limit is the bucket's capacity, Remaining the requests it still allows at once.
	Limit, Remaining int
	// RetryAfter is how long until the next request is allowed (0 when this one was);
	// ResetAfter how long until the bucket is full again.
	RetryAfter, ResetAfter time.Duration
}

// Spend is one GCRA step. tat is the key's theoretical arrival time (the moment its bucket is
// full again; 0 for a key never seen) and now the current time, both in nanoseconds on the
// same monotonic scale. It returns the key's new tat (unchanged when the request is refused).
func (l Limit) Spend(tat, now int64) (int64, Decision) {
	interval := int64(Period) / int64(l.PerMinute) // one request's worth of time
	tolerance := interval * int64(l.Capacity())    // a full bucket's worth
	start := max(tat, now)
	next := start + interval
	d := Decision{Limit: l.Capacity()}
	if next-now > tolerance {
		d.RetryAfter = time.Duration(next - tolerance - now)
		d.ResetAfter = time.Duration(start - now)
		return tat, d
	}
	d.Allowed = true
	d.Remaining = int((tolerance - (next - now)) / interval)
	d.ResetAfter = time.Duration(next - now)
	return next, d
}

// Refused is the error of a request the limit refused: a 429 naming the limit, with
// Retry-After.
func Refused(l Limit, d Decision) *fault.Error {
	e := fault.RateLimited("rate limit exceeded: this API key may make "+l.String()+"; retry after the Retry-After header's seconds", d.RetryAfter)
	e.Details = map[string]any{"limit": "rate", "requestsPerMinute": l.PerMinute, "burst": l.Burst}
	return e
}
