package postgres_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/ranking"
	"github.com/tokenscope/tokenscope/internal/pgcluster"
	"github.com/tokenscope/tokenscope/ports"
)

// replicaSetup is a primary of the test's own with one streaming standby, the schema migrated,
// and a router over the standby that follows the primary's market notifications.
type replicaSetup struct {
	primary, standby *pgcluster.Cluster
	pool             *pgxpool.Pool
	router           *postgres.ReadRouter
	versions         *postgres.MarketVersions
	reader           *postgres.MarketReader
}

func newReplicaSetup(t *testing.T, maxLag time.Duration) *replicaSetup {
	return newReplicaSetupListening(t, maxLag, true)
}

// newReplicaSetupListening is newReplicaSetup; listen=false runs no MarketVersions, so the
// router learns of nothing but this process's own commits.
func newReplicaSetupListening(t *testing.T, maxLag time.Duration, listen bool) *replicaSetup {
	t.Helper()
	ctx := context.Background()
	primary := pgcluster.NewPrimary(t, pgcluster.Options{})
	require.NoError(t, postgres.EnsureDatabase(ctx, primary.URL("tokenscope")))
	pool, err := postgres.Open(ctx, primary.URL("tokenscope"), 10)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	_, err = postgres.Migrate(ctx, pool)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, "CREATE EXTENSION pg_stat_statements")
	require.NoError(t, err)
	standby := primary.NewStandby("standby1")
	primary.WaitReplayed(standby)

	log := slog.New(slog.DiscardHandler)
	router, err := postgres.NewReadRouter(pool, []string{standby.URL("tokenscope")}, 5, maxLag, log)
	require.NoError(t, err)
	versions := postgres.NewMarketVersions(pool, log)
	versions.RouteReads(router)
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{}, 2)
	go func() { router.Run(runCtx); done <- struct{}{} }()
	if listen {
		go func() { versions.Run(runCtx); done <- struct{}{} }()
	} else {
		router.Following(ctx, pool)
		done <- struct{}{}
	}
	t.Cleanup(func() { cancel(); <-done; <-done; router.Close() })
	s := &replicaSetup{primary: primary, standby: standby, pool: pool, router: router, versions: versions,
		reader: postgres.NewMarketReader(router)}
	s.eventually(t, "the standby serves reads and the versions follow the writers", func() bool {
		return router.Replicas()[0].State().Usable && (versions.Current() > 0 || !listen)
	})
	return s
}

// eventually polls cond until it holds; a minute without it fails the test (a broken setup,
// not a speed assertion).
func (s *replicaSetup) eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within a minute: %s (standby: %+v)", what, s.router.Replicas()[0].State())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

const replicaPool = "replica-test-pool"

// addSnapshot writes one pool snapshot on the primary and announces it as the market's writers do.
func (s *replicaSetup) addSnapshot(t *testing.T, height int64) {
	t.Helper()
	ctx := context.Background()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO pool_snapshots (chain, pool_address, block_height, block_timestamp_ms, snapshot_time_ms,
			a_token_address, a_decimals, a_vault_amount, a_amount_native, a_amount_usd, a_price_native, a_price_usd,
			b_token_address, b_decimals, b_vault_amount, b_amount_native, b_amount_usd, b_price_native, b_price_usd, tvl_native, tvl_usd)
			VALUES ('sol', $1, $2, $2, $2, 'A', 6, 1, 1, 1, 1, 1, 'B', 9, 1, 1, 1, 1, 1, 2, 2)`, replicaPool, height); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "SELECT pg_notify('tokenscope_market', 'details')")
		return err
	})
	require.NoError(t, err)
}

// newest is the newest snapshot height the reader returns (0: none).
func (s *replicaSetup) newest(t *testing.T) int64 {
	t.Helper()
	p, err := s.reader.ListSnapshots(context.Background(), chain.Sol, replicaPool, nil, ports.PageRequest{Limit: 1})
	require.NoError(t, err)
	if len(p.Items) == 0 {
		return 0
	}
	return p.Items[0].BlockHeight
}

// snapshotCalls is how many snapshot list queries c's server has executed (pg_stat_statements).
func snapshotCalls(t *testing.T, c *pgcluster.Cluster) int64 {
	t.Helper()
	var n int64
	err := c.Conn("tokenscope").QueryRow(context.Background(),
		"SELECT COALESCE(sum(calls), 0)::bigint FROM pg_stat_statements WHERE query LIKE '%FROM pool_snapshots s WHERE%'").Scan(&n)
	require.NoError(t, err)
	return n
}

func TestReplicaServesReads(t *testing.T) {
	s := newReplicaSetup(t, 5*time.Second)
	s.addSnapshot(t, 1)
	s.primary.WaitReplayed(s.standby)
	onStandby, onPrimary := snapshotCalls(t, s.standby), snapshotCalls(t, s.primary)
	primaryReads := s.router.PrimaryReads()
	for range 20 {
		assert.Equal(t, int64(1), s.newest(t))
	}
	// The standby's own statistics show it ran them; the primary ran none.
	assert.Equal(t, onStandby+20, snapshotCalls(t, s.standby), "the standby executed the 20 reads")
	assert.Equal(t, onPrimary, snapshotCalls(t, s.primary), "the primary executed none of them")
	assert.Equal(t, primaryReads, s.router.PrimaryReads())
	assert.GreaterOrEqual(t, s.router.Replicas()[0].State().Reads, uint64(20))
}

// TestReplicaNoReadGoesBackInTime pauses the standby's replay: once the process has heard of a
// change (the notification moved the versions), every read reflects it, served by the primary
// until the standby has replayed it, and by the standby again afterwards.
func TestReplicaNoReadGoesBackInTime(t *testing.T) {
	s := newReplicaSetup(t, time.Minute) // lag never excludes it here: only the position does
	standby := s.standby.Conn("tokenscope")
	ctx := context.Background()
	s.addSnapshot(t, 1)
	s.primary.WaitReplayed(s.standby)
	_, err := standby.Exec(ctx, "SELECT pg_wal_replay_pause()")
	require.NoError(t, err)
	s.eventually(t, "replay paused", func() bool {
		var st string
		require.NoError(t, standby.QueryRow(ctx, "SELECT pg_get_wal_replay_pause_state()").Scan(&st))
		return st == "paused"
	})

	before := s.versions.Current()
	s.addSnapshot(t, 2)
	s.eventually(t, "the notification arrived", func() bool { return s.versions.Current() > before })
	behind := s.router.Replicas()[0].State().SkippedBehind
	primaryReads := s.router.PrimaryReads()
	onStandby := snapshotCalls(t, s.standby)
	for range 10 {
		require.Equal(t, int64(2), s.newest(t), "a read after the change reflects it")
	}
	assert.Equal(t, primaryReads+10, s.router.PrimaryReads(), "the primary answered while the standby is behind")
	assert.Equal(t, behind+10, s.router.Replicas()[0].State().SkippedBehind)
	assert.Equal(t, onStandby, snapshotCalls(t, s.standby), "the paused standby served nothing")
	assert.True(t, s.router.Replicas()[0].State().Usable, "a standby behind a change is skipped, not dropped")

	_, err = standby.Exec(ctx, "SELECT pg_wal_replay_resume()")
	require.NoError(t, err)
	s.primary.WaitReplayed(s.standby)
	s.eventually(t, "the standby serves again once it has replayed the change", func() bool {
		r := s.router.Replicas()[0].State().Reads
		h := s.newest(t)
		require.Equal(t, int64(2), h, "never older than what was read before")
		return s.router.Replicas()[0].State().Reads > r
	})
}

// TestReplicaLagAndFallback: a standby whose replay stops while the primary keeps writing is
// left out once it lags more than the maximum, a stopped one once it stops answering; reads go
// to the primary meanwhile, and back to the standby when it has caught up.
func TestReplicaLagAndFallback(t *testing.T) {
	s := newReplicaSetup(t, 300*time.Millisecond)
	ctx := context.Background()
	standby := s.standby.Conn("tokenscope")
	rep := s.router.Replicas()[0]
	_, err := standby.Exec(ctx, "SELECT pg_wal_replay_pause()")
	require.NoError(t, err)
	// Keep the primary's position moving without announcing anything: the standby is never
	// "behind a known change", only lagging.
	stop := make(chan struct{})
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
				_, _ = s.pool.Exec(ctx, "SELECT pg_logical_emit_message(false, 'lag', 'x')")
			}
		}
	}()
	s.eventually(t, "the paused standby is reported lagging", func() bool {
		return !rep.State().Usable && strings.HasPrefix(rep.State().State, "lagging")
	})
	assert.Greater(t, rep.State().Lag, 300*time.Millisecond)
	require.ErrorContains(t, rep.Ping(ctx), "lagging", "readiness details name the state")
	reads, unusable, primaryReads := rep.State().Reads, rep.State().SkippedUnusable, s.router.PrimaryReads()
	for range 5 {
		s.newest(t)
	}
	assert.Equal(t, reads, rep.State().Reads, "a lagging standby serves nothing")
	assert.Equal(t, unusable+5, rep.State().SkippedUnusable)
	assert.Equal(t, primaryReads+5, s.router.PrimaryReads())
	close(stop)
	<-writerDone

	_, err = standby.Exec(ctx, "SELECT pg_wal_replay_resume()")
	require.NoError(t, err)
	s.eventually(t, "the standby serves again after catching up", func() bool { return rep.State().Usable })

	// The standby ends the router's sessions (as a restart or an operator would): the reads on
	// them fail before answering and are answered by the primary instead, or on new sessions.
	for range 3 {
		_, err = standby.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'tokenscope' AND pid <> pg_backend_pid() AND backend_type = 'client backend'")
		require.NoError(t, err)
		for range 5 {
			_, err := s.reader.ListSnapshots(ctx, chain.Sol, replicaPool, nil, ports.PageRequest{Limit: 1})
			require.NoError(t, err, "a read on a session the standby ended is answered")
		}
	}

	// A standby that stops answering is left out; reads still succeed, on the primary.
	s.standby.Stop()
	s.eventually(t, "the stopped standby is reported down", func() bool {
		return strings.HasPrefix(rep.State().State, "down")
	})
	primaryReads = s.router.PrimaryReads()
	for range 5 {
		s.newest(t)
	}
	assert.Equal(t, primaryReads+5, s.router.PrimaryReads())
	s.standby.Start()
	s.eventually(t, "the restarted standby serves again", func() bool { return rep.State().Usable })
}

// TestReplicaReadsOwnWrites: with no notification listener at all, a write this process commits
// through the market's writers raises the required position itself, so the next read does not
// go to a standby that has not replayed it.
func TestReplicaReadsOwnWrites(t *testing.T) {
	s := newReplicaSetupListening(t, time.Minute, false)
	ctx := context.Background()
	store := postgres.NewIngestStore(s.pool)
	now := time.Now()
	entries := func(addr string) []ports.HotEntry {
		return []ports.HotEntry{{Address: addr, Rank: 1, Score: decimal.RequireFromString("1.5")}}
	}
	require.NoError(t, store.ReplaceHotTokens(ctx, chain.Sol, ranking.Duration("1h"), entries("First"), now))
	s.primary.WaitReplayed(s.standby)
	standby := s.standby.Conn("tokenscope")
	_, err := standby.Exec(ctx, "SELECT pg_wal_replay_pause()")
	require.NoError(t, err)

	require.NoError(t, store.ReplaceHotTokens(ctx, chain.Sol, ranking.Duration("1h"), entries("Second"), now))
	got, err := s.reader.HotTokens(ctx, chain.Sol, ranking.Duration("1h"), 10)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, "Second", got[0].Address, "the read after the commit reflects it")
	assert.Positive(t, s.router.Replicas()[0].State().SkippedBehind)
	_, err = standby.Exec(ctx, "SELECT pg_wal_replay_resume()")
	require.NoError(t, err)
}
