package postgres

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tokenscope/tokenscope/domain/fault"
)

// unavailableRetry is the Retry-After a request that met an unavailable database is answered
// with: a failover (README, "Read replicas and failover") completes in seconds.
const unavailableRetry = time.Second

// Unavailable reports whether err says the database could not be used at all, rather than
// refusing the statement: no connection (refused, reset, closed, timed out), the server
// shutting down (57P01 admin_shutdown, 57P02, 57P03 cannot_connect_now), a connection
// exception (08xxx), too many connections (53300), a read a standby cancelled for recovery
// (40001 "conflict with recovery"), or a standby that refuses a write (25006
// read_only_sql_transaction: a connection left on a demoted primary). A primary failover
// shows itself through these; the request may be retried once it is over.
func Unavailable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "57P01", "57P02", "57P03", "25006", "53300":
			return true
		case "40001": // a standby cancelled the read to replay WAL; only that serialization failure
			return strings.Contains(pgErr.Message, "conflict with recovery")
		}
		return len(pgErr.Code) == 5 && pgErr.Code[:2] == "08"
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	return pgconn.SafeToRetry(err) || pgconn.Timeout(err) || errors.As(err, &connectErr) || errors.As(err, &netErr) ||
		errors.Is(err, pgconn.ErrConnClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// AsUnavailable turns an error Unavailable recognises into the domain's Unavailable fault
// (HTTP 503 with Retry-After); any other error is returned as it is.
func AsUnavailable(err error) error {
	if _, ok := fault.As(err); ok || !Unavailable(err) {
		return err
	}
	return fault.Unavailable("the database is unavailable; retry shortly", unavailableRetry, err)
}
