package ndjson

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/shopspring/decimal"
)

// scanTrade decodes a trade line into w without encoding/json, for the common shape: one
// object, keys spelled exactly as tradeWire's tags, string values without escapes or control
// characters, integers as plain integer literals, decimals as plain strings or number literals,
// nothing after the object. It reports false for anything else (an unknown or differently cased
// key, an escape, null, a value of the wrong kind, an integer out of range, malformed JSON), and
// the caller then decodes the line with encoding/json, which decides it. Where it reports true,
// w holds what encoding/json would have decoded: repeated keys keep the last value, as there.
//
// Trades are almost every line of an import, and encoding/json's reflection over 31 fields was
// the largest CPU cost of decoding them.
func scanTrade(b []byte, w *tradeWire) bool {
	// One copy of the line; every string field is a part of it (one allocation, not thirty).
	s := scanner{b: string(b)}
	s.ws()
	if !s.byte('{') {
		return false
	}
	s.ws()
	if s.byte('}') {
		return s.end()
	}
	for {
		key, ok := s.str()
		if !ok {
			return false
		}
		s.ws()
		if !s.byte(':') {
			return false
		}
		s.ws()
		if !s.tradeField(key, w) {
			return false
		}
		s.ws()
		if s.byte(',') {
			s.ws()
			continue
		}
		if s.byte('}') {
			return s.end()
		}
		return false
	}
}

// tradeField decodes the value of key into its field of w.
func (s *scanner) tradeField(key string, w *tradeWire) bool {
	switch key {
	case "type":
		return s.text(&w.Type)
	case "chain":
		return s.text(&w.Chain)
	case "transactionSignature":
		return s.text(&w.TransactionSignature)
	case "instructionIndex":
		v, ok := s.int(32)
		w.InstructionIndex = int32(v)
		return ok
	case "blockHeight":
		return s.int64(&w.BlockHeight)
	case "blockSlot":
		return s.int64(&w.BlockSlot)
	case "blockTimestamp":
		return s.int64(&w.BlockTimestamp)
	case "accountOwnerAddress":
		return s.text(&w.AccountOwnerAddress)
	case "poolAddress":
		return s.text(&w.PoolAddress)
	case "side":
		return s.text(&w.Side)
	case "status":
		return s.text(&w.Status)
	case "tokenAddress":
		return s.text(&w.TokenAddress)
	case "tokenName":
		return s.text(&w.TokenName)
	case "tokenSymbol":
		return s.text(&w.TokenSymbol)
	case "tokenImageUrl":
		return s.text(&w.TokenImageURL)
	case "tokenAmount":
		return s.num(&w.TokenAmount)
	case "tokenAmountInNative":
		return s.num(&w.TokenAmountInNative)
	case "tokenAmountInUsd":
		return s.num(&w.TokenAmountInUSD)
	case "tokenPriceInNative":
		return s.num(&w.TokenPriceInNative)
	case "tokenPriceInUsd":
		return s.num(&w.TokenPriceInUSD)
	case "sideTokenAddress":
		return s.text(&w.SideTokenAddress)
	case "sideTokenName":
		return s.text(&w.SideTokenName)
	case "sideTokenSymbol":
		return s.text(&w.SideTokenSymbol)
	case "sideTokenImageUrl":
		return s.text(&w.SideTokenImageURL)
	case "sideTokenAmount":
		return s.num(&w.SideTokenAmount)
	case "sideTokenAmountInNative":
		return s.num(&w.SideTokenAmountInNative)
	case "sideTokenAmountInUsd":
		return s.num(&w.SideTokenAmountInUSD)
	case "sideTokenPriceInNative":
		return s.num(&w.SideTokenPriceInNative)
	case "sideTokenPriceInUsd":
		return s.num(&w.SideTokenPriceInUSD)
	case "dexImage":
		return s.text(&w.DexImage)
	case "dexProgramAddress":
		return s.text(&w.DexProgramAddress)
	case "dexProtocolFamily":
		return s.text(&w.DexProtocolFamily)
	}
	return false
}

// scanner reads JSON tokens from b at i.
type scanner struct {
	b string
	i int
}

// ws skips JSON whitespace.
func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// byte consumes c if it is next.
func (s *scanner) byte(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// end reports whether only whitespace is left.
func (s *scanner) end() bool {
	s.ws()
	return s.i == len(s.b)
}

// str reads a string literal with no escape and no control character, valid UTF-8, and returns
// its content: exactly what encoding/json unquotes such a literal to.
func (s *scanner) str() (string, bool) {
	if !s.byte('"') {
		return "", false
	}
	start := s.i
	ascii := true
	for ; s.i < len(s.b); s.i++ {
		switch c := s.b[s.i]; {
		case c == '"':
			v := s.b[start:s.i]
			s.i++
			return v, ascii || utf8.ValidString(v)
		case c == '\\' || c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return "", false
}

// text reads a string value into v.
func (s *scanner) text(v *string) bool {
	b, ok := s.str()
	if ok {
		*v = b
	}
	return ok
}

// num reads a decimal on the wire, a string or a number literal, into v as Num.UnmarshalJSON
// keeps it: the string's content or the literal's text.
func (s *scanner) num(v *Num) bool {
	if s.i < len(s.b) && s.b[s.i] == '"' {
		b, ok := s.str()
		if ok {
			*v = Num(b)
		}
		return ok
	}
	b, ok := s.number()
	if ok {
		*v = Num(b)
	}
	return ok
}

// number reads a JSON number literal (RFC 8259 grammar) and returns its text.
func (s *scanner) number() (string, bool) {
	start := s.i
	s.byte('-')
	switch {
	case s.byte('0'):
	case s.digits() == 0:
		return "", false
	}
	if s.byte('.') && s.digits() == 0 {
		return "", false
	}
	if s.byte('e') || s.byte('E') {
		if !s.byte('+') {
			s.byte('-')
		}
		if s.digits() == 0 {
			return "", false
		}
	}
	return s.b[start:s.i], true
}

// digits consumes a run of decimal digits and returns its length.
func (s *scanner) digits() int {
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i - start
}

// int reads an integer literal that fits in bits bits (encoding/json refuses a fraction, an
// exponent or an overflow for an integer field).
func (s *scanner) int(bits int) (int64, bool) {
	b, ok := s.number()
	if !ok {
		return 0, false
	}
	if strings.ContainsAny(b, ".eE") {
		return 0, false
	}
	v, err := strconv.ParseInt(b, 10, bits)
	return v, err == nil
}

func (s *scanner) int64(v *int64) bool {
	n, ok := s.int(64)
	if ok {
		*v = n
	}
	return ok
}

// plainDecimal parses s when it is digits with an optional leading minus and an optional point
// between digits, at most 18 characters besides the point: the decimal decimal.NewFromString
// makes of it (big.NewInt of the digits, exponent minus the fraction's length), without its
// general scanning (exponents, the Unicode minus, long coefficients), which it leaves to
// NewFromString by reporting false.
func plainDecimal(s string) (decimal.Decimal, bool) {
	i, neg := 0, false
	if len(s) > 0 && s[0] == '-' {
		i, neg = 1, true
	}
	var v int64
	digits, point := 0, -1
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			v = v*10 + int64(c-'0')
			digits++
		case c == '.' && point < 0 && digits > 0:
			point = i
		default:
			return decimal.Decimal{}, false
		}
	}
	numLen, exp := len(s), 0
	if point >= 0 {
		numLen--
		exp = -(len(s) - point - 1)
	}
	if digits == 0 || numLen > 18 || point == len(s)-1 {
		return decimal.Decimal{}, false
	}
	if neg {
		v = -v
	}
	return decimal.New(v, int32(exp)), true
}
