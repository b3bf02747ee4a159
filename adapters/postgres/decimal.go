package postgres

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"

	pgxdecimal "github.com/jackc/pgx-shopspring-decimal"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/shopspring/decimal"
)

// registerDecimalScan makes binary numerics scan straight into *decimal.Decimal. pgx tries a
// target's sql.Scanner before the wrap functions pgxdecimal.Register installs, so without this a
// numeric read into a decimal.Decimal is formatted as text by pgx and parsed back by decimal's
// Scan, which was most of the CPU time of reading token details (7 windows of 14 numerics each).
// The decimal made is the one the text round trip made, exponent included. Call it after
// pgxdecimal.Register; every other target keeps pgxdecimal's behaviour.
func registerDecimalScan(m *pgtype.Map) {
	m.RegisterType(&pgtype.Type{Name: "numeric", OID: pgtype.NumericOID, Codec: decimalCodec{}})
}

type decimalCodec struct{ pgxdecimal.NumericCodec }

func (c decimalCodec) PlanScan(m *pgtype.Map, oid uint32, format int16, target any) pgtype.ScanPlan {
	if _, ok := target.(*decimal.Decimal); ok && format == pgtype.BinaryFormatCode {
		if next := c.NumericCodec.PlanScan(m, oid, format, (*decimalTarget)(nil)); next != nil {
			return binaryNumericToDecimal{next: next}
		}
	}
	return c.NumericCodec.PlanScan(m, oid, format, target)
}

// PlanEncode writes a decimal.Decimal bound to a numeric in the binary format straight from its
// decimal digits (appendNumeric); every other value keeps pgxdecimal's plan. pgx's own binary
// numeric encoder divides a big.Int by 10,000 once per output digit, which was the largest CPU
// cost of COPYing trades (10 numerics a row) in the ingesting process.
func (c decimalCodec) PlanEncode(m *pgtype.Map, oid uint32, format int16, value any) pgtype.EncodePlan {
	if _, ok := value.(decimal.Decimal); ok && format == pgtype.BinaryFormatCode {
		return encodeDecimalBinary{}
	}
	return c.NumericCodec.PlanEncode(m, oid, format, value)
}

type encodeDecimalBinary struct{}

func (encodeDecimalBinary) Encode(value any, buf []byte) ([]byte, error) {
	return appendNumeric(buf, value.(decimal.Decimal))
}

// appendNumeric appends d in Postgres's binary numeric form: the digit count, the weight (the
// power of 10,000 of the first digit), the sign and the display scale (int16 each), then the
// base-10,000 digits. The display scale is what pgx's encoder sends (the decimal's places, 0
// for a positive exponent), so the stored value and its text are the same. A coefficient of up
// to 18 digits (every amount the simulator and real trades carry) is read without copying it
// and without allocating.
func appendNumeric(buf []byte, d decimal.Decimal) ([]byte, error) {
	exp := d.Exponent()
	if exp < -math.MaxInt16 {
		return nil, fmt.Errorf("cannot encode numeric: exponent %d is out of range", exp)
	}
	var scratch [48]byte
	var digits []byte
	var sign uint16
	if d.NumDigits() <= 18 {
		v := d.CoefficientInt64()
		if v < 0 {
			sign, v = 0x4000, -v
		}
		digits = strconv.AppendUint(scratch[:0], uint64(v), 10)
	} else {
		co := d.Coefficient()
		if co.Sign() < 0 {
			sign = 0x4000
			co.Neg(co)
		}
		digits = co.Append(scratch[:0], 10)
	}
	zero := len(digits) == 1 && digits[0] == '0'
	dscale := uint16(0)
	if exp < 0 {
		dscale = uint16(-exp)
	} else if !zero {
		for ; exp > 0; exp-- {
			digits = append(digits, '0')
		}
	}
	frac := int(-exp) // the last frac decimal digits are the fraction
	// Pad the integer part on the left and the fraction on the right to whole base-10,000 digits
	// (a fraction longer than the digits first gets its leading zeros).
	leadFrac := max(frac-len(digits), 0)
	intLen := len(digits) + leadFrac - frac
	lead := (4 - intLen%4) % 4
	trail := (4 - frac%4) % 4
	n := (lead + leadFrac + len(digits) + trail) / 4
	// digit is the i-th decimal digit of the padded string.
	digit := func(i int) uint16 {
		i -= lead + leadFrac
		if i < 0 || i >= len(digits) {
			return 0
		}
		return uint16(digits[i] - '0')
	}
	group := func(g int) uint16 {
		i := 4 * g
		return digit(i)*1000 + digit(i+1)*100 + digit(i+2)*10 + digit(i+3)
	}
	weight := (lead+intLen)/4 - 1
	first, last := 0, n
	for first < last && group(first) == 0 {
		first, weight = first+1, weight-1
	}
	for last > first && group(last-1) == 0 {
		last--
	}
	if first == last {
		weight, sign = 0, 0
	}
	if last-first > math.MaxUint16 || weight > math.MaxInt16 || weight < math.MinInt16 {
		return nil, fmt.Errorf("cannot encode numeric: %s is out of range", d)
	}
	buf = binary.BigEndian.AppendUint16(buf, uint16(last-first))
	buf = binary.BigEndian.AppendUint16(buf, uint16(int16(weight)))
	buf = binary.BigEndian.AppendUint16(buf, sign)
	buf = binary.BigEndian.AppendUint16(buf, dscale)
	for g := first; g < last; g++ {
		buf = binary.BigEndian.AppendUint16(buf, group(g))
	}
	return buf, nil
}

// binaryNumericToDecimal runs pgx's binary numeric decoder with the target seen as a
// pgtype.NumericScanner.
type binaryNumericToDecimal struct{ next pgtype.ScanPlan }

func (p binaryNumericToDecimal) Scan(src []byte, target any) error {
	return p.next.Scan(src, (*decimalTarget)(target.(*decimal.Decimal)))
}

type decimalTarget decimal.Decimal

var big10 = big.NewInt(10)

func (d *decimalTarget) ScanNumeric(v pgtype.Numeric) error {
	switch {
	case !v.Valid:
		return errors.New("cannot scan NULL into *decimal.Decimal")
	case v.NaN:
		return errors.New("cannot scan NaN into *decimal.Decimal")
	case v.InfinityModifier != pgtype.Finite:
		return fmt.Errorf("cannot scan %v into *decimal.Decimal", v.InfinityModifier)
	}
	n, exp := v.Int, v.Exp
	if exp > 0 {
		// The text form of 1000 parses as 1000×10⁰; pgx hands over 1×10³.
		n = new(big.Int).Mul(n, new(big.Int).Exp(big10, big.NewInt(int64(exp)), nil))
		exp = 0
	}
	*d = decimalTarget(decimal.NewFromBigInt(n, exp))
	return nil
}
