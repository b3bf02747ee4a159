package httpapi

import (
	"bytes"
	"io"

	"github.com/gofiber/fiber/v2"
)

// ingestResponse reports what the committed batches changed.
type ingestResponse struct {
	Events    int `json:"events"`
	Inserted  int `json:"inserted"`
	Skipped   int `json:"skipped"`
	Trades    int `json:"trades"`
	Rederived int `json:"rederived"`
}

// ingest accepts an NDJSON body of chain events (POST /v2/ingest, scope ingest). The body is
// read as a stream and applied in batches, each committed with its derived state; the answer
// comes after the last batch commits. A malformed line fails the request with an error naming
// the line and field; batches before it stay committed, and re-sending the body is safe because
// every event is idempotent.
func (h *handlers) ingest(c *fiber.Ctx) error {
	var body io.Reader = c.Context().RequestBodyStream()
	if body == nil {
		body = bytes.NewReader(c.Body())
	}
	res, err := h.app.Ingest.Stream(c.UserContext(), body, nil)
	if err != nil {
		return err
	}
	return c.JSON(ingestResponse{Events: res.Events, Inserted: res.Inserted, Skipped: res.Skipped, Trades: res.Trades,
		Rederived: res.Rederived})
}
