package account_test

import (
	"crypto/sha256"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/domain/account"
	"github.com/tokenscope/tokenscope/domain/fault"
)

func TestNewKeyStoresOnlyTheHash(t *testing.T) {
	secret := []byte("0123456789abcdef") // 16 bytes = 128 bits
	full, k, err := account.NewKey([]byte{0xde, 0xad, 0xbe, 0xef}, secret, "acc1", "dev", []account.Scope{account.ScopeRead}, time.Unix(0, 0))
	require.NoError(t, err)
	// "0123456789abcdef" in unpadded URL-safe base64 is MDEyMzQ1Njc4OWFiY2RlZg.
	assert.Equal(t, "tsk_deadbeef_MDEyMzQ1Njc4OWFiY2RlZg", full)
	assert.Equal(t, "tsk_deadbeef", k.Prefix)
	want := sha256.Sum256([]byte(full))
	assert.Equal(t, want[:], k.Hash)
	assert.NotContains(t, string(k.Hash), "MDEy")
	assert.Equal(t, "tsk_deadbeef", account.PrefixOf(full))
}

func TestNewKeyRejectsWeakSecrets(t *testing.T) {
	_, _, err := account.NewKey([]byte{1, 2, 3, 4}, make([]byte, 15), "a", "", nil, time.Now())
	require.Error(t, err)
	assert.Equal(t, fault.KindInvalid, fault.KindOf(err))
}

func TestAuthenticate(t *testing.T) {
	full, k, err := account.NewKey([]byte{1, 2, 3, 4}, []byte("sixteen-bytes-xx"), "acc1", "", []account.Scope{account.ScopeRead, account.ScopeKYT}, time.Now())
	require.NoError(t, err)
	cases := []struct {
		name    string
		key     account.Key
		present string
		ok      bool
	}{
		{"right key", k, full, true},
		{"one char off", k, full[:len(full)-1] + "y", false},
		{"empty", k, "", false},
		{"revoked", func() account.Key { r := k; now := time.Now(); r.RevokedAt = &now; return r }(), full, false},
		{"expired", func() account.Key { r := k; end := time.Now().Add(-time.Second); r.ExpiresAt = &end; return r }(), full, false},
		{"not yet expired", func() account.Key { r := k; end := time.Now().Add(time.Hour); r.ExpiresAt = &end; return r }(), full, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := tc.key.Authenticate(tc.present, time.Now())
			if !tc.ok {
				require.Error(t, err)
				assert.Equal(t, fault.KindUnauthorized, fault.KindOf(err))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "acc1", p.AccountID)
			assert.True(t, p.Has(account.ScopeKYT))
			assert.False(t, p.Has(account.ScopeWebhook))
			assert.Equal(t, fault.KindForbidden, fault.KindOf(p.Require(account.ScopeWebhook)))
		})
	}
}

func TestPrefixOfMalformed(t *testing.T) {
	for _, s := range []string{"", "tsk_", "tsk_abc", "tsk_abc_", "xyz_abc_def", "Bearer tsk_a_b",
		"tsk_\xff_abc", "tsk_a\x00_b", "tsk_ab_c\xfe"} {
		assert.Equal(t, "", account.PrefixOf(s), s)
	}
}

func TestParseScopes(t *testing.T) {
	// An empty list (an unset shell variable) is refused, never read as every scope.
	for _, empty := range []string{"", " ", " , "} {
		_, err := account.ParseScopes("scopes", empty)
		fe, ok := fault.As(err)
		require.True(t, ok, "%q", empty)
		assert.Equal(t, "scopes", fe.Param, "%q", empty)
		assert.Equal(t, fault.KindInvalid, fe.Kind, "%q", empty)
	}
	all, err := account.ParseScopes("scopes", "read,kyt,webhook,ingest")
	require.NoError(t, err)
	assert.Len(t, all, 4)
	got, err := account.ParseScopes("scopes", "read, KYT,read")
	require.NoError(t, err)
	assert.Equal(t, []account.Scope{account.ScopeRead, account.ScopeKYT}, got)
	_, err = account.ParseScopes("scopes", "read,admin")
	fe, ok := fault.As(err)
	require.True(t, ok)
	assert.Equal(t, "scopes", fe.Param)
	assert.True(t, strings.Contains(fe.Message, "webhook"))
}

func TestParseExpiry(t *testing.T) {
	now := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"90s":                  now.Add(90 * time.Second),
		"720h":                 now.Add(720 * time.Hour),
		"30d":                  now.Add(30 * 24 * time.Hour),
		"2026-12-01T00:00:00Z": time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC),
	} {
		got, err := account.ParseExpiry("expires", in, now)
		require.NoError(t, err, in)
		assert.True(t, want.Equal(got), "%s: %s", in, got)
	}
	for _, bad := range []string{"", "soon", "-1h", "0s", "2026-11-01T00:00:00Z", "1.5d"} {
		_, err := account.ParseExpiry("expires", bad, now)
		fe, ok := fault.As(err)
		require.True(t, ok, bad)
		assert.Equal(t, "expires", fe.Param, bad)
	}
}
