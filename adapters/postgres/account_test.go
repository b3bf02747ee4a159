package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/adapters/postgres/pgtest"
	"github.com/tokenscope/tokenscope/domain/account"
	"github.com/tokenscope/tokenscope/domain/fault"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestAccountStoreKeyLifecycle(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	ctx := context.Background()
	store := postgres.NewAccountStore(pgtest.Pool(t))
	require.NoError(t, store.EnsureAccount(ctx, "acc-1", "first"))
	require.NoError(t, store.EnsureAccount(ctx, "acc-1", "first")) // idempotent

	full, key, err := account.NewKey([]byte{9, 8, 7, 6}, []byte("0123456789abcdef"), "acc-1", "ci", []account.Scope{account.ScopeRead}, time.Now().UTC().Truncate(time.Microsecond))
	require.NoError(t, err)
	require.NoError(t, store.CreateKey(ctx, key))

	got, err := store.KeyByPrefix(ctx, account.PrefixOf(full))
	require.NoError(t, err)
	assert.Equal(t, key.Hash, got.Hash)
	assert.Equal(t, []account.Scope{account.ScopeRead}, got.Scopes)
	assert.Nil(t, got.ExpiresAt, "a key without --expires never ends")
	_, err = got.Authenticate(full, time.Now())
	require.NoError(t, err)

	// The secret part of the key is never stored.
	var stored int
	require.NoError(t, pgtest.Pool(t).QueryRow(ctx,
		"SELECT count(*) FROM api_keys WHERE position($1 in (prefix || name || encode(key_hash, 'escape'))) > 0",
		"MDEyMzQ1Njc4OWFiY2RlZg").Scan(&stored))
	assert.Zero(t, stored)

	keys, err := store.ListKeys(ctx, "acc-1")
	require.NoError(t, err)
	require.Len(t, keys, 1)

	require.NoError(t, store.RevokeKey(ctx, key.Prefix))
	err = store.RevokeKey(ctx, key.Prefix)
	assert.Equal(t, fault.KindNotFound, fault.KindOf(err))
	got, err = store.KeyByPrefix(ctx, key.Prefix)
	require.NoError(t, err)
	assert.False(t, got.Active(time.Now()))

	_, err = store.KeyByPrefix(ctx, "tsk_nothere")
	assert.Equal(t, fault.KindNotFound, fault.KindOf(err))
}

// TestAccountStoreKeyExpiry: a key's end is stored and read back, in KeyByPrefix and ListKeys.
func TestAccountStoreKeyExpiry(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	ctx := context.Background()
	store := postgres.NewAccountStore(pgtest.Pool(t))
	require.NoError(t, store.EnsureAccount(ctx, "acc-exp", "expiring"))
	now := time.Now().UTC().Truncate(time.Microsecond)
	full, key, err := account.NewKey([]byte{9, 8, 7, 5}, []byte("0123456789abcdef"), "acc-exp", "ci", []account.Scope{account.ScopeRead}, now)
	require.NoError(t, err)
	end := now.Add(time.Hour)
	key.ExpiresAt = &end
	require.NoError(t, store.CreateKey(ctx, key))

	got, err := store.KeyByPrefix(ctx, account.PrefixOf(full))
	require.NoError(t, err)
	require.NotNil(t, got.ExpiresAt)
	assert.True(t, end.Equal(*got.ExpiresAt), "stored end %s, read %s", end, *got.ExpiresAt)
	assert.True(t, got.Active(end.Add(-time.Second)))
	assert.False(t, got.Active(end))
	keys, err := store.ListKeys(ctx, "acc-exp")
	require.NoError(t, err)
	require.Len(t, keys, 1)
	require.NotNil(t, keys[0].ExpiresAt)
	assert.True(t, end.Equal(*keys[0].ExpiresAt))
}

func TestMigrateIsIdempotent(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	applied, err := postgres.Migrate(context.Background(), pgtest.Pool(t))
	require.NoError(t, err)
	assert.Empty(t, applied, "every migration was applied when the database was made")
}
