package main

import (
	"net/netip"
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/webhooksender"
)

// TestDevWebhookCIDRsMatchREADME: what tokenscope-dev allows webhooks to reach is what README.md's
// configuration table says, and it covers loopback in both families.
func TestDevWebhookCIDRsMatchREADME(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	m := regexp.MustCompile("(?m)^\\| `WEBHOOK_ALLOWED_CIDRS` \\| [^|]*`([^`]+)` under `tokenscope-dev`").FindSubmatch(readme)
	require.NotNil(t, m, "README.md's WEBHOOK_ALLOWED_CIDRS row names no dev value")
	assert.Equal(t, devWebhookCIDRs, string(m[1]))

	allowed, err := webhooksender.ParseCIDRs(devWebhookCIDRs)
	require.NoError(t, err)
	g := webhooksender.Guard{Allowed: allowed}
	for _, a := range []string{"127.0.0.1", "127.1.2.3", "::1"} {
		assert.True(t, g.Allows(netip.MustParseAddr(a)), a)
	}
	assert.False(t, g.Allows(netip.MustParseAddr("10.0.0.1")))
}
