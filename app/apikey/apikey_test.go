package apikey_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/mock/gomock"

	"github.com/tokenscope/tokenscope/app/apikey"
	"github.com/tokenscope/tokenscope/domain/account"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/ratelimit"
	"github.com/tokenscope/tokenscope/internal/fakeclock"
	"github.com/tokenscope/tokenscope/ports/portsmock"
)

func TestAuthenticateCachesTheStoredKeyNotTheVerdict(t *testing.T) {
	ctrl := gomock.NewController(t)
	store := portsmock.NewMockAccountStore(ctrl)
	clock := fakeclock.At(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
	svc := apikey.New(store, clock)

	full, key, err := account.NewKey([]byte{1, 2, 3, 4}, []byte("0123456789abcdef"), "acc", "", []account.Scope{account.ScopeRead}, clock.Now())
	require.NoError(t, err)
	ctx := context.Background()

	// First use reads the store and touches the key; the second, 9 s later, reads neither.
	store.EXPECT().KeyByPrefix(ctx, key.Prefix).Return(key, nil).Times(1)
	store.EXPECT().TouchKey(ctx, key.ID).Return(nil).Times(1)
	p, err := svc.Authenticate(ctx, full)
	require.NoError(t, err)
	assert.Equal(t, "acc", p.AccountID)
	clock.Advance(9 * time.Second)
	_, err = svc.Authenticate(ctx, full)
	require.NoError(t, err)

	// A wrong secret with the right prefix is refused even while the record is cached.
	_, err = svc.Authenticate(ctx, full[:len(full)-2]+"xx")
	assert.Equal(t, fault.KindUnauthorized, fault.KindOf(err))

	// After the TTL (10 s) the store is asked again.
	clock.Advance(2 * time.Second)
	store.EXPECT().KeyByPrefix(ctx, key.Prefix).Return(key, nil).Times(1)
	store.EXPECT().TouchKey(ctx, key.ID).Return(nil).Times(1)
	_, err = svc.Authenticate(ctx, full)
	require.NoError(t, err)

	// Revoking through the service applies at once, cache or not.
	store.EXPECT().RevokeKey(ctx, key.Prefix).Return(nil)
	require.NoError(t, svc.Revoke(ctx, key.Prefix))
	revoked := key
	revokedAt := clock.Now()
	revoked.RevokedAt = &revokedAt
	store.EXPECT().KeyByPrefix(ctx, key.Prefix).Return(revoked, nil).Times(1)
	_, err = svc.Authenticate(ctx, full)
	assert.Equal(t, fault.KindUnauthorized, fault.KindOf(err))
}

func TestAuthenticateUnknownAndMalformedKeys(t *testing.T) {
	ctrl := gomock.NewController(t)
	store := portsmock.NewMockAccountStore(ctrl)
	clock := fakeclock.At(time.Now())
	svc := apikey.New(store, clock)
	ctx := context.Background()

	// Malformed keys never reach the store.
	for _, k := range []string{"", "nope", "tsk_abc"} {
		_, err := svc.Authenticate(ctx, k)
		assert.Equal(t, fault.KindUnauthorized, fault.KindOf(err), k)
	}
	store.EXPECT().KeyByPrefix(ctx, "tsk_00000000").Return(account.Key{}, fault.NotFound("api key", "tsk_00000000"))
	_, err := svc.Authenticate(ctx, "tsk_00000000_AAAAAAAAAAAAAAAAAAAAAA")
	assert.Equal(t, fault.KindUnauthorized, fault.KindOf(err))
}

// TestAuthenticateRefusesAnExpiredKeyEvenWhileCached: a key created with an end answers until
// it and is refused from it on, though its record is still in the cache.
func TestAuthenticateRefusesAnExpiredKeyEvenWhileCached(t *testing.T) {
	ctrl := gomock.NewController(t)
	store := portsmock.NewMockAccountStore(ctrl)
	clock := fakeclock.At(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
	svc := apikey.New(store, clock)
	ctx := context.Background()
	end := clock.Now().Add(5 * time.Second)

	var stored account.Key
	store.EXPECT().EnsureAccount(ctx, "acc", "acc").Return(nil)
	store.EXPECT().CreateKey(ctx, gomock.Any()).DoAndReturn(func(_ context.Context, k account.Key) error { stored = k; return nil })
	full, key, err := svc.CreateLimited(ctx, "acc", "", []account.Scope{account.ScopeRead}, ratelimit.Limit{}, &end)
	require.NoError(t, err)
	require.NotNil(t, stored.ExpiresAt, "the end is stored")
	assert.Equal(t, end, *stored.ExpiresAt)

	store.EXPECT().KeyByPrefix(ctx, key.Prefix).Return(stored, nil).Times(1)
	store.EXPECT().TouchKey(ctx, key.ID).Return(nil).Times(1)
	p, err := svc.Authenticate(ctx, full)
	require.NoError(t, err)
	require.NotNil(t, p.ExpiresAt, "the principal carries the end (streams close at it)")
	clock.Set(end)
	_, err = svc.Authenticate(ctx, full)
	assert.Equal(t, fault.KindUnauthorized, fault.KindOf(err))
}

// TestRecheckReadsARecordOlderThanItsMaxAge: an open stream rechecks its key with a shorter
// trust than requests (half the cache's life), so a revocation by another process reaches it
// within the cache's bound too; a record read more recently is trusted.
func TestRecheckReadsARecordOlderThanItsMaxAge(t *testing.T) {
	ctrl := gomock.NewController(t)
	store := portsmock.NewMockAccountStore(ctrl)
	clock := fakeclock.At(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
	svc := apikey.New(store, clock)
	ctx := context.Background()
	full, key, err := account.NewKey([]byte{1, 2, 3, 4}, []byte("0123456789abcdef"), "acc", "", []account.Scope{account.ScopeRead}, clock.Now())
	require.NoError(t, err)

	store.EXPECT().KeyByPrefix(ctx, key.Prefix).Return(key, nil).Times(1)
	store.EXPECT().TouchKey(ctx, key.ID).Return(nil).Times(1)
	_, err = svc.Authenticate(ctx, full)
	require.NoError(t, err)
	clock.Advance(4 * time.Second)
	_, err = svc.Recheck(ctx, full, 5*time.Second)
	require.NoError(t, err, "a record 4 s old is trusted")

	clock.Advance(2 * time.Second)
	revoked := key
	revokedAt := clock.Now()
	revoked.RevokedAt = &revokedAt
	store.EXPECT().KeyByPrefix(ctx, key.Prefix).Return(revoked, nil).Times(1)
	_, err = svc.Recheck(ctx, full, 5*time.Second)
	assert.Equal(t, fault.KindUnauthorized, fault.KindOf(err), "a record 6 s old is read again")
}

// TestUnknownKeyCostsOneLookup: a well-formed key the store does not know is remembered as
// unknown for NegativeTTL, so repeating it costs no more lookups until then; the cache of
// unknown prefixes is bounded.
func TestUnknownKeyCostsOneLookup(t *testing.T) {
	ctrl := gomock.NewController(t)
	store := portsmock.NewMockAccountStore(ctrl)
	clock := fakeclock.At(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
	svc := apikey.New(store, clock)
	ctx := context.Background()
	const unknown = "tsk_0a0b0c0d0e0f_AAAAAAAAAAAAAAAAAAAAAA"
	store.EXPECT().KeyByPrefix(ctx, "tsk_0a0b0c0d0e0f").Return(account.Key{}, fault.NotFound("api key", "")).Times(1)
	for range 100 {
		_, err := svc.Authenticate(ctx, unknown)
		require.Equal(t, fault.KindUnauthorized, fault.KindOf(err))
	}
	clock.Advance(apikey.NegativeTTL)
	store.EXPECT().KeyByPrefix(ctx, "tsk_0a0b0c0d0e0f").Return(account.Key{}, fault.NotFound("api key", "")).Times(1)
	_, err := svc.Authenticate(ctx, unknown)
	require.Equal(t, fault.KindUnauthorized, fault.KindOf(err))

	// A key this process creates is known at once, though its prefix was looked up before.
	store.EXPECT().EnsureAccount(ctx, "acc", "acc").Return(nil)
	var stored account.Key
	store.EXPECT().CreateKey(ctx, gomock.Any()).DoAndReturn(func(_ context.Context, k account.Key) error { stored = k; return nil })
	apikey.SetKeyID(svc, []byte{0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f})
	_, err = svc.Authenticate(ctx, unknown)
	require.Equal(t, fault.KindUnauthorized, fault.KindOf(err), "still remembered as unknown")
	created, _, err := svc.Create(ctx, "acc", "", []account.Scope{account.ScopeRead})
	require.NoError(t, err)
	require.Equal(t, "tsk_0a0b0c0d0e0f", account.PrefixOf(created))
	store.EXPECT().KeyByPrefix(ctx, "tsk_0a0b0c0d0e0f").DoAndReturn(func(context.Context, string) (account.Key, error) { return stored, nil })
	store.EXPECT().TouchKey(ctx, gomock.Any()).Return(nil)
	_, err = svc.Authenticate(ctx, created)
	require.NoError(t, err)
}
