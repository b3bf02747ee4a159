package webhooksender_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/webhooksender"
	"github.com/tokenscope/tokenscope/domain/fault"
)

// fakeResolver answers every name with the same addresses; nothing real is looked up.
type fakeResolver []netip.Addr

func (f fakeResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return f, nil
}

func addrs(ss ...string) fakeResolver {
	var out fakeResolver
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out
}

func TestIsPublic(t *testing.T) {
	for _, tc := range []struct {
		ip   string
		want bool
	}{
		{"127.0.0.1", false}, {"::1", false}, {"10.0.0.1", false}, {"172.16.0.1", false}, {"192.168.1.1", false},
		{"169.254.169.254", false}, {"100.64.0.1", false}, {"0.0.0.0", false}, {"::ffff:127.0.0.1", false},
		{"fc00::1", false}, {"fe80::1", false}, {"224.0.0.1", false}, {"198.18.0.1", false}, {"2001:db8::1", false},
		{"93.184.216.34", true}, {"2606:4700:4700::1111", true},
		// Deprecated and translation forms that carry an IPv4 address inside an IPv6 one. A
		// host or a translator may route them to the embedded address, so every prefix is
		// refused whole, whatever address it embeds, public ones included.
		{"::169.254.169.254", false}, {"::a00:1", false}, {"::0.0.0.1", false}, {"::8.8.8.8", false}, // IPv4-compatible ::/96
		{"::ffff:0:a9fe:a9fe", false}, {"::ffff:0:a00:1", false}, {"::ffff:0:808:808", false}, // IPv4-translated ::ffff:0:0:0/96
		{"64:ff9b::a9fe:a9fe", false}, {"64:ff9b::808:808", false}, {"64:ff9b:1::a00:1", false}, // NAT64
		{"2002:a9fe:a9fe::1", false}, {"2002:808:808::1", false}, // 6to4
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", false}, // Teredo
	} {
		t.Run(tc.ip, func(t *testing.T) {
			assert.Equal(t, tc.want, webhooksender.IsPublic(netip.MustParseAddr(tc.ip)))
		})
	}
}

func TestCheckURL(t *testing.T) {
	public := webhooksender.Guard{Resolver: addrs("93.184.216.34")}
	rebinding := webhooksender.Guard{Resolver: addrs("93.184.216.34", "10.1.2.3")}
	loopbackOK := webhooksender.Guard{Resolver: addrs("127.0.0.1"), Allowed: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	for _, tc := range []struct {
		name string
		g    webhooksender.Guard
		url  string
		ok   bool
	}{
		{"public https", public, "https://hooks.example.com/x", true},
		{"public http", public, "http://hooks.example.com/x", false},
		{"one private address among public ones", rebinding, "https://hooks.example.com/x", false},
		{"literal loopback", public, "https://127.0.0.1/x", false},
		{"literal metadata address", public, "https://169.254.169.254/latest", false},
		{"mapped loopback", public, "https://[::ffff:127.0.0.1]/x", false},
		{"IPv4-compatible metadata address", public, "https://[::169.254.169.254]/latest", false},
		{"IPv4-compatible private address", public, "https://[::a00:1]/x", false},
		{"IPv4-compatible this-network address", public, "https://[::0.0.0.1]/x", false},
		{"IPv4-translated metadata address", public, "https://[::ffff:0:a9fe:a9fe]/x", false},
		{"IPv4-translated private address", public, "https://[::ffff:0:a00:1]/x", false},
		{"a name resolving to an IPv4-compatible address", webhooksender.Guard{Resolver: addrs("::a9fe:a9fe")},
			"https://hooks.example.com/x", false},
		{"decimal ip", public, "http://2130706433/", false},
		{"hex ip", public, "http://0x7f.0.0.1/", false},
		{"octal-looking ip", public, "https://0177.0.0.1/", false},
		{"user info", public, "https://a@hooks.example.com/", false},
		{"other scheme", public, "ftp://hooks.example.com/", false},
		{"loopback over http when allowed", loopbackOK, "http://localhost:8080/hook", true},
		{"private over http even when loopback is allowed", webhooksender.Guard{Resolver: addrs("10.0.0.1"),
			Allowed: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}, "http://intranet/", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.g.CheckURL(context.Background(), tc.url)
			if tc.ok {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			fe, ok := fault.As(err)
			require.True(t, ok)
			assert.Equal(t, fault.KindInvalid, fe.Kind)
			assert.Equal(t, "url", fe.Param)
		})
	}
}

func TestSenderConnectTimeGuard(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, "/final", http.StatusFound)
			return
		}
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	target := "http://rebind.example:" + strconv.Itoa(port)

	t.Run("a name resolving to loopback is refused before connecting", func(t *testing.T) {
		s := webhooksender.NewSender(webhooksender.Guard{Resolver: addrs("127.0.0.1")}, 2*time.Second)
		_, err := s.Send(context.Background(), target+"/x", nil, []byte("{}"))
		require.Error(t, err)
		assert.True(t, errors.Is(err, webhooksender.ErrBlocked), "%v", err)
		assert.Equal(t, int32(0), hits.Load(), "the receiver got nothing")
	})
	t.Run("a name resolving to loopback in IPv4-compatible form is refused before connecting", func(t *testing.T) {
		// ::7f00:1 embeds 127.0.0.1 but is not in 127.0.0.0/8: the allow-list does not open it.
		s := webhooksender.NewSender(webhooksender.Guard{Resolver: addrs("::7f00:1"),
			Allowed: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}, 2*time.Second)
		_, err := s.Send(context.Background(), target+"/x", nil, []byte("{}"))
		require.Error(t, err)
		assert.True(t, errors.Is(err, webhooksender.ErrBlocked), "%v", err)
		assert.Equal(t, int32(0), hits.Load(), "the receiver got nothing")
	})
	t.Run("an allowed range is reached; Retry-After is read", func(t *testing.T) {
		s := webhooksender.NewSender(webhooksender.Guard{Resolver: addrs("127.0.0.1"),
			Allowed: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}, 2*time.Second)
		res, err := s.Send(context.Background(), target+"/x", map[string]string{"webhook-id": "msg_1"}, []byte("{}"))
		require.NoError(t, err)
		assert.Equal(t, 429, res.StatusCode)
		assert.Equal(t, 7*time.Second, res.RetryAfter)
		res, err = s.Send(context.Background(), target+"/redirect", nil, []byte("{}"))
		require.NoError(t, err)
		assert.Equal(t, 302, res.StatusCode, "redirects are not followed")
		assert.Equal(t, int32(2), hits.Load(), "the redirect target was never requested")
	})
}
