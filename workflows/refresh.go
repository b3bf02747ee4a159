package workflows

import (
	"context"
	"sort"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/ranking"
	"github.com/tokenscope/tokenscope/ports"
)

// RefreshMarketActivityName is the activity the refresh loop runs every interval.
const RefreshMarketActivityName = "RefreshMarket"

// Refresh loop defaults.
const (
	DefaultRefreshInterval = 2 * time.Second
	// DefaultRefreshRunsPerHistory bounds the history: after this many rounds the workflow
	// continues as new (each round adds about a dozen events).
	DefaultRefreshRunsPerHistory = 500
	// ActiveWindow is how far back a trade keeps a token's windows being recomputed.
	ActiveWindow = 24 * time.Hour
	// HotTokensLimit caps each (chain, duration) ranking.
	HotTokensLimit = 100
)

// RefreshInput configures the loop; zero values take the defaults.
type RefreshInput struct {
	Interval       time.Duration
	RunsPerHistory int
}

// RefreshResult reports one round.
type RefreshResult struct {
	ActiveTokens int
	HotTokens    int
}

// RefreshActivities holds the ports the refresh activity needs.
type RefreshActivities struct {
	Clock  ports.Clock
	Market ports.MarketRefresher
}

// RefreshMarket recomputes the rolling windows of every token traded in the last ActiveWindow and
// every hot-token ranking, each ranked by ranking.Score of its current window against the one
// before it. Tokens scoring 0 are left out of the ranking.
func (a *RefreshActivities) RefreshMarket(ctx context.Context) (RefreshResult, error) {
	now := a.Clock.Now()
	refs, err := a.Market.ActiveTokens(ctx, now.Add(-ActiveWindow).UnixMilli())
	if err != nil {
		return RefreshResult{}, err
	}
	if err := a.Market.RefreshWindows(ctx, refs, now); err != nil {
		return RefreshResult{}, err
	}
	res := RefreshResult{ActiveTokens: len(refs)}
	for _, c := range chain.V2 {
		for _, d := range ranking.AllDurations {
			cands, err := a.Market.HotCandidates(ctx, c, d, now)
			if err != nil {
				return res, err
			}
			entries := Rank(cands)
			if err := a.Market.ReplaceHotTokens(ctx, c, d, entries, now); err != nil {
				return res, err
			}
			res.HotTokens += len(entries)
		}
	}
	return res, nil
}

// Rank scores candidates, drops those scoring 0, orders by score (then address) and keeps the
// first HotTokensLimit with ranks from 1.
func Rank(cands []ports.HotCandidate) []ports.HotEntry {
	var out []ports.HotEntry
	for _, c := range cands {
		if s := ranking.Score(c.Current, c.Prev); s.IsPositive() {
			out = append(out, ports.HotEntry{Address: c.Address, Score: s})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if c := out[i].Score.Cmp(out[j].Score); c != 0 {
			return c > 0
		}
		return out[i].Address < out[j].Address
	})
	if len(out) > HotTokensLimit {
		out = out[:HotTokensLimit]
	}
	for i := range out {
		out[i].Rank = int32(i + 1)
	}
	return out
}

// MarketRefreshWorkflow (registered as MarketRefreshWorkflowName, ID MarketRefreshWorkflowID) runs RefreshMarket, sleeps Interval, and repeats; after RunsPerHistory
// rounds it continues as new with the same input. A failed round is logged and the loop goes on:
// the next round recomputes everything anyway.
func MarketRefreshWorkflow(ctx workflow.Context, in RefreshInput) error {
	if in.Interval <= 0 {
		in.Interval = DefaultRefreshInterval
	}
	if in.RunsPerHistory <= 0 {
		in.RunsPerHistory = DefaultRefreshRunsPerHistory
	}
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3, InitialInterval: time.Second},
	})
	var a *RefreshActivities
	for i := 0; i < in.RunsPerHistory; i++ {
		var res RefreshResult
		if err := workflow.ExecuteActivity(ctx, a.RefreshMarket).Get(ctx, &res); err != nil {
			workflow.GetLogger(ctx).Warn("market refresh round failed", "error", err)
		}
		if err := workflow.Sleep(ctx, in.Interval); err != nil {
			return err
		}
	}
	return workflow.NewContinueAsNewError(ctx, MarketRefreshWorkflowName, in)
}
