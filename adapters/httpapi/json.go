package httpapi

import (
	"bytes"
	"math/big"
	"math/bits"
	"strconv"
	"unicode/utf8"

	"github.com/shopspring/decimal"
)

// The primitives of the generated encoders (dto_json_gen.go) and of the token records' keyed
// objects (dto_json.go): each writes what encoding/json writes for the Go value.

// appendString writes s as a JSON string the way encoding/json does with HTML escaping off:
// '"', '\\' and control characters are escaped (\b \f \n \r \t by name, others as \u00XX),
// invalid UTF-8 becomes \ufffd, and U+2028 / U+2029 are escaped.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if i+8 <= len(s) {
			w := s[i : i+8]
			if plain8(uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
				uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56) {
				i += 8
				continue
			}
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

const hexDigits = "0123456789abcdef"

// plain8 reports whether none of the 8 bytes of x (8 bytes of a string, little-endian) needs a
// look: each is printable ASCII other than '"' and '\\'. It tests them at once with the "has a
// byte less than n" and "has a zero byte" word tricks; false only sends appendString to its
// byte-by-byte path.
func plain8(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q, bs := x^(ones*'"'), x^(ones*'\\') // zero bytes where x has '"' or '\\'
	control := (x - ones*0x20) &^ x      // high bit set if some byte is below 0x20
	quote := (q - ones) &^ q             // high bit set if some byte of q is zero
	backslash := (bs - ones) &^ bs
	return (x|control|quote|backslash)&highs == 0
}

// appendDecimal writes d as decimal.Decimal's MarshalJSON does: a quoted plain decimal with
// trailing fractional zeros dropped, e.g. "-0.005", "12", "1500". Coefficients of up to 18
// digits are formatted without allocating, longer ones (quotients carry 16 fractional digits)
// with one copy of the coefficient; non-default package settings of shopspring/decimal, and
// exponents above 18, are left to MarshalJSON itself.
func appendDecimal(b []byte, d decimal.Decimal) []byte {
	exp := d.Exponent()
	if decimal.MarshalJSONWithoutQuotes || !decimal.TrimTrailingZeros || decimal.UseScientificNotation || exp > 18 {
		out, _ := d.MarshalJSON() // cannot fail
		return append(b, out...)
	}
	var buf [48]byte
	var digits []byte // of the coefficient's absolute value
	if d.NumDigits() <= 18 {
		c := d.CoefficientInt64() // exact: at most 18 digits
		if c < 0 {
			c = -c
		}
		digits = strconv.AppendInt(buf[:0], c, 10)
	} else {
		digits = appendMagnitude(buf[:0], d.Coefficient())
	}
	b = append(b, '"')
	if d.Sign() < 0 {
		b = append(b, '-')
	}
	switch {
	case len(digits) == 1 && digits[0] == '0':
		b = append(b, '0')
	case exp >= 0:
		b = append(b, digits...)
		for range exp {
			b = append(b, '0')
		}
	default:
		scale := -int(exp)
		intPart, frac, leadingZeros := []byte{'0'}, digits, scale-len(digits)
		if len(digits) > scale {
			intPart, frac, leadingZeros = digits[:len(digits)-scale], digits[len(digits)-scale:], 0
		}
		frac = bytes.TrimRight(frac, "0")
		b = append(b, intPart...)
		if len(frac) > 0 {
			b = append(b, '.')
			for range leadingZeros {
				b = append(b, '0')
			}
			b = append(b, frac...)
		}
	}
	return append(b, '"')
}

// appendMagnitude appends the decimal digits of |c|: below 2^64·10^19 (38 digits) by two
// 64-bit divisions, larger values by math/big.
func appendMagnitude(b []byte, c *big.Int) []byte {
	const e19 = 10_000_000_000_000_000_000
	words := c.Bits()
	if bits.UintSize != 64 || len(words) > 2 {
		return c.Abs(c).Append(b, 10)
	}
	var hi, lo uint64
	if len(words) > 0 {
		lo = uint64(words[0])
	}
	if len(words) == 2 {
		hi = uint64(words[1])
	}
	if hi == 0 {
		return strconv.AppendUint(b, lo, 10)
	}
	if hi >= e19 {
		return c.Abs(c).Append(b, 10)
	}
	// |c| = q·10^19 + r with 1 <= q < 2^64 (since 2^64 <= |c| < 10^19·2^64).
	q, r := bits.Div64(hi, lo, e19)
	b = strconv.AppendUint(b, q, 10)
	var low [19]byte
	for i := len(low) - 1; i >= 0; i-- {
		low[i] = byte('0' + r%10)
		r /= 10
	}
	return append(b, low[:]...)
}
