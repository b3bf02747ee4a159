// Package trade is the DEX trade record: its side, status, idempotency key, validation and the
// canonical replay order that PnL and window statistics share. It may import only the standard
// library, github.com/shopspring/decimal and other domain packages.
package trade

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/text"
)

// Side is the trade type on the wire: BUY or SELL of the token against the side token.
type Side string

const (
	Buy  Side = "BUY"
	Sell Side = "SELL"
)

// ParseSide accepts BUY or SELL in any case.
func ParseSide(param, s string) (Side, error) {
	switch v := Side(strings.ToUpper(strings.TrimSpace(s))); v {
	case Buy, Sell:
		return v, nil
	}
	return "", fault.InvalidParam(param, s, string(Buy), string(Sell))
}

// Status is the transaction status. The spec shows only SUCCEEDED; FAILED is the other outcome
// ingest produces. They are the only two the API's trade record allows, so ingest takes no other.
type Status string

const (
	Succeeded Status = "SUCCEEDED"
	Failed    Status = "FAILED"
)

// ParseStatus accepts SUCCEEDED or FAILED, case-insensitively, and returns it upper-cased.
func ParseStatus(param, s string) (Status, error) {
	if s == "" {
		return "", fault.Missing(param)
	}
	for _, v := range []Status{Succeeded, Failed} {
		if strings.EqualFold(s, string(v)) {
			return v, nil
		}
	}
	return "", fault.InvalidParam(param, text.Shown(s), string(Succeeded), string(Failed))
}

// Trade is one swap instruction. A transaction can hold several swaps, so the instruction index
// is part of its identity.
type Trade struct {
	Chain                chain.Chain
	TransactionSignature string
	InstructionIndex     int32
	BlockHeight          int64
	BlockSlot            int64
	// BlockTimestamp is Unix milliseconds.
	BlockTimestamp int64
	// Wallet is the trader, accountOwnerAddress on the wire.
	Wallet      string
	PoolAddress string
	Side        Side
	Status      Status

	TokenAddress        string
	TokenName           string
	TokenSymbol         string
	TokenImageURL       string
	TokenAmount         decimal.Decimal
	TokenAmountInNative decimal.Decimal
	TokenAmountInUSD    decimal.Decimal
	TokenPriceInNative  decimal.Decimal
	TokenPriceInUSD     decimal.Decimal

	SideTokenAddress        string
	SideTokenName           string
	SideTokenSymbol         string
	SideTokenImageURL       string
	SideTokenAmount         decimal.Decimal
	SideTokenAmountInNative decimal.Decimal
	SideTokenAmountInUSD    decimal.Decimal
	SideTokenPriceInNative  decimal.Decimal
	SideTokenPriceInUSD     decimal.Decimal

	DexImage          string
	DexProgramAddress string
	DexProtocolFamily string
}

// Key identifies a trade for idempotent ingest: replaying the same instruction is a no-op.
type Key struct {
	Chain                chain.Chain
	TransactionSignature string
	InstructionIndex     int32
}

// Key returns the idempotency key of t.
func (t Trade) Key() Key {
	return Key{Chain: t.Chain, TransactionSignature: t.TransactionSignature, InstructionIndex: t.InstructionIndex}
}

// String renders the key as chain:signature:index, usable as a map key or log field.
func (k Key) String() string {
	return string(k.Chain) + ":" + k.TransactionSignature + ":" + strconv.FormatInt(int64(k.InstructionIndex), 10)
}

// Succeeded reports whether the trade moved funds; failed trades count nowhere.
func (t Trade) Succeeded() bool { return t.Status == Succeeded }

// Validate checks what ingest must never store. Errors are Invalid and name the wire field.
func (t Trade) Validate() error {
	if _, err := chain.Parse("chain", string(t.Chain)); err != nil {
		return err
	}
	required := []struct{ param, v string }{
		{"transactionSignature", t.TransactionSignature},
		{"accountOwnerAddress", t.Wallet},
		{"tokenAddress", t.TokenAddress},
		{"sideTokenAddress", t.SideTokenAddress},
		{"poolAddress", t.PoolAddress},
		{"status", string(t.Status)},
	}
	for _, r := range required {
		if strings.TrimSpace(r.v) == "" {
			return fault.Missing(r.param)
		}
	}
	if t.Status != Succeeded && t.Status != Failed {
		return fault.InvalidParam("status", text.Shown(string(t.Status)), string(Succeeded), string(Failed))
	}
	if _, err := ParseSide("type", string(t.Side)); err != nil {
		return err
	}
	if t.InstructionIndex < 0 {
		return fault.Invalid("instructionIndex", strconv.Itoa(int(t.InstructionIndex)), "must not be negative")
	}
	if t.BlockHeight < 0 {
		return fault.Invalid("blockHeight", strconv.FormatInt(t.BlockHeight, 10), "must not be negative")
	}
	if t.BlockTimestamp <= 0 {
		return fault.Invalid("blockTimestamp", strconv.FormatInt(t.BlockTimestamp, 10), "must be a positive Unix millisecond time")
	}
	amounts := []struct {
		param string
		v     decimal.Decimal
	}{
		{"tokenAmount", t.TokenAmount},
		{"tokenAmountInNative", t.TokenAmountInNative},
		{"tokenAmountInUsd", t.TokenAmountInUSD},
		{"tokenPriceInNative", t.TokenPriceInNative},
		{"tokenPriceInUsd", t.TokenPriceInUSD},
		{"sideTokenAmount", t.SideTokenAmount},
		{"sideTokenAmountInNative", t.SideTokenAmountInNative},
		{"sideTokenAmountInUsd", t.SideTokenAmountInUSD},
		{"sideTokenPriceInNative", t.SideTokenPriceInNative},
		{"sideTokenPriceInUsd", t.SideTokenPriceInUSD},
	}
	for _, a := range amounts {
		if a.v.IsNegative() {
			return fault.Invalid(a.param, a.v.String(), "must not be negative")
		}
	}
	return nil
}

// Compare orders trades as they happened: block time, then block height, then transaction
// signature, then instruction index. Every replay (PnL, OHLC) uses this order so the result does
// not depend on arrival order.
func Compare(a, b Trade) int {
	return cmp.Or(
		cmp.Compare(a.BlockTimestamp, b.BlockTimestamp),
		cmp.Compare(a.BlockHeight, b.BlockHeight),
		strings.Compare(a.TransactionSignature, b.TransactionSignature),
		cmp.Compare(a.InstructionIndex, b.InstructionIndex),
	)
}

// Sorted returns a copy of ts in Compare order; ts is left as it was.
func Sorted(ts []Trade) []Trade {
	out := slices.Clone(ts)
	slices.SortStableFunc(out, Compare)
	return out
}
