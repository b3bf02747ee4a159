package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/adapters/postgres/pgtest"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/domain/token"
)

// TestDerivedStateLocksPerChain: a batch of one chain commits while another chain's writer
// holds its lock; a batch of the locked chain waits for it; a process of an earlier version
// (which takes the whole-state lock exclusively) still holds every chain off.
func TestDerivedStateLocksPerChain(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	ctx := context.Background()
	db := pgtest.Pool(t)
	s := postgres.NewIngestStore(db)
	labelled := func(c chain.Chain, w string) bool {
		var n int
		require.NoError(t, db.QueryRow(ctx, `SELECT count(*) FROM wallet_labels WHERE chain = $1 AND wallet = $2`, string(c), w).Scan(&n))
		return n == 1
	}
	apply := func(c chain.Chain, w string) <-chan error {
		done := make(chan error, 1)
		go func() {
			_, err := s.ApplyPending(ctx, chainevent.NewBatch([]chainevent.Event{chainevent.WalletLabel{Chain: c, Wallet: w, Label: token.Kol}}), now)
			done <- err
		}()
		return done
	}
	// waitBlocked waits until some backend waits on an advisory lock.
	waitBlocked := func() {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); ; {
			var n int
			require.NoError(t, db.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`).Scan(&n))
			if n > 0 {
				return
			}
			require.True(t, time.Now().Before(deadline), "no batch waited on a derived-state lock")
			time.Sleep(5 * time.Millisecond)
		}
	}
	wait := func(done <-chan error, what string) {
		t.Helper()
		select {
		case err := <-done:
			require.NoError(t, err, what)
		case <-time.After(time.Minute):
			t.Fatalf("%s did not commit", what)
		}
	}

	holder, err := db.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = holder.Rollback(ctx) }()
	require.NoError(t, postgres.LockDerivedState(ctx, holder, chain.Sol))

	wait(apply(chain.Eth, "e1"), "an eth batch while sol is locked")
	assert.True(t, labelled(chain.Eth, "e1"))

	sol := apply(chain.Sol, "s1")
	waitBlocked()
	assert.False(t, labelled(chain.Sol, "s1"), "a sol batch waits while sol is locked")
	require.NoError(t, holder.Commit(ctx))
	wait(sol, "the sol batch once the lock is released")
	assert.True(t, labelled(chain.Sol, "s1"))

	old, err := db.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = old.Rollback(ctx) }()
	_, err = old.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(postgres.DerivedStateLock))
	require.NoError(t, err)
	eth := apply(chain.Eth, "e2")
	waitBlocked()
	assert.False(t, labelled(chain.Eth, "e2"), "an earlier version's writer holds every chain off")
	require.NoError(t, old.Commit(ctx))
	wait(eth, "the eth batch once the earlier version's writer is done")
	assert.True(t, labelled(chain.Eth, "e2"))
}
