package redpacket_test

import (
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/redpacket"
)

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

const created = int64(1717334400000)

// packet: 1000 units for at most 3 claimers, expiring 24 s after creation.
func packet() redpacket.RedPacket {
	return redpacket.RedPacket{
		ID: "rp1", Creator: "C", Mint: "M", Chain: chain.Sol, MaxClaims: 3,
		TotalAmount: dec("1000"), ClaimedAmount: decimal.Zero, RefundedAmount: decimal.Zero,
		CreatedAt: created, Expiration: 24, ExpiredAt: redpacket.ExpiresAt(created, 24),
	}
}

func claim(who, amount string, at int64) redpacket.Claim {
	return redpacket.Claim{PacketID: "rp1", Claimer: who, Mint: "M", Chain: chain.Sol, Amount: dec(amount), ClaimedAt: at}
}

func TestExpiresAtIsSeconds(t *testing.T) {
	// 24 s after 1717334400000 ms is 1717334400000 + 24000.
	assert.Equal(t, int64(1717334424000), redpacket.ExpiresAt(created, 24))
}

func TestParseAmount(t *testing.T) {
	tests := []struct {
		raw     string
		wantErr bool
	}{
		{"1000000000", false}, {"0", false}, {"99999999999999999999999", false},
		{"", true}, {"1.0", true}, {"-5", true}, {"1e3", true},
	}
	for _, tc := range tests {
		t.Run(tc.raw, func(t *testing.T) {
			d, err := redpacket.ParseAmount("totalAmount", tc.raw)
			if tc.wantErr {
				fe, ok := fault.As(err)
				require.True(t, ok)
				assert.Equal(t, "totalAmount", fe.Param)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.raw, d.String())
		})
	}
}

func TestApplyClaimSequence(t *testing.T) {
	p := packet()
	require.NoError(t, p.Validate())
	require.NoError(t, p.ApplyClaim(claim("w1", "300", created+1000)))
	require.NoError(t, p.ApplyClaim(claim("w2", "500", created+2000)))
	// 300 + 500 = 800 claimed by 2 wallets; 1000 − 800 = 200 remain.
	assert.Equal(t, int32(2), p.ClaimedCount)
	assert.Equal(t, "800", p.ClaimedAmount.String())
	assert.Equal(t, "200", p.Remaining().String())
	assert.Equal(t, []string{"w1", "w2"}, p.Claimers)
	require.NoError(t, p.Validate())
}

func TestApplyClaimRejects(t *testing.T) {
	expiredAt := created + 24000
	tests := []struct {
		name  string
		setup func(*redpacket.RedPacket)
		c     redpacket.Claim
		kind  fault.Kind
		code  int
	}{
		{"other packet", nil, redpacket.Claim{PacketID: "rp2", Claimer: "w", Mint: "M", Chain: chain.Sol, Amount: dec("1"), ClaimedAt: created}, fault.KindInvalid, fault.CodeInvalidParameter},
		{"other mint", nil, redpacket.Claim{PacketID: "rp1", Claimer: "w", Mint: "X", Chain: chain.Sol, Amount: dec("1"), ClaimedAt: created}, fault.KindInvalid, fault.CodeInvalidParameter},
		{"zero amount", nil, claim("w", "0", created), fault.KindInvalid, fault.CodeInvalidParameter},
		{"fractional amount", nil, claim("w", "1.5", created), fault.KindInvalid, fault.CodeInvalidParameter},
		{"no claimer", nil, claim("", "1", created), fault.KindInvalid, fault.CodeMissingParameter},
		// expiredAt itself is already too late.
		{"at expiry", nil, claim("w", "1", expiredAt), fault.KindConflict, redpacket.CodeWithdrawn},
		{"one ms before expiry is fine", nil, claim("w", "1", expiredAt-1), 0, 0},
		{"already expired", func(p *redpacket.RedPacket) { p.Expired = true }, claim("w", "1", created), fault.KindConflict, redpacket.CodeWithdrawn},
		{"duplicate claimer", func(p *redpacket.RedPacket) {
			require.NoError(t, p.ApplyClaim(claim("w", "1", created)))
		}, claim("w", "1", created+1), fault.KindConflict, redpacket.CodeAlreadyClaimed},
		{"beyond max claims", func(p *redpacket.RedPacket) {
			for _, w := range []string{"a", "b", "c"} {
				require.NoError(t, p.ApplyClaim(claim(w, "1", created)))
			}
		}, claim("d", "1", created), fault.KindConflict, 0},
		// 1000 − 600 = 400 remain, so 401 is too much and 400 is exactly enough.
		{"above remaining", func(p *redpacket.RedPacket) {
			require.NoError(t, p.ApplyClaim(claim("a", "600", created)))
		}, claim("b", "401", created), fault.KindConflict, 0},
		{"exactly remaining", func(p *redpacket.RedPacket) {
			require.NoError(t, p.ApplyClaim(claim("a", "600", created)))
		}, claim("b", "400", created), 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := packet()
			if tc.setup != nil {
				tc.setup(&p)
			}
			before := p
			before.Claimers = append([]string(nil), p.Claimers...)
			err := p.ApplyClaim(tc.c)
			if tc.kind == 0 {
				require.NoError(t, err)
				return
			}
			fe, ok := fault.As(err)
			require.True(t, ok, "want fault, got %v", err)
			assert.Equal(t, tc.kind, fe.Kind)
			assert.Equal(t, tc.code, fe.Code)
			assert.Equal(t, before, p, "a refused claim changes nothing")
		})
	}
}

func TestExpire(t *testing.T) {
	expiredAt := created + 24000
	tests := []struct {
		name     string
		claims   []string
		at       int64
		wantErr  bool
		refunded string
	}{
		// 1000 − (300 + 200) = 500 back to the creator.
		{"partly claimed", []string{"300", "200"}, expiredAt, false, "500"},
		{"untouched", nil, expiredAt + 5, false, "1000"},
		{"fully claimed", []string{"600", "400"}, expiredAt, false, "0"},
		{"too early", []string{"300"}, expiredAt - 1, true, "0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := packet()
			for i, a := range tc.claims {
				require.NoError(t, p.ApplyClaim(claim(string(rune('a'+i)), a, created)))
			}
			err := p.Expire(tc.at)
			if tc.wantErr {
				assert.True(t, fault.Is(err, fault.KindConflict))
				assert.False(t, p.Expired)
				return
			}
			require.NoError(t, err)
			assert.True(t, p.Expired)
			assert.Equal(t, tc.refunded, p.RefundedAmount.String())
			assert.True(t, p.Remaining().IsZero())
			require.NoError(t, p.Validate())
			// A retry is a no-op.
			require.NoError(t, p.Expire(tc.at+1000))
			assert.Equal(t, tc.refunded, p.RefundedAmount.String())
		})
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(*redpacket.RedPacket)
		param string
	}{
		{"no id", func(p *redpacket.RedPacket) { p.ID = "" }, "id"},
		{"bad chain", func(p *redpacket.RedPacket) { p.Chain = "doge" }, "chain"},
		{"zero max claims", func(p *redpacket.RedPacket) { p.MaxClaims = 0 }, "maxClaims"},
		{"count above max", func(p *redpacket.RedPacket) { p.ClaimedCount = 4 }, "claimedCount"},
		{"fractional total", func(p *redpacket.RedPacket) { p.TotalAmount = dec("10.5") }, "totalAmount"},
		{"zero total", func(p *redpacket.RedPacket) { p.TotalAmount = decimal.Zero }, "totalAmount"},
		{"overclaimed", func(p *redpacket.RedPacket) { p.ClaimedAmount = dec("1001") }, "claimedAmount"},
		{"expires before creation", func(p *redpacket.RedPacket) { p.ExpiredAt = created - 1 }, "expiredAt"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := packet()
			tc.edit(&p)
			fe, ok := fault.As(p.Validate())
			require.True(t, ok)
			assert.Equal(t, tc.param, fe.Param)
		})
	}
}
