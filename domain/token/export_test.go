package token

import (
	"strings"

	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/domain/fault"
)

// Functions only the tests use: nothing reachable from the binaries calls them (make deadcode).

// Value is Lookup with absent data read as 0.
func Value(d Detail, f Field) decimal.Decimal {
	v, _ := Lookup(d, f)
	return v
}

// ParseWindow accepts one of AllWindows (case-insensitive: "1H" is 1h).
func ParseWindow(param, s string) (Window, error) {
	w := Window(strings.ToLower(strings.TrimSpace(s)))
	for _, v := range AllWindows {
		if v == w {
			return w, nil
		}
	}
	allowed := make([]string, len(AllWindows))
	for i, v := range AllWindows {
		allowed[i] = string(v)
	}
	return "", fault.InvalidParam(param, s, allowed...)
}
