package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/adapters/postgres/pgtest"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/domain/ranking"
	"github.com/tokenscope/tokenscope/domain/trade"
	"github.com/tokenscope/tokenscope/ports"
)

// tradeOf is swap on another token.
func tradeOf(tok, wallet string, ago time.Duration, sig string) chainevent.Trade {
	tr := swap(wallet, trade.Buy, "10", "2", ago, sig)
	tr.TokenAddress = tok
	return tr
}

// statsOf reads one window of a token: its trade count and the time it was computed as of.
func statsOf(t *testing.T, tok, window string) (trades, updatedAtMs int64) {
	t.Helper()
	require.NoError(t, pgtest.Pool(t).QueryRow(context.Background(), `SELECT trades, updated_at_ms FROM token_stats
		WHERE chain = 'sol' AND address = $1 AND window_name = $2`, tok, window).Scan(&trades, &updatedAtMs))
	return trades, updatedAtMs
}

// refreshedAt is the time of the last completed round, if any.
func refreshedAt(t *testing.T) (int64, bool) {
	t.Helper()
	var ms *int64
	err := pgtest.Pool(t).QueryRow(context.Background(), `SELECT windows_at_ms FROM refresh_state`).Scan(&ms)
	if errors.Is(err, pgx.ErrNoRows) || ms == nil {
		return 0, false
	}
	require.NoError(t, err)
	return *ms, true
}

// A round after a completed one recomputes exactly the windows a successful trade left since then;
// every other window is not rewritten. A trade stamped after its batch's now was counted by the
// batch, so it enters nothing later and is recomputed only when it leaves.
func TestRefreshWindowsRecomputesOnlyTokensWithExits(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	ctx := context.Background()
	s := postgres.NewIngestStore(pgtest.Pool(t))
	failed := tradeOf("failed", "c", 30*time.Second, "f1")
	failed.Status = trade.Failed
	apply(t, s, tokenEvent(chain.Sol, "exits"), tokenEvent(chain.Sol, "quiet"), tokenEvent(chain.Sol, "failed"),
		tokenEvent(chain.Sol, "future"),
		tradeOf("exits", "a", 30*time.Second, "e1"), // leaves 1m at now + 30 s, 5m at now + 4m30s
		tradeOf("quiet", "b", 10*time.Minute, "q1"), // left 5m before now, leaves 15m at now + 5 min
		failed, // FAILED: in no window, so its exit changes nothing
		tradeOf("future", "d", -20*time.Second, "d1")) // stamped 20 s after the batch's now: leaves 1m at now + 80 s
	// The batch counted every trade from each window's start on, the one stamped after its now too.
	n, _ := statsOf(t, "exits", "1m")
	assert.Equal(t, int64(1), n)
	n, _ = statsOf(t, "future", "1m")
	assert.Equal(t, int64(1), n)

	first, err := s.RefreshWindows(ctx, now)
	require.NoError(t, err)
	assert.True(t, first.Full)
	assert.Equal(t, 3, first.Tokens, "every token with a successful trade in the last 24 h")
	at, ok := refreshedAt(t)
	require.True(t, ok)
	assert.Equal(t, now.UnixMilli(), at)

	later := now.Add(40 * time.Second)
	round, err := s.RefreshWindows(ctx, later)
	require.NoError(t, err)
	assert.False(t, round.Full)
	assert.True(t, now.Equal(round.Since), "continues from the last round: %s", round.Since)
	assert.Equal(t, 1, round.Tokens, "exits")
	// exits' trade left the 1m window: that window alone is recomputed (the trade is still in every
	// wider one). future's trade is in every window as it was. Nothing else is rewritten.
	assert.ElementsMatch(t, []string{"exits/1m"}, rewrittenAt(t, later))
	for _, c := range []struct {
		tok, window string
		trades      int64
	}{{"exits", "1m", 0}, {"exits", "5m", 1}, {"future", "1m", 1}, {"future", "24h", 1}, {"quiet", "15m", 1}} {
		n, _ := statsOf(t, c.tok, c.window)
		assert.Equal(t, c.trades, n, "%s %s", c.tok, c.window)
	}
	at, _ = refreshedAt(t)
	assert.Equal(t, later.UnixMilli(), at)

	// 5 min after now: quiet's trade leaves 15m, exits' leaves 5m and future's leaves 1m.
	five := now.Add(5*time.Minute + time.Second)
	round, err = s.RefreshWindows(ctx, five)
	require.NoError(t, err)
	assert.True(t, later.Equal(round.Since))
	assert.Equal(t, 3, round.Tokens)
	assert.ElementsMatch(t, []string{"quiet/15m", "exits/5m", "future/1m"}, rewrittenAt(t, five))
	for _, c := range []struct {
		tok, window string
		trades      int64
	}{{"quiet", "15m", 0}, {"quiet", "30m", 1}, {"exits", "5m", 0}, {"exits", "15m", 1}, {"future", "1m", 0}, {"future", "5m", 1}} {
		n, _ := statsOf(t, c.tok, c.window)
		assert.Equal(t, c.trades, n, "%s %s", c.tok, c.window)
	}
	// Only 24h leaving changes the 24h figures on token_market: a day later, quiet's go to 0.
	day := now.Add(24*time.Hour - 10*time.Minute + time.Second)
	_, err = s.RefreshWindows(ctx, day.Add(-time.Hour)) // a round within a day of the last one
	require.NoError(t, err)
	round, err = s.RefreshWindows(ctx, day)
	require.NoError(t, err)
	assert.False(t, round.Full)
	assert.Contains(t, rewrittenAt(t, day), "quiet/24h")
	var trades24 int64
	require.NoError(t, pgtest.Pool(t).QueryRow(ctx, `SELECT trades_24h FROM token_market WHERE address = 'quiet'`).Scan(&trades24))
	assert.Equal(t, int64(0), trades24)
	require.NoError(t, pgtest.Pool(t).QueryRow(ctx, `SELECT trades_24h FROM token_market WHERE address = 'exits'`).Scan(&trades24))
	assert.Equal(t, int64(1), trades24, "exits' trade leaves 24h 9 min 30 s later")
}

// A round that recomputes a 24h window to the figures token_market already copies leaves the
// market row alone (each rewrite of it adds an entry to every one of its sort indexes); once the
// figures change, the row follows.
func TestRefreshLeavesUnchangedDayFiguresAlone(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	ctx := context.Background()
	s := postgres.NewIngestStore(pgtest.Pool(t))
	apply(t, s, tokenEvent(chain.Sol, "same"), tradeOf("same", "w", 30*time.Second, "s1"))
	version := func() (xmin string, trades int64) {
		require.NoError(t, pgtest.Pool(t).QueryRow(ctx, `SELECT xmin::text, trades_24h FROM token_market
			WHERE address = 'same'`).Scan(&xmin, &trades))
		return xmin, trades
	}
	before, trades := version()
	require.Equal(t, int64(1), trades)

	first, err := s.RefreshWindows(ctx, now.Add(time.Second))
	require.NoError(t, err)
	require.True(t, first.Full, "the first round recomputes every window of every active token")
	assert.Contains(t, rewrittenAt(t, now.Add(time.Second)), "same/24h")
	after, trades := version()
	assert.Equal(t, int64(1), trades)
	assert.Equal(t, before, after, "same figures: the market row is not rewritten")

	// A day later the trade has left the 24h window: the copies change with it.
	_, err = s.RefreshWindows(ctx, now.Add(24*time.Hour))
	require.NoError(t, err)
	later, trades := version()
	assert.Equal(t, int64(0), trades)
	assert.NotEqual(t, before, later)
}

// rewrittenAt lists the token/window rows computed as of at.
func rewrittenAt(t *testing.T, at time.Time) []string {
	t.Helper()
	rows, err := pgtest.Pool(t).Query(context.Background(), `SELECT address || '/' || window_name FROM token_stats
		WHERE updated_at_ms = $1`, at.UnixMilli())
	require.NoError(t, err)
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return out
}

// Without a completed round, the first one recomputes every active token: a successful trade in
// the last 24 h, or a stored 24h window that still shows trades.
func TestRefreshWindowsFirstRoundRecomputesAllActiveTokens(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	ctx := context.Background()
	s := postgres.NewIngestStore(pgtest.Pool(t))
	apply(t, s, tokenEvent(chain.Sol, "a"), tokenEvent(chain.Sol, "b"), tokenEvent(chain.Sol, "old"),
		tokenEvent(chain.Sol, "idle"),
		tradeOf("a", "w1", time.Hour, "a1"),
		tradeOf("b", "w2", 3*time.Hour, "b1"),
		tradeOf("old", "w3", 24*time.Hour-time.Minute, "o1"), // in the 24h window at now, gone 2 min later
		tradeOf("idle", "w4", 30*time.Hour, "i1"))            // in no window at any time from now on
	n, _ := statsOf(t, "old", "24h")
	assert.Equal(t, int64(1), n)
	_, ok := refreshedAt(t)
	require.False(t, ok)

	later := now.Add(2 * time.Minute)
	round, err := s.RefreshWindows(ctx, later)
	require.NoError(t, err)
	assert.True(t, round.Full)
	assert.True(t, round.Since.IsZero())
	assert.Equal(t, 3, round.Tokens, "a, b, and old whose 24h window still showed its trade")
	for _, tok := range []string{"a", "b", "old"} {
		_, updated := statsOf(t, tok, "1m")
		assert.Equal(t, later.UnixMilli(), updated, tok)
	}
	_, updated := statsOf(t, "idle", "24h")
	assert.Equal(t, now.UnixMilli(), updated, "idle showed nothing and has nothing to show")
	n, _ = statsOf(t, "old", "24h")
	assert.Equal(t, int64(0), n)
	var vol24Trades int64
	require.NoError(t, pgtest.Pool(t).QueryRow(ctx, `SELECT trades_24h FROM token_market WHERE address = 'old'`).Scan(&vol24Trades))
	assert.Equal(t, int64(0), vol24Trades, "token_market copies the 24h window")
	at, ok := refreshedAt(t)
	require.True(t, ok)
	assert.Equal(t, later.UnixMilli(), at)
}

// failOn makes every update of the token's windows fail until heal is called.
func failOn(t *testing.T, addr string) (heal func()) {
	t.Helper()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	_, err := pool.Exec(ctx, `CREATE FUNCTION refresh_test_fail() RETURNS trigger LANGUAGE plpgsql AS
			$$ BEGIN RAISE EXCEPTION 'injected failure'; END $$;
		CREATE TRIGGER refresh_test_fail BEFORE UPDATE ON token_stats FOR EACH ROW
			WHEN (NEW.address = '`+addr+`') EXECUTE FUNCTION refresh_test_fail();`)
	require.NoError(t, err)
	healed := false
	heal = func() {
		if !healed {
			_, err := pool.Exec(ctx, `DROP TRIGGER refresh_test_fail ON token_stats; DROP FUNCTION refresh_test_fail();`)
			require.NoError(t, err)
			healed = true
		}
	}
	t.Cleanup(heal)
	return heal
}

// A round that fails is not recorded as completed: the next round continues it after the last
// chunk it committed (a round can outlive its activity timeout), covers its whole span, and then
// records the failed round's start.
func TestRefreshWindowsFailedRoundLeavesStateUnchanged(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	ctx := context.Background()
	s := postgres.NewIngestStore(pgtest.Pool(t))
	// 250 tokens, more than one chunk of 200; t249 sorts into the second.
	var events []chainevent.Event
	for i := range 250 {
		tok := fmt.Sprintf("t%03d", i)
		events = append(events, tokenEvent(chain.Sol, tok), tradeOf(tok, "w", 30*time.Second, "sig-"+tok))
	}
	apply(t, s, events...)

	// The first, full round fails in its second chunk and is continued by the next.
	heal := failOn(t, "t249")
	_, err := s.RefreshWindows(ctx, now)
	require.Error(t, err)
	_, ok := refreshedAt(t)
	require.False(t, ok, "no round completed")
	heal()
	first, err := s.RefreshWindows(ctx, now.Add(time.Second))
	require.NoError(t, err)
	assert.True(t, first.Full)
	assert.True(t, first.Resumed)
	assert.Equal(t, 50, first.Tokens, "t200…t249")
	for tok, at := range map[string]time.Time{"t000": now, "t199": now, "t200": now.Add(time.Second), "t249": now.Add(time.Second)} {
		_, updated := statsOf(t, tok, "24h")
		assert.Equal(t, at.UnixMilli(), updated, "%s: the first chunk is not redone", tok)
	}
	at, ok := refreshedAt(t)
	require.True(t, ok)
	assert.Equal(t, now.UnixMilli(), at, "the completed round counts from its start")

	// An incremental round fails the same way.
	heal = failOn(t, "t249")
	later := now.Add(40 * time.Second)
	_, err = s.RefreshWindows(ctx, later)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "injected failure")
	at, _ = refreshedAt(t)
	assert.Equal(t, now.UnixMilli(), at, "the failed round is not recorded")
	n, updated := statsOf(t, "t000", "1m")
	assert.Equal(t, later.UnixMilli(), updated, "the first chunk committed before the failure")
	assert.Equal(t, int64(0), n)
	n, updated = statsOf(t, "t249", "1m")
	assert.Equal(t, now.Add(time.Second).UnixMilli(), updated)
	assert.Equal(t, int64(1), n, "t249 still shows the trade that left")

	heal()
	again := later.Add(2 * time.Second)
	round, err := s.RefreshWindows(ctx, again)
	require.NoError(t, err)
	assert.True(t, round.Resumed)
	assert.False(t, round.Full)
	assert.True(t, now.Equal(round.Since), "spans from the last completed round: %s", round.Since)
	assert.Equal(t, 50, round.Tokens, "t200…t249: the first chunk is done")
	n, updated = statsOf(t, "t249", "1m")
	assert.Equal(t, again.UnixMilli(), updated)
	assert.Equal(t, int64(0), n)
	_, updated = statsOf(t, "t000", "1m")
	assert.Equal(t, later.UnixMilli(), updated, "not redone")
	at, _ = refreshedAt(t)
	assert.Equal(t, later.UnixMilli(), at, "recorded as of the failed round's start")

	next, err := s.RefreshWindows(ctx, again.Add(2*time.Second))
	require.NoError(t, err)
	assert.False(t, next.Resumed)
	assert.True(t, later.Equal(next.Since))
}

// A clock that went back is handled like one that went forward: the span between the two times.
func TestRefreshWindowsClockWentBack(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	ctx := context.Background()
	s := postgres.NewIngestStore(pgtest.Pool(t))
	apply(t, s, tokenEvent(chain.Sol, "x"), tradeOf("x", "w", 30*time.Second, "x1"))
	_, err := s.RefreshWindows(ctx, now.Add(time.Minute))
	require.NoError(t, err)
	n, _ := statsOf(t, "x", "1m")
	require.Equal(t, int64(0), n)
	round, err := s.RefreshWindows(ctx, now)
	require.NoError(t, err)
	assert.False(t, round.Full)
	assert.Equal(t, 1, round.Tokens)
	n, _ = statsOf(t, "x", "1m")
	assert.Equal(t, int64(1), n, "back in the 1m window as of now")
}

// Every replaced ranking records its computation time, an empty one too.
func TestHotRankingTimes(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	ctx := context.Background()
	s := postgres.NewIngestStore(pgtest.Pool(t))
	times, err := s.HotRankingTimes(ctx)
	require.NoError(t, err)
	assert.Empty(t, times)
	require.NoError(t, s.ReplaceHotTokens(ctx, chain.Sol, ranking.Duration1m, []ports.HotEntry{{Address: "A", Rank: 1, Score: dec("1")}}, now))
	require.NoError(t, s.ReplaceHotTokens(ctx, chain.Eth, ranking.Duration24h, nil, now.Add(time.Second)))
	require.NoError(t, s.ReplaceHotTokens(ctx, chain.Sol, ranking.Duration1m, nil, now.Add(2*time.Second)))
	times, err = s.HotRankingTimes(ctx)
	require.NoError(t, err)
	require.Len(t, times, 2)
	assert.Equal(t, ports.HotRankingTime{Chain: chain.Eth, Duration: ranking.Duration24h, ComputedAt: now.Add(time.Second)}, times[0])
	assert.Equal(t, ports.HotRankingTime{Chain: chain.Sol, Duration: ranking.Duration1m, ComputedAt: now.Add(2 * time.Second)}, times[1])
	require.NoError(t, s.ReplaceHotTokens(ctx, chain.Sol, ranking.Duration1m, []ports.HotEntry{{Address: "A", Rank: 1, Score: dec("1")}, {Address: "B", Rank: 2, Score: dec("1")}}, now.Add(3*time.Second)))
	times, err = s.HotRankingTimes(ctx)
	require.NoError(t, err)
	assert.Equal(t, ports.HotRankingTime{Chain: chain.Sol, Duration: ranking.Duration1m, ComputedAt: now.Add(3 * time.Second), Entries: 2}, times[1])
}

// Two writers replacing one ranking at once (the startup ranking and the refresh loop's first
// round) take turns: neither fails on the other's rows (before, both deleted the old rows, and
// the second's COPY then met the first's new ones: duplicate key), and the ranking left is one
// writer's whole list.
func TestReplaceHotTokensConcurrently(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	ctx := context.Background()
	s := postgres.NewIngestStore(pgtest.Pool(t))
	entries := []ports.HotEntry{{Address: "A", Rank: 1, Score: dec("2")}, {Address: "B", Rank: 2, Score: dec("1")}}
	require.NoError(t, s.ReplaceHotTokens(ctx, chain.Sol, ranking.Duration1m, entries, now))
	for round := range 20 {
		var g errgroup.Group
		for w := range 6 {
			g.Go(func() error {
				return s.ReplaceHotTokens(ctx, chain.Sol, ranking.Duration1m, entries, now.Add(time.Duration(round*6+w)*time.Millisecond))
			})
		}
		require.NoError(t, g.Wait(), "round %d", round)
	}
	times, err := s.HotRankingTimes(ctx)
	require.NoError(t, err)
	require.Len(t, times, 1)
	assert.Equal(t, 2, times[0].Entries)
}

// Hot candidates aggregate a chain's successful trades in the current and the previous window.
func TestHotCandidates(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	ctx := context.Background()
	s := postgres.NewIngestStore(pgtest.Pool(t))
	failed := tradeOf("a", "w4", 5*time.Second, "a5")
	failed.Status = trade.Failed
	sell := swap("w1", trade.Sell, "10", "2", 30*time.Second, "a3")
	sell.TokenAddress = "a"
	apply(t, s, tokenEvent(chain.Sol, "a"), tokenEvent(chain.Sol, "b"),
		tradeOf("a", "w1", 10*time.Second, "a1"), tradeOf("a", "w2", 20*time.Second, "a2"), sell, failed,
		tradeOf("a", "w3", 90*time.Second, "a4"),
		tradeOf("b", "w1", 3*time.Minute, "b1")) // before both windows
	got, err := s.HotCandidates(ctx, chain.Sol, ranking.Duration1m, now)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, "a", got[0].Address)
	assert.Equal(t, int64(2), got[0].Current.Buyers)
	assert.Equal(t, int64(3), got[0].Current.Trades)
	assert.True(t, got[0].Current.VolumeUSD.Equal(dec("60")), got[0].Current.VolumeUSD.String())
	assert.Equal(t, int64(1), got[0].Prev.Buyers)
	assert.Equal(t, int64(1), got[0].Prev.Trades)
	assert.True(t, got[0].Prev.VolumeUSD.Equal(dec("20")), got[0].Prev.VolumeUSD.String())

	none, err := s.HotCandidates(ctx, chain.Eth, ranking.Duration1m, now)
	require.NoError(t, err)
	assert.Empty(t, none)
}

// A ranking ranks only what the ranking read can serve: a token with trades but no token.created
// row (trades may come first, and one may never come) is no candidate until its row exists. It
// held rank 2 of a stored ranking, was dropped when the ranking was read, and the list answered
// 99 items although more than 100 tokens scored.
func TestHotCandidatesAreServableTokens(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	ctx := context.Background()
	s := postgres.NewIngestStore(pgtest.Pool(t))
	apply(t, s, tokenEvent(chain.Sol, "a"), tradeOf("a", "w1", 10*time.Second, "a1"),
		tradeOf("norow", "w1", 10*time.Second, "n1"), tradeOf("norow", "w2", 20*time.Second, "n2"))
	got, err := s.HotCandidates(ctx, chain.Sol, ranking.Duration1m, now)
	require.NoError(t, err)
	addrs := make([]string, len(got))
	for i, c := range got {
		addrs[i] = c.Address
	}
	assert.Equal(t, []string{"a"}, addrs)
	details, err := postgres.NewMarketReader(pgtest.Pool(t)).TokenDetails(ctx, chain.Sol, addrs)
	require.NoError(t, err)
	assert.Len(t, details, len(addrs), "every candidate has a detail to serve")

	apply(t, s, tokenEvent(chain.Sol, "norow"))
	got, err = s.HotCandidates(ctx, chain.Sol, ranking.Duration1m, now)
	require.NoError(t, err)
	assert.Len(t, got, 2, "once its row exists the token is ranked")
}
