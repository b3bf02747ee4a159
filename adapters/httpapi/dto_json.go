package httpapi

import (
	"strconv"
	"time"

	"github.com/tokenscope/tokenscope/domain/token"
)

// The encoders the generator (encoders_gen_test.go) does not write: the token records' value
// types (nullString, nullInt, utcTime) and their lists of views (creatorList, liquidityList).

// appendArray writes items as a JSON array, item writing each one: [] when empty or nil.
func appendArray[T any](b []byte, items []T, item func(*T, []byte) []byte) []byte {
	b = append(b, '[')
	for i := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = item(&items[i], b)
	}
	return append(b, ']')
}

// --- token records (dto_token.go) ---

func (l creatorList) appendJSON(b []byte) []byte {
	return appendArray(b, l, func(c *token.Creator, b []byte) []byte {
		dto := creatorDTO(*c)
		return dto.appendJSON(b)
	})
}

func (l liquidityList) appendJSON(b []byte) []byte {
	return appendArray(b, l.pools, func(p *token.PoolLiquidity, b []byte) []byte {
		dto := liquidityOut(p, l.chainName)
		return dto.appendJSON(b)
	})
}

func (s nullString) appendJSON(b []byte) []byte {
	if s == "" {
		return append(b, "null"...)
	}
	return appendString(b, string(s))
}

func (n nullInt) appendJSON(b []byte) []byte {
	if !n.ok {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, n.v, 10)
}

func (u utcTime) appendJSON(b []byte) []byte {
	if u.t == nil {
		return append(b, "null"...)
	}
	// RFC 3339 text is digits, '-', ':', '.', 'T' and 'Z': nothing to escape.
	b = append(b, '"')
	b = u.t.UTC().AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}
