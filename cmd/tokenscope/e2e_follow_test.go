package main

import (
	"context"
	"crypto/ecdsa"
	"math/big"
	"slices"
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
// `worker` starts it, the swaps (Uniswap V2 and V3) served by the API (trade list, pool
// snapshots, token search and multi-detail, PnL), the workflow's query, and the follower's
// /metrics.
func TestChainFollowerServesSwapsThroughTheAPI(t *testing.T) {
	pgtest.Truncate(t, "chain_checkpoints")
	ka, kb := evmtest.NewKey(t), evmtest.NewKey(t)
	ch := evmtest.NewChain(t, true, ka, kb)
	m := evmtest.NewStandard(t, ch, ka, kb)
	// A V3 TKN/USDC pool at 1 USDC per TKN, full range, 1,000,000 of each.
	v3 := evmtest.NewV3(t, m.Market, m.WETH)
	pool3 := v3.Pool(m.TKN, m.USDC, evmtest.Q96)
	v3.Liquidity(pool3, evmtest.Units(1_000_000), evmtest.Units(1_000_000))
	e := newEnv(t, fastWorkflows, followChain(ch, m))

	aBuy := m.Swap(ka, m.TKNUSDC, m.USDC, evmtest.Units(1000))
	m.Swap(kb, m.TKNETH, m.WETH, evmtest.Units(1))
	m.Commit()
	bTKN := m.Balance(m.TKN, evmtest.Addr(kb))
	aSell := m.Swap(ka, m.TKNUSDC, m.TKN, aBuy.AmountOut)
	bBuy3 := v3.Swap(kb, m.USDC, m.TKN, evmtest.Units(500)) // through the V3 router
	m.Commit()
	bGot3 := new(big.Int).Sub(m.Balance(m.TKN, evmtest.Addr(kb)), bTKN)
	head := m.Commit() // one confirmation on top of the last swap
	ctx := context.Background()
	require.NoError(t, wire.StartChainFollowers(ctx, e.rt))
	t.Cleanup(func() {
		_ = e.rt.Temporal.TerminateWorkflow(context.Background(), workflows.ChainFollowWorkflowID(chain.Eth), "", "test over")
	})

	tkn := evmtest.Lower(m.TKN)
	var trades []any
	eventually(t, 60*time.Second, "the four TKN trades served", func() bool {
		v := okJSON(t, e.do(t, "GET", "/v2/trade/eth?tokenAddress="+tkn+"&limit=10", nil))
		trades, _ = v.(map[string]any)["data"].([]any)
		return len(trades) == 4
	})
	bySig := map[string]map[string]any{}
	for _, tr := range trades {
		bySig[tr.(map[string]any)["transactionSignature"].(string)] = tr.(map[string]any)
	}
	sell := bySig[strings.ToLower(aSell.Tx.Hex())]
	require.NotNil(t, sell, "A's sell served")
	assert.Equal(t, "SELL", sell["type"])
	assert.Equal(t, evmtest.Lower(evmtest.Addr(ka)), sell["accountOwnerAddress"])
	assertDec(t, evmtest.Whole(aSell.AmountIn).String(), sell["tokenAmount"], "tokenAmount")
	assertDec(t, evmtest.Whole(aSell.AmountOut).String(), sell["tokenAmountInUsd"], "tokenAmountInUsd")
	// B's V3 buy: 500 USDC for what B's TKN balance gained, the wallet being B, not the router.
	buy3 := bySig[strings.ToLower(bBuy3.Hash().Hex())]
	require.NotNil(t, buy3, "B's V3 buy served")
	assert.Equal(t, "BUY", buy3["type"])
	assert.Equal(t, evmtest.Lower(evmtest.Addr(kb)), buy3["accountOwnerAddress"])
	assert.Equal(t, evmtest.Lower(pool3), buy3["poolAddress"])
	assert.Equal(t, "UniswapV3", buy3["dexProtocolFamily"])
	assert.Equal(t, evmtest.Lower(v3.Factory), buy3["dexProgramAddress"])
	assertDec(t, evmtest.Whole(bGot3).String(), buy3["tokenAmount"], "V3 tokenAmount")
	assertDec(t, "500", buy3["tokenAmountInUsd"], "V3 tokenAmountInUsd")

	// Operation 4: the V3 pool's newest snapshot holds its token balances.
	snaps := okJSON(t, e.do(t, "GET", "/v2/dexpools/eth/"+evmtest.Lower(pool3)+"/snapshots?limit=1", nil))
	snapList := snaps.(map[string]any)["data"].([]any)
	require.Len(t, snapList, 1)
	snap := snapList[0].(map[string]any)
	assert.Equal(t, m.Balance(m.TKN, pool3).String(), snap["tokenA"].(map[string]any)["vaultAmount"], "TKN held by the V3 pool")
	assert.Equal(t, m.Balance(m.USDC, pool3).String(), snap["tokenB"].(map[string]any)["vaultAmount"], "USDC held by the V3 pool")
	// Operations 1 and 2 (v1 names the chain "ethereum"): the followed token is found and detailed,
	// its V3 pool among its liquidity.
	// A range's trades are served once it commits; its tokens' market rows (which search and the
	// details read) follow at the follower's flush, at the latest when the step ends.
	var addrs []string
	eventually(t, 30*time.Second, "the followed token found by search", func() bool {
		found := okJSON(t, e.do(t, "GET", "/v2/token/search?q=TKN&chains=eth", nil))
		addrs = addrs[:0]
		for _, it := range found.(map[string]any)["data"].([]any) {
			addrs = append(addrs, it.(map[string]any)["address"].(string))
		}
		return slices.Contains(addrs, tkn)
	})
	assert.Contains(t, addrs, tkn)
	multi := okJSON(t, e.doDex(t, "GET", "/v1/token/ethereum/multi?tokenAddresses="+tkn, nil)).([]any)
	require.Len(t, multi, 1)
	families := map[string]string{}
	for _, l := range multi[0].(map[string]any)["liquidity"].([]any) {
		families[l.(map[string]any)["poolAddress"].(string)] = l.(map[string]any)["protocolFamily"].(string)
	}
	assert.Equal(t, "UniswapV3", families[evmtest.Lower(pool3)])
	assert.Equal(t, "UniswapV2", families[evmtest.Lower(m.TKNUSDC)])

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
	assert.Equal(t, int64(4), st.Trades, "the four swaps, each once")

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
