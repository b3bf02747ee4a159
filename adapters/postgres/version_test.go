package postgres_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/adapters/postgres/pgtest"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/ranking"
	"github.com/tokenscope/tokenscope/domain/trade"
	"github.com/tokenscope/tokenscope/ports"
)

// following starts a MarketVersions on the test's database and waits until it listens.
func following(t *testing.T) *postgres.MarketVersions {
	t.Helper()
	v := postgres.NewMarketVersions(pgtest.Pool(t), slog.New(slog.NewTextHandler(io.Discard, nil)))
	postgres.SetVersionsRetry(v, 10*time.Millisecond)
	assert.Zero(t, details(v), "unknown before it listens")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); v.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	require.Eventually(t, func() bool { return details(v) != 0 }, 10*time.Second, 5*time.Millisecond)
	return v
}

// details is the version of every token's details on sol (no token is announced by name here).
func details(v *postgres.MarketVersions) uint64 { return v.TokensVersion(chain.Sol, nil) }

// notifyFrom sends one market notification from a connection of its own, as another process's
// writer would, committing or rolling back.
func notifyFrom(t *testing.T, payload string, commit bool) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.URL(t))
	require.NoError(t, err)
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, `SELECT pg_notify('tokenscope_market', $1)`, payload)
	require.NoError(t, err)
	if commit {
		require.NoError(t, tx.Commit(ctx))
	} else {
		require.NoError(t, tx.Rollback(ctx))
	}
}

// TestMarketVersionsFollowTheWriters: this process's own writes move the versions they concern
// before they return; another process's committed writes move them once their notification
// arrives, and rolled-back ones never do.
func TestMarketVersionsFollowTheWriters(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	v := following(t)
	ctx := context.Background()
	s := postgres.NewIngestStore(pgtest.Pool(t))

	sol1h, sol5m := v.RankingVersion(chain.Sol, ranking.Duration1h), v.RankingVersion(chain.Sol, ranking.Duration5m)
	tok0, other0 := v.TokensVersion(chain.Sol, []string{"vtok"}), v.TokensVersion(chain.Sol, []string{"other"})
	apply(t, s, tokenEvent(chain.Sol, "vtok"))
	assert.Greater(t, v.TokensVersion(chain.Sol, []string{"vtok"}), tok0,
		"an ingest batch moves the versions of the tokens it touched before Apply returns")
	assert.Equal(t, other0, v.TokensVersion(chain.Sol, []string{"other"}), "and no other token's")
	assert.Equal(t, sol1h, v.RankingVersion(chain.Sol, ranking.Duration1h), "and no ranking's")

	require.NoError(t, s.ReplaceHotTokens(ctx, chain.Sol, ranking.Duration1h, []ports.HotEntry{{Address: "vtok", Rank: 1, Score: dec("1")}}, now))
	assert.Greater(t, v.RankingVersion(chain.Sol, ranking.Duration1h), sol1h, "a ranking swap moves its version before it returns")
	assert.Equal(t, sol5m, v.RankingVersion(chain.Sol, ranking.Duration5m), "and no other ranking's")

	// Another process: a rolled-back write, then a committed one on a ranking. Notifications
	// arrive in commit order, so once the second has, the first would have.
	eth := v.RankingVersion(chain.Eth, ranking.Duration24h)
	dNow := details(v)
	notifyFrom(t, "details", false)
	notifyFrom(t, "ranking/eth/24h", true)
	require.Eventually(t, func() bool { return v.RankingVersion(chain.Eth, ranking.Duration24h) > eth }, 10*time.Second, time.Millisecond)
	assert.Equal(t, dNow, details(v), "a rolled-back write is never announced")
	notifyFrom(t, "details", true)
	require.Eventually(t, func() bool { return details(v) > dNow }, 10*time.Second, time.Millisecond)

	// Changes announced by token (window refresh chunks) move those tokens' versions only.
	x, y := v.TokensVersion(chain.Sol, []string{"x"}), v.TokensVersion(chain.Sol, []string{"y"})
	notifyFrom(t, "tokens sol:x eth:y", true)
	require.Eventually(t, func() bool { return v.TokensVersion(chain.Sol, []string{"x"}) > x }, 10*time.Second, time.Millisecond)
	assert.Equal(t, y, v.TokensVersion(chain.Sol, []string{"y"}), "y changed on eth, not on sol")
	assert.Greater(t, v.TokensVersion(chain.Eth, []string{"y"}), y)
	assert.Equal(t, v.TokensVersion(chain.Sol, []string{"x"}), v.TokensVersion(chain.Sol, []string{"y", "x"}), "the latest of a list")
}

// TestMarketVersionsWindowRefreshNamesItsTokens: a refresh round announces the tokens whose
// windows it rewrote, before it returns, and no others.
func TestMarketVersionsWindowRefreshNamesItsTokens(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	v := following(t)
	s := postgres.NewIngestStore(pgtest.Pool(t))
	apply(t, s, tokenEvent(chain.Sol, "tok1"), tokenEvent(chain.Sol, "quiet"), swap("w1", trade.Buy, "10", "2", 30*time.Minute, "sigv1"))
	_, err := s.RefreshWindows(context.Background(), now) // the first round: every active token
	require.NoError(t, err)
	tok, quiet := v.TokensVersion(chain.Sol, []string{"tok1"}), v.TokensVersion(chain.Sol, []string{"quiet"})
	// 31 minutes later the trade has left tok1's 30m window (among others): tok1 is rewritten.
	_, err = s.RefreshWindows(context.Background(), now.Add(31*time.Minute))
	require.NoError(t, err)
	assert.Greater(t, v.TokensVersion(chain.Sol, []string{"tok1"}), tok)
	assert.Equal(t, quiet, v.TokensVersion(chain.Sol, []string{"quiet"}), "a token no window of which moved")
}

// TestMarketVersionsMovePastALostConnection: announcements sent while the listener is away are
// lost, so when it listens again every version is above every earlier one.
func TestMarketVersionsMovePastALostConnection(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	v := following(t)
	ctx := context.Background()
	before := max(details(v), v.RankingVersion(chain.Bsc, ranking.Duration4h))
	tag, err := pgtest.Pool(t).Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND query = 'LISTEN tokenscope_market'`)
	require.NoError(t, err)
	require.Equal(t, int64(1), tag.RowsAffected(), "one listener")
	require.Eventually(t, func() bool {
		d, r := details(v), v.RankingVersion(chain.Bsc, ranking.Duration4h)
		return d > before && r > before
	}, 10*time.Second, time.Millisecond)
}
