package httpapi

import (
	"encoding/base64"
	"encoding/json"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/tokenscope/tokenscope/app/webhookendpoint"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/text"
	"github.com/tokenscope/tokenscope/domain/webhook"
)

// endpointDTO is WebhookEndpoint; the secret is never part of it (only /secret reveals it).
type endpointDTO struct {
	ID          string            `json:"id"`
	URL         string            `json:"url"`
	Channels    []webhook.Channel `json:"channels" openapi:"nullable"`
	CreatedAt   string            `json:"createdAt"`
	UpdatedAt   string            `json:"updatedAt"`
	Description *string           `json:"description"`
	Disabled    bool              `json:"disabled"`
	Filter      *string           `json:"filter"`
	FilterTypes []string          `json:"filterTypes" openapi:"nullable"`
	Metadata    map[string]string `json:"metadata"`
	RateLimit   *int32            `json:"rateLimit" openapi:"int32,nonnegative"`
}

func endpointOf(e *webhook.Endpoint) endpointDTO {
	return endpointDTO{ID: e.ID(), URL: e.URL(), Channels: e.Channels(), CreatedAt: e.CreatedAt().UTC().Format(kytTime),
		UpdatedAt: e.UpdatedAt().UTC().Format(kytTime), Description: e.Description(), Disabled: e.Disabled(),
		Filter: e.Filter(), FilterTypes: e.FilterTypes(), Metadata: e.Metadata(), RateLimit: e.RateLimit()}
}

type endpointListDTO struct {
	Data         []endpointDTO `json:"data"`
	Done         bool          `json:"done"`
	Iterator     *string       `json:"iterator"`
	PrevIterator *string       `json:"prevIterator"`
}

type attemptDTO struct {
	EndpointID string  `json:"endpointId"`
	MessageID  string  `json:"msgId"`
	Attempt    int     `json:"attempt"`
	StatusCode *int    `json:"responseStatusCode"`
	LatencyMs  int64   `json:"latencyMs"`
	Success    bool    `json:"success"`
	Error      *string `json:"error"`
	Timestamp  string  `json:"timestamp"`
}

type attemptListDTO struct {
	Data     []attemptDTO `json:"data"`
	Done     bool         `json:"done"`
	Iterator *string      `json:"iterator"`
}

// iterator is the opaque cursor: base64 of {"id":…}, the shape the public API's examples use.
type iterator struct {
	ID json.RawMessage `json:"id"`
}

func encodeIterator(v any) *string {
	id, _ := json.Marshal(v) // strings and integers only
	b, _ := json.Marshal(iterator{ID: id})
	s := base64.StdEncoding.EncodeToString(b)
	return &s
}

func decodeIterator(c *fiber.Ctx, dst any) error {
	raw := queryString(c, "iterator")
	if raw == "" {
		return nil
	}
	bad := fault.Invalid("iterator", raw, "is not an iterator this API returned").WithCode(fault.CodeInvalidCursor)
	b, err := base64.StdEncoding.DecodeString(raw)
	if err != nil {
		return bad
	}
	// The iterator is the client's to forge: what it decodes to goes to Postgres, so it is
	// held to the rule withText applies to everything else.
	var it iterator
	if text.CheckJSON(b) != nil || json.Unmarshal(b, &it) != nil || json.Unmarshal(it.ID, dst) != nil {
		return bad
	}
	return nil
}

func pageLimit(c *fiber.Ctx) (int, error) {
	n, err := queryInt64(c, "limit")
	if err != nil || n == nil {
		return webhookendpoint.MaxPageSize, err
	}
	if *n < 1 || *n > webhookendpoint.MaxPageSize {
		return 0, fault.Invalid("limit", strconv.FormatInt(*n, 10), "must be between 1 and 100")
	}
	return int(*n), nil
}

func (h *handlers) createEndpoint(c *fiber.Ctx) error {
	in, err := decodeCreate(c.Body())
	if err != nil {
		return err
	}
	e, err := h.app.Webhooks.Create(c.UserContext(), principal(c).AccountID, in)
	if err != nil {
		return err
	}
	return c.JSON(endpointOf(e))
}

func (h *handlers) listEndpoints(c *fiber.Ctx) error {
	limit, err := pageLimit(c)
	if err != nil {
		return err
	}
	var cursor string
	if err := decodeIterator(c, &cursor); err != nil {
		return err
	}
	desc := false
	switch o := queryString(c, "order"); o {
	case "", "ascending":
	case "descending":
		desc = true
	default:
		return fault.InvalidParam("order", o, "ascending", "descending")
	}
	page, err := h.app.Webhooks.List(c.UserContext(), principal(c).AccountID, cursor, limit, desc)
	if err != nil {
		return err
	}
	out := endpointListDTO{Data: make([]endpointDTO, 0, len(page.Endpoints)), Done: !page.More}
	for _, e := range page.Endpoints {
		out.Data = append(out.Data, endpointOf(e))
	}
	if page.More {
		out.Iterator = encodeIterator(page.Endpoints[len(page.Endpoints)-1].ID())
	}
	if cursor != "" {
		out.PrevIterator = encodeIterator(cursor)
	}
	return c.JSON(out)
}

func (h *handlers) getEndpoint(c *fiber.Ctx) error {
	e, err := h.app.Webhooks.Get(c.UserContext(), principal(c).AccountID, c.Params("id"))
	if err != nil {
		return err
	}
	return c.JSON(endpointOf(e))
}

func (h *handlers) patchEndpoint(c *fiber.Ctx) error {
	id, p, err := decodePatch(c.Body())
	if err != nil {
		return err
	}
	e, err := h.app.Webhooks.Patch(c.UserContext(), principal(c).AccountID, id, p)
	if err != nil {
		return err
	}
	return c.JSON(endpointOf(e))
}

func (h *handlers) deleteEndpoint(c *fiber.Ctx) error {
	if err := h.app.Webhooks.Delete(c.UserContext(), principal(c).AccountID, c.Params("id")); err != nil {
		return err
	}
	return c.JSON(fiber.Map{"success": true})
}

func (h *handlers) endpointSecret(c *fiber.Ctx) error {
	s, err := h.app.Webhooks.Secret(c.UserContext(), principal(c).AccountID, c.Params("id"))
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"secret": s.Reveal()})
}

func (h *handlers) rotateEndpointSecret(c *fiber.Ctx) error {
	if err := h.app.Webhooks.Rotate(c.UserContext(), principal(c).AccountID, c.Params("id")); err != nil {
		return err
	}
	return c.JSON(fiber.Map{"success": true})
}

func (h *handlers) endpointAttempts(c *fiber.Ctx) error {
	limit, err := pageLimit(c)
	if err != nil {
		return err
	}
	var cursor int64
	if err := decodeIterator(c, &cursor); err != nil {
		return err
	}
	as, next, err := h.app.Webhooks.ListAttempts(c.UserContext(), principal(c).AccountID, c.Params("id"), cursor, limit)
	if err != nil {
		return err
	}
	out := attemptListDTO{Data: make([]attemptDTO, 0, len(as)), Done: next == 0}
	for _, a := range as {
		d := attemptDTO{EndpointID: a.EndpointID, MessageID: a.EventID, Attempt: a.Number, LatencyMs: a.Latency.Milliseconds(),
			Success: a.Result.Success, Timestamp: a.At.UTC().Format(kytTime)}
		if a.StatusCode != 0 {
			code := a.StatusCode
			d.StatusCode = &code
		}
		if a.Error != "" {
			e := a.Error
			d.Error = &e
		}
		out.Data = append(out.Data, d)
	}
	if next != 0 {
		out.Iterator = encodeIterator(next)
	}
	return c.JSON(out)
}
