package evmtest

import (
	"crypto/ecdsa"
	"math/big"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// V3 is a Uniswap V3 deployment on a Market's chain: the factory @uniswap/v3-core ships, and
// @uniswap/v3-periphery's NonfungiblePositionManager (to mint liquidity: a pool's mint calls its
// caller back for the tokens) and SwapRouter (to swap: the same callback), deployed as compiled
// (testdata; licences in ../abi/NOTICE.md). The periphery finds pools by the pool's init code
// hash, which the npm factory's pool matches.
type V3 struct {
	*Market
	Factory, Positions, Router common.Address
	factory, pool, positions   abi.ABI
	router                     abi.ABI
}

// Fee is the fee tier the tests' V3 pools use (0.3%, tick spacing 60).
const Fee = 3000

// fullRange is the widest tick range of tick spacing 60 (TickMath's ±887272 rounded inward).
var fullRangeLower, fullRangeUpper = big.NewInt(-887220), big.NewInt(887220)

// Q96 is 2^96: a V3 pool's sqrtPriceX96 is √(token1 per token0, smallest units) · Q96.
var Q96 = new(big.Int).Lsh(big.NewInt(1), 96)

// NewV3 deploys the V3 factory, position manager and router on m's chain; weth is the address
// the periphery takes as WETH9 (only used to wrap and unwrap ether, which the tests do not).
func NewV3(t TB, m *Market, weth common.Address) *V3 {
	fact := load(t, "UniswapV3Factory.json")
	pos := load(t, "NonfungiblePositionManager.json")
	rt := load(t, "SwapRouter.json")
	v := &V3{Market: m, factory: fact.ABI, positions: pos.ABI, router: rt.ABI,
		pool: load(t, "IUniswapV3Pool.json").ABI}
	v.Factory = m.deploy(fact)
	v.Positions = m.deploy(pos, v.Factory, weth, common.Address{})
	v.Router = m.deploy(rt, v.Factory, weth)
	return v
}

// Pool creates the pool of a and b at the Fee tier and initializes it at sqrtPriceX96
// (committed).
func (v *V3) Pool(a, b common.Address, sqrtPriceX96 *big.Int) common.Address {
	v.tx(v.Deployer, v.factory, v.Factory, "createPool", a, b, big.NewInt(Fee))
	v.Commit()
	p := v.call(v.factory, v.Factory, "getPool", a, b, big.NewInt(Fee))[0].(common.Address)
	v.tx(v.Deployer, v.pool, p, "initialize", sqrtPriceX96)
	v.Commit()
	return p
}

// Tokens are a V3 pool's token0 and token1.
func (v *V3) Tokens(pool common.Address) (common.Address, common.Address) {
	return v.call(v.pool, pool, "token0")[0].(common.Address), v.call(v.pool, pool, "token1")[0].(common.Address)
}

// SqrtPrice is a V3 pool's sqrtPriceX96 now (slot0).
func (v *V3) SqrtPrice(pool common.Address) *big.Int {
	return v.call(v.pool, pool, "slot0")[0].(*big.Int)
}

type mintParams struct {
	Token0, Token1                             common.Address
	Fee, TickLower, TickUpper                  *big.Int
	Amount0Desired, Amount1Desired, Amount0Min *big.Int
	Amount1Min                                 *big.Int
	Recipient                                  common.Address
	Deadline                                   *big.Int
}

// Liquidity mints a full-range position of up to amt0 and amt1 (token0, token1) to the deployer
// through the position manager (committed).
func (v *V3) Liquidity(pool common.Address, amt0, amt1 *big.Int) {
	t0, t1 := v.Tokens(pool)
	v.tx(v.Deployer, v.erc20.ABI, t0, "approve", v.Positions, amt0)
	v.tx(v.Deployer, v.erc20.ABI, t1, "approve", v.Positions, amt1)
	v.tx(v.Deployer, v.positions, v.Positions, "mint", mintParams{Token0: t0, Token1: t1, Fee: big.NewInt(Fee),
		TickLower: fullRangeLower, TickUpper: fullRangeUpper, Amount0Desired: amt0, Amount1Desired: amt1,
		Amount0Min: big.NewInt(0), Amount1Min: big.NewInt(0), Recipient: Addr(v.Deployer), Deadline: big.NewInt(1 << 40)})
	v.Commit()
}

type exactInputSingle struct {
	TokenIn, TokenOut common.Address
	Fee               *big.Int
	Recipient         common.Address
	Deadline          *big.Int
	AmountIn          *big.Int
	AmountOutMinimum  *big.Int
	SqrtPriceLimitX96 *big.Int
}

// Swap sends amountIn of tokenIn from key through the router's exactInputSingle into the Fee
// pool of tokenIn and tokenOut, the output to key (not committed; the amount out is what the
// pool's curve gives: read it from the wallet's balances).
func (v *V3) Swap(key *ecdsa.PrivateKey, tokenIn, tokenOut common.Address, amountIn *big.Int) *types.Transaction {
	v.t.Helper()
	v.tx(key, v.erc20.ABI, tokenIn, "approve", v.Router, amountIn)
	return v.tx(key, v.router, v.Router, "exactInputSingle", exactInputSingle{TokenIn: tokenIn, TokenOut: tokenOut,
		Fee: big.NewInt(Fee), Recipient: Addr(key), Deadline: big.NewInt(1 << 40), AmountIn: amountIn,
		AmountOutMinimum: big.NewInt(0), SqrtPriceLimitX96: big.NewInt(0)})
}
