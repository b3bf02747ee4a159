package httpapi

import (
	"sync"

	"github.com/gofiber/fiber/v2"

	"github.com/tokenscope/tokenscope/app/market"
	"github.com/tokenscope/tokenscope/domain/token"
)

// Encoding a ranking answer (up to 100 full token records) costs far more than filtering the
// cached candidates, and every identical request over the same cached read gets the same bytes.
// encodedBodies keeps each answer's body under its request and the version of the cached read it
// was computed from (market.HotTokensVersion); a request is answered from it only while the
// market still reports that very version as current, so it is never staler than the market's
// own cache. Multi-token detail answers are kept the same way under the version of the requested
// tokens' details (market.TokensVersion).

// encodedBodiesMaxBytes bounds the bodies kept (per cache); past it the cache is emptied.
const encodedBodiesMaxBytes = 32 << 20

type encodedBody struct {
	version uint64
	body    []byte
}

type encodedBodies struct {
	mu    sync.Mutex
	m     map[string]encodedBody
	bytes int
}

func newEncodedBodies() *encodedBodies {
	return &encodedBodies{m: map[string]encodedBody{}}
}

// get returns the body kept for key under version, or nil.
func (c *encodedBodies) get(key string, version uint64) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[key]; ok && e.version == version {
		return e.body
	}
	return nil
}

// put keeps body (which the cache now owns) for key under version, replacing an older one.
func (c *encodedBodies) put(key string, version uint64, body []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[key]; ok {
		if old.version > version {
			return // a request that read earlier finished later
		}
		c.bytes -= len(old.body)
	}
	if c.bytes+len(body) > encodedBodiesMaxBytes {
		clear(c.m)
		c.bytes = 0
	}
	c.m[key] = encodedBody{version: version, body: body}
	c.bytes += len(body)
}

// sendRanking answers a validated ranking request: from the kept body when the market would
// answer from the same read as the kept one, otherwise from the market, encoding with encode
// and keeping the body when the answer came from a cached read. The key is the request's path
// and raw query, so only byte-identical requests share a body.
func (h *handlers) sendRanking(c *fiber.Ctx, r market.HotRequest, encode func([]byte, []token.Detail) []byte) error {
	return sendKept(c, h.rankings, h.app.Market.HotVersion(r.Chain, r.Duration), func() ([]token.Detail, uint64, error) {
		return h.app.Market.HotTokensVersion(c.UserContext(), r)
	}, encode)
}

// sendKept answers from the body kept for the same request (requestKey) under version v (0:
// nothing may be reused), otherwise reads, encodes with encode and keeps the body under the
// version read returns (0: not kept).
func sendKept(c *fiber.Ctx, kept *encodedBodies, v uint64, read func() ([]token.Detail, uint64, error),
	encode func([]byte, []token.Detail) []byte) error {
	key := requestKey(c)
	if v != 0 {
		if body := kept.get(key, v); body != nil {
			return sendBody(c, func(b []byte) []byte { return append(b, body...) })
		}
	}
	ds, v, err := read()
	if err != nil {
		return err
	}
	var body []byte
	sendBody(c, func(b []byte) []byte {
		body = encode(b, ds)
		return body
	})
	if v != 0 {
		kept.put(key, v, append([]byte(nil), body...))
	}
	return nil
}

// requestKey is a request's path and raw query: only byte-identical requests share a body.
func requestKey(c *fiber.Ctx) string {
	return string(c.Request().URI().Path()) + "?" + string(c.Request().URI().QueryString())
}

// sendMulti answers a validated multi-token detail request: from the body kept for the same
// request under the current version of the requested tokens' details, otherwise from the
// market, encoding with encode and keeping the body under the version observed before the read
// (the read reflects at least every change announced up to it).
func (h *handlers) sendMulti(c *fiber.Ctx, r market.MultiRequest, encode func([]byte, []token.Detail) []byte) error {
	v := h.app.Market.TokensVersion(r.Chain.Canonical(), r.Addresses)
	return sendKept(c, h.multis, v, func() ([]token.Detail, uint64, error) {
		ds, err := h.app.Market.Multi(c.UserContext(), r)
		return ds, v, err
	}, encode)
}
