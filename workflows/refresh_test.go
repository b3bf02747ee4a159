package workflows_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
	"go.uber.org/mock/gomock"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/ranking"
	"github.com/tokenscope/tokenscope/internal/fakeclock"
	"github.com/tokenscope/tokenscope/ports"
	"github.com/tokenscope/tokenscope/ports/portsmock"
	"github.com/tokenscope/tokenscope/workflows"
)

var now = time.UnixMilli(1_700_000_000_000).UTC()

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func TestRank(t *testing.T) {
	cands := []ports.HotCandidate{
		// B: buyers 0 → 1: growth 1 / max(0, 1) = 1; volume 0 → 50: 50 / max(0, 100) = 0.5;
		// activity 1 / (1 + 10) = 0.090909090909090909. Score 0.5 × 1 + 0.4 × 0.5 + 0.1 × 0.0909…
		// = 0.5 + 0.2 + 0.0090909090909090909 → 0.709090909090909091 at 18 places.
		{Address: "B", Current: ranking.Activity{Buyers: 1, VolumeUSD: dec("50"), Trades: 1}},
		// A: buyers 1 → 3: 2 / 1 = 2; volume 100 → 300: 200 / 100 = 2; activity 10 / 20 = 0.5.
		// Score 0.5 × 2 + 0.4 × 2 + 0.1 × 0.5 = 1 + 0.8 + 0.05 = 1.85.
		{Address: "A", Current: ranking.Activity{Buyers: 3, VolumeUSD: dec("300"), Trades: 10},
			Prev: ranking.Activity{Buyers: 1, VolumeUSD: dec("100"), Trades: 2}},
		// C: nothing in the current window scores 0 and is left out.
		{Address: "C", Prev: ranking.Activity{Buyers: 5, VolumeUSD: dec("500"), Trades: 9}},
	}
	got := workflows.Rank(cands)
	require.Len(t, got, 2)
	assert.Equal(t, "A", got[0].Address)
	assert.Equal(t, int32(1), got[0].Rank)
	assert.True(t, dec("1.85").Equal(got[0].Score), got[0].Score.String())
	assert.Equal(t, "B", got[1].Address)
	assert.Equal(t, int32(2), got[1].Rank)
	assert.True(t, dec("0.709090909090909091").Equal(got[1].Score), got[1].Score.String())
}

func TestMarketRefreshWorkflow(t *testing.T) {
	tests := []struct {
		name      string
		windowErr error
	}{
		{name: "two rounds then continue as new"},
		{name: "a failing round does not stop the loop", windowErr: errors.New("db down")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctrl := gomock.NewController(t)
			clock := portsmock.NewMockClock(ctrl)
			market := portsmock.NewMockMarketRefresher(ctrl)
			clock.EXPECT().Now().Return(now).AnyTimes()
			if tc.windowErr != nil {
				// 2 rounds × 3 attempts of the activity's retry policy.
				market.EXPECT().RefreshWindows(gomock.Any(), now).Return(ports.WindowRefresh{}, tc.windowErr).Times(6)
			} else {
				market.EXPECT().RefreshWindows(gomock.Any(), now).Return(ports.WindowRefresh{Full: true, Tokens: 1}, nil).Times(2)
				// The second round sees what the first recorded: every ranking computed at now,
				// younger than any RankingMaxAge, so it recomputes only the 14 empty ones.
				var stamps []ports.HotRankingTime
				market.EXPECT().HotRankingTimes(gomock.Any()).DoAndReturn(func(context.Context) ([]ports.HotRankingTime, error) {
					return stamps, nil
				}).Times(2)
				// Sol 1m has one hot token; every other (chain, duration) pair is empty.
				market.EXPECT().HotCandidates(gomock.Any(), gomock.Any(), gomock.Any(), now).DoAndReturn(
					func(_ context.Context, c chain.Chain, d ranking.Duration, _ time.Time) ([]ports.HotCandidate, error) {
						if c == chain.Sol && d == ranking.Duration1m {
							return []ports.HotCandidate{{Address: "A", Current: ranking.Activity{Buyers: 3, VolumeUSD: dec("300"), Trades: 10},
								Prev: ranking.Activity{Buyers: 1, VolumeUSD: dec("100"), Trades: 2}}}, nil
						}
						return nil, nil
					}).Times(3*5 + 14)
				market.EXPECT().ReplaceHotTokens(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), now).DoAndReturn(
					func(_ context.Context, c chain.Chain, d ranking.Duration, es []ports.HotEntry, at time.Time) error {
						if c == chain.Sol && d == ranking.Duration1m {
							require.Len(t, es, 1)
							assert.True(t, dec("1.85").Equal(es[0].Score)) // see TestRank
						} else {
							assert.Empty(t, es)
						}
						stamps = append(stamps, ports.HotRankingTime{Chain: c, Duration: d, ComputedAt: at, Entries: len(es)})
						return nil
					}).Times(3*5 + 14)
			}

			var suite testsuite.WorkflowTestSuite
			env := suite.NewTestWorkflowEnvironment()
			env.RegisterWorkflowWithOptions(workflows.MarketRefreshWorkflow, workflow.RegisterOptions{Name: workflows.MarketRefreshWorkflowName})
			env.RegisterActivity(&workflows.RefreshActivities{Clock: clock, Market: market})
			env.ExecuteWorkflow(workflows.MarketRefreshWorkflowName, workflows.RefreshInput{Interval: 2 * time.Second, RunsPerHistory: 2})
			require.True(t, env.IsWorkflowCompleted())
			err := env.GetWorkflowError()
			require.Error(t, err)
			assert.True(t, workflow.IsContinueAsNewError(err), "the loop hands over to a new run: %v", err)
		})
	}
}

func TestRankingMaxAge(t *testing.T) {
	want := map[ranking.Duration]time.Duration{
		ranking.Duration1m: 500 * time.Millisecond, ranking.Duration5m: 2500 * time.Millisecond,
		ranking.Duration1h: 30 * time.Second, ranking.Duration4h: 2 * time.Minute, ranking.Duration24h: 12 * time.Minute,
	}
	require.Len(t, want, len(ranking.AllDurations))
	for _, d := range ranking.AllDurations {
		assert.Equal(t, want[d], workflows.RankingMaxAge(d), string(d))
	}
}

// TestRefreshMarketStaggersRankings runs the activity round after round on a clock advanced 2 s at
// a time (and then in larger steps), over a store double that remembers when each ranking was last
// replaced (as hot_rankings does), and checks which rankings each round recomputes: 1m every round,
// 5m every other round, 1h every 30 s, 4h every 2 min, 24h only once 12 min have passed.
func TestRefreshMarketStaggersRankings(t *testing.T) {
	ctrl := gomock.NewController(t)
	market := portsmock.NewMockMarketRefresher(ctrl)
	clock := fakeclock.At(now)
	stamps := map[chain.Chain]map[ranking.Duration]time.Time{}
	entries := map[chain.Chain]map[ranking.Duration]int{}
	empty := false        // when set, the candidates score nothing and every ranking stored is empty
	var replaced []string // "chain/duration" of the current round
	market.EXPECT().RefreshWindows(gomock.Any(), gomock.Any()).DoAndReturn(func(_ context.Context, at time.Time) (ports.WindowRefresh, error) {
		assert.Equal(t, clock.Peek(), at, "windows as of the round's time")
		return ports.WindowRefresh{Tokens: 3}, nil
	}).AnyTimes()
	market.EXPECT().HotRankingTimes(gomock.Any()).DoAndReturn(func(context.Context) ([]ports.HotRankingTime, error) {
		var out []ports.HotRankingTime
		for c, ds := range stamps {
			for d, at := range ds {
				out = append(out, ports.HotRankingTime{Chain: c, Duration: d, ComputedAt: at, Entries: entries[c][d]})
			}
		}
		return out, nil
	}).AnyTimes()
	market.EXPECT().HotCandidates(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).DoAndReturn(
		func(_ context.Context, _ chain.Chain, _ ranking.Duration, at time.Time) ([]ports.HotCandidate, error) {
			assert.Equal(t, clock.Peek(), at)
			if empty {
				return nil, nil
			}
			return []ports.HotCandidate{{Address: "A", Current: ranking.Activity{Buyers: 1, VolumeUSD: dec("1"), Trades: 1}}}, nil
		}).AnyTimes()
	market.EXPECT().ReplaceHotTokens(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).DoAndReturn(
		func(_ context.Context, c chain.Chain, d ranking.Duration, es []ports.HotEntry, at time.Time) error {
			if !empty {
				require.Len(t, es, 1)
			}
			if stamps[c] == nil {
				stamps[c] = map[ranking.Duration]time.Time{}
				entries[c] = map[ranking.Duration]int{}
			}
			stamps[c][d] = at
			entries[c][d] = len(es)
			replaced = append(replaced, string(c)+"/"+string(d))
			return nil
		}).AnyTimes()
	a := &workflows.RefreshActivities{Clock: clock, Market: market}

	// round runs the activity at now + elapsed and returns the durations it recomputed (the same on
	// every chain).
	round := func(elapsed time.Duration) []ranking.Duration {
		t.Helper()
		clock.Set(now.Add(elapsed))
		replaced = nil
		res, err := a.RefreshMarket(context.Background())
		require.NoError(t, err)
		assert.Equal(t, 3, res.ActiveTokens)
		var ds []ranking.Duration
		for _, d := range ranking.AllDurations {
			n := 0
			for _, c := range chain.V2 {
				if slices.Contains(replaced, string(c)+"/"+string(d)) {
					n++
				}
			}
			require.Contains(t, []int{0, len(chain.V2)}, n, "every chain or none for %s", d)
			if n > 0 {
				ds = append(ds, d)
			}
		}
		assert.Equal(t, len(replaced), res.Rankings)
		if !empty {
			assert.Equal(t, len(replaced), res.HotTokens, "one entry per recomputed ranking")
		}
		return ds
	}

	all := ranking.AllDurations
	d1m, d5m, d1h, d4h, d24h := ranking.Duration1m, ranking.Duration5m, ranking.Duration1h, ranking.Duration4h, ranking.Duration24h
	// Nothing recorded yet: every ranking.
	assert.Equal(t, all, round(0))
	// 2 s later only 1m is due (5m waits for 2.5 s).
	assert.Equal(t, []ranking.Duration{d1m}, round(2*time.Second))
	assert.Equal(t, []ranking.Duration{d1m, d5m}, round(4*time.Second))
	// Every 2 s up to 28 s: 1m always, 5m every other round, nothing longer.
	counts := map[ranking.Duration]int{}
	for s := 6; s <= 28; s += 2 {
		for _, d := range round(time.Duration(s) * time.Second) {
			counts[d]++
		}
	}
	assert.Equal(t, map[ranking.Duration]int{d1m: 12, d5m: 6}, counts)
	// 30 s after the first round 1h is due (5m ran at 28 s and waits); 4h and 24h are not.
	assert.Equal(t, []ranking.Duration{d1m, d1h}, round(30*time.Second))
	assert.Equal(t, []ranking.Duration{d1m, d5m}, round(32*time.Second))
	// 2 min: 4h is due, 24h still waits.
	assert.Equal(t, []ranking.Duration{d1m, d5m, d1h, d4h}, round(2*time.Minute))
	assert.Equal(t, []ranking.Duration{d1m, d5m, d1h, d4h}, round(11*time.Minute+58*time.Second))
	// 12 min after its last computation 24h is recomputed (the others ran 2 s ago), and then not
	// again for 12 min.
	assert.Equal(t, []ranking.Duration{d1m, d24h}, round(12*time.Minute))
	assert.Equal(t, []ranking.Duration{d1m, d5m}, round(12*time.Minute+2*time.Second))
	assert.NotContains(t, round(23*time.Minute+58*time.Second), d24h)
	assert.Contains(t, round(24*time.Minute), d24h)
	// A clock that went back behind a computation time recomputes that ranking.
	assert.Equal(t, all, round(10*time.Minute))
	// A ranking recomputed with nothing to rank is recomputed every round until it holds tokens:
	// 5m, empty since 4 s, runs again at 6 s although it is only 2 s old, then waits once it has
	// a token.
	empty = true
	assert.Equal(t, []ranking.Duration{d1m}, round(10*time.Minute+2*time.Second))
	assert.Equal(t, []ranking.Duration{d1m, d5m}, round(10*time.Minute+4*time.Second))
	empty = false
	assert.Equal(t, []ranking.Duration{d1m, d5m}, round(10*time.Minute+6*time.Second))
	assert.Equal(t, []ranking.Duration{d1m}, round(10*time.Minute+8*time.Second))
}

func TestRefreshMarketWindowFailureStopsTheRound(t *testing.T) {
	ctrl := gomock.NewController(t)
	market := portsmock.NewMockMarketRefresher(ctrl)
	market.EXPECT().RefreshWindows(gomock.Any(), now).Return(ports.WindowRefresh{}, errors.New("db down"))
	// No ranking is read or written after a failed window round.
	a := &workflows.RefreshActivities{Clock: fakeclock.At(now), Market: market}
	_, err := a.RefreshMarket(context.Background())
	require.Error(t, err)
}

// TestRefreshMarketRemovesTradesOlderThanTheRetention: with a retention set, each round asks the
// retainer to remove the trades older than now − retention, within RetainBudget, and reports how
// many it removed; without one (zero, or no retainer) it never asks.
func TestRefreshMarketRemovesTradesOlderThanTheRetention(t *testing.T) {
	for _, c := range []struct {
		name      string
		retention time.Duration
		retainer  bool
		asks      bool
	}{
		{"thirty days", 30 * 24 * time.Hour, true, true},
		{"no retention", 0, true, false},
		{"no retainer", 30 * 24 * time.Hour, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctrl := gomock.NewController(t)
			market := portsmock.NewMockMarketRefresher(ctrl)
			market.EXPECT().RefreshWindows(gomock.Any(), now).Return(ports.WindowRefresh{}, nil)
			market.EXPECT().HotRankingTimes(gomock.Any()).Return(nil, nil)
			market.EXPECT().HotCandidates(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Return(nil, nil).AnyTimes()
			market.EXPECT().ReplaceHotTokens(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any()).Return(nil).AnyTimes()
			a := &workflows.RefreshActivities{Clock: fakeclock.At(now), Market: market, Retention: c.retention}
			if c.retainer {
				retainer := portsmock.NewMockTradeRetainer(ctrl)
				if c.asks {
					retainer.EXPECT().RetainTrades(gomock.Any(), now.Add(-c.retention), workflows.RetainBudget).
						Return(ports.RetainResult{Removed: 1234, Kept: 5}, nil)
				}
				a.Retainer = retainer
			}
			res, err := a.RefreshMarket(context.Background())
			require.NoError(t, err)
			if c.asks {
				assert.Equal(t, 1234, res.RemovedTrades)
			} else {
				assert.Zero(t, res.RemovedTrades)
			}
		})
	}
}
