package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/ports"
)

// redPacketDefaultLimit is the page size of the red packet lists when limit is absent (the
// spec leaves it open; the other lists use 20).
const redPacketDefaultLimit = 20

// walletRedPackets is operation 5, GET /v2/redpacket/wallet/{address}/redpackets: the red
// packets the wallet created, as the public API defines it.
func (h *handlers) walletRedPackets(c *fiber.Ctx) error {
	p, err := pageRequest(c, redPacketDefaultLimit)
	if err != nil {
		return err
	}
	out, err := h.app.Market.RedPackets(c.UserContext(), ports.RedPacketFilter{Creator: c.Params("address")}, p)
	if err != nil {
		return err
	}
	return c.JSON(toRedPacketPage(out, redPacketOut))
}

// listRedPackets is operation 6, GET /v2/redpacket, optionally by creator and/or chain.
func (h *handlers) listRedPackets(c *fiber.Ctx) error {
	f := ports.RedPacketFilter{Creator: queryString(c, "creator")}
	if s := queryString(c, "chain"); s != "" {
		ch, err := chain.Parse("chain", s)
		if err != nil {
			return err
		}
		f.Chain = ch
	}
	p, err := pageRequest(c, redPacketDefaultLimit)
	if err != nil {
		return err
	}
	out, err := h.app.Market.RedPackets(c.UserContext(), f, p)
	if err != nil {
		return err
	}
	return c.JSON(toRedPacketPage(out, redPacketOut))
}

// redPacketClaims is operation 7, GET /v2/redpacket/{id}/claims; an unknown packet is 404.
func (h *handlers) redPacketClaims(c *fiber.Ctx) error {
	p, err := pageRequest(c, redPacketDefaultLimit)
	if err != nil {
		return err
	}
	out, err := h.app.Market.Claims(c.UserContext(), c.Params("id"), p)
	if err != nil {
		return err
	}
	return c.JSON(toRedPacketPage(out, claimOut))
}
