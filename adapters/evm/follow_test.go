package evm_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"
	"testing"
	"time"

	ethereum "github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/tokenscope/tokenscope/adapters/evm"
	"github.com/tokenscope/tokenscope/adapters/evm/evmtest"
	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/adapters/postgres/pgtest"
	"github.com/tokenscope/tokenscope/app/ingest"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/domain/dexlog"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/trade"
	"github.com/tokenscope/tokenscope/ports"
	"github.com/tokenscope/tokenscope/workflows"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

// world is the standard market on a simulated chain and a follower writing it into the
// package's database.
type world struct {
	*evmtest.Standard
	cfg    dexlog.Config
	store  *postgres.IngestStore
	chains *postgres.ChainStore
	reader *postgres.MarketReader
	svc    *ingest.Service
}

func newWorld(t *testing.T, wallets ...*ecdsa.PrivateKey) *world {
	return newWorldOn(t, false, wallets...)
}

// newWorldOn is newWorld; with http, the chain also serves JSON-RPC on loopback (URL).
func newWorldOn(t *testing.T, http bool, wallets ...*ecdsa.PrivateKey) *world {
	pgtest.Truncate(t, "chain_checkpoints")
	w := &world{Standard: evmtest.NewStandard(t, evmtest.NewChain(t, http, wallets...), wallets...)}
	w.cfg = dexlog.Config{Chain: chain.Eth, Native: lower(w.WETH), Stables: []string{lower(w.USDC)}, StablePool: lower(w.Stable)}
	pool := pgtest.Pool(t)
	w.store = postgres.NewIngestStore(pool)
	w.chains = postgres.NewChainStore(pool)
	w.reader = postgres.NewMarketReader(pool)
	w.svc = ingest.New(w.store, wallClock{}, 0)
	return w
}

var (
	lower  = evmtest.Lower
	addr   = evmtest.Addr
	units  = evmtest.Units
	whole  = evmtest.Whole
	newKey = evmtest.NewKey
)

type swapped = evmtest.Swapped

// activities is a follower process: a fresh source (nothing cached) over the chain.
func (w *world) activities(ing ports.CheckpointedIngester) *workflows.ChainActivities {
	if ing == nil {
		ing = w.svc.Checkpointed(w.store)
	}
	return &workflows.ChainActivities{Sources: map[chain.Chain]ports.ChainSource{chain.Eth: evm.NewSource(w.C, w.cfg)},
		Checkpoints: w.chains, Ingest: ing, Clock: wallClock{}}
}

// follow runs FollowChain steps until the follower has caught up.
func (w *world) follow(t *testing.T, a *workflows.ChainActivities, conf, maxRange int64) workflows.FollowStepResult {
	t.Helper()
	for range 1000 {
		r, err := a.FollowChain(context.Background(), workflows.FollowStepInput{Chain: chain.Eth, Confirmations: conf, MaxRange: maxRange})
		require.NoError(t, err)
		if r.CaughtUp {
			return r
		}
	}
	t.Fatal("the follower did not catch up")
	return workflows.FollowStepResult{}
}

func (w *world) trades(t *testing.T, f ports.TradeFilter) []trade.Trade {
	t.Helper()
	f.Chain = chain.Eth
	p, err := w.reader.ListTrades(context.Background(), f, ports.PageRequest{Limit: 100})
	require.NoError(t, err)
	return p.Items
}

func (w *world) tradeOf(t *testing.T, s swapped) trade.Trade {
	t.Helper()
	ts := w.trades(t, ports.TradeFilter{Signatures: []string{lower2(s.Tx)}})
	require.Len(t, ts, 1, "swap %s stored once", s.Tx.Hex())
	return ts[0]
}

func lower2(h common.Hash) string { return h.Hex() } // Hex is lower case already

func assertDec(t *testing.T, want, got decimal.Decimal, what string) {
	t.Helper()
	assert.True(t, want.Equal(got), "%s: want %s, got %s", what, want, got)
}

// Swaps from three wallets across three blocks become trades with hand-computed amounts, sides,
// prices and USD values; the pools' snapshots hold the chain's reserves; the wallets' PnL is
// what the swaps made; the checkpoint is the confirmed head.
func TestFollowerWritesSwapsAsTrades(t *testing.T) {
	ka, kb, kc := newKey(t), newKey(t), newKey(t)
	w := newWorld(t, ka, kb, kc)

	// Block S1: A buys TKN for 1000 USDC, B buys TKN for 1 WETH (ETH at 3000: 100 WETH / 300,000 USDC).
	aBuy := w.Swap(ka, w.TKNUSDC, w.USDC, units(1000))
	bBuy := w.Swap(kb, w.TKNETH, w.WETH, units(1))
	w.Commit()
	// Block S2: A sells all its TKN; C sells 10 WETH for USDC in the stable pool (ETH moves).
	aSell := w.Swap(ka, w.TKNUSDC, w.TKN, aBuy.AmountOut)
	cSell := w.Swap(kc, w.Stable, w.WETH, units(10))
	w.Commit()
	// Block S3: B sells all its TKN for WETH at the new ETH price.
	bSell := w.Swap(kb, w.TKNETH, w.TKN, bBuy.AmountOut)
	w.Commit()
	w.Commit()
	head := w.Commit() // two confirmations on top of S3

	r := w.follow(t, w.activities(nil), 2, 5)
	assert.Equal(t, head.Number.Int64()-2, r.Block)

	// A's buy: 1000 USDC for x TKN, a stable quote: 1000 USD, price 1000/x.
	x := whole(aBuy.AmountOut)
	tr := w.tradeOf(t, aBuy)
	assert.Equal(t, trade.Buy, tr.Side)
	assert.Equal(t, lower(addr(ka)), tr.Wallet)
	assert.Equal(t, lower(w.TKN), tr.TokenAddress)
	assert.Equal(t, lower(w.USDC), tr.SideTokenAddress)
	assert.Equal(t, "TKN", tr.TokenSymbol)
	assertDec(t, x, tr.TokenAmount, "A buy amount")
	assertDec(t, decimal.NewFromInt(1000), tr.TokenAmountInUSD, "A buy usd")
	assertDec(t, decimal.NewFromInt(1000).DivRound(x, 18), tr.TokenPriceInUSD, "A buy price")

	// B's buy: 1 WETH at 3000 USD.
	tr = w.tradeOf(t, bBuy)
	assert.Equal(t, trade.Buy, tr.Side)
	assert.Equal(t, lower(w.WETH), tr.SideTokenAddress)
	assertDec(t, decimal.NewFromInt(3000), tr.TokenAmountInUSD, "B buy usd")
	assertDec(t, decimal.NewFromInt(3000), tr.SideTokenPriceInUSD, "eth at S1")

	// C's sell of 10 WETH in the stable pool: WETH is the traded token, worth the USDC it got.
	tr = w.tradeOf(t, cSell)
	assert.Equal(t, trade.Sell, tr.Side)
	assert.Equal(t, lower(w.WETH), tr.TokenAddress)
	assertDec(t, decimal.NewFromInt(10), tr.TokenAmount, "C amount")
	assertDec(t, whole(cSell.AmountOut), tr.TokenAmountInUSD, "C usd")

	// B's sell at the ETH price after C's swap: (300,000 − C's USDC) / 110.
	eth2 := decimal.NewFromInt(300_000).Sub(whole(cSell.AmountOut)).DivRound(decimal.NewFromInt(110), 18)
	tr = w.tradeOf(t, bSell)
	assert.Equal(t, trade.Sell, tr.Side)
	assertDec(t, whole(bSell.AmountOut).Mul(eth2), tr.TokenAmountInUSD, "B sell usd")

	// PnL: A realized y − 1000 USD, B z·eth2 − 3000 USD; both hold nothing.
	pnl := func(k *ecdsa.PrivateKey) ports.PricedPosition {
		ps, err := w.reader.PricedPositions(context.Background(), chain.Eth, lower(addr(k)), []string{lower(w.TKN)}, nil)
		require.NoError(t, err)
		require.Len(t, ps, 1)
		return ps[0]
	}
	pa := pnl(ka)
	assertDec(t, whole(aSell.AmountOut).Sub(decimal.NewFromInt(1000)), pa.Position.RealizedProfitInUSD, "A realized")
	assert.True(t, pa.Position.Balance.IsZero())
	pb := pnl(kb)
	assertDec(t, whole(bSell.AmountOut).Mul(eth2).Sub(decimal.NewFromInt(3000)), pb.Position.RealizedProfitInUSD, "B realized")
	assert.Equal(t, int64(1), pb.Position.Buys)
	assert.Equal(t, int64(1), pb.Position.Sells)

	// The newest snapshot of each pool holds the reserves the chain reports now.
	for _, p := range []common.Address{w.Stable, w.TKNUSDC, w.TKNETH} {
		snaps, err := w.reader.ListSnapshots(context.Background(), chain.Eth, lower(p), nil, ports.PageRequest{Limit: 1})
		require.NoError(t, err)
		require.NotEmpty(t, snaps.Items)
		s := snaps.Items[0]
		got := map[string]string{s.TokenA.TokenAddress: string(s.TokenA.VaultAmount), s.TokenB.TokenAddress: string(s.TokenB.VaultAmount)}
		for tok := range w.Reserves[p] {
			assert.Equal(t, w.Balance(tok, p).String(), got[lower(tok)], "pool %s reserve of %s", p.Hex(), tok.Hex())
		}
	}
	// Every swap is one trade, nothing else.
	assert.Len(t, w.trades(t, ports.TradeFilter{TokenAddress: lower(w.TKN)}), 4)

	cp, ok, err := w.chains.Checkpoint(context.Background(), chain.Eth)
	require.NoError(t, err)
	require.True(t, ok)
	h, err := w.C.HeaderByNumber(context.Background(), big.NewInt(r.Block))
	require.NoError(t, err)
	assert.Equal(t, h.Hash().Hex(), cp.Hash, "the checkpoint names the last block written")
}

// flaky is an ingest path that fails like a crashing worker: at the calls in lostReply after
// committing (the reply is lost), at those in beforeCommit before anything is written.
type flaky struct {
	next                    ports.CheckpointedIngester
	calls                   int
	lostReply, beforeCommit map[int]bool
}

var errCrash = errors.New("worker killed")

func (f *flaky) IngestThrough(ctx context.Context, evs []chainevent.Event, cp chainevent.Checkpoint) (chainevent.Result, error) {
	f.calls++
	if f.beforeCommit[f.calls] {
		return chainevent.Result{}, errCrash
	}
	r, err := f.next.IngestThrough(ctx, evs, cp)
	if err == nil && f.lostReply[f.calls] {
		return r, errCrash
	}
	return r, err
}

// A follower that dies mid-backfill (after a commit whose reply is lost, and before a commit)
// and restarts as a new process resumes from its checkpoint: every swap is stored exactly once,
// valued as an uninterrupted run values it.
func TestFollowerResumesAfterACrashWithEverySwapOnce(t *testing.T) {
	keys := []*ecdsa.PrivateKey{newKey(t), newKey(t), newKey(t)}
	w := newWorld(t, keys...)
	var swaps []swapped
	for i := range 6 {
		k := keys[i%3]
		swaps = append(swaps, w.Swap(k, w.TKNETH, w.WETH, units(int64(i+1))))
		if i == 2 {
			swaps = append(swaps, w.Swap(k, w.Stable, w.WETH, units(5))) // ETH moves mid-backfill
		}
		w.Commit()
	}
	f := &flaky{next: w.svc.Checkpointed(w.store), lostReply: map[int]bool{3: true}, beforeCommit: map[int]bool{6: true}}
	crashes := 0
	for {
		// One block per segment, so the crashes fall between the swaps' blocks.
		_, err := w.activities(f).FollowChain(context.Background(), workflows.FollowStepInput{Chain: chain.Eth, MaxRange: 1})
		if err == nil {
			break
		}
		require.ErrorIs(t, err, errCrash)
		crashes++
	}
	assert.Equal(t, 2, crashes)
	w.follow(t, w.activities(nil), 0, 100)

	stored := w.trades(t, ports.TradeFilter{PoolAddress: lower(w.TKNETH)})
	assert.Len(t, stored, 6, "every TKN/WETH swap once")
	eth := decimal.NewFromInt(3000)
	for i, s := range swaps {
		tr := w.tradeOf(t, s)
		if s.Pair == w.Stable {
			// 100 + 1 + 2 + 3 WETH went into the stable pool's ETH price only through this swap.
			eth = decimal.NewFromInt(300_000).Sub(whole(s.AmountOut)).DivRound(decimal.NewFromInt(105), 18)
			continue
		}
		assertDec(t, whole(s.AmountIn).Mul(eth), tr.TokenAmountInUSD, fmt.Sprintf("swap %d usd", i))
	}
}

// A reorg within the confirmation depth never reaches the store: the swap of the dropped block
// is not a trade; the swap of the block that replaced it is.
func TestReorgWithinConfirmationsIsNeverWritten(t *testing.T) {
	kd, ke := newKey(t), newKey(t)
	w := newWorld(t, kd, ke)
	base := w.Commit()
	w.follow(t, w.activities(nil), 3, 100)

	dropped := w.Swap(kd, w.TKNETH, w.WETH, units(2))
	w.Commit()
	w.Commit()
	// The follower, 3 blocks behind the head, has not read the swap's block yet.
	w.follow(t, w.activities(nil), 3, 100)
	assert.Empty(t, w.trades(t, ports.TradeFilter{Wallet: lower(addr(kd))}))

	// Fork from base: D's two transactions are replaced by self-transfers with a higher fee,
	// so the dropped swap cannot be mined again; E swaps in the new chain instead.
	require.NoError(t, w.B.Fork(base.Hash()))
	nonce, err := w.C.NonceAt(context.Background(), addr(kd), nil)
	require.NoError(t, err)
	// The node resets its transaction pool to the forked head asynchronously; until it has, the
	// pool still counts D's nonce from the old head and refuses the replacements as too low. The
	// reset puts D's two transactions of the dropped blocks back in the pool: wait for them.
	require.Eventually(t, func() bool {
		n, err := w.C.PendingTransactionCount(context.Background())
		return err == nil && n >= 2
	}, 10*time.Second, 10*time.Millisecond, "the pool never moved to the forked head")
	self := addr(kd)
	w.SendNonce(kd, nonce, &self, nil, 10)
	w.SendNonce(kd, nonce+1, &self, nil, 10)
	w.Reserves[w.TKNETH][w.WETH].Sub(w.Reserves[w.TKNETH][w.WETH], dropped.AmountIn)
	w.Reserves[w.TKNETH][w.TKN].Add(w.Reserves[w.TKNETH][w.TKN], dropped.AmountOut)
	kept := w.Swap(ke, w.TKNETH, w.WETH, units(3))
	w.Commit()
	for range 5 {
		w.Commit()
	}
	w.follow(t, w.activities(nil), 3, 100)

	assert.Empty(t, w.trades(t, ports.TradeFilter{Wallet: lower(addr(kd))}), "no trade of the dropped block")
	tr := w.tradeOf(t, kept)
	assertDec(t, decimal.NewFromInt(3), tr.SideTokenAmount, "the new chain's swap")
}

// A reorg deeper than the confirmation depth (the parent of the next block is not the
// checkpointed block) halts the follower: a non-retryable ChainHalted error naming the chain
// and block, the halt stored (a restarted follower stays stopped, /readyz lists it), nothing of
// the new chain written.
func TestDeepReorgHaltsTheFollower(t *testing.T) {
	kd := newKey(t)
	w := newWorld(t, kd)
	base := w.Commit()
	w.Swap(kd, w.TKNETH, w.WETH, units(2))
	w.Commit()
	w.Commit()
	r := w.follow(t, w.activities(nil), 1, 100)
	require.Len(t, w.trades(t, ports.TradeFilter{Wallet: lower(addr(kd))}), 1)

	require.NoError(t, w.B.Fork(base.Hash()))
	for range 5 {
		w.Commit()
	}
	a := w.activities(nil)
	_, err := a.FollowChain(context.Background(), workflows.FollowStepInput{Chain: chain.Eth, Confirmations: 1, MaxRange: 100})
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, err, &appErr)
	assert.Equal(t, workflows.ChainHaltedError, appErr.Type())
	assert.True(t, appErr.NonRetryable())
	assert.Contains(t, err.Error(), "eth follower stopped at block")

	halted, err := w.chains.Halted(context.Background())
	require.NoError(t, err)
	require.Len(t, halted, 1)
	assert.Equal(t, chain.Eth, halted[0].Chain)
	assert.Equal(t, r.Block, halted[0].Block)
	cp, _, err := w.chains.Checkpoint(context.Background(), chain.Eth)
	require.NoError(t, err)
	assert.Equal(t, r.Block, cp.Block, "nothing of the new chain written")

	_, err = w.activities(nil).FollowChain(context.Background(), workflows.FollowStepInput{Chain: chain.Eth, Confirmations: 1})
	require.ErrorAs(t, err, &appErr)
	assert.Equal(t, workflows.ChainHaltedError, appErr.Type(), "a restarted follower stays stopped")

	// Resuming from a block below the fork point reads the new chain from there.
	back := base.Number.Int64()
	ok, err := w.chains.Resume(context.Background(), chain.Eth, &back)
	require.NoError(t, err)
	require.True(t, ok)
	w.follow(t, w.activities(nil), 1, 100)
	halted, err = w.chains.Halted(context.Background())
	require.NoError(t, err)
	assert.Empty(t, halted)
}

// limitedNode refuses eth_getLogs over more than max blocks as geth does past its result limit.
type limitedNode struct {
	evm.Node
	max    int64
	widths []int64
}

func (n *limitedNode) FilterLogs(ctx context.Context, q ethereum.FilterQuery) ([]types.Log, error) {
	w := q.ToBlock.Int64() - q.FromBlock.Int64() + 1
	n.widths = append(n.widths, w)
	if w > n.max {
		return nil, errors.New("query returned more than 10000 results")
	}
	return n.Node.FilterLogs(ctx, q)
}

// A backfill over a node that refuses wide ranges halves the range until the node answers,
// keeps that width, and still writes every swap once.
func TestBackfillHalvesTheRangeTheNodeRefuses(t *testing.T) {
	k := newKey(t)
	w := newWorld(t, k)
	var swaps []swapped
	for i := range 4 {
		swaps = append(swaps, w.Swap(k, w.TKNETH, w.WETH, units(int64(i+1))))
		w.Commit()
	}
	node := &limitedNode{Node: w.C, max: 3}
	a := w.activities(nil)
	a.Sources[chain.Eth] = evm.NewSource(node, w.cfg)
	w.follow(t, a, 0, 64)

	require.Greater(t, node.widths[0], int64(3), "the chain is longer than the node's limit")
	i := 0
	for ; node.widths[i] > 3; i++ {
		require.Less(t, i+1, len(node.widths))
		assert.Equal(t, node.widths[i]/2, node.widths[i+1], "a refused range is halved")
	}
	for _, width := range node.widths[i:] {
		assert.LessOrEqual(t, width, int64(4), "no wider than what it last accepted, doubled at most")
	}
	for _, s := range swaps {
		w.tradeOf(t, s)
	}
}

// revertingNode sends the metadata calls (name, symbol, decimals) of one token to a contract
// without those methods, so the chain's EVM answers them with a real revert.
type revertingNode struct {
	evm.Node
	token, instead common.Address
}

func (n revertingNode) CallContract(ctx context.Context, call ethereum.CallMsg, block *big.Int) ([]byte, error) {
	if call.To != nil && *call.To == n.token && len(call.Data) == 4 && !bytes.Equal(call.Data, totalSupplySelector) {
		call.To = &n.instead
	}
	return n.Node.CallContract(ctx, call, block)
}

var totalSupplySelector = crypto.Keccak256([]byte("totalSupply()"))[:4]

// A token whose name, symbol and decimals calls revert is stored with the fallbacks, and its
// pool is followed like any other.
func TestTokensThatRevertGetFallbackMetadata(t *testing.T) {
	k := newKey(t)
	w := newWorld(t, k)
	s := w.Swap(k, w.TKNETH, w.WETH, units(1))
	w.Commit()
	a := w.activities(nil)
	a.Sources[chain.Eth] = evm.NewSource(revertingNode{Node: w.C, token: w.TKN, instead: w.Factory}, w.cfg)
	w.follow(t, a, 0, 100)

	var name, symbol string
	var decimals int32
	require.NoError(t, pgtest.Pool(t).QueryRow(context.Background(),
		"SELECT name, symbol, decimals FROM tokens WHERE chain = 'eth' AND address = $1", lower(w.TKN)).Scan(&name, &symbol, &decimals))
	assert.Equal(t, evm.FallbackSymbol, symbol)
	assert.Equal(t, evm.FallbackSymbol, name)
	assert.Equal(t, int32(evm.FallbackDecimals), decimals)
	tr := w.tradeOf(t, s)
	assertDec(t, whole(s.AmountOut), tr.TokenAmount, "scaled by the fallback 18 decimals")
}

// Names and symbols come as ABI strings or, from early tokens, as zero-padded bytes32; NULs
// and invalid UTF-8 are dropped; anything else is "".
func TestDecodeText(t *testing.T) {
	str, err := abi.NewType("string", "", nil)
	require.NoError(t, err)
	b32, err := abi.NewType("bytes32", "", nil)
	require.NoError(t, err)
	packStr := func(s string) []byte {
		b, err := abi.Arguments{{Type: str}}.Pack(s)
		require.NoError(t, err)
		return b
	}
	var maker [32]byte
	copy(maker[:], "Maker")
	packed32, err := abi.Arguments{{Type: b32}}.Pack(maker)
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"string", packStr("USD Coin"), "USD Coin"},
		{"bytes32", packed32, "Maker"},
		{"NUL and invalid UTF-8", packStr("A\x00B\xffC"), "ABC"},
		{"empty answer", nil, ""},
		{"garbage", []byte{1, 2, 3}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, evm.DecodeText(tc.in)) })
	}
}

// A range with more logs than one batch holds is cut at the block where the limit falls; a
// single block over the limit is kept whole.
func TestCapLogsCutsAtABlockBoundary(t *testing.T) {
	logs := func(blocks ...uint64) []types.Log {
		var out []types.Log
		for _, b := range blocks {
			out = append(out, types.Log{BlockNumber: b})
		}
		return out
	}
	many := func(block uint64, n int) []uint64 {
		out := make([]uint64, n)
		for i := range out {
			out[i] = block
		}
		return out
	}
	small := logs(10, 11, 12)
	got, to := evm.CapLogs(small, 10, 20)
	assert.Len(t, got, 3)
	assert.Equal(t, int64(20), to, "under the limit: the whole range")

	spread := logs(append(append(many(10, evm.MaxLogsPerRead-1), 11, 11), 12)...)
	got, to = evm.CapLogs(spread, 10, 20)
	assert.Len(t, got, evm.MaxLogsPerRead-1)
	assert.Equal(t, int64(10), to, "block 11, where the limit falls, goes to the next range")

	huge := logs(append(many(10, evm.MaxLogsPerRead+2), 11)...)
	got, to = evm.CapLogs(huge, 10, 20)
	assert.Len(t, got, evm.MaxLogsPerRead+2)
	assert.Equal(t, int64(10), to, "one block over the limit is read whole")
}

// The checkpoint moves only from the block the writer read: a batch naming another previous
// checkpoint (a second follower of the chain, or one that read before a halt) is a Conflict and
// writes nothing, neither its events nor the checkpoint.
func TestCheckpointMovesOnlyFromTheBlockRead(t *testing.T) {
	k := newKey(t)
	w := newWorld(t, k)
	s := w.Swap(k, w.TKNETH, w.WETH, units(1))
	w.Commit()
	r := w.follow(t, w.activities(nil), 0, 100)
	ing := w.svc.Checkpointed(w.store)

	_, err := ing.IngestThrough(context.Background(), nil, chainevent.Checkpoint{Chain: chain.Eth, Block: r.Block + 5, Hash: "0xnew", Previous: r.Block - 1})
	f, ok := fault.As(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, fault.KindConflict, f.Kind)
	tr := w.tradeOf(t, s)
	tr.TransactionSignature, tr.InstructionIndex = "0xother", 0
	_, err = ing.IngestThrough(context.Background(), []chainevent.Event{chainevent.Trade{Trade: tr}},
		chainevent.Checkpoint{Chain: chain.Eth, Block: r.Block + 5, Hash: "0xnew", Previous: -1})
	require.Error(t, err, "a writer that saw no checkpoint cannot overwrite one")
	assert.Empty(t, w.trades(t, ports.TradeFilter{Signatures: []string{"0xother"}}), "nothing of the batch written")
	cp, _, err := w.chains.Checkpoint(context.Background(), chain.Eth)
	require.NoError(t, err)
	assert.Equal(t, r.Block, cp.Block)

	_, err = ing.IngestThrough(context.Background(), nil, chainevent.Checkpoint{Chain: chain.Eth, Block: r.Block + 5, Hash: "0xnew", Previous: r.Block})
	require.NoError(t, err)
	cp, _, err = w.chains.Checkpoint(context.Background(), chain.Eth)
	require.NoError(t, err)
	assert.Equal(t, r.Block+5, cp.Block)
	assert.Equal(t, "0xnew", cp.Hash)
}
