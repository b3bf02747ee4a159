package postgres

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/adapters/postgres/internal/dbsqlc"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/page"
	"github.com/tokenscope/tokenscope/domain/text"
	"github.com/tokenscope/tokenscope/ports"
)

// The read paths build their SQL in Go rather than through sqlc: every list has a next and a
// prev form and up to nine optional filters, and the static alternative (one query with
// `$n IS NULL OR col = $n` per filter) gets generic plans that cannot use the index each
// filter needs. Every value still travels as a bind parameter; only fixed fragments from this
// file are concatenated.

// MarketReader implements the read ports (tokens, trades, pool snapshots, red packets and
// positions) over the tables the ingest engine keeps current.
type MarketReader struct {
	pool ReadDB
	q    *dbsqlc.Queries
}

var (
	_ ports.TokenReader     = (*MarketReader)(nil)
	_ ports.TradeReader     = (*MarketReader)(nil)
	_ ports.PoolReader      = (*MarketReader)(nil)
	_ ports.RedPacketReader = (*MarketReader)(nil)
	_ ports.PositionReader  = (*MarketReader)(nil)
)

// NewMarketReader builds the reader over pool (the primary's pool or a ReadRouter).
func NewMarketReader(pool ReadDB) *MarketReader {
	return &MarketReader{pool: pool, q: dbsqlc.New()}
}

// keyPart is one column of a keyset: an SQL expression and the type its cursor value is cast to.
type keyPart struct {
	expr, sqlType string
}

// keyset is the order of a list: its parts compared as one row, all ascending or all
// descending, so a row comparison can walk a matching multi-column index either way.
type keyset struct {
	kind  string // cursor kind (page.Encode)
	parts []keyPart
	desc  bool
}

// args collects bind parameters and hands out their placeholders.
type args struct{ vals []any }

func (a *args) add(v any) string {
	a.vals = append(a.vals, v)
	return "$" + strconv.Itoa(len(a.vals))
}

// position decodes the request's cursor (nil when there is none).
func (k keyset) position(p ports.PageRequest) ([]string, error) {
	if p.Cursor == "" {
		return nil, nil
	}
	vals, err := page.Decode(k.kind, p.Cursor)
	if err != nil {
		return nil, err
	}
	if len(vals) != len(k.parts) {
		return nil, fault.Invalid("cursor", p.Cursor, "not a cursor of this list").WithCode(fault.CodeInvalidCursor)
	}
	for i, v := range vals {
		if !valid(k.parts[i].sqlType, v) {
			return nil, fault.Invalid("cursor", p.Cursor, "not a cursor of this list").WithCode(fault.CodeInvalidCursor)
		}
	}
	return vals, nil
}

// valid checks a decoded cursor value against its column type, so a well-formed cursor of a
// changed list can never reach Postgres as a cast error.
func valid(sqlType, v string) bool {
	switch sqlType {
	case "bigint":
		_, err := strconv.ParseInt(v, 10, 64)
		return err == nil
	case "numeric":
		if len(v) > 200 || strings.ContainsAny(v, "eE") {
			return false
		}
		_, err := decimal.NewFromString(v)
		return err == nil
	}
	// text: what Postgres can store (a forged cursor can carry anything; its checksum is no secret).
	return text.Storable(v)
}

// clause renders the keyset condition (empty without a cursor) and the ORDER BY for dir. Prev
// reads backwards from the cursor; page.Build turns those rows around.
func (k keyset) clause(dir page.Direction, pos []string, a *args) (cond, order string) {
	desc := k.desc
	if dir == page.Prev {
		desc = !desc
	}
	cols := make([]string, len(k.parts))
	ords := make([]string, len(k.parts))
	for i, p := range k.parts {
		cols[i] = p.expr
		if desc {
			ords[i] = p.expr + " DESC"
		} else {
			ords[i] = p.expr + " ASC"
		}
	}
	order = strings.Join(ords, ", ")
	if pos == nil {
		return "", order
	}
	phs := make([]string, len(pos))
	for i, v := range pos {
		phs[i] = a.add(v) + "::" + k.parts[i].sqlType
	}
	op := ">"
	if desc {
		op = "<"
	}
	return fmt.Sprintf("(%s) %s (%s)", strings.Join(cols, ", "), op, strings.Join(phs, ", ")), order
}

// where joins conditions with AND ("TRUE" when there are none).
func where(conds []string) string {
	var out []string
	for _, c := range conds {
		if c != "" {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return "TRUE"
	}
	return strings.Join(out, " AND ")
}

// limitOf is the page size plus the one row that proves another page exists.
func limitOf(p ports.PageRequest) int {
	n := p.Limit
	if n < 1 {
		n = page.DefaultLimit
	}
	return n + 1
}
