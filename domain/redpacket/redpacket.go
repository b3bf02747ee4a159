// Package redpacket is the red packet (a token gift split among several claimers) and its
// claims, with the state changes a claim and an expiry make. It may import only the standard
// library, github.com/shopspring/decimal and other domain packages.
//
// Amounts are integers in the token's smallest units, held as decimal.Decimal values with no
// fractional part (ParseAmount guarantees it). Decimal rather than *big.Int because it is the
// type every other amount uses, Postgres numeric maps onto it, and it renders as the integer
// string the API shows.
package redpacket

import (
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/fault"
)

// Business codes of the public API's red-packet errors.
const (
	CodeWithdrawn      = 51002
	CodeAlreadyClaimed = 51003
)

// RedPacket is one packet. Times are Unix milliseconds; Expiration is a duration in seconds
// (the public API's unit, example 24), so ExpiredAt = CreatedAt + Expiration × 1000 (see ExpiresAt).
type RedPacket struct {
	ID             string
	Creator        string
	ClaimAuthority string
	Mint           string
	Chain          chain.Chain
	MaxClaims      int32
	ClaimedCount   int32
	TotalAmount    decimal.Decimal
	ClaimedAmount  decimal.Decimal
	RefundedAmount decimal.Decimal
	CreatedAt      int64
	ExpiredAt      int64
	Expiration     int64
	// Expired means the unclaimed rest went back to the creator ("withdrawn" in the public API).
	Expired bool
	Memo    string
	ShareID string
	TxHash  string
	// Claimers are the wallets that have claimed, so a second claim by one of them is refused.
	// The store loads them with the packet (and should also hold a unique (packet, claimer) index).
	Claimers []string
}

// Claim is one claim of a packet; Amount is in smallest units, ClaimedAt in Unix ms.
type Claim struct {
	PacketID  string
	Claimer   string
	Mint      string
	Chain     chain.Chain
	Amount    decimal.Decimal
	ClaimedAt int64
	Creator   string
	TxHash    string
}

// ParseAmount reads an amount in smallest units: digits only, no sign, no point.
func ParseAmount(param, s string) (decimal.Decimal, error) {
	if s == "" {
		return decimal.Decimal{}, fault.Missing(param)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return decimal.Decimal{}, fault.Invalid(param, s, "must be an integer amount in smallest units")
		}
	}
	return decimal.RequireFromString(s), nil
}

// ExpiresAt computes expiredAt from a creation time (ms) and an expiration (seconds).
func ExpiresAt(createdAtMs, expirationSeconds int64) int64 {
	return createdAtMs + expirationSeconds*1000
}

// Remaining is what can still be claimed: nothing once expired, else total − claimed.
func (p RedPacket) Remaining() decimal.Decimal {
	if p.Expired {
		return decimal.Zero
	}
	return p.TotalAmount.Sub(p.ClaimedAmount)
}

// Validate checks the invariants of a stored packet.
func (p RedPacket) Validate() error {
	for _, r := range []struct{ param, v string }{{"id", p.ID}, {"creator", p.Creator}, {"mint", p.Mint}} {
		if strings.TrimSpace(r.v) == "" {
			return fault.Missing(r.param)
		}
	}
	if _, err := chain.Parse("chain", string(p.Chain)); err != nil {
		return err
	}
	if p.MaxClaims < 1 {
		return fault.Invalid("maxClaims", strconv.Itoa(int(p.MaxClaims)), "must be at least 1")
	}
	if p.ClaimedCount < 0 || p.ClaimedCount > p.MaxClaims {
		return fault.Invalid("claimedCount", strconv.Itoa(int(p.ClaimedCount)), "must be between 0 and maxClaims")
	}
	amounts := []struct {
		param string
		v     decimal.Decimal
	}{{"totalAmount", p.TotalAmount}, {"claimedAmount", p.ClaimedAmount}, {"refundedAmount", p.RefundedAmount}}
	for _, a := range amounts {
		if a.v.IsNegative() || !a.v.IsInteger() {
			return fault.Invalid(a.param, a.v.String(), "must be a non-negative integer amount in smallest units")
		}
	}
	if !p.TotalAmount.IsPositive() {
		return fault.Invalid("totalAmount", p.TotalAmount.String(), "must be positive")
	}
	if p.ClaimedAmount.Add(p.RefundedAmount).GreaterThan(p.TotalAmount) {
		return fault.Invalid("claimedAmount", p.ClaimedAmount.String(), "claimed plus refunded exceeds totalAmount")
	}
	if p.Expiration < 0 {
		return fault.Invalid("expiration", strconv.FormatInt(p.Expiration, 10), "must not be negative")
	}
	if p.ExpiredAt < p.CreatedAt {
		return fault.Invalid("expiredAt", strconv.FormatInt(p.ExpiredAt, 10), "must not be before createdAt")
	}
	return nil
}

// ApplyClaim records c. A claim for another packet, mint or chain, or with a non-positive or
// fractional amount, is Invalid. A claim the packet cannot honour is a Conflict: after expiry
// (ClaimedAt at or after ExpiredAt, or the packet already expired), beyond MaxClaims, above the
// remaining amount, or by a wallet that already claimed (code CodeAlreadyClaimed).
func (p *RedPacket) ApplyClaim(c Claim) error {
	switch {
	case c.PacketID != p.ID:
		return fault.Invalid("packetId", c.PacketID, "claim belongs to another red packet")
	case c.Mint != p.Mint:
		return fault.Invalid("mint", c.Mint, "claim mint differs from the red packet's")
	case c.Chain != p.Chain:
		return fault.Invalid("chain", string(c.Chain), "claim chain differs from the red packet's")
	case strings.TrimSpace(c.Claimer) == "":
		return fault.Missing("claimer")
	case !c.Amount.IsPositive() || !c.Amount.IsInteger():
		return fault.Invalid("amount", c.Amount.String(), "must be a positive integer amount in smallest units")
	}
	if p.Expired || c.ClaimedAt >= p.ExpiredAt {
		return fault.Conflict("red packet " + p.ID + " has expired").WithCode(CodeWithdrawn)
	}
	for _, w := range p.Claimers {
		if w == c.Claimer {
			return fault.Conflict("wallet " + c.Claimer + " has already claimed red packet " + p.ID).WithCode(CodeAlreadyClaimed)
		}
	}
	if p.ClaimedCount >= p.MaxClaims {
		return fault.Conflict("red packet " + p.ID + " has no claims left")
	}
	if c.Amount.GreaterThan(p.Remaining()) {
		return fault.Conflict("claim of " + c.Amount.String() + " exceeds the remaining " + p.Remaining().String())
	}
	p.ClaimedCount++
	p.ClaimedAmount = p.ClaimedAmount.Add(c.Amount)
	p.Claimers = append(p.Claimers, c.Claimer)
	return nil
}

// Expire closes the packet at time at (Unix ms): Expired becomes true and the unclaimed rest,
// total − claimed, is refunded. Expiring before ExpiredAt is a Conflict (only the clock ends a
// packet). Expiring an expired packet changes nothing and returns nil, so a retried expiry job
// is harmless.
func (p *RedPacket) Expire(at int64) error {
	if p.Expired {
		return nil
	}
	if at < p.ExpiredAt {
		return fault.Conflict("red packet " + p.ID + " expires at " + strconv.FormatInt(p.ExpiredAt, 10) + ", not yet")
	}
	p.Expired = true
	p.RefundedAmount = p.TotalAmount.Sub(p.ClaimedAmount)
	return nil
}
