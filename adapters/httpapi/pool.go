package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/page"
)

// listSnapshots is operation 4, GET /v2/dexpools/{chain}/{poolAddress}/snapshots: with time,
// the snapshots taken at or before it (seconds or milliseconds), newest first.
func (h *handlers) listSnapshots(c *fiber.Ctx) error {
	ch, err := chain.Parse("chain", c.Params("chain"))
	if err != nil {
		return err
	}
	at, err := secondsOrMillis(c, "time", true)
	if err != nil {
		return err
	}
	p, err := pageRequest(c, page.DefaultLimit)
	if err != nil {
		return err
	}
	pg, err := h.app.Market.Snapshots(c.UserContext(), ch, c.Params("poolAddress"), at, p)
	if err != nil {
		return err
	}
	return sendJSON(c, toPage(pg, snapshotOut))
}
