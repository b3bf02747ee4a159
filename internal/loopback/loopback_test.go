package loopback

import (
	"net"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFreePortsAreDistinctBindableAndBelowTheEphemeralRange(t *testing.T) {
	seen := map[int]bool{}
	for range 5 {
		ports, err := FreePorts("127.0.0.1", 10)
		require.NoError(t, err)
		require.Len(t, ports, 10)
		for _, p := range ports {
			require.False(t, seen[p], "port %d handed out twice", p)
			seen[p] = true
			require.GreaterOrEqual(t, p, lowest)
			require.LessOrEqual(t, p, highest)
			ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
			require.NoError(t, err, "port %d is bindable", p)
			require.NoError(t, ln.Close())
		}
	}
}

func TestFreePortsSkipsBoundAndAlreadyGivenPorts(t *testing.T) {
	first, err := FreePorts("127.0.0.1", 1)
	require.NoError(t, err)
	held, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { held.Close() })
	busy := held.Addr().(*net.TCPAddr).Port

	free, err := FreePorts("127.0.0.1", 1) // a port nobody holds, to be offered last
	require.NoError(t, err)
	delete(given, net.JoinHostPort("127.0.0.1", strconv.Itoa(free[0])))

	offers := []int{busy, first[0], busy, free[0]}
	orig := candidate
	t.Cleanup(func() { candidate = orig })
	candidate = func() int { p := offers[0]; offers = offers[1:]; return p }

	ports, err := FreePorts("127.0.0.1", 1)
	require.NoError(t, err)
	require.Equal(t, []int{free[0]}, ports, "the bound port and the one already given are passed over")
	require.Empty(t, offers)
}
