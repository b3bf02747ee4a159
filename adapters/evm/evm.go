// Package evm is the chain follower's source for EVM chains (eth, bsc): it reads Uniswap V2-style
// logs (PairCreated, Sync, Swap) and Uniswap V3-style logs (PoolCreated, Initialize, Swap) over
// JSON-RPC with go-ethereum's ethclient, decodes them with accounts/abi and the contracts' own
// ABIs (@uniswap/v2-core, @uniswap/v3-core, abi/NOTICE.md), reads each new token's ERC-20
// metadata and each V3 pool's token balances by eth_call, and maps the logs to ingest events with
// domain/dexlog. It implements ports.ChainSource.
package evm

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"math/big"
	"sort"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	ethereum "github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/shopspring/decimal"
	"golang.org/x/sync/errgroup"

	"github.com/tokenscope/tokenscope/domain/dexlog"
	"github.com/tokenscope/tokenscope/ports"
)

//go:embed abi/*.json
var abiFS embed.FS

func mustABI(name string) abi.ABI {
	b, err := abiFS.ReadFile("abi/" + name)
	if err != nil {
		panic(err)
	}
	a, err := abi.JSON(bytes.NewReader(b))
	if err != nil {
		panic(fmt.Sprintf("abi %s: %v", name, err))
	}
	return a
}

var (
	pairABI    = mustABI("IUniswapV2Pair.json")
	factoryABI = mustABI("IUniswapV2Factory.json")
	erc20ABI   = mustABI("IERC20.json")
	poolV3ABI  = mustABI("IUniswapV3Pool.json")
	factV3ABI  = mustABI("IUniswapV3Factory.json")
	// bytes32Out decodes the metadata of tokens that return bytes32 instead of string (MKR, SAI).
	bytes32Out = abi.Arguments{{Type: mustType("bytes32")}}
)

func mustType(t string) abi.Type {
	typ, err := abi.NewType(t, "", nil)
	if err != nil {
		panic(err)
	}
	return typ
}

// Node is what the source calls on a JSON-RPC node: *ethclient.Client, and the simulated
// backend's client in tests.
type Node interface {
	ethereum.BlockNumberReader
	ethereum.LogFilterer
	HeaderByNumber(ctx context.Context, number *big.Int) (*types.Header, error)
	BlockByNumber(ctx context.Context, number *big.Int) (*types.Block, error)
	ChainID(ctx context.Context) (*big.Int, error)
	CodeAt(ctx context.Context, account common.Address, blockNumber *big.Int) ([]byte, error)
	CallContract(ctx context.Context, call ethereum.CallMsg, blockNumber *big.Int) ([]byte, error)
}

// Dial connects to a node's HTTP or WebSocket JSON-RPC URL.
func Dial(ctx context.Context, url string) (*ethclient.Client, error) {
	c, err := ethclient.DialContext(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("dial %s node: %w", redact(url), err)
	}
	return c, nil
}

// redact keeps a URL's scheme and host: RPC URLs often carry an API key in their path.
func redact(url string) string {
	if i := strings.Index(url, "://"); i >= 0 {
		rest := url[i+3:]
		if j := strings.IndexAny(rest, "/?"); j >= 0 {
			rest = rest[:j]
		}
		return url[:i+3] + rest
	}
	return "node"
}

// Source follows one chain's Uniswap V2- and V3-style pools. It is used by one follower at a time (the
// chain's workflow runs one activity at a time); its caches only save calls.
type Source struct {
	node    Node
	cfg     dexlog.Config
	mapper  *dexlog.Mapper
	signer  types.Signer
	notPair map[common.Address]bool
	// span is the widest block range the node has accepted since it last refused one; 0: none
	// refused yet. grow counts the successes at that width before trying twice as wide.
	span int64
	grow int
	next int64 // the block after the last segment read (its prices carry on)
	// batchRefused counts the batches in a row the node refused (blockContext, batchCalls:
	// they run side by side).
	batchRefused atomic.Int32
	// fit is the widest block range an eth_getLogs asks for on the source's own account: it
	// starts at firstFit and doubles after each read of that width with under half of
	// MaxLogsPerRead logs, so a backfill's first ranges are short and its first write starts
	// early (the follower reads the next range while writing one).
	fit int64
	// rest holds the logs read past the end of the last segment (a read cut at
	// MaxLogsPerRead): those of blocks restFrom..restTo, for a Read from restFrom.
	rest             []types.Log
	restFrom, restTo int64
}

// firstFit is the block range of a source's first eth_getLogs (fit).
const firstFit = 8

var _ ports.ChainReadAhead = (*Source)(nil)

// NewSource builds a source over node with the chain's pricing setup.
func NewSource(node Node, cfg dexlog.Config) *Source {
	return &Source{node: node, cfg: cfg, mapper: dexlog.NewMapper(cfg), notPair: map[common.Address]bool{}, fit: firstFit}
}

// Head implements ports.ChainSource.
func (s *Source) Head(ctx context.Context) (int64, error) {
	n, err := s.node.BlockNumber(ctx)
	if err != nil {
		return 0, fmt.Errorf("block number: %w", err)
	}
	return int64(n), nil
}

var (
	topicPairCreated = factoryABI.Events["PairCreated"].ID
	topicSync        = pairABI.Events["Sync"].ID
	topicSwap        = pairABI.Events["Swap"].ID
	topicPoolCreated = factV3ABI.Events["PoolCreated"].ID
	topicInitialize  = poolV3ABI.Events["Initialize"].ID
	topicSwapV3      = poolV3ABI.Events["Swap"].ID
	topics           = []common.Hash{topicPairCreated, topicSync, topicSwap, topicPoolCreated, topicInitialize, topicSwapV3}
)

// tooManyResults reports whether the node refused a getLogs for its size. Nodes word it
// differently: geth "query returned more than 10000 results", Alchemy/Infura "Log response size
// exceeded", BSC nodes "exceed maximum block range", others "block range is too wide".
func tooManyResults(err error) bool {
	m := strings.ToLower(err.Error())
	for _, s := range []string{"more than", "too many", "too large", "too wide", "exceed", "block range", "limit"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// logs reads the V2 and V3 logs of from..to, halving the range while the node refuses it as too
// large; it returns the end of the range it read.
func (s *Source) logs(ctx context.Context, from, to int64) ([]types.Log, int64, error) {
	if s.span > 0 && to-from+1 > s.span {
		to = from + s.span - 1
	}
	if s.fit > 0 && to-from+1 > s.fit {
		to = from + s.fit - 1
	}
	for {
		q := ethereum.FilterQuery{FromBlock: big.NewInt(from), ToBlock: big.NewInt(to), Topics: [][]common.Hash{topics}}
		logs, err := s.node.FilterLogs(ctx, q)
		if err == nil {
			if to-from+1 == s.fit && len(logs) < MaxLogsPerRead/2 {
				s.fit *= 2
			}
			if width := to - from + 1; s.span > 0 && width == s.span {
				if s.grow++; s.grow >= 8 {
					s.span, s.grow = 2*s.span, 0
				}
			}
			return logs, to, nil
		}
		if !tooManyResults(err) || to == from {
			return nil, 0, fmt.Errorf("get logs %d–%d: %w", from, to, err)
		}
		to = from + (to-from+1)/2 - 1
		s.span, s.grow = to-from+1, 0
	}
}

// ReadAhead implements ports.ChainReadAhead: one range may be read while the one before it is
// written; Read from a block it read before maps those blocks again as a first reading did
// (their pools and tokens announced again; prices from the stable pool's state before them).
func (s *Source) ReadAhead() int { return 1 }

// Read implements ports.ChainSource.
func (s *Source) Read(ctx context.Context, from, to int64) (ports.ChainSegment, error) {
	if s.signer == nil {
		id, err := s.node.ChainID(ctx)
		if err != nil {
			return ports.ChainSegment{}, fmt.Errorf("chain id: %w", err)
		}
		s.signer = types.LatestSignerForChainID(id)
	}
	if from < s.next {
		// Blocks read before and not written (a failed write, a range read ahead of a step
		// that stopped): their pools and tokens are announced again.
		s.mapper.Rewind(from)
	}
	// read: the logs in hand for blocks from..readTo, from a read before (rest) or the node.
	var read []types.Log
	var readTo int64
	var err error
	if s.rest != nil && from == s.restFrom {
		read, readTo = s.rest, s.restTo
		to = min(to, readTo)
	} else if read, readTo, err = s.logs(ctx, from, to); err != nil {
		return ports.ChainSegment{}, err
	} else {
		to = readTo
	}
	raw := read[:sort.Search(len(read), func(i int) bool { return int64(read[i].BlockNumber) > to })]
	raw, to = capLogs(raw, from, to)
	first, err := s.header(ctx, from)
	if err != nil {
		return ports.ChainSegment{}, err
	}
	last := first
	if to != from {
		if last, err = s.header(ctx, to); err != nil {
			return ports.ChainSegment{}, err
		}
	}
	if err := s.warmPrices(ctx, from); err != nil {
		return ports.ChainSegment{}, err
	}
	logs, err := s.decode(ctx, raw)
	if err != nil {
		return ports.ChainSegment{}, err
	}
	s.next = to + 1
	s.rest = nil
	if to < readTo {
		rest := read[len(raw):]
		if rest == nil {
			rest = []types.Log{}
		}
		s.rest, s.restFrom, s.restTo = rest, to+1, readTo
	}
	return ports.ChainSegment{From: from, To: to, First: ref(first), Last: ref(last), Events: s.mapper.Map(logs)}, nil
}

func ref(h *types.Header) ports.BlockRef {
	return ports.BlockRef{Number: h.Number.Int64(), Hash: strings.ToLower(h.Hash().Hex()), Parent: strings.ToLower(h.ParentHash.Hex())}
}

func (s *Source) header(ctx context.Context, n int64) (*types.Header, error) {
	h, err := s.node.HeaderByNumber(ctx, big.NewInt(n))
	if err != nil {
		return nil, fmt.Errorf("header %d: %w", n, err)
	}
	return h, nil
}

// warmPrices sets the native token's USD price as of the block before from, from the configured
// stable pool's reserves then, so a segment's prices do not depend on which segments this
// process read before (a retried segment is priced as the first attempt was). A node without
// that block's state (a pruned one, far back in a backfill) leaves the price a continuing read
// had, or none, until the stable pool's next Sync.
func (s *Source) warmPrices(ctx context.Context, from int64) error {
	if s.cfg.StablePool == "" || from == 0 {
		return nil
	}
	addr := common.HexToAddress(s.cfg.StablePool)
	if err := s.learnPair(ctx, addr, versionUnknown); err != nil {
		return err
	}
	p, ok := s.mapper.Pair(s.cfg.StablePool)
	if !ok {
		return nil
	}
	if p.Version == dexlog.V3 {
		sp, err := s.sqrtPrice(ctx, addr, big.NewInt(from-1))
		if err != nil {
			if from != s.next {
				s.mapper.ForgetNativePrice()
			}
			return nil
		}
		s.mapper.SetV3Price(s.cfg.StablePool, sp)
		return nil
	}
	r, err := s.reserves(ctx, addr, big.NewInt(from-1))
	if err != nil {
		if from != s.next {
			s.mapper.ForgetNativePrice()
		}
		return nil
	}
	s.mapper.SetReserves(s.cfg.StablePool, r[0], r[1])
	return nil
}

// sqrtPrice is a V3 pool's sqrtPriceX96 (slot0) at a block.
func (s *Source) sqrtPrice(ctx context.Context, pool common.Address, at *big.Int) (decimal.Decimal, error) {
	out, err := s.call(ctx, poolV3ABI, pool, at, "slot0")
	if err != nil {
		return decimal.Decimal{}, err
	}
	sp, ok := out[0].(*big.Int)
	if !ok {
		return decimal.Decimal{}, errors.New("slot0: unexpected types")
	}
	return decimal.NewFromBigInt(sp, 0), nil
}

func (s *Source) reserves(ctx context.Context, pair common.Address, at *big.Int) ([2]decimal.Decimal, error) {
	out, err := s.call(ctx, pairABI, pair, at, "getReserves")
	if err != nil {
		return [2]decimal.Decimal{}, err
	}
	if len(out) < 2 {
		return [2]decimal.Decimal{}, errors.New("getReserves: short answer")
	}
	r0, ok0 := out[0].(*big.Int)
	r1, ok1 := out[1].(*big.Int)
	if !ok0 || !ok1 {
		return [2]decimal.Decimal{}, errors.New("getReserves: unexpected types")
	}
	return [2]decimal.Decimal{decimal.NewFromBigInt(r0, 0), decimal.NewFromBigInt(r1, 0)}, nil
}

// call packs and sends an eth_call of method and unpacks its answer with the contract's ABI.
func (s *Source) call(ctx context.Context, a abi.ABI, to common.Address, at *big.Int, method string, args ...any) ([]any, error) {
	c := bind.NewBoundContract(to, a, s.node, nil, nil)
	var out []any
	if err := c.Call(&bind.CallOpts{Context: ctx, BlockNumber: at}, &out, method, args...); err != nil {
		return nil, err
	}
	return out, nil
}

// rawCall is an eth_call of a method without arguments, its answer left undecoded.
func (s *Source) rawCall(ctx context.Context, a abi.ABI, to common.Address, method string) ([]byte, error) {
	data, err := a.Pack(method)
	if err != nil {
		return nil, err
	}
	return s.node.CallContract(ctx, ethereum.CallMsg{To: &to, Data: data}, nil)
}

// versionUnknown asks learnPair to tell a V3 pool (it answers fee()) from a V2 pair.
const versionUnknown dexlog.Version = 255

// learnPair reads an unknown pair's tokens and factory, and the tokens' metadata; v is the log
// format its logs showed (versionUnknown: ask the contract). A contract that does not answer as
// a pair is remembered as none, and its logs are skipped. A node that fails is an error (the
// segment is retried).
func (s *Source) learnPair(ctx context.Context, addr common.Address, v dexlog.Version) error {
	key := strings.ToLower(addr.Hex())
	if s.mapper.KnowsPair(key) || s.notPair[addr] {
		return s.learnPairTokens(ctx, key)
	}
	p, ok, err := s.readPair(ctx, addr, v)
	if err != nil {
		return err
	}
	if !ok {
		s.notPair[addr] = true
		return nil
	}
	s.mapper.AddPair(p)
	return s.learnPairTokens(ctx, key)
}

// readPair reads a pool's tokens and factory (and, v being versionUnknown, whether it is a V3
// pool); ok is false for a contract that does not answer as one. It only calls the node.
func (s *Source) readPair(ctx context.Context, addr common.Address, v dexlog.Version) (p dexlog.Pair, ok bool, err error) {
	key := strings.ToLower(addr.Hex())
	if v == versionUnknown {
		v = dexlog.V2
		if _, err := s.call(ctx, poolV3ABI, addr, nil, "fee"); err == nil {
			v = dexlog.V3
		} else if !reverted(err) && !errors.Is(err, bind.ErrNoCode) {
			return p, false, fmt.Errorf("pool %s fee: %w", key, err)
		}
	}
	ans := make([]callAnswer, len(pairMethods))
	for i, m := range pairMethods {
		ans[i].out, ans[i].err = s.rawCall(ctx, pairABI, addr, m)
		if ans[i].err != nil {
			break // the answers after it are not read
		}
	}
	return pairFrom(addr, v, ans)
}

// callAnswer is an eth_call's answer: the data returned, or the error of the node or the EVM.
type callAnswer struct {
	out []byte
	err error
}

var (
	// pairMethods are the calls that read a pool (pairFrom).
	pairMethods = []string{"token0", "token1", "factory"}
	// tokenMethods are the calls that read a token's metadata (tokenFrom).
	tokenMethods = []string{"name", "symbol", "decimals", "totalSupply"}
)

// pairFrom is the pool the answers to pairMethods describe; ok is false for a contract that does
// not answer as one (a revert, no code, an answer that is not an address). A node failure is an
// error.
func pairFrom(addr common.Address, v dexlog.Version, ans []callAnswer) (p dexlog.Pair, ok bool, err error) {
	key := strings.ToLower(addr.Hex())
	var got [3]common.Address
	for i, m := range pairMethods {
		if err := ans[i].err; err != nil {
			var de rpcDataError
			if errors.As(err, &de) || errors.Is(err, bind.ErrNoCode) || isDecodeError(err) {
				return p, false, nil
			}
			return p, false, fmt.Errorf("pair %s %s: %w", key, m, err)
		}
		out, err := pairABI.Unpack(m, ans[i].out)
		if err != nil || len(out) == 0 {
			return p, false, nil // no code answers nothing
		}
		a, isAddr := out[0].(common.Address)
		if !isAddr {
			return p, false, nil
		}
		got[i] = a
	}
	return dexlog.Pair{Address: key, Token0: strings.ToLower(got[0].Hex()), Token1: strings.ToLower(got[1].Hex()),
		Factory: strings.ToLower(got[2].Hex()), Version: v}, true, nil
}

// prefetch learns the pools the logs name and the tokens of those and of the pools they create,
// which decode would otherwise read one call at a time: a backfill meets thousands of them (each
// pool three eth_calls, each token four). Over JSON-RPC the calls go in batches (batchCalls);
// else, or when the node does not answer them so, blockFetchers pools or tokens at a time.
func (s *Source) prefetch(ctx context.Context, raw []types.Log) error {
	type want struct {
		addr common.Address
		v    dexlog.Version
	}
	var pools []want
	seen := map[common.Address]bool{}
	var tokens []common.Address
	seenTok := map[common.Address]bool{}
	addToken := func(a common.Address) {
		if !seenTok[a] && !s.mapper.KnowsToken(strings.ToLower(a.Hex())) {
			seenTok[a] = true
			tokens = append(tokens, a)
		}
	}
	for _, l := range raw {
		if len(l.Topics) == 0 {
			continue
		}
		switch l.Topics[0] {
		case topicPairCreated, topicPoolCreated:
			if len(l.Topics) >= 3 { // token0 and token1 are indexed in both
				addToken(common.BytesToAddress(l.Topics[1].Bytes()))
				addToken(common.BytesToAddress(l.Topics[2].Bytes()))
			}
		case topicSync, topicSwap, topicInitialize, topicSwapV3:
			if seen[l.Address] || s.notPair[l.Address] || s.mapper.KnowsPair(strings.ToLower(l.Address.Hex())) {
				continue
			}
			seen[l.Address] = true
			v := dexlog.V2
			if l.Topics[0] == topicInitialize || l.Topics[0] == topicSwapV3 {
				v = dexlog.V3
			}
			pools = append(pools, want{l.Address, v})
		}
	}
	type readP struct {
		p  dexlog.Pair
		ok bool
	}
	got := make([]readP, len(pools))
	addrs := make([]common.Address, len(pools))
	for i, w := range pools {
		addrs[i] = w.addr
	}
	if ans, ok := s.batchCalls(ctx, pairABI, addrs, pairMethods); ok {
		for i, w := range pools {
			p, isPair, err := pairFrom(w.addr, w.v, ans[i])
			if err != nil {
				return err
			}
			got[i] = readP{p, isPair}
		}
	} else {
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(blockFetchers)
		for i, w := range pools {
			g.Go(func() error {
				p, ok, err := s.readPair(gctx, w.addr, w.v)
				got[i] = readP{p, ok}
				return err
			})
		}
		if err := g.Wait(); err != nil {
			return err
		}
	}
	for i, r := range got {
		if !r.ok {
			s.notPair[pools[i].addr] = true
			continue
		}
		s.mapper.AddPair(r.p)
		addToken(common.HexToAddress(r.p.Token0))
		addToken(common.HexToAddress(r.p.Token1))
	}
	mds := make([]dexlog.Token, len(tokens))
	if ans, ok := s.batchCalls(ctx, erc20ABI, tokens, tokenMethods); ok {
		for i, a := range tokens {
			md, err := tokenFrom(a, ans[i])
			if err != nil {
				return err
			}
			mds[i] = md
		}
	} else {
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(blockFetchers)
		for i, a := range tokens {
			g.Go(func() error {
				md, err := s.token(gctx, a)
				mds[i] = md
				return err
			})
		}
		if err := g.Wait(); err != nil {
			return err
		}
	}
	for _, md := range mds {
		s.mapper.AddToken(md)
	}
	return nil
}

// rpcDataError is a JSON-RPC error with revert data: the call reverted.
type rpcDataError interface {
	Error() string
	ErrorData() any
}

func isDecodeError(err error) bool {
	m := err.Error()
	return strings.Contains(m, "abi:") || strings.Contains(m, "execution reverted") || strings.Contains(m, "no contract code")
}

func (s *Source) learnPairTokens(ctx context.Context, pairKey string) error {
	p, ok := s.mapper.Pair(pairKey)
	if !ok {
		return nil
	}
	for _, t := range []string{p.Token0, p.Token1} {
		if s.mapper.KnowsToken(t) {
			continue
		}
		md, err := s.token(ctx, common.HexToAddress(t))
		if err != nil {
			return err
		}
		s.mapper.AddToken(md)
	}
	return nil
}

// decode turns raw logs into dexlog logs: each swap's sender and each block's time are read
// once (blockContext), each unknown pair and token once.
func (s *Source) decode(ctx context.Context, raw []types.Log) ([]dexlog.Log, error) {
	// The blocks' context and the new pools' and tokens' metadata are read side by side.
	var bc blockContext
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		bc, err = s.blockContext(gctx, raw)
		return err
	})
	g.Go(func() error { return s.prefetch(gctx, raw) })
	if err := g.Wait(); err != nil {
		return nil, err
	}
	out := make([]dexlog.Log, 0, len(raw))
	for _, l := range raw {
		if l.Removed || len(l.Topics) == 0 {
			continue
		}
		t, err := bc.time(l)
		if err != nil {
			return nil, err
		}
		dl := dexlog.Log{Block: dexlog.Block{Number: int64(l.BlockNumber), Hash: strings.ToLower(l.BlockHash.Hex()),
			Time: int64(t) * 1000}, TxHash: strings.ToLower(l.TxHash.Hex()), Index: int32(l.Index),
			Address: strings.ToLower(l.Address.Hex())}
		switch l.Topics[0] {
		case topicPairCreated:
			var ev struct {
				Token0, Token1, Pair common.Address
				Arg3                 *big.Int
			}
			if err := unpack(factoryLogs, &ev, "PairCreated", l); err != nil {
				continue // same topic, other layout: not a V2 factory
			}
			p := dexlog.Pair{Address: strings.ToLower(ev.Pair.Hex()), Factory: dl.Address,
				Token0: strings.ToLower(ev.Token0.Hex()), Token1: strings.ToLower(ev.Token1.Hex())}
			s.mapper.AddPair(p)
			if err := s.learnPairTokens(ctx, p.Address); err != nil {
				return nil, err
			}
			dl.PairCreated = &dexlog.PairCreated{Pair: p}
		case topicSync:
			var ev struct{ Reserve0, Reserve1 *big.Int }
			if err := unpack(pairLogs, &ev, "Sync", l); err != nil {
				continue
			}
			if err := s.learnPair(ctx, l.Address, dexlog.V2); err != nil {
				return nil, err
			}
			dl.Sync = &dexlog.Sync{Reserve0: decimal.NewFromBigInt(ev.Reserve0, 0), Reserve1: decimal.NewFromBigInt(ev.Reserve1, 0)}
		case topicSwap:
			var ev struct {
				Sender                                       common.Address
				Amount0In, Amount1In, Amount0Out, Amount1Out *big.Int
				To                                           common.Address
			}
			if err := unpack(pairLogs, &ev, "Swap", l); err != nil {
				continue
			}
			if err := s.learnPair(ctx, l.Address, dexlog.V2); err != nil {
				return nil, err
			}
			from, err := bc.sender(l)
			if err != nil {
				return nil, err
			}
			dl.From = strings.ToLower(from.Hex())
			dl.Swap = &dexlog.Swap{Amount0In: decimal.NewFromBigInt(ev.Amount0In, 0), Amount1In: decimal.NewFromBigInt(ev.Amount1In, 0),
				Amount0Out: decimal.NewFromBigInt(ev.Amount0Out, 0), Amount1Out: decimal.NewFromBigInt(ev.Amount1Out, 0)}
		case topicPoolCreated:
			var ev struct {
				Token0, Token1   common.Address
				Fee, TickSpacing *big.Int
				Pool             common.Address
			}
			if err := unpack(factV3Logs, &ev, "PoolCreated", l); err != nil {
				continue
			}
			p := dexlog.Pair{Address: strings.ToLower(ev.Pool.Hex()), Factory: dl.Address,
				Token0: strings.ToLower(ev.Token0.Hex()), Token1: strings.ToLower(ev.Token1.Hex()), Version: dexlog.V3}
			s.mapper.AddPair(p)
			if err := s.learnPairTokens(ctx, p.Address); err != nil {
				return nil, err
			}
			dl.PoolCreated = &dexlog.PoolCreated{Pair: p}
		case topicInitialize:
			var ev struct{ SqrtPriceX96, Tick *big.Int }
			if err := unpack(poolV3Logs, &ev, "Initialize", l); err != nil {
				continue
			}
			if err := s.learnPair(ctx, l.Address, dexlog.V3); err != nil {
				return nil, err
			}
			dl.Initialize = &dexlog.Initialize{State: dexlog.V3State{SqrtPriceX96: decimal.NewFromBigInt(ev.SqrtPriceX96, 0)}}
		case topicSwapV3:
			var ev struct {
				Sender, Recipient                               common.Address
				Amount0, Amount1, SqrtPriceX96, Liquidity, Tick *big.Int
			}
			if err := unpack(poolV3Logs, &ev, "Swap", l); err != nil {
				continue
			}
			if err := s.learnPair(ctx, l.Address, dexlog.V3); err != nil {
				return nil, err
			}
			from, err := bc.sender(l)
			if err != nil {
				return nil, err
			}
			dl.From = strings.ToLower(from.Hex())
			dl.SwapV3 = &dexlog.SwapV3{Amount0: decimal.NewFromBigInt(ev.Amount0, 0), Amount1: decimal.NewFromBigInt(ev.Amount1, 0),
				State: dexlog.V3State{SqrtPriceX96: decimal.NewFromBigInt(ev.SqrtPriceX96, 0)}}
		default:
			continue
		}
		out = append(out, dl)
	}
	if err := s.v3Balances(ctx, out); err != nil {
		return nil, err
	}
	return out, nil
}

// poolBlock is a V3 pool at a block.
type poolBlock struct {
	pool  string
	block int64
}

// v3Balances reads, blockFetchers at a time, the token balances of each V3 pool at the end of
// each block it has an Initialize or Swap in (two eth_call balanceOf) and sets them on those
// logs. A node without that block's state (pruned) or a token whose balanceOf reverts leaves
// them unknown (the snapshot's values are then zero); any other failure is an error.
func (s *Source) v3Balances(ctx context.Context, logs []dexlog.Log) error {
	var keys []poolBlock
	seen := map[poolBlock]bool{}
	for _, l := range logs {
		if l.Initialize == nil && l.SwapV3 == nil {
			continue
		}
		k := poolBlock{l.Address, l.Block.Number}
		if p, ok := s.mapper.Pair(l.Address); ok && p.Version == dexlog.V3 && !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	got := make([]*[2]decimal.Decimal, len(keys))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(blockFetchers)
	for i, k := range keys {
		g.Go(func() error {
			p, _ := s.mapper.Pair(k.pool)
			var b [2]decimal.Decimal
			for j, tok := range []string{p.Token0, p.Token1} {
				out, err := s.call(gctx, erc20ABI, common.HexToAddress(tok), big.NewInt(k.block), "balanceOf", common.HexToAddress(k.pool))
				if err != nil {
					if reverted(err) || stateUnavailable(err) {
						return nil
					}
					return fmt.Errorf("balance of %s in pool %s at %d: %w", tok, k.pool, k.block, err)
				}
				n, ok := out[0].(*big.Int)
				if !ok {
					return nil
				}
				b[j] = decimal.NewFromBigInt(n, 0)
			}
			got[i] = &b
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	byKey := make(map[poolBlock]*[2]decimal.Decimal, len(keys))
	for i, k := range keys {
		byKey[k] = got[i]
	}
	for i := range logs {
		l := &logs[i]
		b := byKey[poolBlock{l.Address, l.Block.Number}]
		switch {
		case l.Initialize != nil:
			l.Initialize.State.Balances = b
		case l.SwapV3 != nil:
			l.SwapV3.State.Balances = b
		}
	}
	return nil
}

// stateUnavailable reports whether a call failed because the node no longer has the block's
// state (a non-archive node, far back): geth "missing trie node" or "historical state … is not
// available", others "state … pruned" or "not available".
func stateUnavailable(err error) bool {
	m := strings.ToLower(err.Error())
	for _, s := range []string{"missing trie node", "historical state", "pruned", "not available", "state unavailable"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// MaxLogsPerRead bounds one segment's logs, so one ingest transaction stays the size of a
// stream's batch: a range with more is cut at the block where the limit falls (a single block
// with more is read whole).
const MaxLogsPerRead = 5000

// capLogs cuts logs (in block order) of from..to to MaxLogsPerRead at a block boundary and
// returns the end of the range they cover.
func capLogs(raw []types.Log, from, to int64) ([]types.Log, int64) {
	if len(raw) <= MaxLogsPerRead {
		return raw, to
	}
	cut := raw[MaxLogsPerRead].BlockNumber
	if int64(cut) <= from {
		i := MaxLogsPerRead
		for i < len(raw) && raw[i].BlockNumber == cut {
			i++
		}
		return raw[:i], int64(cut)
	}
	i := sort.Search(len(raw), func(i int) bool { return raw[i].BlockNumber >= cut })
	return raw[:i], int64(cut) - 1
}

// Log decoders of the contracts' ABIs (they only read their ABI: shared).
var (
	pairLogs    = logDecoder(pairABI)
	factoryLogs = logDecoder(factoryABI)
	poolV3Logs  = logDecoder(poolV3ABI)
	factV3Logs  = logDecoder(factV3ABI)
)

func logDecoder(a abi.ABI) *bind.BoundContract {
	return bind.NewBoundContract(common.Address{}, a, nil, nil, nil)
}

// unpack decodes a log's indexed topics and data into out with the contract's ABI.
func unpack(c *bind.BoundContract, out any, event string, l types.Log) error {
	return c.UnpackLog(out, event, l)
}

// Metadata fallbacks for tokens that do not answer a call (docs/engine.md, "Chain follower").
const (
	FallbackSymbol   = "UNKNOWN"
	FallbackDecimals = 18
	maxDecimals      = 36
	maxTextRunes     = 200
)

// token reads an ERC-20's name, symbol, decimals and total supply, each tolerant of a revert, an
// empty answer and the bytes32 strings of early tokens.
func (s *Source) token(ctx context.Context, addr common.Address) (dexlog.Token, error) {
	ans := make([]callAnswer, len(tokenMethods))
	for i, m := range tokenMethods {
		ans[i].out, ans[i].err = s.rawCall(ctx, erc20ABI, addr, m)
		if ans[i].err != nil && !reverted(ans[i].err) {
			break // a node failure: the answers after it are not read
		}
	}
	return tokenFrom(addr, ans)
}

// tokenFrom is the token the answers to tokenMethods describe: a method that reverts or answers
// what does not decode takes its fallback; a node failure is an error.
func tokenFrom(addr common.Address, ans []callAnswer) (dexlog.Token, error) {
	t := dexlog.Token{Address: strings.ToLower(addr.Hex()), Decimals: FallbackDecimals, TotalSupply: decimal.Zero}
	for i, m := range tokenMethods {
		if err := ans[i].err; err != nil && !reverted(err) {
			if i < 2 {
				return t, fmt.Errorf("token %s %s: %w", addr.Hex(), m, err)
			}
			return t, fmt.Errorf("token %s %s: %w", t.Address, m, err)
		}
	}
	text := func(a callAnswer) string {
		if a.err != nil {
			return ""
		}
		return DecodeText(a.out)
	}
	t.Name, t.Symbol = text(ans[0]), text(ans[1])
	if t.Symbol == "" {
		t.Symbol = FallbackSymbol
	}
	if t.Name == "" {
		t.Name = t.Symbol
	}
	if a := ans[2]; a.err == nil {
		if v, err := erc20ABI.Unpack("decimals", a.out); err == nil && len(v) == 1 {
			if d, ok := v[0].(uint8); ok {
				t.Decimals = int32(min(d, maxDecimals))
			}
		}
	}
	if a := ans[3]; a.err == nil {
		if v, err := erc20ABI.Unpack("totalSupply", a.out); err == nil && len(v) == 1 {
			if n, ok := v[0].(*big.Int); ok {
				t.TotalSupply = decimal.NewFromBigInt(n, 0)
			}
		}
	}
	return t, nil
}

// reverted reports whether a call failed in the EVM (a revert, no such method) rather than at
// the node (unreachable, overloaded), which is retried.
func reverted(err error) bool {
	var de rpcDataError
	return errors.As(err, &de) || isDecodeError(err)
}

// DecodeText decodes an ERC-20 name or symbol answer: an ABI string, or a bytes32 padded with
// zero bytes (early tokens); "" for anything else. The result holds no NUL and is valid UTF-8,
// at most 200 runes.
func DecodeText(b []byte) string {
	var s string
	if v, err := erc20ABI.Unpack("name", b); err == nil && len(v) == 1 {
		s, _ = v[0].(string)
	} else if v, err := bytes32Out.Unpack(b); err == nil && len(v) == 1 {
		if w, ok := v[0].([32]byte); ok {
			s = string(bytes.TrimRight(w[:], "\x00"))
		}
	}
	s = strings.TrimSpace(strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", ""), ""))
	if utf8.RuneCountInString(s) > maxTextRunes {
		s = string([]rune(s)[:maxTextRunes])
	}
	return s
}
