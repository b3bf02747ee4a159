package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/page"
	"github.com/tokenscope/tokenscope/domain/trade"
	"github.com/tokenscope/tokenscope/ports"
)

// listTrades is operation 3, GET /v2/trade/{chain}. Every bound is inclusive; times accept
// Unix seconds or milliseconds (see secondsOrMillis).
func (h *handlers) listTrades(c *fiber.Ctx) error {
	var f ports.TradeFilter
	var err error
	if f.Chain, err = chain.Parse("chain", c.Params("chain")); err != nil {
		return err
	}
	f.TokenAddress = queryString(c, "tokenAddress")
	f.Wallet = queryString(c, "walletAddress")
	f.PoolAddress = queryString(c, "poolAddress")
	if f.Signatures, err = boundedList(c, "transactionsSignature"); err != nil {
		return err
	}
	if f.ToMs, err = secondsOrMillis(c, "beforeTimestamp", true); err != nil {
		return err
	}
	if f.FromMs, err = secondsOrMillis(c, "afterTimestamp", false); err != nil {
		return err
	}
	if f.MaxHeight, err = nonNegative(c, "beforeBlockHeight"); err != nil {
		return err
	}
	if f.MinHeight, err = nonNegative(c, "afterBlockHeight"); err != nil {
		return err
	}
	if s := queryString(c, "type"); s != "" {
		if f.Side, err = trade.ParseSide("type", s); err != nil {
			return err
		}
	}
	p, err := pageRequest(c, page.DefaultLimit)
	if err != nil {
		return err
	}
	pg, err := h.app.Market.Trades(c.UserContext(), f, p)
	if err != nil {
		return err
	}
	return sendJSON(c, toPage(pg, tradeOut))
}
