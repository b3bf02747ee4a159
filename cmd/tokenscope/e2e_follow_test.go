package main

import (
	"context"
	"crypto/ecdsa"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/tokenscope/tokenscope/adapters/evm/evmtest"
	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/adapters/postgres/pgtest"
	"github.com/tokenscope/tokenscope/adapters/temporal"
	"github.com/tokenscope/tokenscope/app/config"
	"github.com/tokenscope/tokenscope/cmd/internal/wire"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/ports"
	"github.com/tokenscope/tokenscope/workflows"
)

// followChain configures the eth follower on the simulated chain's JSON-RPC over HTTP, priced
// by its standard market, one confirmation, from block 0, polling every 100 ms.
func followChain(ch *evmtest.Chain, m *evmtest.Standard) envOption {
	return func(c *config.Config) {
		c.Followers = []config.Follower{{Chain: "eth", RPC: ch.URL, Confirmations: 1, StartBlock: 0,
			Native: evmtest.Lower(m.WETH), Stables: []string{evmtest.Lower(m.USDC)}, StablePool: evmtest.Lower(m.Stable)}}
		c.ChainPollInterval = 100 * time.Millisecond
	}
}

// The whole path: a node served over HTTP JSON-RPC, the worker's ChainFollow workflow started as
// `worker` starts it, the swaps served by the API (trades, PnL), the workflow's query, and the
// follower's /metrics.
func TestChainFollowerServesSwapsThroughTheAPI(t *testing.T) {
	pgtest.Truncate(t, "chain_checkpoints")
	ka, kb := evmtest.NewKey(t), evmtest.NewKey(t)
	ch := evmtest.NewChain(t, true, ka, kb)
	m := evmtest.NewStandard(t, ch, ka, kb)
	e := newEnv(t, fastWorkflows, followChain(ch, m))

	aBuy := m.Swap(ka, m.TKNUSDC, m.USDC, evmtest.Units(1000))
	m.Swap(kb, m.TKNETH, m.WETH, evmtest.Units(1))
	m.Commit()
	aSell := m.Swap(ka, m.TKNUSDC, m.TKN, aBuy.AmountOut)
	m.Commit()
	head := m.Commit() // one confirmation on top of the last swap
	ctx := context.Background()
	require.NoError(t, wire.StartChainFollowers(ctx, e.rt))
	t.Cleanup(func() {
		_ = e.rt.Temporal.TerminateWorkflow(context.Background(), workflows.ChainFollowWorkflowID(chain.Eth), "", "test over")
	})

	tkn := evmtest.Lower(m.TKN)
	var trades []any
	eventually(t, 60*time.Second, "the three TKN trades served", func() bool {
		v := okJSON(t, e.do(t, "GET", "/v2/trade/eth?tokenAddress="+tkn+"&limit=10", nil))
		trades, _ = v.(map[string]any)["data"].([]any)
		return len(trades) == 3
	})
	newest := trades[0].(map[string]any)
	assert.Equal(t, strings.ToLower(aSell.Tx.Hex()), newest["transactionSignature"])
	assert.Equal(t, "SELL", newest["type"])
	assert.Equal(t, evmtest.Lower(evmtest.Addr(ka)), newest["accountOwnerAddress"])
	assertDec(t, evmtest.Whole(aSell.AmountIn).String(), newest["tokenAmount"], "tokenAmount")
	assertDec(t, evmtest.Whole(aSell.AmountOut).String(), newest["tokenAmountInUsd"], "tokenAmountInUsd")

	// A bought for 1000 USDC and sold everything for y USDC: realized y − 1000.
	v := okJSON(t, e.do(t, "GET", "/v2/wallet/eth/"+evmtest.Lower(evmtest.Addr(ka))+"/pnl-by-token?tokenAddresses="+tkn, nil))
	list := v.(map[string]any)["data"].([]any)
	require.Len(t, list, 1)
	assertDec(t, evmtest.Whole(aSell.AmountOut).Sub(evmtest.Whole(aBuy.AmountIn)).String(),
		list[0].(map[string]any)["realizedProfitInUsd"], "realizedProfitInUsd")

	var st workflows.FollowStatus
	eventually(t, 30*time.Second, "the query at the confirmed head", func() bool {
		q, err := e.rt.Temporal.QueryWorkflow(ctx, workflows.ChainFollowWorkflowID(chain.Eth), "", workflows.ChainFollowQuery)
		return err == nil && q.Get(&st) == nil && st.Block == head.Number.Int64()-1
	})
	assert.Equal(t, int64(1), st.Lag)
	assert.Equal(t, int64(3), st.Trades, "the three swaps, each once")

	metrics := e.doURL(t, "GET", e.admin+"/metrics", nil)
	assert.Contains(t, string(metrics.Body), `tokenscope_chain_block{chain="eth"}`)
}

// recordChainFollow: the eth follower as the worker starts it (StartChainFollower), two steps
// per run over the simulated chain's standard market with a swap, the first run up to its
// continue-as-new.
func recordChainFollow(t *testing.T, e *env) []execution {
	require.NotNil(t, recording, "TestRecordHistories starts the recording chain")
	m := recording.market
	m.Swap(m.Deployer, m.TKNUSDC, m.USDC, evmtest.Units(100))
	m.Commit()
	m.Commit()
	c := e.rt.Temporal
	in := workflows.FollowInput{Chain: chain.Eth, Confirmations: 1, StartBlock: 0, PollInterval: 200 * time.Millisecond, StepsPerRun: 2}
	require.NoError(t, temporal.StartChainFollower(context.Background(), c, in))
	id := workflows.ChainFollowWorkflowID(chain.Eth)
	run := currentRun(t, c, id)
	waitStatus(t, c, id, run, enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW)
	require.NoError(t, c.TerminateWorkflow(context.Background(), id, "", "recorded"))
	return []execution{{"chain_follow_eth.json", id, run, workflows.ChainFollowWorkflowName,
		enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW}}
}

// recording is the chain TestRecordHistories follows (its env's worker has a source for it).
var recording *struct{ market *evmtest.Standard }

// startRecordingChain starts the simulated chain and market the recorder's worker follows.
func startRecordingChain(t *testing.T) envOption {
	ch := evmtest.NewChain(t, true)
	recording = &struct{ market *evmtest.Standard }{market: evmtest.NewStandard(t, ch)}
	return followChain(ch, recording.market)
}

// A worker that runs followers is unready while one is halted, naming the chain and block; an
// operator's chain-resume makes it ready again.
func TestReadinessNamesAHaltedChain(t *testing.T) {
	pgtest.Truncate(t, "chain_checkpoints")
	cfg := testConfig(t)
	cfg.Followers = []config.Follower{{Chain: "eth", RPC: "http://127.0.0.1:1"}}
	ctx := context.Background()
	pool, err := postgres.Open(ctx, cfg.DatabaseURL, 2)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	rt := wire.NewRuntime(cfg, testLogger(), pool, nil)
	rt.WorkflowProbe = temporal.NewWorkflowProbe(nil) // as in a worker process
	var check func(context.Context) error
	for _, c := range wire.ReadinessChecks(rt) {
		if c.Name == "chains" {
			check = c.Ping
		}
	}
	require.NotNil(t, check, "a worker with followers checks them")
	require.NoError(t, check(ctx))

	store := postgres.NewChainStore(pool)
	require.NoError(t, store.Halt(ctx, ports.ChainHalt{Chain: chain.Eth, Block: 42, Reason: "block 43's parent is 0xa, not 0xb"}))
	err = check(ctx)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "eth follower stopped at block 42: block 43's parent is 0xa")

	require.NoError(t, runChainResume(ctx, cfg, testLogger(), []string{"--from", "40", "eth"}))
	require.NoError(t, check(ctx))
	cp, ok, err := store.Checkpoint(ctx, chain.Eth)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, int64(40), cp.Block, "rewound")
}

// A worker stopped in the middle of a backfill (one block per range, so it stops between two
// checkpoints) hands the follower to the next worker, which resumes from the checkpoint: every
// swap is stored exactly once.
func TestChainFollowerResumesOnAnotherWorkerMidBackfill(t *testing.T) {
	pgtest.Truncate(t, "chain_checkpoints")
	keys := []*ecdsa.PrivateKey{evmtest.NewKey(t), evmtest.NewKey(t), evmtest.NewKey(t)}
	ch := evmtest.NewChain(t, true, keys...)
	m := evmtest.NewStandard(t, ch, keys...)
	const n = 150
	first := m.Commit().Number.Int64() + 1
	for i := range n {
		m.Swap(keys[i%3], m.TKNETH, m.WETH, evmtest.Units(1))
		m.Commit()
	}
	last := m.Commit().Number.Int64() - 1
	e := newEnvWithClient(t, sharedTemporal().GetDefaultClient(), false, fastWorkflows, followChain(ch, m),
		func(c *config.Config) { c.ChainLogRange = 1 })
	w1 := startWorker(t, e.rt)
	ctx := context.Background()
	require.NoError(t, wire.StartChainFollowers(ctx, e.rt))
	t.Cleanup(func() {
		_ = e.rt.Temporal.TerminateWorkflow(context.Background(), workflows.ChainFollowWorkflowID(chain.Eth), "", "test over")
	})
	store := postgres.NewChainStore(e.rt.Pool)
	at := func() int64 {
		cp, _, err := store.Checkpoint(ctx, chain.Eth)
		require.NoError(t, err)
		return cp.Block
	}
	eventually(t, 60*time.Second, "the backfill 10 swaps in", func() bool { return at() >= first+10 })
	w1.Stop()
	stoppedAt := at()
	require.Less(t, stoppedAt, last, "stopped in the middle of the backfill")

	startWorker(t, e.rt)
	eventually(t, 120*time.Second, "the backfill done", func() bool { return at() >= last })
	var trades, distinct int
	require.NoError(t, e.rt.Pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT tx_signature) FROM trades
		WHERE chain = 'eth' AND pool_address = $1`, evmtest.Lower(m.TKNETH)).Scan(&trades, &distinct))
	assert.Equal(t, n, trades, "every swap stored")
	assert.Equal(t, n, distinct, "none twice")
	t.Logf("stopped at block %d of %d–%d", stoppedAt, first, last)
}
