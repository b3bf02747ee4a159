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
	"syscall"
	"time"

	"github.com/tokenscope/tokenscope/ports"
)

// Sender posts deliveries. Its transport resolves through the Guard's resolver, refuses any
// address the Guard does not allow before connecting, and checks the connected address once
// more in the dialer's Control hook; redirects are never followed.
type Sender struct {
	client *http.Client
}

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
	tr := &http.Transport{
		Proxy:                 nil, // a proxy would connect on our behalf, past the guard
		DialContext:           dial,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: timeout,
	}
	return &Sender{client: &http.Client{
		Transport:     tr,
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
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
	resp, err := s.client.Do(req)
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
