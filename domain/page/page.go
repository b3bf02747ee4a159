// Package page is the cursor pagination shared by every list the service returns: the direction
// and limit parameters, an opaque cursor codec, and the page a keyset query turns into. It may
// import only the standard library and domain/fault.
package page

import (
	"strconv"
	"strings"

	"github.com/tokenscope/tokenscope/domain/fault"
)

// Direction says which way a page moves from its cursor.
type Direction string

const (
	Next Direction = "next"
	Prev Direction = "prev"
)

// ParseDirection reads the direction query parameter; an empty value means Next.
func ParseDirection(raw string) (Direction, error) {
	switch strings.ToLower(strings.TrimSpace(raw)) {
	case "", string(Next):
		return Next, nil
	case string(Prev):
		return Prev, nil
	}
	return "", fault.InvalidParam("direction", raw, string(Next), string(Prev))
}

// DefaultLimit and MaxLimit are the documented page sizes of the cursor lists.
const (
	DefaultLimit = 20
	MaxLimit     = 100
)

// ParseLimit reads the limit query parameter: empty means def, anything else must be an integer
// in 1..max. The error names "limit" and the range so a client can correct itself.
func ParseLimit(raw string, def, max int) (int, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > max {
		return 0, fault.Invalid("limit", raw, "must be an integer between 1 and "+strconv.Itoa(max))
	}
	return n, nil
}

// Page is one page of a keyset-paginated list.
type Page[T any] struct {
	Items       []T
	StartCursor *string
	EndCursor   *string
	HasNext     bool
	HasPrev     bool
}

// Build turns the rows of one keyset query into a page.
//
// The contract the query must follow: ask for limit+1 rows. For Next, fetch rows strictly after
// the cursor in list order (from the start of the list when there is no cursor). For Prev, fetch
// rows strictly before the cursor in reverse list order (from the end of the list when there is
// no cursor). The extra row only proves that more rows lie beyond the page; Build drops it and
// puts a Prev page back into list order.
//
// A cursor proves that rows lie on its other side (the client got it from a page that held
// them), so the side the query did not look at is reported as present whenever hadCursor is
// true. That is wrong only if those rows were deleted since, which costs a client one empty page.
// cursorOf renders the keyset of a row; Items is never nil, so it encodes as [].
func Build[T any](rows []T, limit int, dir Direction, hadCursor bool, cursorOf func(T) string) Page[T] {
	more := len(rows) > limit
	n := min(len(rows), limit)
	items := make([]T, n)
	if dir == Prev {
		for i := range n {
			items[n-1-i] = rows[i]
		}
	} else {
		copy(items, rows[:n])
	}
	p := Page[T]{Items: items}
	if dir == Prev {
		p.HasPrev, p.HasNext = more, hadCursor
	} else {
		p.HasNext, p.HasPrev = more, hadCursor
	}
	if n > 0 {
		start, end := cursorOf(items[0]), cursorOf(items[n-1])
		p.StartCursor, p.EndCursor = &start, &end
	}
	return p
}
