package httpapi

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/tokenscope/tokenscope/app/market"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/page"
	"github.com/tokenscope/tokenscope/domain/token"
)

// searchTokens is operation 1, GET /v2/token/search.
func (h *handlers) searchTokens(c *fiber.Ctx) error {
	var r market.SearchRequest
	r.Query = queryString(c, "q")
	chains, err := boundedList(c, "chains")
	if err != nil {
		return err
	}
	for _, v := range chains {
		ch, err := chain.Parse("chains", v)
		if err != nil {
			return err
		}
		r.Chains = append(r.Chains, ch)
	}
	if r.Protocols, err = boundedList(c, "protocols"); err != nil {
		return err
	}
	if r.SortBy, err = market.ParseSearchSort(queryString(c, "sortBy")); err != nil {
		return err
	}
	if r.Desc, err = token.ParseSortDirection("sort", queryString(c, "sort")); err != nil {
		return err
	}
	switch mode := strings.ToLower(queryString(c, "mode")); mode {
	case "", "fast":
	case "normal":
		r.Normal = true
	default:
		return fault.InvalidParam("mode", queryString(c, "mode"), "fast", "normal")
	}
	if r.Page, err = pageRequest(c, page.DefaultLimit); err != nil {
		return err
	}
	pg, err := h.app.Market.Search(c.UserContext(), r)
	if err != nil {
		return err
	}
	if r.Normal {
		return sendJSON(c, tokenV2Page(pg))
	}
	return sendJSON(c, tokenFastPage(pg))
}

// multiRequest parses the parameters shared by both multi-detail paths.
func multiRequest(c *fiber.Ctx, ch chain.Chain, fields []token.Field) (market.MultiRequest, error) {
	r := market.MultiRequest{Chain: ch}
	addrs, err := boundedList(c, "tokenAddresses")
	if err != nil {
		return r, err
	}
	if len(addrs) == 0 {
		return r, fault.Missing("tokenAddresses")
	}
	r.Addresses = addrs
	if s := queryString(c, "sortBy"); s != "" {
		if r.SortBy, err = token.ParseField("sortBy", s, fields); err != nil {
			return r, err
		}
	}
	if r.Desc, err = token.ParseUpperSortDirection("sortDirection", queryString(c, "sortDirection")); err != nil {
		return r, err
	}
	r.Filters, err = token.ParseFilters("filterBy", queryString(c, "filterBy"), fields)
	return r, err
}

// multiTokens is operation 2, GET {dex_base_url}/v1/token/{chain}/multi: the multi-detail shape
// over the ten chains of the v1 path.
func (h *handlers) multiTokens(c *fiber.Ctx) error {
	ch, err := chain.ParseMulti("chain", c.Params("chain"))
	if err != nil {
		return err
	}
	r, err := multiRequest(c, ch, token.MultiFields)
	if err != nil {
		return err
	}
	ans, err := h.app.Market.Multi(c.UserContext(), r)
	if err != nil {
		return err
	}
	return sendTokens(c, ans, func(b []byte, ds []token.Detail) []byte { return encodeMultiTokenList(b, ds, string(ch)) })
}

// multiTokensV2 is the public API's v2 path, GET /v2/token/{chain}/multi: the same lookup over
// the v2 chains, rendered as v2 token records.
func (h *handlers) multiTokensV2(c *fiber.Ctx) error {
	ch, err := chain.Parse("chain", c.Params("chain"))
	if err != nil {
		return err
	}
	r, err := multiRequest(c, ch, token.RankingFields)
	if err != nil {
		return err
	}
	ans, err := h.app.Market.Multi(c.UserContext(), r)
	if err != nil {
		return err
	}
	return sendTokens(c, ans, encodeTokenV2List)
}

// sendTokens sends a token-list answer (ranking, multi-detail) encoded by encode: the body kept
// for the same request in the read-cache entry the answer came from (market.Tokens), or a new
// encoding, which is kept there. The key is the request's path as sent (Fiber's path parameters
// are taken from it undecoded) and raw query: byte-identical requests parse alike, and the path
// tells the v1 and v2 shapes apart. A kept body is never modified, so the response points at it
// without a copy.
func sendTokens(c *fiber.Ctx, ans market.Tokens, encode func([]byte, []token.Detail) []byte) error {
	var buf [keyBuffer]byte
	u := c.Request().URI()
	key := append(append(append(buf[:0], u.PathOriginal()...), '?'), u.QueryString()...)
	if body := ans.Kept(key); body != nil {
		resp := c.Response()
		resp.SetBodyRaw(body)
		resp.Header.SetContentType(fiber.MIMEApplicationJSON)
		return nil
	}
	return sendBody(c, func(b []byte) []byte {
		b = encode(b, ans.List())
		ans.Keep(key, b)
		return b
	})
}

// keyBuffer fits the key of a request naming ten addresses without allocating.
const keyBuffer = 1024
