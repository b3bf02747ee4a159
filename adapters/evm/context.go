package evm

import (
	"context"
	"errors"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/rpc"
	"golang.org/x/sync/errgroup"
)

// blockFetchers is how many reads (block bodies, batches, eth_calls) a range has in flight at
// once.
const blockFetchers = 8

// SenderBatch is how many calls one JSON-RPC batch of the sender lookup carries (geth accepts
// 1,000 by default, hosted providers from 100 up).
const SenderBatch = 100

// rpcNode is a Node over a JSON-RPC client (ethclient.Client, the simulated backend's client):
// its calls can be sent as batches.
type rpcNode interface {
	Client() *rpc.Client
}

// senderNode is a Node that can tell a transaction's sender (ethclient: the `from` its node sent
// with the block).
type senderNode interface {
	TransactionSender(ctx context.Context, tx *types.Transaction, block common.Hash, index uint) (common.Address, error)
}

// blockContext is what decode needs of a range besides its logs: the hash and time of each block
// with logs (read by number: the chain's block now) and the sender of each swap's transaction.
type blockContext struct {
	// blocks holds the blocks with logs: their hash must be the one their logs name.
	blocks  map[uint64]blockInfo
	senders map[common.Hash]common.Address
}

type blockInfo struct {
	hash common.Hash
	time uint64
}

// time is the time of the log's block (Unix seconds).
func (bc blockContext) time(l types.Log) (uint64, error) {
	if b, ok := bc.blocks[l.BlockNumber]; ok {
		if b.hash != l.BlockHash {
			// The block changed between the two calls (a reorg at this depth): read again.
			return 0, fmt.Errorf("block %d is %s, its log named %s", l.BlockNumber, b.hash.Hex(), l.BlockHash.Hex())
		}
		return b.time, nil
	}
	return 0, fmt.Errorf("no header read for block %d", l.BlockNumber)
}

// sender is the signer of the log's transaction.
func (bc blockContext) sender(l types.Log) (common.Address, error) {
	a, ok := bc.senders[l.TxHash]
	if !ok {
		return common.Address{}, fmt.Errorf("no sender read for transaction %s", l.TxHash.Hex())
	}
	return a, nil
}

func isSwapLog(l types.Log) bool {
	return len(l.Topics) > 0 && (l.Topics[0] == topicSwap || l.Topics[0] == topicSwapV3)
}

// blockContext reads the range's block hashes and times and its swaps' senders. Over JSON-RPC it
// asks only for what it needs (batchContext): the header of each block with logs and the `from`
// of each swap's transaction. A node that refuses batches, or answers them in a way the batch
// path cannot use, and any other Node, read every block with logs whole with its transactions
// (fullBlocks).
func (s *Source) blockContext(ctx context.Context, raw []types.Log) (blockContext, error) {
	rn, ok := s.node.(rpcNode)
	if !ok || s.batchRefused.Load() >= batchRefusals {
		return s.fullBlocks(ctx, raw)
	}
	bc, sent, err := s.batchContext(ctx, rn.Client(), raw)
	if err == nil {
		if sent {
			s.batchRefused.Store(0)
		}
		return bc, nil
	}
	if ctx.Err() != nil {
		return blockContext{}, err
	}
	var be *batchError
	refused := !errors.As(err, &be)
	if bc, err = s.fullBlocks(ctx, raw); err != nil {
		return blockContext{}, err
	}
	if refused {
		// The node answers block reads but not the batch (a provider without batches,
		// or with a lower limit): after batchRefusals ranges in a row, stop asking.
		s.batchRefused.Add(1)
	}
	return bc, nil
}

// batchRefusals is how many batches in a row a node may refuse (while answering
// whole blocks) before the source stops trying it.
const batchRefusals = 3

// batchError is a batch that was sent and answered, with an answer the batch path rejects
// (a transaction not found, or found in another block than its log's: a reorg at this depth).
type batchError struct{ err error }

func (e *batchError) Error() string { return e.err.Error() }
func (e *batchError) Unwrap() error { return e.err }

// rpcTx is the part of an eth_getTransactionByBlockHashAndIndex answer the follower reads.
type rpcTx struct {
	Hash      common.Hash    `json:"hash"`
	From      common.Address `json:"from"`
	BlockHash *common.Hash   `json:"blockHash"`
}

// rpcHeader is the part of an eth_getBlockByNumber answer the follower reads.
type rpcHeader struct {
	Hash common.Hash    `json:"hash"`
	Time hexutil.Uint64 `json:"timestamp"`
}

// batchContext reads the sender of each swap's transaction by
// eth_getTransactionByBlockHashAndIndex (the block hash and index its log names: the node
// answers from the block it holds by that hash, cached after the first lookup, instead of
// searching its index and hashing the block's transactions as eth_getTransactionByHash does)
// and the header of each block with logs by eth_getBlockByNumber (without transactions: its
// hash and time), SenderBatch calls to a JSON-RPC batch, blockFetchers batches at a time. A
// lookup must answer the log's transaction in the log's block, and the header by number must be
// the block the logs name (the canonical chain still holds it); else (a reorg between the calls)
// the range's context is read again from whole blocks, which fail the same check. sent is false
// when there was nothing to ask.
func (s *Source) batchContext(ctx context.Context, c *rpc.Client, raw []types.Log) (bc blockContext, sent bool, err error) {
	var (
		txs     []types.Log // the first swap log of each transaction
		seenTx  = map[common.Hash]bool{}
		nums    []uint64
		numHash = map[uint64]common.Hash{}
	)
	for _, l := range raw {
		if l.Removed || len(l.Topics) == 0 {
			continue
		}
		if _, ok := numHash[l.BlockNumber]; !ok {
			numHash[l.BlockNumber] = l.BlockHash
			nums = append(nums, l.BlockNumber)
		}
		if isSwapLog(l) && !seenTx[l.TxHash] {
			seenTx[l.TxHash] = true
			txs = append(txs, l)
		}
	}
	bc = blockContext{blocks: make(map[uint64]blockInfo, len(nums)), senders: make(map[common.Hash]common.Address, len(txs))}
	if len(txs)+len(nums) == 0 {
		return bc, false, nil
	}
	gotTx := make([]*rpcTx, len(txs))
	gotHdr := make([]*rpcHeader, len(nums))
	elems := make([]rpc.BatchElem, 0, len(txs)+len(nums))
	for i, l := range txs {
		elems = append(elems, rpc.BatchElem{Method: "eth_getTransactionByBlockHashAndIndex",
			Args: []any{l.BlockHash, hexutil.Uint(l.TxIndex)}, Result: &gotTx[i]})
	}
	for i, n := range nums {
		elems = append(elems, rpc.BatchElem{Method: "eth_getBlockByNumber", Args: []any{hexutil.EncodeUint64(n), false}, Result: &gotHdr[i]})
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(blockFetchers)
	for lo := 0; lo < len(elems); lo += SenderBatch {
		batch := elems[lo:min(lo+SenderBatch, len(elems))]
		g.Go(func() error {
			if err := c.BatchCallContext(gctx, batch); err != nil {
				return fmt.Errorf("batch of %d calls: %w", len(batch), err)
			}
			for _, e := range batch {
				if e.Error != nil && !errors.Is(e.Error, rpc.ErrNoResult) {
					return fmt.Errorf("%s %v: %w", e.Method, e.Args[0], e.Error)
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return blockContext{}, true, err
	}
	for i, l := range txs {
		t := gotTx[i]
		if t == nil || t.BlockHash == nil || *t.BlockHash != l.BlockHash || t.Hash != l.TxHash {
			return blockContext{}, true, &batchError{fmt.Errorf("transaction %d of block %s is not %s", l.TxIndex, l.BlockHash.Hex(), l.TxHash.Hex())}
		}
		bc.senders[l.TxHash] = t.From
	}
	for i, n := range nums {
		b := gotHdr[i]
		if b == nil {
			return blockContext{}, true, &batchError{fmt.Errorf("block %d not found", n)}
		}
		if b.Hash != numHash[n] {
			return blockContext{}, true, &batchError{fmt.Errorf("block %d is %s, its log named %s", n, b.Hash.Hex(), numHash[n].Hex())}
		}
		bc.blocks[n] = blockInfo{hash: b.Hash, time: uint64(b.Time)}
	}
	return bc, true, nil
}

// fullBlocks reads every block with logs whole, blockFetchers at a time: its hash and time, and
// the senders of its swaps' transactions: the `from` a JSON-RPC node sent with them (ethclient
// keeps it), or, from any other Node, recovered from the signature.
func (s *Source) fullBlocks(ctx context.Context, raw []types.Log) (blockContext, error) {
	var nums []uint64
	for _, l := range raw {
		if len(nums) == 0 || nums[len(nums)-1] != l.BlockNumber {
			nums = append(nums, l.BlockNumber)
		}
	}
	got := make([]*types.Block, len(nums))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(blockFetchers)
	for i, n := range nums {
		g.Go(func() error {
			b, err := s.node.BlockByNumber(gctx, new(big.Int).SetUint64(n))
			if err != nil {
				return fmt.Errorf("block %d: %w", n, err)
			}
			got[i] = b
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return blockContext{}, err
	}
	bc := blockContext{blocks: make(map[uint64]blockInfo, len(nums)), senders: map[common.Hash]common.Address{}}
	byNum := make(map[uint64]*types.Block, len(nums))
	for i, n := range nums {
		byNum[n] = got[i]
		bc.blocks[n] = blockInfo{hash: got[i].Hash(), time: got[i].Time()}
	}
	sn, hasSender := s.node.(senderNode)
	for _, l := range raw {
		if l.Removed || !isSwapLog(l) {
			continue
		}
		if _, ok := bc.senders[l.TxHash]; ok {
			continue
		}
		b := byNum[l.BlockNumber]
		if b.Hash() != l.BlockHash {
			return blockContext{}, fmt.Errorf("block %d is %s, its log named %s", l.BlockNumber, b.Hash().Hex(), l.BlockHash.Hex())
		}
		t := b.Transaction(l.TxHash)
		if t == nil {
			return blockContext{}, fmt.Errorf("transaction %s not in block %d", l.TxHash.Hex(), b.NumberU64())
		}
		var a common.Address
		var err error
		if hasSender {
			a, err = sn.TransactionSender(ctx, t, b.Hash(), l.TxIndex)
		} else {
			a, err = types.Sender(s.signer, t)
		}
		if err != nil {
			return blockContext{}, fmt.Errorf("sender of %s: %w", l.TxHash.Hex(), err)
		}
		bc.senders[l.TxHash] = a
	}
	return bc, nil
}

// batchCalls sends, over JSON-RPC, an eth_call (at the latest block) of each method on each
// address, SenderBatch to a batch, blockFetchers batches at a time, and returns the answers by
// address and method. ok is false, and nothing is returned, when the node is not a JSON-RPC
// client, has refused batches, or answers a call with anything but data or an EVM failure (a
// revert): the caller then makes the calls one by one, which answer for themselves.
func (s *Source) batchCalls(ctx context.Context, a abi.ABI, addrs []common.Address, methods []string) ([][]callAnswer, bool) {
	rn, isRPC := s.node.(rpcNode)
	if !isRPC || s.batchRefused.Load() >= batchRefusals || len(addrs) == 0 {
		return nil, false
	}
	data := make([][]byte, len(methods))
	for j, m := range methods {
		b, err := a.Pack(m)
		if err != nil {
			return nil, false
		}
		data[j] = b
	}
	outs := make([]hexutil.Bytes, len(addrs)*len(methods))
	elems := make([]rpc.BatchElem, len(outs))
	for i, addr := range addrs {
		for j := range methods {
			k := i*len(methods) + j
			elems[k] = rpc.BatchElem{Method: "eth_call", Result: &outs[k],
				Args: []any{map[string]any{"from": common.Address{}, "to": addr, "input": hexutil.Bytes(data[j])}, "latest"}}
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(blockFetchers)
	for lo := 0; lo < len(elems); lo += SenderBatch {
		batch := elems[lo:min(lo+SenderBatch, len(elems))]
		g.Go(func() error { return rn.Client().BatchCallContext(gctx, batch) })
	}
	if err := g.Wait(); err != nil {
		if ctx.Err() == nil {
			s.batchRefused.Add(1)
		}
		return nil, false
	}
	ans := make([][]callAnswer, len(addrs))
	for i := range addrs {
		ans[i] = make([]callAnswer, len(methods))
		for j := range methods {
			k := i*len(methods) + j
			if err := elems[k].Error; err != nil {
				if !reverted(err) {
					return nil, false
				}
				ans[i][j].err = err
				continue
			}
			ans[i][j].out = outs[k]
		}
	}
	return ans, true
}
