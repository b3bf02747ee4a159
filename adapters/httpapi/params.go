package httpapi

import (
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/tokenscope/tokenscope/domain/fault"
)

// queryList reads an array parameter sent as repeated keys (a=1&a=2), bracket keys (a[]=1)
// or a comma list (a=1,2), in any mix; blanks are dropped.
func queryList(c *fiber.Ctx, key string) []string {
	args := c.Context().QueryArgs()
	var raw [][]byte
	raw = append(raw, args.PeekMulti(key)...)
	raw = append(raw, args.PeekMulti(key+"[]")...)
	var out []string
	for _, r := range raw {
		for _, part := range strings.Split(string(r), ",") {
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
