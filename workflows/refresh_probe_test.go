//go:build refreshprobe

package workflows_test

// Times refresh rounds against an existing database (never one a test made): build tag
// refreshprobe, REFRESH_PROBE_URL the database, REFRESH_PROBE_ROUNDS rounds (default 5) started
// DefaultRefreshInterval apart, as the loop does. Reports each round's wall time, the part spent in
// rankings, and the activity's result.
//
//	REFRESH_PROBE_URL=postgres://…/refresh_probe go test -tags refreshprobe -run TestRefreshProbe -v ./workflows/

import (
	"context"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/ranking"
	"github.com/tokenscope/tokenscope/ports"
	"github.com/tokenscope/tokenscope/workflows"
)

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

// timedRankings adds up the time spent in the ranking calls.
type timedRankings struct {
	ports.MarketRefresher
	spent atomic.Int64
}

func (t *timedRankings) HotCandidates(ctx context.Context, c chain.Chain, d ranking.Duration, now time.Time) ([]ports.HotCandidate, error) {
	start := time.Now()
	defer func() { t.spent.Add(int64(time.Since(start))) }()
	return t.MarketRefresher.HotCandidates(ctx, c, d, now)
}

func (t *timedRankings) ReplaceHotTokens(ctx context.Context, c chain.Chain, d ranking.Duration, es []ports.HotEntry, now time.Time) error {
	start := time.Now()
	defer func() { t.spent.Add(int64(time.Since(start))) }()
	return t.MarketRefresher.ReplaceHotTokens(ctx, c, d, es, now)
}

func TestRefreshProbe(t *testing.T) {
	url := os.Getenv("REFRESH_PROBE_URL")
	require.NotEmpty(t, url, "REFRESH_PROBE_URL")
	rounds := 5
	if n, err := strconv.Atoi(os.Getenv("REFRESH_PROBE_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	pool, err := postgres.Open(ctx, url, 20)
	require.NoError(t, err)
	defer pool.Close()
	market := &timedRankings{MarketRefresher: postgres.NewIngestStore(pool)}
	a := &workflows.RefreshActivities{Clock: wallClock{}, Market: market}
	for i := 0; i < rounds; i++ {
		market.spent.Store(0)
		start := time.Now()
		res, err := a.RefreshMarket(ctx)
		took := time.Since(start)
		require.NoError(t, err)
		t.Logf("round %d: %s (rankings %s) %+v", i+1, took.Round(time.Millisecond),
			time.Duration(market.spent.Load()).Round(time.Millisecond), res)
		time.Sleep(workflows.DefaultRefreshInterval)
	}
}
