package httpapi

import (
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/tokenscope/tokenscope/app/market"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/ranking"
	"github.com/tokenscope/tokenscope/domain/token"
)

// rangeFilters reads rangeFilters as one JSON array, or one JSON array or object per repeated
// key (rangeFilters or rangeFilters[]); filterBy is accepted as an older spelling. Unlike the
// other list parameters the values are not split on commas: they are JSON.
func rangeFilters(c *fiber.Ctx) ([]token.Filter, error) {
	args := c.Context().QueryArgs()
	var out []token.Filter
	for _, key := range []string{"rangeFilters", "rangeFilters[]", "filterBy"} {
		for _, raw := range args.PeekMulti(key) {
			fs, err := token.ParseFilters("rangeFilters", string(raw), token.RankingFields)
			if err != nil {
				return nil, err
			}
			out = append(out, fs...)
		}
	}
	if len(out) > token.MaxFilters {
		return nil, fault.Invalid("rangeFilters", strconv.Itoa(len(out))+" conditions", "at most "+strconv.Itoa(token.MaxFilters)+" conditions")
	}
	return out, nil
}

// hotTokens is operation 9, GET /v2/ranking/{chain}/hotTokens/{duration}.
func (h *handlers) hotTokens(c *fiber.Ctx) error {
	var r market.HotRequest
	var err error
	if r.Chain, err = chain.Parse("chain", c.Params("chain")); err != nil {
		return err
	}
	if r.Duration, err = ranking.ParseDuration("duration", c.Params("duration")); err != nil {
		return err
	}
	if s := queryString(c, "sortBy"); s != "" {
		if r.SortBy, err = token.ParseField("sortBy", s, token.RankingFields); err != nil {
			return err
		}
	}
	if r.Desc, err = token.ParseSortDirection("sortDirection", queryString(c, "sortDirection")); err != nil {
		return err
	}
	if s := queryString(c, "tag"); s != "" {
		if r.Tag, err = token.ParseTag("tag", s); err != nil {
			return err
		}
	}
	if r.Ranges, err = rangeFilters(c); err != nil {
		return err
	}
	filters, err := boundedList(c, "filters")
	if err != nil {
		return err
	}
	for _, s := range filters {
		f, err := token.ParseSocialFilter("filters", s)
		if err != nil {
			return err
		}
		r.Socials = append(r.Socials, f)
	}
	platforms, err := boundedList(c, "launchpadPlatform")
	if err != nil {
		return err
	}
	for _, s := range platforms {
		t, err := token.ParseTag("launchpadPlatform", s)
		if err != nil {
			return err
		}
		r.Launchpads = append(r.Launchpads, t)
	}
	include, err := boundedList(c, "searchKeywords")
	if err != nil {
		return err
	}
	exclude, err := boundedList(c, "excludeKeywords")
	if err != nil {
		return err
	}
	r.Keywords = ranking.NewKeywords(include, exclude)
	ans, err := h.app.Market.HotTokens(c.UserContext(), r)
	if err != nil {
		return err
	}
	return sendTokens(c, ans, encodeTokenV2List)
}
