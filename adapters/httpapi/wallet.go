package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/tokenscope/tokenscope/app/market"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/pnl"
)

// pnlByToken is operation 8, GET /v2/wallet/{chain}/{walletAddress}/pnl-by-token. The default
// page holds all (at most 100) requested tokens, because clients generated from the public
// API cannot send cursor or limit on this operation.
func (h *handlers) pnlByToken(c *fiber.Ctx) error {
	ch, err := chain.Parse("chain", c.Params("chain"))
	if err != nil {
		return err
	}
	tokens, err := boundedList(c, "tokenAddresses")
	if err != nil {
		return err
	}
	if len(tokens) == 0 {
		return fault.Missing("tokenAddresses")
	}
	// The SDK's resolution: the period the figures cover, the whole history by default.
	r, err := pnl.ParseResolution("resolution", queryString(c, "resolution"))
	if err != nil {
		return err
	}
	p, err := pageRequest(c, market.MaxAddresses)
	if err != nil {
		return err
	}
	res, err := h.app.Market.PnLByToken(c.UserContext(), ch, c.Params("walletAddress"), tokens, r, p)
	if err != nil {
		return err
	}
	return sendJSON(c, pnlPageOf(res))
}
