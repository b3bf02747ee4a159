package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/tokenscope/tokenscope/domain/account"
	"github.com/tokenscope/tokenscope/domain/kyt"
)

// routes lists every operation of the main API. Keep one line per route; the scope guard is
// part of the line so a route without one stands out in review.
func routes(r fiber.Router, h *handlers) {
	read := need(account.ScopeRead)
	kytScope := need(account.ScopeKYT)
	webhook := need(account.ScopeWebhook)
	ingest := need(account.ScopeIngest)

	r.Get("/v2/whoami", read, h.whoami)
	// Read API (operations 1–9; multi-token detail is in dexRoutes).
	r.Get("/v2/token/search", read, h.searchTokens)
	r.Get("/v2/trade/:chain", read, h.listTrades)
	r.Get("/v2/dexpools/:chain/:poolAddress/snapshots", read, h.listSnapshots)
	r.Get("/v2/redpacket/wallet/:address/redpackets", read, h.walletRedPackets)
	r.Get("/v2/redpacket", read, h.listRedPackets)
	r.Get("/v2/redpacket/:id/claims", read, h.redPacketClaims)
	r.Get("/v2/wallet/:chain/:walletAddress/pnl-by-token", read, h.pnlByToken)
	r.Get("/v2/ranking/:chain/hotTokens/:duration", read, h.hotTokens)
	// Candles (issue 14; docs/api.md "Candles").
	r.Get("/v2/token/:chain/pool/:poolAddress/candles", read, h.poolCandles)
	r.Get("/v2/token/:chain/pair/:pair/candles", read, h.pairCandles)
	r.Get("/v2/token/:chain/:tokenAddress/candles", read, h.tokenCandles)
	// KYT (operations 10, 11).
	r.Post("/v2/kyt/withdrawal", kytScope, h.registerWithdrawal)
	r.Post("/v2/kyt/transfer", kytScope, h.registerTransfer)
	r.Get("/v2/kyt/withdrawal/:externalId/summary", kytScope, h.kytSummary(kyt.KindWithdrawal))
	r.Get("/v2/kyt/transfers/:externalId/summary", kytScope, h.kytSummary(kyt.KindTransfer))
	// Jobs (operation 12).
	r.Post("/v2/wallet/:chain/:walletAddress/calculate-pnl", read, h.calculatePnL)
	r.Get("/v2/job/:id", read, h.getJob)
	r.Get("/v2/job/:id/streaming", read, h.jobStream)
	// Webhooks (operations 13, 14 and the rest of the resource).
	r.Post("/v2/webhook/endpoint", webhook, h.createEndpoint)
	r.Get("/v2/webhook/endpoint", webhook, h.listEndpoints)
	r.Patch("/v2/webhook/endpoint", webhook, h.patchEndpoint)
	r.Get("/v2/webhook/endpoint/:id", webhook, h.getEndpoint)
	r.Delete("/v2/webhook/endpoint/:id", webhook, h.deleteEndpoint)
	r.Get("/v2/webhook/endpoint/:id/secret", webhook, h.endpointSecret)
	r.Post("/v2/webhook/endpoint/:id/secret/rotate", webhook, h.rotateEndpointSecret)
	r.Get("/v2/webhook/endpoint/:id/attempts", webhook, h.endpointAttempts)
	// Ingest.
	r.Post("/v2/ingest", ingest, h.ingest)
	dexRoutes(r, h)
}

// pageRoutes lists the pages of the main API. They are served without a key (registered before
// the authenticated group); what they show they fetch with the visitor's key.
func pageRoutes(r fiber.Router) {
	r.Get("/live", livePage)
	r.Get(liveAssetPath, liveAsset)
}

// dexRoutes lists the operations published under {dex_base_url}; the main API serves them too,
// so each path answers the same on both addresses. The spec publishes multi-token detail as
// the v1 path there, and the public client sends the v2 path to the same address.
func dexRoutes(r fiber.Router, h *handlers) {
	read := need(account.ScopeRead)
	// Multi-token detail (operation 2).
	r.Get("/v1/token/:chain/multi", read, h.multiTokens)
	r.Get("/v2/token/:chain/multi", read, h.multiTokensV2)
}

// whoamiDTO is the whoami answer (fields in the key order the map it replaced rendered in).
type whoamiDTO struct {
	AccountID string          `json:"accountId"`
	KeyID     string          `json:"keyId"`
	Scopes    []account.Scope `json:"scopes"`
}

// whoami tells a caller which account and scopes its key carries.
func (h *handlers) whoami(c *fiber.Ctx) error {
	p := principal(c)
	scopes := p.Scopes
	if scopes == nil {
		scopes = []account.Scope{}
	}
	return c.JSON(whoamiDTO{AccountID: p.AccountID, KeyID: p.KeyID, Scopes: scopes})
}
