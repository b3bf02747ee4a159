package httpapi

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/domain/fault"
)

// TestErrorHandlerClassifies: an adapter error no use case mapped is classified before it is
// rendered, so a database lost during a failover answers 503 with Retry-After, not 500.
func TestErrorHandlerClassifies(t *testing.T) {
	lost := errors.New("connection lost")
	classify := func(err error) error {
		if errors.Is(err, lost) {
			return fault.Unavailable("the database is unavailable; retry shortly", 2*time.Second, err)
		}
		return err
	}
	f := fiber.New(fiber.Config{ErrorHandler: errorHandler(slog.New(slog.DiscardHandler), classify)})
	f.Get("/lost", func(*fiber.Ctx) error { return lost })
	f.Get("/other", func(*fiber.Ctx) error { return errors.New("bug") })

	res, err := f.Test(httptest.NewRequest("GET", "/lost", nil))
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	assert.Equal(t, fiber.StatusServiceUnavailable, res.StatusCode, string(body))
	assert.Equal(t, "2", res.Header.Get(fiber.HeaderRetryAfter))

	res, err = f.Test(httptest.NewRequest("GET", "/other", nil))
	require.NoError(t, err)
	assert.Equal(t, fiber.StatusInternalServerError, res.StatusCode, "only what the classifier recognises changes")
}

// TestReadyzOptionalCheck: an optional check (a read replica) is named in the details with its
// state but does not make the process unready; a required one does.
func TestReadyzOptionalCheck(t *testing.T) {
	up := func(context.Context) error { return nil }
	lagging := func(context.Context) error { return errors.New("lagging 7s") }
	f := fiber.New()
	f.Get("/a", readyz([]Check{{Name: "postgres", Ping: up}, {Name: "postgres replica r1", Ping: lagging, Optional: true}}))
	f.Get("/b", readyz([]Check{{Name: "postgres", Ping: lagging}, {Name: "postgres replica r1", Ping: up, Optional: true}}))

	res, err := f.Test(httptest.NewRequest("GET", "/a", nil))
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	assert.Equal(t, fiber.StatusOK, res.StatusCode, string(body))
	assert.Contains(t, string(body), `"postgres replica r1":"down: lagging 7s"`)

	res, err = f.Test(httptest.NewRequest("GET", "/b", nil))
	require.NoError(t, err)
	assert.Equal(t, fiber.StatusServiceUnavailable, res.StatusCode)
}
