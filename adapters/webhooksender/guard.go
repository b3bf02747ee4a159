// Package webhooksender delivers webhooks over HTTP and guards where they may go: the SSRF
// guard (write-time URL check and connect-time address check, so DNS rebinding cannot slip a
// private address in between), the sender (no redirects, bounded time and reads) and the CEL
// filter compiler. It may import domain and ports.
package webhooksender

import (
	"context"
	"net"
	"net/netip"
	"net/url"
	"strings"

	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/webhook"
	"github.com/tokenscope/tokenscope/ports"
)

// Resolver resolves host names; *net.Resolver is one, tests inject a fake.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Guard decides which addresses webhooks may reach: public unicast addresses, plus the
// configured Allowed ranges (loopback in tests and `make run`). Plain http is accepted only
// when every address of the host lies in Allowed.
type Guard struct {
	Allowed  []netip.Prefix
	Resolver Resolver
}

var _ ports.URLGuard = Guard{}

// ParseCIDRs reads WEBHOOK_ALLOWED_CIDRS, a comma list such as "127.0.0.0/8,::1/128".
func ParseCIDRs(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		p, err := netip.ParsePrefix(part)
		if err != nil {
			return nil, fault.Invalid("WEBHOOK_ALLOWED_CIDRS", part, "must be a CIDR such as 127.0.0.0/8")
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// notPublic lists special-purpose ranges (IANA registries) that net/netip's predicates miss.
//
// The IPv6 forms that embed an IPv4 address are refused whole, whatever address they carry:
// IPv4-compatible ::/96 (deprecated by RFC 4291, but a host may still route ::a9fe:a9fe to
// 169.254.169.254), IPv4-translated ::ffff:0:0:0/96 (RFC 2765 SIIT), NAT64 64:ff9b::/96 and
// 64:ff9b:1::/48, 6to4 2002::/16 and Teredo 2001::/32 (inside 2001::/23). Judging the embedded
// address instead would trust a translator we cannot see; a public receiver has a native address.
// IPv4-mapped ::ffff:0:0/96 is not listed: IsPublic judges it as the IPv4 address it carries.
var notPublic = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{"0.0.0.0/8", "100.64.0.0/10", "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24",
		"198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "240.0.0.0/4", "255.255.255.255/32",
		"::/96", "::ffff:0:0:0/96", "64:ff9b::/96", "64:ff9b:1::/48", "100::/64", "2001::/23", "2001:db8::/32",
		"2002::/16", "5f00::/16", "fc00::/7"} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// IsPublic reports whether a is a globally routable unicast address. IPv4-mapped IPv6 is
// judged as the IPv4 address it carries.
func IsPublic(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsUnspecified() || a.IsLinkLocalUnicast() ||
		a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast() || a.IsMulticast() {
		return false
	}
	for _, p := range notPublic {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

func (g Guard) inAllowed(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range g.Allowed {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Allows reports whether a connection to a may be made.
func (g Guard) Allows(a netip.Addr) bool { return g.inAllowed(a) || IsPublic(a) }

// CheckURL is the write-time check of a destination: syntax, no disguised numeric host,
// every resolved address allowed, and https unless every address is in Allowed.
func (g Guard) CheckURL(ctx context.Context, raw string) error {
	if err := webhook.ValidateURLSyntax(raw); err != nil {
		return err
	}
	u, _ := url.Parse(raw) // ValidateURLSyntax parsed it already
	host := u.Hostname()
	addrs, err := g.resolve(ctx, host)
	if err != nil {
		return err
	}
	https := strings.EqualFold(u.Scheme, "https")
	for _, a := range addrs {
		if !g.Allows(a) {
			return fault.Invalid("url", raw, "resolves to "+a.String()+", which is not a public address")
		}
		if !https && !g.inAllowed(a) {
			return fault.Invalid("url", raw, "must be an https URL")
		}
	}
	return nil
}

// resolve returns the host's addresses. Numeric hosts must be canonical IP literals: the
// decimal, octal and hex spellings some resolvers accept ("2130706433", "0x7f.1") are
// refused, so a check here and a connect there can never read the same host differently.
func (g Guard) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	if numericLooking(host) {
		return nil, fault.Invalid("url", host, "host must be a name or a canonical IP address")
	}
	r := g.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return nil, fault.Invalid("url", host, "host does not resolve")
	}
	return addrs, nil
}

func numericLooking(host string) bool {
	h := strings.ToLower(host)
	if strings.HasPrefix(h, "0x") || strings.Contains(h, ".0x") {
		return true
	}
	for _, c := range h {
		if !(c == '.' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}
