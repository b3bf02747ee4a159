package httpapi

import (
	"bytes"
	"sync"
	"sync/atomic"

	"github.com/gofiber/fiber/v2"

	"github.com/tokenscope/tokenscope/app/market"
	"github.com/tokenscope/tokenscope/domain/chain"
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
	// about is what a multi-token detail body is about (zero for a ranking): a repeated
	// request is answered from its current version without being parsed again.
	about keptTokens
}

// keptTokens are the tokens a multi-token detail request asks about.
type keptTokens struct {
	chain chain.Chain
	addrs []string
	// current is the market's version (market.Service.Version) when the tokens were last found
	// at the kept body's version: while the market reports it still, they are.
	current *atomic.Uint64
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
func (c *encodedBodies) get(key []byte, version uint64) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[string(key)]; ok && e.version == version {
		return e.body
	}
	return nil
}

// lookup returns what is kept for key, whatever its version.
func (c *encodedBodies) lookup(key []byte) (encodedBody, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[string(key)]
	return e, ok
}

// put keeps e (whose body the cache now owns) for key, replacing one of an older version.
func (c *encodedBodies) put(key string, e encodedBody) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[key]; ok {
		if old.version > e.version {
			return // a request that read earlier finished later
		}
		c.bytes -= len(old.body)
	}
	if c.bytes+len(e.body) > encodedBodiesMaxBytes {
		clear(c.m)
		c.bytes = 0
	}
	c.m[key] = e
	c.bytes += len(e.body)
}

// sendRanking answers a validated ranking request: from the kept body when the market would
// answer from the same read as the kept one, otherwise from the market, encoding with encode
// and keeping the body when the answer came from a cached read. The key is the request's path
// and raw query, so only byte-identical requests share a body.
func (h *handlers) sendRanking(c *fiber.Ctx, r market.HotRequest, encode func([]byte, []token.Detail) []byte) error {
	return sendKept(c, h.rankings, h.app.Market.HotVersion(r.Chain, r.Duration), func() ([]token.Detail, uint64, error) {
		return h.app.Market.HotTokensVersion(c.UserContext(), r)
	}, encode, keptTokens{})
}

// sendKept answers from the body kept for the same request (appendRequestKey) under version v
// (0: nothing may be reused), otherwise reads, encodes with encode and keeps the body, with
// about, under the version read returns (0: not kept).
func sendKept(c *fiber.Ctx, kept *encodedBodies, v uint64, read func() ([]token.Detail, uint64, error),
	encode func([]byte, []token.Detail) []byte, about keptTokens) error {
	var buf [keyBuffer]byte
	key := appendRequestKey(buf[:0], c)
	if v != 0 {
		if body := kept.get(key, v); body != nil {
			sendKeptBody(c, body)
			return nil
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
		kept.put(string(key), encodedBody{version: v, body: bytes.Clone(body), about: about})
	}
	return nil
}

// sendKeptBody sends a kept body as the response without copying it: a kept body is never
// modified (put replaces it whole), so the response may point at it until it is written.
func sendKeptBody(c *fiber.Ctx, body []byte) {
	resp := c.Response()
	resp.SetBodyRaw(body)
	resp.Header.SetContentType(fiber.MIMEApplicationJSON)
}

// keyBuffer fits the key of a request naming ten addresses without allocating.
const keyBuffer = 1024

// appendRequestKey appends a request's path as sent (Fiber's path parameters are taken from
// it undecoded) and raw query: only byte-identical requests share a body, and they parse
// alike.
func appendRequestKey(b []byte, c *fiber.Ctx) []byte {
	u := c.Request().URI()
	b = append(b, u.PathOriginal()...)
	b = append(b, '?')
	return append(b, u.QueryString()...)
}

// sendKeptMulti answers a multi-token detail request from the body kept for the byte-identical
// request while the requested tokens' details are still at the version it was computed under,
// and reports whether it did. The request is not parsed again: only a request that parsed and
// was answered has a body kept, and an identical one parses to the same tokens (the scope,
// authentication, rate limit and text checks have run already, as for any request).
func (h *handlers) sendKeptMulti(c *fiber.Ctx) bool {
	var buf [keyBuffer]byte
	e, ok := h.multis.lookup(appendRequestKey(buf[:0], c))
	if !ok {
		return false
	}
	// The market's version is read before the tokens' (Version's contract).
	cur := h.app.Market.Version()
	if cur == 0 {
		return false
	}
	if cur != e.about.current.Load() {
		if v := h.app.Market.TokensVersion(e.about.chain, e.about.addrs); v == 0 || v != e.version {
			return false
		}
		e.about.current.Store(cur)
	}
	sendKeptBody(c, e.body)
	return true
}

// sendMulti answers a validated multi-token detail request: from the body kept for the same
// request under the current version of the requested tokens' details, otherwise from the
// market, encoding with encode and keeping the body under the version observed before the read
// (the read reflects at least every change announced up to it).
func (h *handlers) sendMulti(c *fiber.Ctx, r market.MultiRequest, encode func([]byte, []token.Detail) []byte) error {
	ch := r.Chain.Canonical()
	v := h.app.Market.TokensVersion(ch, r.Addresses)
	return sendKept(c, h.multis, v, func() ([]token.Detail, uint64, error) {
		ds, err := h.app.Market.Multi(c.UserContext(), r)
		return ds, v, err
	}, encode, keptTokens{chain: ch, addrs: r.Addresses, current: new(atomic.Uint64)})
}
