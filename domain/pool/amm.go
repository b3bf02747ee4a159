package pool

import (
	"strconv"

	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/domain/fault"
)

// Scale is the number of decimal places the pool maths keeps. Outputs are rounded down to it so
// the simulator never quotes more than the pool would pay.
const Scale = 18

// MaxFeeBps is the largest fee accepted; at 10000 bps nothing would be left to swap.
const MaxFeeBps = 9999

// ConstantProduct is an x·y=k pool with reserves in the same units as the amounts swapped.
type ConstantProduct struct {
	ReserveA decimal.Decimal
	ReserveB decimal.Decimal
}

// PriceAInB is the spot price of one A in B: ReserveB / ReserveA, 0 for an empty pool.
func (c ConstantProduct) PriceAInB() decimal.Decimal {
	if !c.ReserveA.IsPositive() || c.ReserveB.IsNegative() {
		return decimal.Zero
	}
	return c.ReserveB.DivRound(c.ReserveA, Scale)
}

// Swap is what a swap of amountIn pays out, with the fee taken from the input, plus the pool
// after the swap:
//
//	in' = amountIn × (10000 − feeBps) / 10000
//	out = reserveOut × in' / (reserveIn + in')
//
// aToB selects the direction. The result is rounded down to Scale places. The whole input (fee
// included) stays in the pool and the output leaves it.
func (c ConstantProduct) Swap(amountIn decimal.Decimal, aToB bool, feeBps int64) (decimal.Decimal, ConstantProduct, error) {
	if !c.ReserveA.IsPositive() || !c.ReserveB.IsPositive() {
		return decimal.Zero, c, fault.Conflict("pool has no liquidity")
	}
	if !amountIn.IsPositive() {
		return decimal.Zero, c, fault.Invalid("amountIn", amountIn.String(), "must be positive")
	}
	if feeBps < 0 || feeBps > MaxFeeBps {
		return decimal.Zero, c, fault.Invalid("feeBps", strconv.FormatInt(feeBps, 10), "must be between 0 and 9999")
	}
	reserveIn, reserveOut := c.ReserveA, c.ReserveB
	if !aToB {
		reserveIn, reserveOut = reserveOut, reserveIn
	}
	// Shifting by four places divides by 10000 exactly.
	inAfterFee := amountIn.Mul(decimal.NewFromInt(10000 - feeBps)).Shift(-4)
	// QuoRem truncates toward zero, which for positive amounts is rounding down.
	out, _ := reserveOut.Mul(inAfterFee).QuoRem(reserveIn.Add(inAfterFee), Scale)
	next := ConstantProduct{ReserveA: reserveIn.Add(amountIn), ReserveB: reserveOut.Sub(out)}
	if !aToB {
		next = ConstantProduct{ReserveA: reserveOut.Sub(out), ReserveB: reserveIn.Add(amountIn)}
	}
	return out, next, nil
}
