// Package load is tokenbench's load generator: a fixed number of workers call one operation
// back to back for a fixed time, and every call's latency is kept so p50 and p99 come from the
// whole sample. It only ever talks to loopback addresses (Loopback checks a URL before use).
package load

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Op is one call. worker is the caller's index (0…concurrency-1) and i counts that worker's
// calls, so an operation can vary its target deterministically.
type Op func(ctx context.Context, worker, i int) error

// Options bound one run.
type Options struct {
	Concurrency int
	Duration    time.Duration
	// MaxCalls stops the run early once this many calls were made (0: 1,000,000).
	MaxCalls int
	// CallTimeout bounds one call (0: 10 s).
	CallTimeout time.Duration
}

// Result is what one run measured.
type Result struct {
	Calls    int
	Errors   int
	Elapsed  time.Duration
	P50, P99 time.Duration
	// FirstError describes the first failed call, empty when none failed.
	FirstError string
}

// PerSecond is the completed call rate (failed calls included).
func (r Result) PerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Calls) / r.Elapsed.Seconds()
}

// Run calls op from opts.Concurrency goroutines until opts.Duration has passed, MaxCalls calls
// were made or ctx ends. Latencies of failed calls count too: a slow failure is still slow.
func Run(ctx context.Context, opts Options, op Op) Result {
	if opts.Concurrency <= 0 {
		opts.Concurrency = 1
	}
	if opts.MaxCalls <= 0 {
		opts.MaxCalls = 1_000_000
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Duration)
	defer cancel()
	var (
		mu       sync.Mutex
		all      []time.Duration
		errs     int
		firstErr string
		calls    atomic.Int64
	)
	start := time.Now()
	var wg sync.WaitGroup
	for w := range opts.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lat := make([]time.Duration, 0, 1024)
			var nerr int
			var first string
			for i := 0; ctx.Err() == nil; i++ {
				if calls.Add(1) > int64(opts.MaxCalls) {
					break
				}
				cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), opts.CallTimeout)
				t0 := time.Now()
				err := op(cctx, w, i)
				d := time.Since(t0)
				ccancel()
				lat = append(lat, d)
				if err != nil {
					nerr++
					if first == "" {
						first = err.Error()
					}
				}
			}
			mu.Lock()
			all = append(all, lat...)
			errs += nerr
			if firstErr == "" {
				firstErr = first
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	res := Result{Calls: len(all), Errors: errs, Elapsed: time.Since(start), FirstError: firstErr}
	res.P50, res.P99 = Percentile(all, 50), Percentile(all, 99)
	return res
}

// Percentile returns the q-th percentile (nearest rank) of sample; it sorts sample in place.
func Percentile(sample []time.Duration, q int) time.Duration {
	if len(sample) == 0 {
		return 0
	}
	slices.Sort(sample)
	rank := (len(sample)*q + 99) / 100 // ceil(n·q/100)
	return sample[max(rank, 1)-1]
}

// Loopback fails unless raw is an http URL whose host is a loopback IP address literal: the
// benchmark never sends traffic anywhere else, not even through a name that resolves locally.
func Loopback(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	if u.Scheme != "http" {
		return fmt.Errorf("load: %s: only plain http to loopback is allowed", raw)
	}
	addr, err := netip.ParseAddr(u.Hostname())
	if err != nil || !addr.IsLoopback() {
		return fmt.Errorf("load: %s: host is not a loopback IP address", raw)
	}
	return nil
}

// Client is an HTTP client sized for concurrency connections to one loopback server. Its
// dialer refuses anything but loopback, whatever the URL said.
func Client(concurrency int) *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second}
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, address string) (net.Conn, error) {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return nil, err
			}
			if a, err := netip.ParseAddr(host); err != nil || !a.IsLoopback() {
				return nil, fmt.Errorf("load: refusing to dial %s: not loopback", address)
			}
			return d.DialContext(ctx, network, address)
		},
		MaxIdleConns:        4 * concurrency,
		MaxIdleConnsPerHost: 4 * concurrency,
		MaxConnsPerHost:     0,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}}
}

// Request is one HTTP call of an operation.
type Request struct {
	Method string
	URL    string
	Header http.Header
	Body   []byte
}

// Response is what Do kept of an answer.
type Response struct {
	Status int
	Body   []byte
}

// Do sends r and reads the whole body. A status other than 2xx is returned with an error that
// quotes the start of the body.
func Do(ctx context.Context, c *http.Client, r Request) (Response, error) {
	var body io.Reader
	if r.Body != nil {
		body = bytes.NewReader(r.Body)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, r.URL, body)
	if err != nil {
		return Response{}, err
	}
	for k, v := range r.Header {
		req.Header[k] = v
	}
	res, err := c.Do(req)
	if err != nil {
		return Response{}, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	out := Response{Status: res.StatusCode, Body: b}
	if err != nil {
		return out, err
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return out, fmt.Errorf("%s %s: HTTP %d: %.200s", r.Method, pathOf(r.URL), res.StatusCode, b)
	}
	return out, nil
}

func pathOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return u.Path
}
