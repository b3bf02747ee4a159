// Package pool is the DEX liquidity pool: its identity, its liquidity snapshots, and the
// constant-product maths the swap simulator needs. It may import only the standard library,
// github.com/shopspring/decimal and other domain packages.
package pool

import (
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/fault"
)

// Pool is a DEX pool between token A and token B.
type Pool struct {
	Chain          chain.Chain
	Address        string
	ProgramAddress string
	ProtocolFamily string
	ProtocolName   string
	Image          string
	TokenAAddress  string
	TokenADecimals int32
	TokenBAddress  string
	TokenBDecimals int32
}

// VaultAmount is a vault balance in the token's smallest units, kept as the integer string the
// API shows (it can exceed int64 and must not pick up a decimal point).
type VaultAmount string

// ParseVaultAmount accepts a non-empty string of ASCII digits.
func ParseVaultAmount(param, s string) (VaultAmount, error) {
	if s == "" {
		return "", fault.Missing(param)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return "", fault.Invalid(param, s, "must be an integer in smallest units (digits only)")
		}
	}
	return VaultAmount(s), nil
}

// Decimal returns the amount as a decimal with exponent 0 (the string is known to be digits).
func (v VaultAmount) Decimal() decimal.Decimal {
	d, err := decimal.NewFromString(string(v))
	if err != nil {
		return decimal.Zero
	}
	return d
}

// Side is one token side of a snapshot (tokenA or tokenB).
type Side struct {
	TokenAddress   string
	Decimals       int32
	AmountInNative decimal.Decimal
	AmountInUSD    decimal.Decimal
	PriceNative    decimal.Decimal
	PriceUSD       decimal.Decimal
	VaultAmount    VaultAmount
}

// Snapshot is the state of a pool at one block. BlockTimestamp and SnapshotTime are Unix ms.
type Snapshot struct {
	Chain          chain.Chain
	PoolAddress    string
	BlockHeight    int64
	BlockSlot      *int64
	BlockTimestamp int64
	SnapshotTime   int64
	TokenA         Side
	TokenB         Side
	TVLInNative    decimal.Decimal
	TVLInUSD       decimal.Decimal
}

// Key identifies a snapshot: one per pool per block. The chain is part of it because EVM pool
// addresses repeat across eth and bsc.
type Key struct {
	Chain       chain.Chain
	PoolAddress string
	BlockHeight int64
}

// Key returns the identity of s.
func (s Snapshot) Key() Key {
	return Key{Chain: s.Chain, PoolAddress: s.PoolAddress, BlockHeight: s.BlockHeight}
}

// Validate checks what ingest must never store; errors name the wire field.
func (s Snapshot) Validate() error {
	if _, err := chain.Parse("chain", string(s.Chain)); err != nil {
		return err
	}
	if strings.TrimSpace(s.PoolAddress) == "" {
		return fault.Missing("poolAddress")
	}
	if s.BlockHeight < 0 {
		return fault.Invalid("blockHeight", strconv.FormatInt(s.BlockHeight, 10), "must not be negative")
	}
	if s.BlockTimestamp <= 0 {
		return fault.Invalid("blockTimestamp", strconv.FormatInt(s.BlockTimestamp, 10), "must be a positive Unix millisecond time")
	}
	if s.SnapshotTime <= 0 {
		return fault.Invalid("snapshotTime", strconv.FormatInt(s.SnapshotTime, 10), "must be a positive Unix millisecond time")
	}
	for _, side := range []struct {
		name string
		s    Side
	}{{"tokenA", s.TokenA}, {"tokenB", s.TokenB}} {
		if strings.TrimSpace(side.s.TokenAddress) == "" {
			return fault.Missing(side.name + ".tokenAddress")
		}
		if side.s.Decimals < 0 {
			return fault.Invalid(side.name+".decimals", strconv.Itoa(int(side.s.Decimals)), "must not be negative")
		}
		if _, err := ParseVaultAmount(side.name+".vaultAmount", string(side.s.VaultAmount)); err != nil {
			return err
		}
	}
	return nil
}
