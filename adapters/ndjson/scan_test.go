package ndjson

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/shopspring/decimal"
)

// plainDecimal must give exactly what decimal.NewFromString gives (value and exponent) wherever
// it answers, and leave every other string to it.
func TestPlainDecimalIsNewFromString(t *testing.T) {
	cases := []string{"0", "-0", "0.0", "-0.000", "1", "100", "0.005", "12.50", "-12.50", "007", "1.", ".5", "-.5",
		"-", "", "+1", "1e3", "1E-3", "1.2.3", "--1", "1-", "\u22121", "123456789012345678", "-123456789012345678",
		"12345678901234567.8", "1234567890123456789", "-12345678901234567", "0.000000000000000001",
		"999999999999999999", "9999999999999999999", " 1", "1 "}
	r := rand.New(rand.NewPCG(1, 2))
	const alphabet = "0123456789.-e+ "
	for range 20000 {
		b := make([]byte, 1+r.IntN(22))
		for i := range b {
			if r.IntN(10) < 8 {
				b[i] = byte('0' + r.IntN(10))
			} else {
				b[i] = alphabet[r.IntN(len(alphabet))]
			}
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		got, ok := plainDecimal(s)
		if !ok {
			continue
		}
		want, err := decimal.NewFromString(s)
		if err != nil {
			t.Fatalf("%q: plainDecimal gave %s, NewFromString refuses it: %v", s, got, err)
		}
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("%q: plainDecimal %s (exp %d), NewFromString %s (exp %d)", s, got, got.Exponent(), want, want.Exponent())
		}
	}
}
