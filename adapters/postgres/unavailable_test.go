package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"

	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/domain/fault"
)

func TestUnavailableRecognisesFailoverErrors(t *testing.T) {
	for name, err := range map[string]error{
		"admin shutdown":       &pgconn.PgError{Code: "57P01"},
		"crash shutdown":       &pgconn.PgError{Code: "57P02"},
		"cannot connect now":   &pgconn.PgError{Code: "57P03"},
		"read-only standby":    fmt.Errorf("insert: %w", &pgconn.PgError{Code: "25006"}),
		"connection failure":   &pgconn.PgError{Code: "08006"},
		"too many connections": &pgconn.PgError{Code: "53300"},
		"recovery conflict":    &pgconn.PgError{Code: "40001", Message: "canceling statement due to conflict with recovery"},
		"conn closed":          fmt.Errorf("query: %w", pgconn.ErrConnClosed),
		"refused":              &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED},
		"reset":                fmt.Errorf("read: %w", syscall.ECONNRESET),
		"unexpected eof":       fmt.Errorf("receive: %w", io.ErrUnexpectedEOF),
	} {
		assert.True(t, postgres.Unavailable(err), name)
		f, ok := fault.As(postgres.AsUnavailable(err))
		if assert.True(t, ok, name) {
			assert.Equal(t, fault.KindUnavailable, f.Kind, name)
			assert.Positive(t, f.RetryAfter, name)
		}
	}
	for name, err := range map[string]error{
		"unique violation": &pgconn.PgError{Code: "23505"},
		"syntax":           &pgconn.PgError{Code: "42601"},
		"serialization":    &pgconn.PgError{Code: "40001", Message: "could not serialize access due to concurrent update"},
		"plain":            errors.New("something else"),
		"canceled":         context.Canceled,
		"nil":              nil,
	} {
		assert.False(t, postgres.Unavailable(err), name)
		assert.Equal(t, err, postgres.AsUnavailable(err), name)
	}
	notFound := fault.NotFound("token", "x")
	assert.Same(t, notFound, postgres.AsUnavailable(notFound), "a fault stays as it is")
}
