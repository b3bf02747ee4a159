package httpapi

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/page"
	"github.com/tokenscope/tokenscope/ports"
)

// queryList reads an array parameter sent as repeated keys (a=1&a=2), bracket keys (a[]=1)
// or a comma list (a=1,2), in any mix; blanks are dropped.
func queryList(c *fiber.Ctx, key string) []string {
	args := c.Context().QueryArgs()
	var raw [][]byte
	raw = append(raw, args.PeekMulti(key)...)
	raw = append(raw, args.PeekMulti(key+"[]")...)
	n := 0
	for _, r := range raw {
		n += bytes.Count(r, []byte{','}) + 1
	}
	var out []string
	if n > 0 {
		out = make([]string, 0, n)
	}
	for _, r := range raw {
		for rest, more := string(r), true; more; {
			var part string
			part, rest, more = strings.Cut(rest, ",")
			if p := strings.TrimSpace(part); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// queryString reads a single-valued parameter (the first when repeated), trimmed.
func queryString(c *fiber.Ctx, key string) string {
	return strings.TrimSpace(string(c.Context().QueryArgs().Peek(key)))
}

// queryInt64 parses an optional integer parameter; nil when absent.
func queryInt64(c *fiber.Ctx, key string) (*int64, error) {
	s := queryString(c, key)
	if s == "" {
		return nil, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return nil, fault.Invalid(key, s, "must be an integer").WithCode(fault.CodeInvalidNumber)
	}
	return &n, nil
}

// maxListItems bounds every list a client can send (addresses, keywords…).
const maxListItems = 100

// boundedList is queryList with the 100-item bound.
func boundedList(c *fiber.Ctx, key string) ([]string, error) {
	l := queryList(c, key)
	if len(l) > maxListItems {
		return nil, fault.Invalid(key, strconv.Itoa(len(l))+" items", "at most 100 items").WithCode(fault.CodeAddressesExceeded)
	}
	return l, nil
}

// pageRequest reads cursor, limit (1..100, default def) and direction.
func pageRequest(c *fiber.Ctx, def int) (ports.PageRequest, error) {
	dir, err := page.ParseDirection(queryString(c, "direction"))
	if err != nil {
		return ports.PageRequest{}, err
	}
	limit, err := page.ParseLimit(queryString(c, "limit"), def, page.MaxLimit)
	if err != nil {
		return ports.PageRequest{}, err
	}
	return ports.PageRequest{Cursor: queryString(c, "cursor"), Limit: limit, Direction: dir}, nil
}

// secondsOrMillis reads a Unix time parameter. The spec says seconds while the public API's
// examples are milliseconds, so values from 10^12 on (after September 2001 in ms, year 33658
// in s) are taken as milliseconds. upper widens a second to its last millisecond, so an
// inclusive upper bound in seconds keeps the whole second.
func secondsOrMillis(c *fiber.Ctx, key string, upper bool) (*int64, error) {
	v, err := queryInt64(c, key)
	if err != nil || v == nil {
		return nil, err
	}
	if *v < 0 {
		return nil, fault.Invalid(key, strconv.FormatInt(*v, 10), "must be a Unix time in seconds or milliseconds, not negative").
			WithCode(fault.CodeInvalidTimestamp)
	}
	ms := *v
	if ms < 1_000_000_000_000 {
		ms *= 1000
		if upper {
			ms += 999
		}
	}
	return &ms, nil
}

// nonNegative reads an optional integer parameter that must not be negative.
func nonNegative(c *fiber.Ctx, key string) (*int64, error) {
	v, err := queryInt64(c, key)
	if err != nil || v == nil {
		return nil, err
	}
	if *v < 0 {
		return nil, fault.Invalid(key, strconv.FormatInt(*v, 10), "must not be negative")
	}
	return v, nil
}
