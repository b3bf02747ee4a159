package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/adapters/postgres/pgtest"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/domain/trade"
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
	waitBlocked := func() { t.Helper(); waitLockWaiter(t, db) }
	wait := func(done <-chan error, what string) { t.Helper(); waitDone(t, done, what) }

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

// waitLockWaiter waits until some backend of db's cluster waits on an advisory lock.
func waitLockWaiter(t *testing.T, db *pgxpool.Pool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; {
		var n int
		require.NoError(t, db.QueryRow(context.Background(),
			`SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`).Scan(&n))
		if n > 0 {
			return
		}
		require.True(t, time.Now().Before(deadline), "no batch waited on a derived-state lock")
		time.Sleep(5 * time.Millisecond)
	}
}

// applyAsync applies events as one batch with apply (IngestStore.Apply or ApplyPending) on a
// goroutine of its own, and delivers its error.
func applyAsync(apply func(context.Context, chainevent.Batch, time.Time) (chainevent.Result, error),
	events ...chainevent.Event) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := apply(context.Background(), chainevent.NewBatch(events), now)
		done <- err
	}()
	return done
}

// waitDone waits (a minute at most) for a batch applied on another goroutine to commit.
func waitDone(t *testing.T, done <-chan error, what string) {
	t.Helper()
	select {
	case err := <-done:
		require.NoError(t, err, what)
	case <-time.After(time.Minute):
		t.Fatalf("%s did not commit", what)
	}
}

// TestStoredBatchesApplyBesideTheFlush: while a flush of sol holds its locks, streamed sol
// batches (a trade, a label: ApplyPending leaves their derivations to the flush) commit, while a
// sol batch that derives itself (Apply) waits for the flush; the next flush derives the stored
// trade, once, and moves the labelled wallet's holdings into the label's group.
func TestStoredBatchesApplyBesideTheFlush(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	ctx := context.Background()
	db := pgtest.Pool(t)
	s := postgres.NewIngestStore(db)
	apply(t, s, tokenEvent(chain.Sol, "tok1"), swap("w1", trade.Buy, "10", "2", time.Minute, "s0"))
	pending := func(events ...chainevent.Event) <-chan error { return applyAsync(s.ApplyPending, events...) }
	kol := func() (holders int64, holdings string) {
		t.Helper()
		err := db.QueryRow(ctx, `SELECT holders, holdings::text FROM token_holder_groups
			WHERE chain = 'sol' AND address = 'tok1' AND holder_group = 'kol'`).Scan(&holders, &holdings)
		if errors.Is(err, pgx.ErrNoRows) {
			return 0, "0"
		}
		require.NoError(t, err)
		return holders, holdings
	}

	conn, err := db.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	release, err := postgres.LockFlush(ctx, conn, chain.Sol)
	require.NoError(t, err)

	waitDone(t, pending(swap("w1", trade.Buy, "5", "3", 30*time.Second, "s1")), "a sol batch of trades while a sol flush runs")
	waitDone(t, pending(chainevent.WalletLabel{Chain: chain.Sol, Wallet: "w1", Label: token.Kol}), "a sol label while a sol flush runs")
	var stored int
	require.NoError(t, db.QueryRow(ctx, `SELECT count(*) FROM trades WHERE chain = 'sol' AND tx_signature = 's1'`).Scan(&stored))
	assert.Equal(t, 1, stored, "the trade is stored (served by operation 3)")
	assert.Equal(t, "10", position(t, "w1").Balance.String(), "and derived by the next flush, not by its batch")
	holders, _ := kol()
	assert.Zero(t, holders, "the label's holdings move at the next flush")

	whole := applyAsync(s.Apply, chainevent.WalletLabel{Chain: chain.Sol, Wallet: "w2", Label: token.Kol})
	waitLockWaiter(t, db)
	release()
	waitDone(t, whole, "the batch that derives, once the flush is done")

	_, err = s.Flush(ctx, now)
	require.NoError(t, err)
	assert.Equal(t, "15", position(t, "w1").Balance.String())
	holders, holdings := kol()
	assert.Equal(t, int64(1), holders)
	assert.Equal(t, "15", holdings, "w1's holdings, the stored trade's included, are in the label's group")
	_, err = s.Flush(ctx, now)
	require.NoError(t, err)
	assert.Equal(t, "15", position(t, "w1").Balance.String(), "a second flush derives nothing again")
	holders, holdings = kol()
	assert.Equal(t, int64(1), holders)
	assert.Equal(t, "15", holdings)
	assert.Equal(t, "3", priceOf(t).String(), "the market row has the stored trade's price")
}

// TestFlushDerivesWhatWasListedWhenItBegan: a stored-only batch that commits while a flush
// derives (here: after the flush took its lists and before it re-derives a position from the
// pair's stored trades, which an out-of-order trade makes it do) is not taken in by that flush;
// the next flush derives it, so every trade counts once in the position.
func TestFlushDerivesWhatWasListedWhenItBegan(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	ctx := context.Background()
	db := pgtest.Pool(t)
	s := postgres.NewIngestStore(db)
	apply(t, s, tokenEvent(chain.Sol, "tok1"), swap("w1", trade.Buy, "10", "2", time.Minute, "s0"))
	pend := func(e chainevent.Event) {
		t.Helper()
		_, err := s.ApplyPending(ctx, chainevent.NewBatch([]chainevent.Event{e}), now)
		require.NoError(t, err)
	}
	// Listed for the flush: a trade older than the stored one, so the flush re-derives w1's
	// position from its stored trades.
	pend(swap("w1", trade.Buy, "1", "2", 2*time.Minute, "s1"))
	once := false
	s.WhenFlushTakes(func() {
		if once {
			return
		}
		once = true
		waitDone(t, applyAsync(s.ApplyPending, swap("w1", trade.Buy, "100", "2", 90*time.Second, "s2")),
			"a stored-only batch while the flush derives")
	})
	_, err := s.Flush(ctx, now)
	require.NoError(t, err)
	require.True(t, once)
	assert.Equal(t, "11", position(t, "w1").Balance.String(), "the flush derived the trades listed when it began")
	_, err = s.Flush(ctx, now)
	require.NoError(t, err)
	assert.Equal(t, "111", position(t, "w1").Balance.String(), "and the next one the trade committed meanwhile, once")
}
