package webhook

import (
	"strings"
	"time"
)

// crockford is the base32 alphabet of ULIDs (no I, L, O, U).
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// NewEndpointID is "ep_" followed by a ULID of now and 10 caller-drawn random bytes, the
// shape of the public API's ids (ep_01HT7Z4QJ7N2Q9W8P6V3K5M1X2). Ids sort by creation time,
// which keeps list pagination stable.
func NewEndpointID(now time.Time, random [10]byte) string { return "ep_" + ulid(now, random) }

func ulid(now time.Time, random [10]byte) string {
	var b [16]byte
	ms := uint64(now.UnixMilli())
	for i := 5; i >= 0; i-- {
		b[i] = byte(ms)
		ms >>= 8
	}
	copy(b[6:], random[:])
	// 128 bits in 26 five-bit groups: the first group holds only the top 3 bits.
	var sb strings.Builder
	sb.Grow(26)
	for i := 0; i < 26; i++ {
		bit := i*5 - 2 // position of this group's first bit; the first group starts 2 bits early
		v := 0
		for j := 0; j < 5; j++ {
			p := bit + j
			v <<= 1
			if p >= 0 && b[p/8]&(0x80>>(p%8)) != 0 {
				v |= 1
			}
		}
		sb.WriteByte(crockford[v])
	}
	return sb.String()
}
