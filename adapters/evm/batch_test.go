package evm_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/evm"
	"github.com/tokenscope/tokenscope/adapters/postgres/pgtest"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/ports"
	"github.com/tokenscope/tokenscope/workflows"
)

// rpcCall is one JSON-RPC call as a proxy saw it.
type rpcCall struct {
	ID     json.RawMessage   `json:"id"`
	Method string            `json:"method"`
	Params []json.RawMessage `json:"params"`
}

// rpcProxy stands between the follower and the chain's JSON-RPC over HTTP: it notes the calls of
// every request, answers every batch with an error when refuseBatches is set (a provider without
// batches), and lets rewrite change the result of a call of a method before the follower sees it.
type rpcProxy struct {
	target        string
	refuseBatches bool
	rewrite       map[string]func(json.RawMessage) json.RawMessage

	mu       sync.Mutex
	requests [][]rpcCall
	batched  []bool // whether each request was a batch
}

func newProxy(t *testing.T, target string) (*rpcProxy, string) {
	p := &rpcProxy{target: target, rewrite: map[string]func(json.RawMessage) json.RawMessage{}}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return p, srv.URL
}

func (p *rpcProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	batch := len(bytes.TrimSpace(body)) > 0 && bytes.TrimSpace(body)[0] == '['
	var calls []rpcCall
	if batch {
		err = json.Unmarshal(body, &calls)
	} else {
		calls = make([]rpcCall, 1)
		err = json.Unmarshal(body, &calls[0])
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	p.mu.Lock()
	p.requests = append(p.requests, calls)
	p.batched = append(p.batched, batch)
	p.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if batch && p.refuseBatches {
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"batch requests are not supported"}}`))
		return
	}
	resp, err := http.Post(p.target, "application/json", bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	out = p.rewritten(calls, batch, out)
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(out)
}

// rewritten applies rewrite to the answers of the calls whose method it names.
func (p *rpcProxy) rewritten(calls []rpcCall, batch bool, out []byte) []byte {
	methods := map[string]string{}
	for _, c := range calls {
		methods[string(c.ID)] = c.Method
	}
	var answers []map[string]json.RawMessage
	if batch {
		if json.Unmarshal(out, &answers) != nil {
			return out
		}
	} else {
		answers = make([]map[string]json.RawMessage, 1)
		if json.Unmarshal(out, &answers[0]) != nil {
			return out
		}
	}
	changed := false
	for _, a := range answers {
		if f, ok := p.rewrite[methods[string(a["id"])]]; ok && a["result"] != nil {
			a["result"], changed = f(a["result"]), true
		}
	}
	if !changed {
		return out
	}
	var b []byte
	if batch {
		b, _ = json.Marshal(answers)
	} else {
		b, _ = json.Marshal(answers[0])
	}
	return b
}

// calls counts the calls of method (with params[1], when given, equal to second) and the
// requests that carried them.
func (p *rpcProxy) calls(method, second string) (calls, requests int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range p.requests {
		n := 0
		for _, c := range r {
			if c.Method == method && (second == "" || len(c.Params) > 1 && string(c.Params[1]) == second) {
				n++
			}
		}
		calls += n
		if n > 0 {
			requests++
		}
	}
	return calls, requests
}

// batches counts the requests that were batches.
func (p *rpcProxy) batches() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, b := range p.batched {
		if b {
			n++
		}
	}
	return n
}

// httpWorld is the standard market on a chain served over HTTP, with swaps from three wallets
// in each of blocks blocks, and a follower over a proxy of that chain.
func httpWorld(t *testing.T, blocks int) (*world, *rpcProxy, []swapped, func(*world) *evm.Source) {
	keys := []*ecdsa.PrivateKey{newKey(t), newKey(t), newKey(t)}
	w := newWorldOn(t, true, keys...)
	var swaps []swapped
	for b := range blocks {
		for i, k := range keys {
			swaps = append(swaps, w.Swap(k, w.TKNETH, w.WETH, units(int64(b+i+1))))
		}
		w.Commit()
	}
	p, url := newProxy(t, w.URL)
	node, err := evm.Dial(context.Background(), url)
	require.NoError(t, err)
	t.Cleanup(node.Close)
	return w, p, swaps, func(w *world) *evm.Source { return evm.NewSource(node, w.cfg) }
}

func (w *world) followWith(t *testing.T, src *evm.Source, maxRange int64) {
	t.Helper()
	a := w.activities(nil)
	a.Sources[chain.Eth] = src
	w.follow(t, a, 0, maxRange)
}

// blockTime is a block's time in Unix milliseconds, as the chain tells it.
func (w *world) blockTime(t *testing.T, n int64) int64 {
	t.Helper()
	h, err := w.C.HeaderByNumber(context.Background(), big.NewInt(n))
	require.NoError(t, err)
	return int64(h.Time) * 1000
}

// Over JSON-RPC, the senders of the swaps are read by eth_getTransactionByBlockHashAndIndex (the
// block hash and index their logs name) in batches (one batch here), with the headers of the
// blocks with logs: no block is read with its transactions. Every swap is a trade of its wallet
// at its block's time.
func TestSendersAreReadInBatchesOfTransactionLookups(t *testing.T) {
	w, p, swaps, source := httpWorld(t, 4)
	w.followWith(t, source(w), 1000)

	for _, s := range swaps {
		tr := w.tradeOf(t, s)
		assert.Equal(t, lower(s.Wallet), tr.Wallet)
		assert.Equal(t, w.blockTime(t, tr.BlockHeight), tr.BlockTimestamp)
	}
	lookups, requests := p.calls("eth_getTransactionByBlockHashAndIndex", "")
	assert.Equal(t, len(swaps), lookups, "one lookup per swap transaction")
	assert.Equal(t, 1, requests, "all in one batch")
	full, _ := p.calls("eth_getBlockByNumber", "true")
	assert.Zero(t, full, "no block read with its transactions")
}

// The block times are the headers' (read in the same batches), not the logs' own (a node before
// geth 1.16 sends none): the trades' times are the blocks' without them.
func TestBlockTimesAreReadFromTheHeaders(t *testing.T) {
	w, p, swaps, source := httpWorld(t, 3)
	p.rewrite["eth_getLogs"] = func(r json.RawMessage) json.RawMessage {
		var logs []map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(r, &logs))
		for _, l := range logs {
			delete(l, "blockTimestamp")
		}
		b, err := json.Marshal(logs)
		require.NoError(t, err)
		return b
	}
	w.followWith(t, source(w), 1000)

	for _, s := range swaps {
		tr := w.tradeOf(t, s)
		assert.Equal(t, lower(s.Wallet), tr.Wallet)
		assert.Equal(t, w.blockTime(t, tr.BlockHeight), tr.BlockTimestamp)
	}
	headers, _ := p.calls("eth_getBlockByNumber", "false")
	assert.Greater(t, headers, 3, "the headers of the blocks with logs, besides the range's first and last")
	full, _ := p.calls("eth_getBlockByNumber", "true")
	assert.Zero(t, full)
}

// A node that refuses batches is read block by block (each block with its transactions and
// their senders) and call by call; after a few batches refused in a row the follower stops
// sending them.
func TestANodeThatRefusesBatchesIsReadBlockByBlock(t *testing.T) {
	w, p, swaps, source := httpWorld(t, 6)
	p.refuseBatches = true
	w.followWith(t, source(w), 1)

	for _, s := range swaps {
		assert.Equal(t, lower(s.Wallet), w.tradeOf(t, s).Wallet)
	}
	full, _ := p.calls("eth_getBlockByNumber", "true")
	assert.GreaterOrEqual(t, full, 6, "each block with swaps read whole")
	// The refusals come from the batches of one or two ranges (a range sends its headers and
	// lookups beside its new pools' calls); none is sent after them.
	assert.LessOrEqual(t, p.batches(), evm.BatchRefusals+1, "no batch sent after the refusals")
}

// A lookup answered with another block than its log named (a reorg between the two calls) is
// not taken: the range's blocks are read whole, with their own senders.
func TestATransactionInAnotherBlockThanItsLogIsReadFromTheBlock(t *testing.T) {
	w, p, swaps, source := httpWorld(t, 2)
	p.rewrite["eth_getTransactionByBlockHashAndIndex"] = func(r json.RawMessage) json.RawMessage {
		var tx map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(r, &tx))
		tx["blockHash"] = json.RawMessage(`"0x1111111111111111111111111111111111111111111111111111111111111111"`)
		tx["from"] = json.RawMessage(`"0x2222222222222222222222222222222222222222"`)
		b, err := json.Marshal(tx)
		require.NoError(t, err)
		return b
	}
	w.followWith(t, source(w), 1000)

	for _, s := range swaps {
		assert.Equal(t, lower(s.Wallet), w.tradeOf(t, s).Wallet, "the sender of the block read")
	}
	full, _ := p.calls("eth_getBlockByNumber", "true")
	assert.GreaterOrEqual(t, full, 2, "the blocks with logs read whole, the two with swaps among them")
}

// A range read again (read ahead of a write that failed, or of a step that stopped) by the same
// source maps its blocks as the first reading did: its pools and tokens are announced again.
func TestARangeReadAgainIsMappedAsTheFirstTime(t *testing.T) {
	k := newKey(t)
	w := newWorld(t, k)
	w.Swap(k, w.TKNETH, w.WETH, units(1))
	mid := w.Commit().Number.Int64()
	w.Swap(k, w.TKNUSDC, w.USDC, units(10))
	head := w.Commit().Number.Int64()

	src := evm.NewSource(w.C, w.cfg)
	ctx := context.Background()
	first, err := src.Read(ctx, 0, mid)
	require.NoError(t, err)
	for to := first.To; to < head; {
		seg, err := src.Read(ctx, to+1, head)
		require.NoError(t, err)
		to = seg.To
	}
	again, err := src.Read(ctx, 0, first.To)
	require.NoError(t, err)
	assert.Equal(t, first.To, again.To)
	created := 0
	for _, e := range first.Events {
		if _, ok := e.(chainevent.PoolCreated); ok {
			created++
		}
	}
	assert.Equal(t, 3, created, "the three pools announced in the first range")
	assert.Equal(t, first.Events, again.Events)
}

// A follower process whose every range's first write fails (the database drops it) and is
// retried by the same source, while the next range was already read ahead, writes every pool,
// token and swap once, as an uninterrupted run does.
func TestWritesThatFailAfterAReadAheadLoseNothing(t *testing.T) {
	keys := []*ecdsa.PrivateKey{newKey(t), newKey(t)}
	w := newWorld(t, keys...)
	var swaps []swapped
	for i := range 6 {
		swaps = append(swaps, w.Swap(keys[i%2], w.TKNETH, w.WETH, units(int64(i+1))))
		w.Commit()
	}
	f := &flaky{next: w.svc.Checkpointed(w.store), beforeCommit: map[int]bool{}}
	for i := 1; i < 400; i += 2 {
		f.beforeCommit[i] = true
	}
	a := w.activities(f) // one process: one source for every step
	for range 200 {
		r, err := a.FollowChain(context.Background(), workflows.FollowStepInput{Chain: chain.Eth, MaxRange: 3})
		if err == nil && r.CaughtUp {
			break
		}
		if err != nil {
			require.True(t, errors.Is(err, errCrash), "%v", err)
		}
	}
	for _, s := range swaps {
		assert.Equal(t, lower(s.Wallet), w.tradeOf(t, s).Wallet)
	}
	var pools, tokens int
	db := pgtest.Pool(t)
	require.NoError(t, db.QueryRow(context.Background(), "SELECT count(*) FROM pools WHERE chain = 'eth' AND address = ANY($1)",
		[]string{lower(w.Stable), lower(w.TKNUSDC), lower(w.TKNETH)}).Scan(&pools))
	require.NoError(t, db.QueryRow(context.Background(), "SELECT count(*) FROM tokens WHERE chain = 'eth' AND address = ANY($1)",
		[]string{lower(w.WETH), lower(w.USDC), lower(w.TKN)}).Scan(&tokens))
	assert.Equal(t, 3, pools)
	assert.Equal(t, 3, tokens)
	assert.Len(t, w.trades(t, ports.TradeFilter{PoolAddress: lower(w.TKNETH)}), 6)
}
