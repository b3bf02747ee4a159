package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/httpapi"
	"github.com/tokenscope/tokenscope/app"
	"github.com/tokenscope/tokenscope/app/apikey"
	"github.com/tokenscope/tokenscope/app/market"
	"github.com/tokenscope/tokenscope/domain/account"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/ranking"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/internal/fakeversions"
	"github.com/tokenscope/tokenscope/ports"
)

// hotReaders serves a ranking the test can change, and counts the ranking reads.
type hotReaders struct {
	*readers
	mu    sync.Mutex
	order []string
	reads int
}

func (r *hotReaders) HotTokens(context.Context, chain.Chain, ranking.Duration, int) ([]ports.HotEntry, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reads++
	out := make([]ports.HotEntry, len(r.order))
	for i, a := range r.order {
		out[i] = ports.HotEntry{Address: a, Rank: int32(i + 1)}
	}
	return out, nil
}

func (r *hotReaders) TokenDetails(_ context.Context, c chain.Chain, addrs []string) ([]token.Detail, error) {
	out := make([]token.Detail, len(addrs))
	for i, a := range addrs {
		out[i] = token.Detail{Token: token.Token{Chain: c, Address: a, Name: "Token " + a, Symbol: a}}
		out[i].MarketData.PriceInUSD = decimal.RequireFromString(t0Price[a])
	}
	return out, nil
}

var t0Price = map[string]string{"aaa": "3", "bbb": "1", "ccc": "2"}

func (r *hotReaders) setOrder(o ...string) {
	r.mu.Lock()
	r.order = o
	r.mu.Unlock()
}

func (r *hotReaders) readCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reads
}

// TestRankingAnswersAreReusedOnlyWhileTheirReadIsCurrent: identical requests get the kept body
// (no new read) until a write is announced, other requests are computed from the same read, and
// once a write is announced the next answer shows the new ranking. Bad parameters are refused
// whatever is kept.
func TestRankingAnswersAreReusedOnlyWhileTheirReadIsCurrent(t *testing.T) {
	versions := fakeversions.Following()
	r := &hotReaders{readers: newReaders(), order: []string{"aaa", "bbb", "ccc"}}
	srv := cachedServer(t, r, versions, httpapi.New)

	addrs := func(res result) []string {
		t.Helper()
		require.Equal(t, 200, res.status, "%s", res.body)
		assert.Equal(t, "application/json", res.header.Get("Content-Type"))
		var list []struct{ Address string }
		require.NoError(t, json.Unmarshal(res.body, &list))
		out := []string{}
		for _, x := range list {
			out = append(out, x.Address)
		}
		return out
	}
	const path = "/v2/ranking/sol/hotTokens/1h"
	first := srv.get(t, path)
	assert.Equal(t, []string{"aaa", "bbb", "ccc"}, addrs(first))
	assert.Equal(t, 1, r.readCount())

	r.setOrder("ccc", "bbb", "aaa") // the next refresh round, not announced yet
	again := srv.get(t, path)
	assert.Equal(t, first.body, again.body, "the same request, nothing announced: the same bytes")
	assert.Equal(t, 1, r.readCount(), "and no read")
	byPrice := srv.get(t, path+"?sortBy=marketData.priceInUsd&sortDirection=ASC")
	assert.Equal(t, []string{"bbb", "ccc", "aaa"}, addrs(byPrice), "another request over the same read")
	assert.Equal(t, 1, r.readCount())
	bad := srv.get(t, path+"?sortBy=nonsense")
	assert.Equal(t, 400, bad.status, "%s", bad.body)
	assert.Contains(t, string(bad.body), "sortBy")

	versions.WriteAll()
	assert.Equal(t, []string{"ccc", "bbb", "aaa"}, addrs(srv.get(t, path)), "a write was announced: the new ranking")
	assert.Equal(t, 2, r.readCount())
	assert.Equal(t, []string{"ccc", "bbb", "aaa"}, addrs(srv.get(t, path)))
	assert.Equal(t, 2, r.readCount())
	assert.Equal(t, []string{"ccc", "bbb", "aaa"}, addrs(srv.get(t, "/v2/ranking/sol/hotTokens/5m")),
		"another duration has its own read")
	assert.Equal(t, 3, r.readCount())
}

// pricedReaders serves token details at a price the test can change, and counts the reads.
type pricedReaders struct {
	*readers
	mu    sync.Mutex
	price string
	reads int
}

func (r *pricedReaders) TokenDetails(_ context.Context, c chain.Chain, addrs []string) ([]token.Detail, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reads++
	out := make([]token.Detail, len(addrs))
	for i, a := range addrs {
		out[i] = token.Detail{Token: token.Token{Chain: c, Address: a, Name: "Token " + a, Symbol: a}}
		out[i].MarketData.PriceInUSD = decimal.RequireFromString(r.price)
	}
	return out, nil
}

func (r *pricedReaders) set(price string) {
	r.mu.Lock()
	r.price = price
	r.mu.Unlock()
}

func (r *pricedReaders) readCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reads
}

// TestMultiAnswersAreReusedOnlyWhileTheirTokensAreCurrent: a repeated multi-token detail request
// is answered with the kept bytes (no read) until a write to its tokens is announced, then with
// the new details. A kept answer is found by the request's bytes as sent, so a request that
// differs from a kept one only in its spelling (an escaped path parameter, an invalid extra
// parameter) is still parsed and refused as before.
func TestMultiAnswersAreReusedOnlyWhileTheirTokensAreCurrent(t *testing.T) {
	versions := fakeversions.Following()
	r := &pricedReaders{readers: newReaders(), price: "1.5"}
	srv := cachedServer(t, r, versions, httpapi.NewDex)

	prices := func(res result) []string {
		t.Helper()
		require.Equal(t, 200, res.status, "%s", res.body)
		assert.Equal(t, "application/json", res.header.Get("Content-Type"))
		assert.NotEmpty(t, res.header.Get("X-Request-Id"))
		var list []struct {
			Address    string
			MarketData struct{ PriceInUsd string } `json:"marketData"`
		}
		require.NoError(t, json.Unmarshal(res.body, &list), "%s", res.body)
		out := []string{}
		for _, x := range list {
			out = append(out, x.Address+"="+x.MarketData.PriceInUsd)
		}
		return out
	}
	const path = "/v1/token/sol/multi?tokenAddresses=aaa,bbb"
	first := srv.get(t, path)
	assert.Equal(t, []string{"aaa=1.5", "bbb=1.5"}, prices(first))
	assert.Equal(t, 1, r.readCount())

	r.set("2.25") // written, not announced yet
	again := srv.get(t, path)
	assert.Equal(t, first.body, again.body, "the same request, nothing announced: the same bytes")
	assert.NotEqual(t, first.header.Get("X-Request-Id"), again.header.Get("X-Request-Id"), "each answer has its own request id")
	assert.Equal(t, 1, r.readCount(), "and no read")

	escaped := srv.get(t, "/v1/token/%73ol/multi?tokenAddresses=aaa,bbb")
	assert.Equal(t, 400, escaped.status, "a path parameter is not decoded, kept answer or not: %s", escaped.body)
	assert.Contains(t, string(escaped.body), "chain")
	bad := srv.get(t, path+"&sortBy=nonsense")
	assert.Equal(t, 400, bad.status, "%s", bad.body)
	assert.Contains(t, string(bad.body), "sortBy")
	unauthenticated := srv.do(t, "GET", path)
	assert.Equal(t, 401, unauthenticated.status, "a kept answer is served only past authentication")

	versions.WriteAll()
	assert.Equal(t, []string{"aaa=2.25", "bbb=2.25"}, prices(srv.get(t, path)), "a write was announced: the new details")
	assert.Equal(t, 2, r.readCount())
	assert.Equal(t, []string{"aaa=2.25", "bbb=2.25"}, prices(srv.get(t, path)))
	assert.Equal(t, 2, r.readCount())
	assert.Equal(t, []string{"bbb=2.25"}, prices(srv.get(t, "/v1/token/sol/multi?tokenAddresses=bbb")),
		"another request has its own answer, from the kept details")
	assert.Equal(t, 2, r.readCount())
}

// TestMultiAnswersOutliveChangesToOtherTokens: a kept multi-token detail answer stays in use
// while the market announces changes to other tokens only, and is replaced once one of its own
// tokens changes.
func TestMultiAnswersOutliveChangesToOtherTokens(t *testing.T) {
	versions := fakeversions.Following()
	r := &pricedReaders{readers: newReaders(), price: "1.5"}
	srv := cachedServer(t, r, versions, httpapi.NewDex)

	const path = "/v2/token/sol/multi?tokenAddresses=aaa&tokenAddresses=bbb"
	first := srv.get(t, path)
	require.Equal(t, 200, first.status, "%s", first.body)
	assert.Equal(t, 1, r.readCount())

	r.set("2.25")
	for range 3 {
		versions.WriteTokens("zzz")
		again := srv.get(t, path)
		assert.Equal(t, first.body, again.body, "only another token changed: the same bytes")
		assert.Equal(t, 1, r.readCount(), "and no read")
	}

	versions.WriteTokens("bbb")
	changed := srv.get(t, path)
	require.Equal(t, 200, changed.status, "%s", changed.body)
	assert.NotEqual(t, first.body, changed.body, "one of its tokens changed: a new answer")
	assert.Contains(t, string(changed.body), `"2.25"`)
	assert.Equal(t, 2, r.readCount())
	assert.Equal(t, changed.body, srv.get(t, path).body)
	assert.Equal(t, 2, r.readCount())
}

// cachedServer is the API that build makes (httpapi.New or NewDex) over readers r, its market
// reads kept while versions says they are current, with a key holding every scope.
func cachedServer(t *testing.T, r market.Readers, versions ports.MarketVersions, build func(httpapi.Deps) *fiber.App) *server {
	t.Helper()
	keys := apikey.New(&keyStore{keys: map[string]account.Key{}}, wallClock{})
	full, _, err := keys.Create(context.Background(), fixtureAccount, "cached", account.AllScopes)
	require.NoError(t, err)
	a := &app.Application{Keys: keys, Market: market.New(r, market.WithCache(versions))}
	reg := prometheus.NewRegistry()
	return &server{app: build(httpapi.Deps{App: a, Auth: keys, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Registry: reg, Metrics: httpapi.NewMetrics(reg), RequestTimeout: 5 * time.Second}), key: full}
}
