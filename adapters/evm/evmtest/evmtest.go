// Package evmtest is a real EVM for tests: go-ethereum's simulated chain in process (optionally
// with its JSON-RPC on a loopback HTTP address, as a node would serve it), with the compiled
// Uniswap V2 factory and OpenZeppelin ERC-20s that npm packages ship (testdata; licences in
// ../abi/NOTICE.md) deployed by transactions, and swaps made the way a trader makes them
// (tokens sent to the pair, then pair.swap). Tests only.
package evmtest

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"embed"
	"encoding/json"
	"math/big"
	"net"
	"strconv"
	"strings"
	"time"

	ethereum "github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/eth/ethconfig"
	"github.com/ethereum/go-ethereum/ethclient/simulated"
	"github.com/ethereum/go-ethereum/node"
	"github.com/ethereum/go-ethereum/rpc"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"
)

//go:embed testdata/*.json
var files embed.FS

// TB is what the package needs of a test: *testing.T and *testing.B are ones; a program that
// builds a chain (the benchmark's follow rows) passes its own.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
	FailNow()
	Cleanup(func())
}

// Artifact is a compiled contract: its ABI and creation bytecode.
type Artifact struct {
	ABI      abi.ABI
	Bytecode []byte
}

func load(t TB, name string) Artifact {
	t.Helper()
	raw, err := files.ReadFile("testdata/" + name)
	require.NoError(t, err)
	if bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")) { // an ABI alone
		a, err := abi.JSON(bytes.NewReader(raw))
		require.NoError(t, err)
		return Artifact{ABI: a}
	}
	var j struct {
		ABI      json.RawMessage `json:"abi"`
		Bytecode string          `json:"bytecode"`
	}
	require.NoError(t, json.Unmarshal(raw, &j))
	a, err := abi.JSON(bytes.NewReader(j.ABI))
	require.NoError(t, err)
	return Artifact{ABI: a, Bytecode: common.FromHex(j.Bytecode)}
}

var (
	createPairSelector = crypto.Keccak256([]byte("createPair(address,address)"))[:4]
	createPoolSelector = crypto.Keccak256([]byte("createPool(address,address,uint24)"))[:4]
	// the position manager's mint: a pool's first position initializes its ticks and an NFT
	positionMintSelector = crypto.Keccak256([]byte("mint((address,address,uint24,int24,int24,uint256,uint256,uint256,uint256,address,uint256))"))[:4]
)

var ether = new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil)

// Units is n whole tokens of 18 decimals, in smallest units.
func Units(n int64) *big.Int { return new(big.Int).Mul(big.NewInt(n), ether) }

// Whole is a raw 18-decimal amount in whole tokens, exactly.
func Whole(raw *big.Int) decimal.Decimal { return decimal.NewFromBigInt(raw, -18) }

// Lower is an address as the follower stores it.
func Lower(a common.Address) string { return strings.ToLower(a.Hex()) }

// NewKey is a fresh account key.
func NewKey(t TB) *ecdsa.PrivateKey {
	k, err := crypto.GenerateKey()
	require.NoError(t, err)
	return k
}

// Addr is the key's address.
func Addr(k *ecdsa.PrivateKey) common.Address { return crypto.PubkeyToAddress(k.PublicKey) }

// Chain is the simulated chain and the account that deploys and funds everything.
type Chain struct {
	t        TB
	B        *simulated.Backend
	C        simulated.Client
	signer   types.Signer
	Deployer *ecdsa.PrivateKey
	// URL is the chain's JSON-RPC over HTTP on loopback ("" unless NewChain was asked for it).
	URL     string
	pending []*types.Transaction
	nonces  map[common.Address]uint64 // the next nonce of each account that sent
	baseFee *big.Int                  // the head's, as of the last Commit (nil: ask the node)
	// TxGas is the gas limit of the transactions that neither deploy nor create a pool (0: 1M).
	// A block holds 60M: a smaller limit packs more transfers and swaps into one.
	TxGas uint64
}

// NewChain starts a chain whose genesis funds the deployer and wallets with 1000 ETH each; with
// http, its JSON-RPC (eth namespace) also listens on a free loopback port (URL).
func NewChain(t TB, http bool, wallets ...*ecdsa.PrivateKey) *Chain {
	deployer := NewKey(t)
	alloc := types.GenesisAlloc{Addr(deployer): {Balance: Units(1000)}}
	for _, w := range wallets {
		alloc[Addr(w)] = types.Account{Balance: Units(1000)}
	}
	var opts []func(*node.Config, *ethconfig.Config)
	url := ""
	if http {
		port := freePort(t)
		url = "http://127.0.0.1:" + strconv.Itoa(port)
		opts = append(opts, func(n *node.Config, _ *ethconfig.Config) {
			n.HTTPHost, n.HTTPPort, n.HTTPModules = "127.0.0.1", port, []string{"eth", "net", "web3"}
		})
	}
	b := simulated.NewBackend(alloc, opts...)
	t.Cleanup(func() { _ = b.Close() })
	c := b.Client()
	id, err := c.ChainID(context.Background())
	require.NoError(t, err)
	return &Chain{t: t, B: b, C: c, signer: types.LatestSignerForChainID(id), Deployer: deployer, URL: url,
		nonces: map[common.Address]uint64{}}
}

// freePort is a loopback port nothing listens on (the node binds it right after).
func freePort(t TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	return port
}

// Send signs and submits a transaction from key (to nil: a deployment), mined by the next
// Commit, which requires it to succeed. tipBoost multiplies the tip (a replacement).
func (c *Chain) Send(key *ecdsa.PrivateKey, to *common.Address, data []byte, tipBoost int64) *types.Transaction {
	c.t.Helper()
	// The pool takes a transaction in asynchronously, so the node's pending nonce can lag
	// behind the one just sent: the chain counts them itself.
	nonce, ok := c.nonces[Addr(key)]
	if !ok {
		n, err := c.C.PendingNonceAt(context.Background(), Addr(key))
		require.NoError(c.t, err)
		nonce = n
	}
	return c.SendNonce(key, nonce, to, data, tipBoost)
}

// SendNonce is Send with the nonce given (to replace a transaction).
func (c *Chain) SendNonce(key *ecdsa.PrivateKey, nonce uint64, to *common.Address, data []byte, tipBoost int64) *types.Transaction {
	c.t.Helper()
	return c.send(key, nonce, to, data, tipBoost, c.gasFor(to, data))
}

// sendGas is Send with the gas limit given.
func (c *Chain) sendGas(key *ecdsa.PrivateKey, to *common.Address, data []byte, gas uint64) *types.Transaction {
	c.t.Helper()
	nonce, ok := c.nonces[Addr(key)]
	if !ok {
		n, err := c.C.PendingNonceAt(context.Background(), Addr(key))
		require.NoError(c.t, err)
		nonce = n
	}
	return c.send(key, nonce, to, data, 0, gas)
}

// gasFor is a transaction's gas limit.
func (c *Chain) gasFor(to *common.Address, data []byte) uint64 {
	// Deployments and createPair/createPool (which deploy the pool) need millions of gas (the V3
	// factory and position manager are near the 24 KB code limit), a V3 position's mint about
	// 1M; a transfer or a swap well under 1M, and a block holds many of them.
	gas := uint64(1_000_000)
	if c.TxGas > 0 {
		gas = c.TxGas
	}
	switch {
	case to == nil:
		gas = 12_000_000
	case bytes.HasPrefix(data, createPairSelector), bytes.HasPrefix(data, createPoolSelector):
		gas = 8_000_000
	case bytes.HasPrefix(data, positionMintSelector):
		gas = 3_000_000
	}
	return gas
}

func (c *Chain) send(key *ecdsa.PrivateKey, nonce uint64, to *common.Address, data []byte, tipBoost int64, gas uint64) *types.Transaction {
	c.t.Helper()
	ctx := context.Background()
	if c.baseFee == nil {
		head, err := c.C.HeaderByNumber(ctx, nil)
		require.NoError(c.t, err)
		c.baseFee = head.BaseFee
	}
	tip := new(big.Int).Mul(big.NewInt(1_000_000_000), big.NewInt(1+tipBoost))
	feeCap := new(big.Int).Add(new(big.Int).Mul(c.baseFee, big.NewInt(2)), tip)
	tx, err := types.SignNewTx(key, c.signer, &types.DynamicFeeTx{ChainID: c.signer.ChainID(), Nonce: nonce, GasTipCap: tip,
		GasFeeCap: feeCap, Gas: gas, To: to, Data: data})
	require.NoError(c.t, err)
	require.NoError(c.t, c.C.SendTransaction(ctx, tx))
	c.nonces[Addr(key)] = nonce + 1
	c.pending = append(c.pending, tx)
	return tx
}

// Commit mines a block, requires every transaction sent since to have succeeded, and returns
// the new head. The node's pool takes transactions in asynchronously: Commit waits until it
// holds them all, so they are mined in the order they were sent (a block that cannot hold them
// all leaves the rest to the next ones it mines, up to 10).
func (c *Chain) Commit() *types.Header {
	c.t.Helper()
	ctx := context.Background()
	left := c.pending
	for i := 0; i < 1000; i++ {
		n, err := c.C.PendingTransactionCount(ctx)
		require.NoError(c.t, err)
		if int(n) >= len(left) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	var h *types.Header
	for range 10 {
		hash := c.B.Commit()
		// The block's receipts in one call (the client is an ethclient underneath).
		br, ok := c.C.(interface {
			BlockReceipts(context.Context, rpc.BlockNumberOrHash) ([]*types.Receipt, error)
		})
		require.True(c.t, ok, "the simulated client reads block receipts")
		rs, err := br.BlockReceipts(ctx, rpc.BlockNumberOrHashWithHash(hash, false))
		require.NoError(c.t, err)
		mined := make(map[common.Hash]*types.Receipt, len(rs))
		for _, r := range rs {
			mined[r.TxHash] = r
		}
		var missing []*types.Transaction
		for _, tx := range left {
			r, ok := mined[tx.Hash()]
			if !ok {
				missing = append(missing, tx)
				continue
			}
			require.Equal(c.t, types.ReceiptStatusSuccessful, r.Status, "transaction %s failed (gas %d of %d)", tx.Hash().Hex(), r.GasUsed, tx.Gas())
		}
		h, err = c.C.HeaderByHash(ctx, hash)
		require.NoError(c.t, err)
		c.baseFee = h.BaseFee
		if left = missing; len(left) == 0 {
			break
		}
	}
	require.Empty(c.t, left, "transactions not mined")
	c.pending = nil
	return h
}

func (c *Chain) deploy(a Artifact, args ...any) common.Address {
	c.t.Helper()
	in, err := a.ABI.Pack("", args...)
	require.NoError(c.t, err)
	tx := c.Send(c.Deployer, nil, append(append([]byte{}, a.Bytecode...), in...), 0)
	c.Commit()
	r, err := c.C.TransactionReceipt(context.Background(), tx.Hash())
	require.NoError(c.t, err)
	return r.ContractAddress
}

func (c *Chain) call(a abi.ABI, to common.Address, method string, args ...any) []any {
	c.t.Helper()
	data, err := a.Pack(method, args...)
	require.NoError(c.t, err)
	out, err := c.C.CallContract(context.Background(), ethereum.CallMsg{To: &to, Data: data}, nil)
	require.NoError(c.t, err)
	v, err := a.Unpack(method, out)
	require.NoError(c.t, err)
	return v
}

func (c *Chain) tx(key *ecdsa.PrivateKey, a abi.ABI, to common.Address, method string, args ...any) *types.Transaction {
	c.t.Helper()
	data, err := a.Pack(method, args...)
	require.NoError(c.t, err)
	return c.Send(key, &to, data, 0)
}

// Market is a Uniswap V2 deployment on a Chain. Reserves holds each pair's reserves as the
// test's transactions leave them (so several swaps can share a block).
type Market struct {
	*Chain
	Factory  common.Address
	erc20    Artifact
	pair     abi.ABI
	factory  abi.ABI
	Reserves map[common.Address]map[common.Address]*big.Int
}

// NewMarket deploys the factory.
func NewMarket(t TB, c *Chain) *Market {
	fact := load(t, "UniswapV2Factory.json")
	m := &Market{Chain: c, erc20: load(t, "ERC20PresetFixedSupply.json"), pair: load(t, "IUniswapV2Pair.json").ABI,
		factory: fact.ABI, Reserves: map[common.Address]map[common.Address]*big.Int{}}
	m.Factory = c.deploy(fact, Addr(c.Deployer))
	return m
}

// Token deploys an ERC20PresetFixedSupply (18 decimals) minted to the deployer.
func (m *Market) Token(name, symbol string, supply int64) common.Address {
	return m.deploy(m.erc20, name, symbol, Units(supply), Addr(m.Deployer))
}

// Pair creates the pair of a and b through the factory (committed).
func (m *Market) Pair(a, b common.Address) common.Address {
	m.tx(m.Deployer, m.factory, m.Factory, "createPair", a, b)
	m.Commit()
	p := m.call(m.factory, m.Factory, "getPair", a, b)[0].(common.Address)
	m.Reserves[p] = map[common.Address]*big.Int{a: new(big.Int), b: new(big.Int)}
	return p
}

// Transfer sends an amount of token (not committed).
func (m *Market) Transfer(from *ecdsa.PrivateKey, token, to common.Address, amount *big.Int) {
	m.tx(from, m.erc20.ABI, token, "transfer", to, amount)
}

// Liquidity adds amounts of both tokens to the pair, minted to the deployer (committed).
func (m *Market) Liquidity(p, a common.Address, amtA *big.Int, b common.Address, amtB *big.Int) {
	m.Transfer(m.Deployer, a, p, amtA)
	m.Transfer(m.Deployer, b, p, amtB)
	m.tx(m.Deployer, m.pair, p, "mint", Addr(m.Deployer))
	m.Commit()
	m.Reserves[p][a].Add(m.Reserves[p][a], amtA)
	m.Reserves[p][b].Add(m.Reserves[p][b], amtB)
}

// Swapped is one swap a test made.
type Swapped struct {
	Wallet    common.Address
	Pair      common.Address
	In, Out   common.Address
	AmountIn  *big.Int
	AmountOut *big.Int
	Tx        common.Hash
}

// Swap sends amountIn of tokenIn from key into the pair and takes the V2 output (0.3% fee):
// out = in·997·rOut / (rIn·1000 + in·997). Not committed.
func (m *Market) Swap(key *ecdsa.PrivateKey, p, tokenIn common.Address, amountIn *big.Int) Swapped {
	m.t.Helper()
	var tokenOut common.Address
	for tok := range m.Reserves[p] {
		if tok != tokenIn {
			tokenOut = tok
		}
	}
	rIn, rOut := m.Reserves[p][tokenIn], m.Reserves[p][tokenOut]
	inFee := new(big.Int).Mul(amountIn, big.NewInt(997))
	out := new(big.Int).Div(new(big.Int).Mul(inFee, rOut), new(big.Int).Add(new(big.Int).Mul(rIn, big.NewInt(1000)), inFee))
	out0, out1 := big.NewInt(0), out
	if Lower(tokenOut) < Lower(tokenIn) {
		out0, out1 = out, big.NewInt(0)
	}
	m.Transfer(key, tokenIn, p, amountIn)
	tx := m.tx(key, m.pair, p, "swap", out0, out1, Addr(key), []byte{})
	rIn.Add(rIn, amountIn)
	rOut.Sub(rOut, out)
	return Swapped{Wallet: Addr(key), Pair: p, In: tokenIn, Out: tokenOut, AmountIn: amountIn, AmountOut: out, Tx: tx.Hash()}
}

// Balance is the token balance of an account.
func (m *Market) Balance(token, of common.Address) *big.Int {
	return m.call(m.erc20.ABI, token, "balanceOf", of)[0].(*big.Int)
}

// Standard is the market the follower tests trade on: WETH, USDC and TKN (18 decimals each),
// a WETH/USDC stable pool at 100 WETH / 300,000 USDC (3000 USD per ETH), TKN/USDC at 1:1
// (1,000,000 each) and TKN/WETH at 1,000,000 TKN / 300 WETH; each wallet holds 100 WETH and
// 100,000 USDC.
type Standard struct {
	*Market
	WETH, USDC, TKN         common.Address
	Stable, TKNUSDC, TKNETH common.Address
}

// NewStandard deploys the standard market on c.
func NewStandard(t TB, c *Chain, wallets ...*ecdsa.PrivateKey) *Standard {
	m := NewMarket(t, c)
	s := &Standard{Market: m}
	s.WETH = m.Token("Wrapped Ether", "WETH", 1_000_000)
	s.USDC = m.Token("USD Coin", "USDC", 100_000_000)
	s.TKN = m.Token("Test Token", "TKN", 100_000_000)
	s.Stable = m.Pair(s.WETH, s.USDC)
	s.TKNUSDC = m.Pair(s.TKN, s.USDC)
	s.TKNETH = m.Pair(s.TKN, s.WETH)
	m.Liquidity(s.Stable, s.WETH, Units(100), s.USDC, Units(300_000))
	m.Liquidity(s.TKNUSDC, s.TKN, Units(1_000_000), s.USDC, Units(1_000_000))
	m.Liquidity(s.TKNETH, s.TKN, Units(1_000_000), s.WETH, Units(300))
	for i, k := range wallets {
		m.Transfer(m.Deployer, s.WETH, Addr(k), Units(100))
		m.Transfer(m.Deployer, s.USDC, Addr(k), Units(100_000))
		if i%20 == 19 { // 40 transfers a block: within its gas limit
			m.Commit()
		}
	}
	m.Commit()
	return s
}
