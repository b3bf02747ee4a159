package webhooksender

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tokenscope/tokenscope/ports"
)

// Sender posts deliveries. Its transports resolve through the Guard's resolver, refuse any
// address the Guard does not allow before connecting, and check the connected address once
// more in the dialer's Control hook; redirects are never followed. Every endpoint URL has a
// transport of its own, whose connections are kept alive between deliveries (up to
// MaxIdlePerEndpoint idle): endpoints on one host (a receiver's paths) do not share, and
// churn, one pool.
type Sender struct {
	newClient func() *http.Client

	mu      sync.Mutex
	clients map[string]*http.Client
}

// MaxIdlePerEndpoint is how many idle connections an endpoint keeps: the most requests the
// delivery pump has in flight to one endpoint.
const MaxIdlePerEndpoint = 16

// maxClients bounds the per-URL transports; past it they are all closed and made afresh.
const maxClients = 4096

var _ ports.WebhookSender = (*Sender)(nil)

// ErrBlocked is the transport error of a delivery to a forbidden address.
var ErrBlocked = errors.New("destination address is not allowed")

// maxRead bounds what is read of a receiver's answer; the body itself is discarded.
const maxRead = 64 << 10

// NewSender builds a sender whose requests time out after timeout (15 s in production).
func NewSender(g Guard, timeout time.Duration) *Sender {
	d := &net.Dialer{Timeout: 5 * time.Second, Control: func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil || !g.Allows(ap.Addr()) {
			return fmt.Errorf("%w: %s", ErrBlocked, address)
		}
		return nil
	}}
	dial := func(ctx context.Context, network, address string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(address)
		if err != nil {
			return nil, err
		}
		addrs, err := g.resolve(ctx, host)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrBlocked, host, err)
		}
		var last error
		for _, a := range addrs {
			if !g.Allows(a) {
				last = fmt.Errorf("%w: %s resolves to %s", ErrBlocked, host, a)
				continue
			}
			c, err := d.DialContext(ctx, network, net.JoinHostPort(a.Unmap().String(), port))
			if err == nil {
				return c, nil
			}
			last = err
		}
		return nil, last
	}
	newClient := func() *http.Client {
		return &http.Client{
			Transport: &http.Transport{
				Proxy:                 nil, // a proxy would connect on our behalf, past the guard
				DialContext:           dial,
				MaxIdleConns:          MaxIdlePerEndpoint,
				MaxIdleConnsPerHost:   MaxIdlePerEndpoint,
				IdleConnTimeout:       90 * time.Second,
				TLSHandshakeTimeout:   5 * time.Second,
				ResponseHeaderTimeout: timeout,
			},
			Timeout:       timeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	return &Sender{newClient: newClient, clients: map[string]*http.Client{}}
}

// client returns url's client, making it on first use.
func (s *Sender) client(url string) *http.Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[url]
	if !ok {
		if len(s.clients) >= maxClients {
			for _, old := range s.clients {
				old.CloseIdleConnections()
			}
			clear(s.clients)
		}
		c = s.newClient()
		s.clients[url] = c
	}
	return c
}

// Send posts body with headers and reports the answer.
func (s *Sender) Send(ctx context.Context, url string, headers map[string]string, body []byte) (ports.SendResult, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return ports.SendResult{}, err
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("User-Agent", "tokenscope-webhooks/1")
	resp, err := s.client(url).Do(req)
	if err != nil {
		return ports.SendResult{}, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxRead))
	res := ports.SendResult{StatusCode: resp.StatusCode,
		Abort: strings.EqualFold(strings.TrimSpace(resp.Header.Get("webhook-delivery")), "abort-message")}
	if v := strings.TrimSpace(resp.Header.Get("Retry-After")); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			res.RetryAfter = time.Duration(n) * time.Second
		} else if t, err := http.ParseTime(v); err == nil {
			res.RetryAfter = max(time.Until(t), 0)
		}
	}
	return res, nil
}
