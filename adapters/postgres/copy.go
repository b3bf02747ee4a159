package postgres

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"
)

// copyRows is a COPY … FROM STDIN (FORMAT binary) stream built in memory, for the engine's bulk
// writes of a batch (trades, positions, bucket and holder-total deltas). Each field is written
// straight from the Go value in the binary form of its column's type, where pgx.CopyFrom takes
// rows of boxed values ([]any) and looks up an encode plan for every field by the value's type:
// per trade that was a few dozen allocations and lookups, and the COPY encoding was about a
// sixth of the ingesting process's CPU. The methods name the Postgres type they write; a column
// of another type makes Postgres refuse the COPY (its binary input functions check the length),
// so a mismatch fails the batch rather than storing something else.
type copyRows struct {
	buf  []byte
	rows int
	err  error
}

// copySignature starts every binary COPY stream: the signature, then the flags and the length
// of the header extension (both zero).
const copySignature = "PGCOPY\n\377\r\n\000"

// copyBuffers keeps the buffers of finished COPYs for the next batch's: a batch's streams are
// megabytes, and allocating (zeroing) and growing them anew each time showed in the profile.
var copyBuffers sync.Pool

func newCopyRows(sizeHint int) *copyRows {
	c := &copyRows{}
	if p, ok := copyBuffers.Get().(*[]byte); ok && cap(*p) >= sizeHint/2 {
		c.buf = (*p)[:0]
	} else {
		c.buf = make([]byte, 0, len(copySignature)+8+sizeHint)
	}
	c.buf = append(c.buf, copySignature...)
	c.buf = binary.BigEndian.AppendUint32(c.buf, 0)
	c.buf = binary.BigEndian.AppendUint32(c.buf, 0)
	return c
}

// row starts a row of fields columns.
func (c *copyRows) row(fields int) {
	c.buf = binary.BigEndian.AppendUint16(c.buf, uint16(fields))
	c.rows++
}

// text writes a TEXT field.
func (c *copyRows) text(s string) {
	c.buf = binary.BigEndian.AppendUint32(c.buf, uint32(len(s)))
	c.buf = append(c.buf, s...)
}

// int4 writes an INTEGER field.
func (c *copyRows) int4(v int32) {
	c.buf = binary.BigEndian.AppendUint32(c.buf, 4)
	c.buf = binary.BigEndian.AppendUint32(c.buf, uint32(v))
}

// int8 writes a BIGINT field.
func (c *copyRows) int8(v int64) {
	c.buf = binary.BigEndian.AppendUint32(c.buf, 8)
	c.buf = binary.BigEndian.AppendUint64(c.buf, uint64(v))
}

// int8OrNull writes a BIGINT field, NULL for nil.
func (c *copyRows) int8OrNull(v *int64) {
	if v == nil {
		c.null()
		return
	}
	c.int8(*v)
}

// null writes a NULL field.
func (c *copyRows) null() {
	c.buf = binary.BigEndian.AppendUint32(c.buf, 0xFFFFFFFF)
}

// numeric writes a NUMERIC field as the adapter's decimal codec sends a parameter (appendNumeric).
func (c *copyRows) numeric(d decimal.Decimal) {
	at := len(c.buf)
	c.buf = binary.BigEndian.AppendUint32(c.buf, 0)
	buf, err := appendNumeric(c.buf, d)
	if err != nil {
		if c.err == nil {
			c.err = err
		}
		c.buf = c.buf[:at]
		c.null()
		return
	}
	binary.BigEndian.PutUint32(buf[at:], uint32(len(buf)-at-4))
	c.buf = buf
}

// release gives the buffer back for another copyRows; c is empty afterwards.
func (c *copyRows) release() {
	if cap(c.buf) <= 64<<20 {
		buf := c.buf[:0]
		copyBuffers.Put(&buf)
	}
	c.buf, c.rows = nil, 0
}

// copyInto COPYs the rows into table (cols, in the order every row wrote its fields) in tx and
// returns how many rows were copied. No rows copy nothing and send nothing.
func (c *copyRows) copyInto(ctx context.Context, tx pgx.Tx, table string, cols []string) (int64, error) {
	if c.err != nil {
		return 0, c.err
	}
	if c.rows == 0 {
		return 0, nil
	}
	quoted := make([]string, len(cols))
	for i, col := range cols {
		quoted[i] = pgx.Identifier{col}.Sanitize()
	}
	c.buf = binary.BigEndian.AppendUint16(c.buf, 0xFFFF) // the trailer
	// hand-built: COPY of a batch's rows; the table and column lists are the callers' constants.
	tag, err := tx.Conn().PgConn().CopyFrom(ctx, bytes.NewReader(c.buf),
		"COPY "+pgx.Identifier{table}.Sanitize()+" ("+strings.Join(quoted, ", ")+") FROM STDIN (FORMAT binary)")
	if err != nil {
		// Not released: on some failures pgconn returns before its writer stopped reading.
		return 0, err
	}
	want := int64(c.rows)
	c.release()
	if n := tag.RowsAffected(); n != want {
		return n, fmt.Errorf("copied %d of %d rows", n, want)
	}
	return want, nil
}
