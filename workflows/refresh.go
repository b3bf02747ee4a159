package workflows

import (
	"context"
	"sort"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/ranking"
	"github.com/tokenscope/tokenscope/ports"
)

// Timeouts of one refresh round (workflow version refreshConfigVersion). A round heartbeats
// every RefreshHeartbeatInterval while it works, so a round lost with its worker (a crash, a
// restart) is retried RefreshHeartbeatTimeout after its last heartbeat instead of after the
// whole start-to-close timeout; RefreshRoundTimeout still bounds a round that hangs while
// heartbeating.
const (
	RefreshHeartbeatTimeout  = 5 * time.Second
	RefreshHeartbeatInterval = time.Second
	RefreshRoundTimeout      = time.Minute
)

// refreshConfigChange marks the workflow change that added the configuration signal, the
// round heartbeat timeout and the interruptible sleep (workflow.GetVersion). Runs started before
// it keep the old path (plain sleep, no heartbeat timeout) and pick a signalled configuration up
// when they continue as new.
const (
	refreshConfigChange  = "refresh-config-signal"
	refreshConfigVersion = 1
)

// Refresh loop defaults.
const (
	DefaultRefreshInterval = 2 * time.Second
	// DefaultRefreshRunsPerHistory bounds the history: after this many rounds the workflow
	// continues as new (each round adds about a dozen events).
	DefaultRefreshRunsPerHistory = 500
	// HotTokensLimit caps each (chain, duration) ranking.
	HotTokensLimit = 100
	// RankingAgeDivisor sets how stale a ranking may get before a round recomputes it: a ranking
	// over duration d is recomputed once its last computation is d / RankingAgeDivisor old (0.83%
	// of the window it scores; rounds come an interval apart, so never more often than every round).
	RankingAgeDivisor = 120
)

// RankingMaxAge is the age at which a round recomputes the ranking over d: 0.5 s for 1m (every
// round), 2.5 s for 5m, 30 s for 1h, 2 min for 4h, 12 min for 24h.
func RankingMaxAge(d ranking.Duration) time.Duration { return d.Duration() / RankingAgeDivisor }

// RefreshInput configures the loop; zero values take the defaults.
type RefreshInput struct {
	Interval       time.Duration
	RunsPerHistory int
}

// RefreshResult reports one round.
type RefreshResult struct {
	// ActiveTokens is the number of tokens whose windows the round recomputed.
	ActiveTokens int
	// FullWindows is set when the round had no previous round to continue from and recomputed
	// every token active in the last 24 hours.
	FullWindows bool
	// ResumedWindows is set when the round continued one an earlier attempt left unfinished.
	ResumedWindows bool
	// Rankings is the number of (chain, duration) rankings recomputed; the others were younger
	// than RankingMaxAge.
	Rankings int
	// HotTokens is the number of ranking entries the recomputed rankings hold.
	HotTokens int
	// RemovedTrades is the number of trades older than TRADES_RETENTION the round removed.
	RemovedTrades int
}

// RefreshActivities holds the ports the refresh activity needs.
type RefreshActivities struct {
	Clock  ports.Clock
	Market ports.MarketRefresher
	// Retainer and Retention remove trades older than Retention each round (TRADES_RETENTION);
	// a nil Retainer or zero Retention keeps every trade.
	Retainer  ports.TradeRetainer
	Retention time.Duration
}

// RetainBudget bounds the time one round spends removing old trades; a backlog (the first round
// after TRADES_RETENTION is set on a long history) continues over the next rounds.
const RetainBudget = time.Second

type rankingKey struct {
	chain    chain.Chain
	duration ranking.Duration
}

// RefreshMarket brings the rolling windows up to date (MarketRefresher.RefreshWindows recomputes
// only the windows a trade left since the last completed round) and
// recomputes every hot-token ranking that is RankingMaxAge old or older or empty, each ranked by
// ranking.Score of its current window against the one before it. Tokens scoring 0 are left out of
// the ranking.
func (a *RefreshActivities) RefreshMarket(ctx context.Context) (RefreshResult, error) {
	if activity.IsActivity(ctx) {
		// From a goroutine: a single long query (RefreshWindows at scale) must not starve the
		// heartbeat, which only says "this worker is alive and still on it".
		stop := heartbeatEvery(ctx, RefreshHeartbeatInterval)
		defer stop()
	}
	now := a.Clock.Now()
	w, err := a.Market.RefreshWindows(ctx, now)
	if err != nil {
		return RefreshResult{}, err
	}
	res := RefreshResult{ActiveTokens: w.Tokens, FullWindows: w.Full, ResumedWindows: w.Resumed}
	res.Rankings, res.HotTokens, err = a.rank(ctx, now)
	if err != nil || a.Retainer == nil || a.Retention <= 0 {
		return res, err
	}
	r, err := a.Retainer.RetainTrades(ctx, now.Add(-a.Retention), RetainBudget)
	res.RemovedTrades = r.Removed
	return res, err
}

// RankMarket is the ranking half of RefreshMarket alone, as of the clock's now: it recomputes
// every hot-token ranking that is due (RankingMaxAge old or older, or empty) and reports only
// Rankings and HotTokens. Processes run it once at startup, so they are ready with rankings.
func (a *RefreshActivities) RankMarket(ctx context.Context) (RefreshResult, error) {
	var res RefreshResult
	var err error
	res.Rankings, res.HotTokens, err = a.rank(ctx, a.Clock.Now())
	return res, err
}

// rank recomputes the due rankings as of now and counts them and their entries.
func (a *RefreshActivities) rank(ctx context.Context, now time.Time) (rankings, hotTokens int, err error) {
	times, err := a.Market.HotRankingTimes(ctx)
	if err != nil {
		return 0, 0, err
	}
	// An empty ranking is recomputed every round: it was computed before there was anything to
	// rank (a fresh database, a chain's first trades), and waiting d/120 would leave it empty for
	// up to 12 minutes. Recomputing it costs little while the chain has no trades.
	computed := make(map[rankingKey]time.Time, len(times))
	for _, t := range times {
		if t.Entries > 0 {
			computed[rankingKey{t.Chain, t.Duration}] = t.ComputedAt
		}
	}
	for _, c := range chain.V2 {
		for _, d := range ranking.AllDurations {
			// A ranking computed in the future (the clock went back) is recomputed.
			if at, ok := computed[rankingKey{c, d}]; ok && !at.After(now) && now.Sub(at) < RankingMaxAge(d) {
				continue
			}
			cands, err := a.Market.HotCandidates(ctx, c, d, now)
			if err != nil {
				return rankings, hotTokens, err
			}
			entries := Rank(cands)
			if err := a.Market.ReplaceHotTokens(ctx, c, d, entries, now); err != nil {
				return rankings, hotTokens, err
			}
			rankings++
			hotTokens += len(entries)
		}
	}
	return rankings, hotTokens, nil
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

// MarketRefreshWorkflow (registered as MarketRefreshWorkflowName, ID MarketRefreshWorkflowID)
// runs RefreshMarket, sleeps Interval, and repeats; after RunsPerHistory rounds it continues as
// new with the configuration in force. A failed round is logged and the loop goes on: it is not
// recorded as completed, so the next round continues it and covers its span again.
//
// A RefreshConfigSignal replaces the configuration: a new Interval applies to the sleep under
// way (the next round comes the new Interval after the end of the last one, at once if that is
// past) and to every later one, and continue-as-new carries it.
func MarketRefreshWorkflow(ctx workflow.Context, in RefreshInput) error {
	version := workflow.GetVersion(ctx, refreshConfigChange, workflow.DefaultVersion, refreshConfigVersion)
	in = in.withDefaults()
	if err := workflow.SetQueryHandler(ctx, RefreshConfigQuery, func() (RefreshInput, error) { return in, nil }); err != nil {
		return err
	}
	configs := workflow.GetSignalChannel(ctx, RefreshConfigSignal)
	// drain applies every configuration already signalled; it adds no command.
	drain := func() {
		var next RefreshInput
		for configs.ReceiveAsync(&next) {
			in = next.withDefaults()
		}
	}
	if version == workflow.DefaultVersion {
		// The loop as it was before refreshConfigChange, command for command.
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
		drain()
		return workflow.NewContinueAsNewError(ctx, MarketRefreshWorkflowName, in)
	}

	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: RefreshRoundTimeout,
		HeartbeatTimeout:    RefreshHeartbeatTimeout,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3, InitialInterval: time.Second},
	})
	var a *RefreshActivities
	for i := 0; i < in.RunsPerHistory; i++ {
		var res RefreshResult
		if err := workflow.ExecuteActivity(actx, a.RefreshMarket).Get(actx, &res); err != nil {
			workflow.GetLogger(ctx).Warn("market refresh round failed", "error", err)
		}
		if err := sleepInterval(ctx, configs, &in); err != nil {
			return err
		}
	}
	drain()
	return workflow.NewContinueAsNewError(ctx, MarketRefreshWorkflowName, in)
}

// sleepInterval waits in.Interval from now (the end of a round), applying configurations
// signalled meanwhile: a changed Interval moves the wake-up to the end of the round plus the new
// Interval.
func sleepInterval(ctx workflow.Context, configs workflow.ReceiveChannel, in *RefreshInput) error {
	roundEnd := workflow.Now(ctx)
	for {
		wait := roundEnd.Add(in.Interval).Sub(workflow.Now(ctx))
		if wait <= 0 {
			return nil
		}
		tctx, cancel := workflow.WithCancel(ctx)
		timer := workflow.NewTimer(tctx, wait)
		for {
			fired, changed := false, false
			var timerErr error
			sel := workflow.NewSelector(ctx)
			sel.AddFuture(timer, func(f workflow.Future) { fired, timerErr = true, f.Get(ctx, nil) })
			sel.AddReceive(configs, func(c workflow.ReceiveChannel, _ bool) {
				var next RefreshInput
				c.Receive(ctx, &next)
				next = next.withDefaults()
				changed = next.Interval != in.Interval
				*in = next
			})
			sel.Select(ctx)
			if fired {
				cancel()
				return timerErr
			}
			if changed {
				cancel()
				break // a new timer for the new Interval
			}
		}
	}
}

func (in RefreshInput) withDefaults() RefreshInput {
	if in.Interval <= 0 {
		in.Interval = DefaultRefreshInterval
	}
	if in.RunsPerHistory <= 0 {
		in.RunsPerHistory = DefaultRefreshRunsPerHistory
	}
	return in
}
