package chainevent

import (
	"strconv"

	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/text"
)

// What one event may carry. Every value an event holds is stored and later served by the read
// API, so ingest refuses what Postgres could not hold (a numeric over 131,072 integer digits, an
// index entry over about 2.7 kB: either failed the whole batch with a 500) and what the API's
// records should not carry (a price of 1e10000 makes every detail holding it tens of kB).
const (
	// MaxIntegerDigits bounds a decimal's digits before the point: magnitudes below 10^40.
	MaxIntegerDigits = 40
	// MaxDecimalPlaces bounds a decimal's significant digits after the point: a token's decimals
	// are at most 36, so no amount or price needs more. Trailing zeros do not count.
	MaxDecimalPlaces = 36
	// MaxDecimalText bounds the text of a decimal on the wire, checked before it is parsed (a
	// 500,000-digit number took seconds and hundreds of MB to parse). Every decimal within the
	// two bounds above can be written in 78 characters.
	MaxDecimalText = 128
	// MaxSmallestUnitDigits bounds an integer amount in smallest units (vaultAmount, red packet
	// amounts): the digits of the largest uint256, the widest integer any chain's token uses.
	MaxSmallestUnitDigits = 78
	// MaxNameLen bounds a name or symbol in bytes: they are keys of the search indexes.
	MaxNameLen = 256
	// MaxTextLen bounds every other text field in bytes (URLs, protocol names, memos, extra).
	MaxTextLen = 2048
	// MaxDescriptionLen bounds a token's description in bytes.
	MaxDescriptionLen = 8192
)

// CheckDecimalText refuses the wire text of a decimal longer than MaxDecimalText before anything
// parses it; the error repeats only a short prefix of it.
func CheckDecimalText(field, s string) error {
	if len(s) > MaxDecimalText {
		return fault.Invalid(field, text.Shown(s), "must be a decimal number of at most "+strconv.Itoa(MaxDecimalText)+" characters")
	}
	return nil
}

// CheckDecimal refuses a decimal with MaxIntegerDigits or more digits before the point or more
// than MaxDecimalPlaces significant digits after it. It never expands the value (a tiny text
// like 1e99999999 stands for a number of a hundred million digits).
func CheckDecimal(field string, d decimal.Decimal) error {
	if d.IsZero() {
		return nil
	}
	exp, digits := int64(d.Exponent()), int64(d.NumDigits())
	if digits+exp > MaxIntegerDigits {
		return fault.Invalid(field, shownDecimal(d), "must be less than 1e"+strconv.Itoa(MaxIntegerDigits)+" in magnitude")
	}
	if exp < -MaxDecimalPlaces && (exp < -MaxDecimalPlaces-digits || !d.Equal(d.Truncate(MaxDecimalPlaces))) {
		return fault.Invalid(field, shownDecimal(d), "must have at most "+strconv.Itoa(MaxDecimalPlaces)+" decimal places")
	}
	return nil
}

// shownDecimal is d as an error repeats it: its plain text when short, else its coefficient's
// first digits and exponent (its plain text may be megabytes).
func shownDecimal(d decimal.Decimal) string {
	exp, digits := int64(d.Exponent()), int64(d.NumDigits())
	if digits <= 40 && exp >= -40 && exp <= 40 {
		return d.String()
	}
	c := d.Coefficient().String()
	if len(c) > 24 {
		c = c[:24] + "…"
	}
	return c + "e" + strconv.FormatInt(exp, 10)
}

// decimals checks each named decimal with CheckDecimal and then refuses a negative one; pairs
// are wire name and value.
func decimals(vs ...namedDecimal) error {
	for _, v := range vs {
		if err := CheckDecimal(v.field, v.d); err != nil {
			return err
		}
		if v.d.IsNegative() {
			return fault.Invalid(v.field, v.d.String(), "must not be negative")
		}
	}
	return nil
}

type namedDecimal struct {
	field string
	d     decimal.Decimal
}

// smallestUnits refuses an integer amount in smallest units of more than MaxSmallestUnitDigits
// digits.
func smallestUnits(field string, d decimal.Decimal) error {
	if !d.IsZero() && int64(d.NumDigits())+int64(d.Exponent()) > MaxSmallestUnitDigits {
		return fault.Invalid(field, shownDecimal(d), "must have at most "+strconv.Itoa(MaxSmallestUnitDigits)+" digits")
	}
	return nil
}

// texts refuses a text longer than limit bytes; pairs are wire name, value.
func texts(limit int, pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if len(pairs[i+1]) > limit {
			return fault.Invalid(pairs[i], text.Shown(pairs[i+1]), "must be at most "+strconv.Itoa(limit)+" bytes")
		}
	}
	return nil
}
