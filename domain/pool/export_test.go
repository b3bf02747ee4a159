package pool

import "github.com/shopspring/decimal"

// Functions only the tests use: nothing reachable from the binaries calls them (make deadcode).

// PriceBInA is the spot price of one B in A: ReserveA / ReserveB, 0 for an empty pool.
func (c ConstantProduct) PriceBInA() decimal.Decimal {
	return ConstantProduct{ReserveA: c.ReserveB, ReserveB: c.ReserveA}.PriceAInB()
}

// AmountOut is Swap's output alone.
func (c ConstantProduct) AmountOut(amountIn decimal.Decimal, aToB bool, feeBps int64) (decimal.Decimal, error) {
	out, _, err := c.Swap(amountIn, aToB, feeBps)
	return out, err
}
