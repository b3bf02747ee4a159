package workflows_test

import (
	"context"
	"errors"
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
		activeErr error
		// rounds whose windows and rankings are written
		refreshed int
	}{
		{name: "two rounds then continue as new", refreshed: 2},
		{name: "a failing round does not stop the loop", activeErr: errors.New("db down"), refreshed: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctrl := gomock.NewController(t)
			clock := portsmock.NewMockClock(ctrl)
			market := portsmock.NewMockMarketRefresher(ctrl)
			clock.EXPECT().Now().Return(now).AnyTimes()
			refs := []ports.TokenRef{{Chain: chain.Sol, Address: "A"}}
			if tc.activeErr != nil {
				// 2 rounds × 3 attempts of the activity's retry policy.
				market.EXPECT().ActiveTokens(gomock.Any(), now.Add(-24*time.Hour).UnixMilli()).Return(nil, tc.activeErr).Times(6)
			} else {
				market.EXPECT().ActiveTokens(gomock.Any(), now.Add(-24*time.Hour).UnixMilli()).Return(refs, nil).Times(2)
				market.EXPECT().RefreshWindows(gomock.Any(), refs, now).Return(nil).Times(2)
				// Sol 1m has one hot token; every other (chain, duration) pair is empty.
				market.EXPECT().HotCandidates(gomock.Any(), gomock.Any(), gomock.Any(), now).DoAndReturn(
					func(_ context.Context, c chain.Chain, d ranking.Duration, _ time.Time) ([]ports.HotCandidate, error) {
						if c == chain.Sol && d == ranking.Duration1m {
							return []ports.HotCandidate{{Address: "A", Current: ranking.Activity{Buyers: 3, VolumeUSD: dec("300"), Trades: 10},
								Prev: ranking.Activity{Buyers: 1, VolumeUSD: dec("100"), Trades: 2}}}, nil
						}
						return nil, nil
					}).Times(2 * 3 * 5)
				market.EXPECT().ReplaceHotTokens(gomock.Any(), gomock.Any(), gomock.Any(), gomock.Any(), now).DoAndReturn(
					func(_ context.Context, c chain.Chain, d ranking.Duration, es []ports.HotEntry, _ time.Time) error {
						if c == chain.Sol && d == ranking.Duration1m {
							require.Len(t, es, 1)
							assert.True(t, dec("1.85").Equal(es[0].Score)) // see TestRank
						} else {
							assert.Empty(t, es)
						}
						return nil
					}).Times(2 * 3 * 5)
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
