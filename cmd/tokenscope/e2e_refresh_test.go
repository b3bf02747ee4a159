package main

import (
	"context"
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/app/config"
	"github.com/tokenscope/tokenscope/cmd/internal/wire"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/domain/trade"
	"github.com/tokenscope/tokenscope/workflows"
)

// TestRefreshLoopDecaysWindows runs the market refresh loop through Temporal on a short interval
// and watches, through the read API, a trade leave a token's 1m window with no other event: only
// the loop (windows recomputed for the tokens whose trades left a window) can make it go.
func TestRefreshLoopDecaysWindows(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.RefreshInterval = 200 * time.Millisecond })
	ctx := context.Background()
	const tok = "RefreshDecayTok"
	now := time.Now().UTC()
	created := now.Add(-time.Hour).UnixMilli()
	_, err := e.rt.App.Ingest.Ingest(ctx, []chainevent.Event{
		chainevent.TokenCreated{Token: token.Token{Chain: chain.Sol, Address: tok, Decimals: 6, Name: "Refresh Decay", Symbol: "RDK",
			CreatedAt: &created, CreatedBlockHeight: ptr(int64(1000))}, TotalSupply: dd("1000"), CirculatingSupply: dd("1000"),
			Creator: "RefreshDev"},
		// Leaves the 1m window 2 to 3 s from now (a window starts at the first whole second after
		// now − w), the 5m window 4 min later.
		mktTrade("RefreshDecaySig", "RefreshW1", tok, "RefreshPool", trade.Buy, "10", "2", now.Add(-57*time.Second), 1100),
	})
	require.NoError(t, err)
	trades := func(window string) json.Number {
		t.Helper()
		list, ok := okJSON(t, e.doDex(t, "GET", "/v1/token/sol/multi?tokenAddresses="+url.QueryEscape(tok), nil)).([]any)
		require.True(t, ok)
		require.Len(t, list, 1)
		n, ok := field(field(list[0], "stats"), "trades"+window).(json.Number)
		require.True(t, ok)
		return n
	}
	require.Equal(t, json.Number("1"), trades("1m"), "the ingest counted the trade")

	require.NoError(t, wire.StartMarketRefresh(ctx, e.rt))
	t.Cleanup(func() {
		ctx := context.WithoutCancel(ctx)
		assert.NoError(t, e.rt.Temporal.TerminateWorkflow(ctx, workflows.MarketRefreshWorkflowID, "", "test done"))
		// Other tests of the package read the rankings: leave none behind.
		_, err := e.rt.Pool.Exec(ctx, `DELETE FROM hot_tokens WHERE address = $1`, tok)
		assert.NoError(t, err)
	})
	deadline := time.Now().Add(time.Minute)
	for trades("1m") != "0" {
		require.True(t, time.Now().Before(deadline), "the 1m window still counts the trade a minute later")
		time.Sleep(100 * time.Millisecond)
	}
	assert.Equal(t, json.Number("1"), trades("5m"), "still in the 5m window")
	var at int64
	require.NoError(t, e.rt.Pool.QueryRow(ctx, `SELECT windows_at_ms FROM refresh_state`).Scan(&at))
	assert.GreaterOrEqual(t, at, now.Add(2*time.Second).UnixMilli(), "rounds record their time")
}

// TestRefreshLoopTakesConfigOnRestart: a process starts the refresh loop with a 1-hour interval;
// after its first round the loop sleeps. A restarted process configured with 200 ms starts the
// loop again (as dev and worker do at start): the running loop takes the new configuration
// (the query reports it) and runs its next round without waiting out the hour.
func TestRefreshLoopTakesConfigOnRestart(t *testing.T) {
	e := newEnv(t, func(c *config.Config) { c.RefreshInterval = time.Hour })
	ctx := context.Background()
	started := time.Now().UnixMilli()
	require.NoError(t, wire.StartMarketRefresh(ctx, e.rt))
	t.Cleanup(func() {
		assert.NoError(t, e.rt.Temporal.TerminateWorkflow(context.WithoutCancel(ctx), workflows.MarketRefreshWorkflowID, "", "test done"))
	})
	interval := func() time.Duration {
		v, err := e.rt.Temporal.QueryWorkflow(ctx, workflows.MarketRefreshWorkflowID, "", workflows.RefreshConfigQuery)
		if err != nil {
			return 0
		}
		var in workflows.RefreshInput
		require.NoError(t, v.Get(&in))
		return in.Interval
	}
	roundAt := func() int64 {
		var at int64
		require.NoError(t, e.rt.Pool.QueryRow(ctx, `SELECT coalesce(max(windows_at_ms), 0) FROM refresh_state`).Scan(&at))
		return at
	}
	eventually(t, 30*time.Second, "the first round", func() bool { return roundAt() >= started })
	assert.Equal(t, time.Hour, interval())
	first := roundAt()

	cfg := e.rt.Cfg
	cfg.RefreshInterval = 200 * time.Millisecond
	restarted := wire.NewRuntime(cfg, testLogger(), e.rt.Pool, e.rt.Temporal)
	require.NoError(t, wire.StartMarketRefresh(ctx, restarted))
	eventually(t, 30*time.Second, "the loop runs on the restarted process's interval", func() bool {
		return interval() == 200*time.Millisecond
	})
	eventually(t, 30*time.Second, "a round without waiting out the old hour", func() bool { return roundAt() > first })
	replay(t, e.rt.Temporal, workflows.MarketRefreshWorkflowID)
}
