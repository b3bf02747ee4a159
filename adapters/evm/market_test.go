package evm_test

import (
	"crypto/ecdsa"
	"math/big"
	"strings"
	"testing"

	ethereum "github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/shopspring/decimal"
)

func ethereumCall(to common.Address, data []byte) ethereum.CallMsg {
	return ethereum.CallMsg{To: &to, Data: data}
}

// market is a Uniswap V2 deployment on a testChain, with the reserves of its pairs tracked
// from the transactions the test sends (so several swaps can share a block).
type market struct {
	*testChain
	erc20    artifact
	pairABI  abi.ABI
	factABI  abi.ABI
	reserves map[common.Address]map[common.Address]*big.Int // pair → token → reserve
}

func newMarket(t *testing.T, c *testChain) *market {
	fact := loadArtifact(t, "testdata/UniswapV2Factory.json")
	m := &market{testChain: c, erc20: loadArtifact(t, "testdata/ERC20PresetFixedSupply.json"),
		pairABI: loadABI(t, "abi/IUniswapV2Pair.json"), factABI: fact.ABI, reserves: map[common.Address]map[common.Address]*big.Int{}}
	c.factory = c.deploy(fact, addr(c.deployer))
	return m
}

// token deploys an OpenZeppelin ERC20PresetFixedSupply (18 decimals) minted to the deployer.
func (m *market) token(name, symbol string, supply int64) common.Address {
	return m.deploy(m.erc20, name, symbol, units(supply), addr(m.deployer))
}

func (m *market) pair(a, b common.Address) common.Address {
	m.tx(m.deployer, m.factABI, m.factory, "createPair", a, b)
	m.commit()
	p := m.call(m.factABI, m.factory, "getPair", a, b)[0].(common.Address)
	m.reserves[p] = map[common.Address]*big.Int{a: new(big.Int), b: new(big.Int)}
	return p
}

func (m *market) transfer(from *ecdsa.PrivateKey, token common.Address, to common.Address, amount *big.Int) {
	m.tx(from, m.erc20.ABI, token, "transfer", to, amount)
}

// liquidity adds amounts of both tokens to the pair (minted to the deployer); committed.
func (m *market) liquidity(p common.Address, a common.Address, amtA *big.Int, b common.Address, amtB *big.Int) {
	m.transfer(m.deployer, a, p, amtA)
	m.transfer(m.deployer, b, p, amtB)
	m.tx(m.deployer, m.pairABI, p, "mint", addr(m.deployer))
	m.commit()
	m.reserves[p][a].Add(m.reserves[p][a], amtA)
	m.reserves[p][b].Add(m.reserves[p][b], amtB)
}

// swapped is one swap the test made: what went in and out, by whom, in which transaction.
type swapped struct {
	wallet    common.Address
	pair      common.Address
	in, out   common.Address
	amountIn  *big.Int
	amountOut *big.Int
	tx        common.Hash
}

// swap sends amountIn of tokenIn from key into the pair and takes the V2 formula's output
// (0.3% fee): out = in·997·rOut / (rIn·1000 + in·997). Not committed.
func (m *market) swap(key *ecdsa.PrivateKey, p, tokenIn common.Address, amountIn *big.Int) swapped {
	var tokenOut common.Address
	for tok := range m.reserves[p] {
		if tok != tokenIn {
			tokenOut = tok
		}
	}
	rIn, rOut := m.reserves[p][tokenIn], m.reserves[p][tokenOut]
	inFee := new(big.Int).Mul(amountIn, big.NewInt(997))
	out := new(big.Int).Div(new(big.Int).Mul(inFee, rOut), new(big.Int).Add(new(big.Int).Mul(rIn, big.NewInt(1000)), inFee))
	out0, out1 := big.NewInt(0), out
	if strings.ToLower(tokenOut.Hex()) < strings.ToLower(tokenIn.Hex()) {
		out0, out1 = out, big.NewInt(0)
	}
	m.transfer(key, tokenIn, p, amountIn)
	tx := m.tx(key, m.pairABI, p, "swap", out0, out1, addr(key), []byte{})
	rIn.Add(rIn, amountIn)
	rOut.Sub(rOut, out)
	return swapped{wallet: addr(key), pair: p, in: tokenIn, out: tokenOut, amountIn: amountIn, amountOut: out, tx: tx.Hash()}
}

func (m *market) balance(token common.Address, of common.Address) *big.Int {
	return m.call(m.erc20.ABI, token, "balanceOf", of)[0].(*big.Int)
}

// whole is a raw 18-decimal amount in whole tokens, exactly.
func whole(raw *big.Int) decimal.Decimal { return decimal.NewFromBigInt(raw, -18) }

func lower(a common.Address) string { return strings.ToLower(a.Hex()) }
