package postgres

import (
	"errors"
	"fmt"
	"math/big"

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
