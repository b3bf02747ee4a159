package main

// End-to-end tests of what the public API's own clients send and expect
// (shared/reference/chainstream-compat.md): every enumeration value of every parameter, resource
// ids that are not even well-formed, and the JSON type of usdAmount for an unpriced asset.
// The value lists below are copied from the spec and the reference, not from the code, so a
// value the code forgets fails here.

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/domain/ranking"
	"github.com/tokenscope/tokenscope/domain/redpacket"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/ports"
)

func windows(prefix string, ws ...string) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = prefix + w
	}
	return out
}

// tokenFieldsV1 is the sortBy list of operation 2 (spec; [V1] TokenField).
func tokenFieldsV1() []string {
	five := []string{"1m", "5m", "1h", "4h", "24h"}
	seven := []string{"1m", "5m", "15m", "30m", "1h", "4h", "24h"}
	var fs []string
	fs = append(fs, "marketData.priceInUsd")
	fs = append(fs, windows("stats.priceChangeRatioInUsd", five...)...)
	fs = append(fs, "marketData.marketCapInUsd", "marketData.tvlInUsd", "marketData.top10TotalHoldings",
		"marketData.top10HoldingsRatio", "marketData.top100TotalHoldings", "marketData.top100HoldingsRatio",
		"marketData.holders", "marketData.creatorHoldings", "marketData.creatorHoldingsRatio")
	fs = append(fs, windows("stats.buys", seven...)...)
	fs = append(fs, windows("stats.sells", seven...)...)
	fs = append(fs, windows("stats.trades", five...)...)
	fs = append(fs, windows("stats.traders", five...)...)
	fs = append(fs, windows("stats.volumesInUsd", five...)...)
	return append(fs, "tokenCreatedAt")
}

// tokenFieldsV2 is the v2 TokenField (operation 9's sortBy and the v2 multi path): the v1 list
// with tvlInUsd replaced by maxPoolTvlInUsd and totalTvlInUsd, plus the SDK's athMarketCapInUsd.
func tokenFieldsV2() []string {
	var fs []string
	for _, f := range tokenFieldsV1() {
		if f == "marketData.tvlInUsd" {
			fs = append(fs, "marketData.maxPoolTvlInUsd", "marketData.totalTvlInUsd")
			continue
		}
		fs = append(fs, f)
	}
	return append(fs, "marketData.athMarketCapInUsd")
}

var (
	compatChainsV2 = []string{"sol", "eth", "bsc"}
	compatChainsV1 = []string{"sol", "base", "bsc", "polygon", "arbitrum", "optimism", "avalanche", "ethereum", "zksync", "sui"}
	// The launchpad tags: the spec's neutral words, and the public API's ids they stand for, in
	// the same order (RankingTag), plus boop_fun, which launchpadPlatform also takes.
	compatSpecTags = []string{"alpha_fun", "beta_launchpad", "gamma_dynamic_bounding_curve", "delta_fun", "epsilon_fun"}
	compatRealTags = []string{"pump_fun", "raydium_launchpad", "meteora_dynamic_bounding_curve", "bonk_fun", "moonit_fun"}
	compatFilters  = []string{"has_social_media", "has_twitter", "has_telegram", "has_website", "has_tiktok", "has_discord",
		"has_facebook", "has_github", "has_instagram", "has_linkedin", "has_medium", "has_reddit", "has_youtube", "has_bitbucket"}
	compatDurations   = []string{"1m", "5m", "1h", "4h", "24h"}
	compatSearchSorts = []string{"marketCapInUsd", "liquidityInUsd", "priceInUsd", "holderCount", "h24VolumeInUsd",
		"h24Transactions", "tokenCreatedAt"}
	compatDirections = []string{"next", "prev"}
)

const (
	cmpChain    = chain.Bsc
	cmpDuration = ranking.Duration5m
	cmpWallet   = "0x00000000000000000000000000000000000c0de1"
	cmpPacket   = "CmpPacket1"
)

// cmpTokens are one token per launchpad id, one stored under a spec word, and one untagged.
var cmpTokens = []struct {
	addr string
	tag  token.Tag
}{
	{"0xc0a0000000000000000000000000000000000001", "pump_fun"},
	{"0xc0a0000000000000000000000000000000000002", "raydium_launchpad"},
	{"0xc0a0000000000000000000000000000000000003", "meteora_dynamic_bounding_curve"},
	{"0xc0a0000000000000000000000000000000000004", "delta_fun"}, // bonk_fun under its spec word
	{"0xc0a0000000000000000000000000000000000005", "moonit_fun"},
	{"0xc0a0000000000000000000000000000000000006", "boop_fun"},
	{"0xc0a0000000000000000000000000000000000007", ""},
}

func cmpAddrs() []string {
	out := make([]string, len(cmpTokens))
	for i, c := range cmpTokens {
		out[i] = c.addr
	}
	return out
}

// seedCompat stores the tokens, a ranking of them and a red packet.
func seedCompat(t *testing.T, e *env) {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC()
	var events []chainevent.Event
	var entries []ports.HotEntry
	for i, c := range cmpTokens {
		events = append(events, chainevent.TokenCreated{Token: token.Token{Chain: cmpChain, Address: c.addr, Decimals: 18,
			Name: fmt.Sprintf("Compat %d", i), Symbol: fmt.Sprintf("CMP%d", i), CreatedAt: ptr(now.Add(-time.Hour).UnixMilli()),
			LaunchpadTag: c.tag}, TotalSupply: dd("1000"), CirculatingSupply: dd("1000"), Creator: cmpWallet})
		entries = append(entries, ports.HotEntry{Address: c.addr, Rank: int32(i + 1), Score: dd(fmt.Sprint(len(cmpTokens) - i))})
	}
	_, err := e.rt.App.Ingest.Ingest(ctx, events)
	require.NoError(t, err)
	_, err = e.rt.App.Ingest.Ingest(ctx, []chainevent.Event{chainevent.RedPacketCreated{Packet: redpacket.RedPacket{ID: cmpPacket,
		Creator: cmpWallet, ClaimAuthority: cmpWallet, Mint: cmpTokens[0].addr, Chain: cmpChain, MaxClaims: 2, TotalAmount: dd("10"),
		CreatedAt: now.UnixMilli(), Expiration: 600, ExpiredAt: redpacket.ExpiresAt(now.UnixMilli(), 600)}}})
	require.NoError(t, err)
	require.NoError(t, postgres.NewIngestStore(e.rt.Pool).ReplaceHotTokens(ctx, cmpChain, cmpDuration, entries, now))
}

// TestClientEnumerationValues sends every value the spec and the compatibility reference list
// for every enumerated parameter of every operation: each is a 200. Values nothing matches give
// an empty answer, never a 400.
func TestClientEnumerationValues(t *testing.T) {
	e := newEnv(t)
	seedCompat(t, e)
	addrs := cmpAddrs()
	hot := fmt.Sprintf("/v2/ranking/%s/hotTokens/%s", cmpChain, cmpDuration)
	multiV1 := "/v1/token/bsc/multi?tokenAddresses=" + strings.Join(addrs, ",")
	multiV2 := "/v2/token/bsc/multi?tokenAddresses=" + strings.Join(addrs, ",")
	rangeOf := func(f string) string { return url.QueryEscape(`[{"field":"` + f + `","min":"0"}]`) }

	type param struct {
		name   string
		values []string
		path   func(v string) string
		dex    bool
	}
	params := []param{
		{"search chains", compatChainsV2, func(v string) string { return "/v2/token/search?chains=" + v }, false},
		{"search sortBy", compatSearchSorts, func(v string) string { return "/v2/token/search?sortBy=" + v }, false},
		{"search sort", []string{"asc", "desc", "ASC", "Desc"}, func(v string) string { return "/v2/token/search?sort=" + v }, false},
		{"search mode", []string{"fast", "normal"}, func(v string) string { return "/v2/token/search?mode=" + v }, false},
		{"search direction", compatDirections, func(v string) string { return "/v2/token/search?direction=" + v }, false},
		{"multi v1 chain", compatChainsV1, func(v string) string { return "/v1/token/" + v + "/multi?tokenAddresses=x" }, true},
		{"multi v1 sortBy", tokenFieldsV1(), func(v string) string { return multiV1 + "&sortBy=" + v }, true},
		{"multi v1 sortDirection", []string{"ASC", "DESC", "asc", "desc"}, func(v string) string { return multiV1 + "&sortDirection=" + v }, true},
		{"multi v1 filterBy field", tokenFieldsV1(), func(v string) string { return multiV1 + "&filterBy=" + rangeOf(v) }, true},
		{"multi v2 chain", compatChainsV2, func(v string) string { return "/v2/token/" + v + "/multi?tokenAddresses=x" }, false},
		{"multi v2 sortBy", tokenFieldsV2(), func(v string) string { return multiV2 + "&sortBy=" + v }, false},
		{"multi v2 sortDirection", []string{"asc", "desc", "ASC", "DESC"}, func(v string) string { return multiV2 + "&sortDirection=" + v }, false},
		{"multi v2 filterBy field", tokenFieldsV2(), func(v string) string { return multiV2 + "&filterBy=" + rangeOf(v) }, false},
		{"trades chain", compatChainsV2, func(v string) string { return "/v2/trade/" + v }, false},
		{"trades type", []string{"BUY", "SELL"}, func(v string) string { return "/v2/trade/bsc?type=" + v }, false},
		{"trades direction", compatDirections, func(v string) string { return "/v2/trade/bsc?direction=" + v }, false},
		{"snapshots chain", compatChainsV2, func(v string) string { return "/v2/dexpools/" + v + "/pool/snapshots" }, false},
		{"snapshots direction", compatDirections, func(v string) string { return "/v2/dexpools/bsc/pool/snapshots?direction=" + v }, false},
		{"red packets chain", compatChainsV2, func(v string) string { return "/v2/redpacket?chain=" + v }, false},
		{"red packets direction", compatDirections, func(v string) string { return "/v2/redpacket?direction=" + v }, false},
		{"wallet red packets direction", compatDirections, func(v string) string {
			return "/v2/redpacket/wallet/" + cmpWallet + "/redpackets?direction=" + v
		}, false},
		{"claims direction", compatDirections, func(v string) string { return "/v2/redpacket/" + cmpPacket + "/claims?direction=" + v }, false},
		{"pnl chain", compatChainsV2, func(v string) string { return "/v2/wallet/" + v + "/" + cmpWallet + "/pnl-by-token?tokenAddresses=x" }, false},
		{"pnl resolution", []string{"1d", "7d", "30d", "all"}, func(v string) string {
			return "/v2/wallet/bsc/" + cmpWallet + "/pnl-by-token?tokenAddresses=x&resolution=" + v
		}, false},
		{"hot chain", compatChainsV2, func(v string) string { return "/v2/ranking/" + v + "/hotTokens/1h" }, false},
		{"hot duration", compatDurations, func(v string) string { return "/v2/ranking/sol/hotTokens/" + v }, false},
		{"hot sortBy", tokenFieldsV2(), func(v string) string { return hot + "?sortBy=" + v }, false},
		{"hot sortDirection", []string{"asc", "desc", "ASC", "DESC"}, func(v string) string { return hot + "?sortDirection=" + v }, false},
		{"hot tag", append(slices.Clone(compatSpecTags), compatRealTags...), func(v string) string { return hot + "?tag=" + v }, false},
		{"hot launchpadPlatform", append(append(slices.Clone(compatSpecTags), compatRealTags...), "boop_fun"), func(v string) string {
			return hot + "?launchpadPlatform=" + v
		}, false},
		{"hot filters", compatFilters, func(v string) string { return hot + "?filters=" + v }, false},
		{"hot rangeFilters field", tokenFieldsV2(), func(v string) string { return hot + "?rangeFilters=" + rangeOf(v) }, false},
		{"webhook list order", []string{"ascending", "descending"}, func(v string) string { return "/v2/webhook/endpoint?order=" + v }, false},
	}
	for _, p := range params {
		t.Run(p.name, func(t *testing.T) {
			for _, v := range p.values {
				var r resp
				if p.dex {
					r = e.doDex(t, "GET", p.path(v), nil)
				} else {
					r = e.do(t, "GET", p.path(v), nil)
				}
				assert.Equal(t, 200, r.Status, "%s=%s: %s", p.name, v, r.Body)
			}
		})
	}

	// What the launchpad values find: a spec word and the id it stands for are one launchpad.
	hotAddrs := func(t *testing.T, q string) []string {
		t.Helper()
		v := okJSON(t, e.do(t, "GET", hot+"?"+q, nil))
		return only(addresses(v.([]any), "address"), addrs...)
	}
	t.Run("tag finds its tokens under either name", func(t *testing.T) {
		for i := range compatRealTags {
			want := []string{cmpTokens[i].addr}
			assert.Equal(t, want, hotAddrs(t, "tag="+compatRealTags[i]), compatRealTags[i])
			assert.Equal(t, want, hotAddrs(t, "tag="+compatSpecTags[i]), compatSpecTags[i])
		}
		assert.Equal(t, []string{cmpTokens[0].addr, cmpTokens[3].addr, cmpTokens[5].addr},
			hotAddrs(t, "launchpadPlatform=pump_fun&launchpadPlatform=delta_fun&launchpadPlatform=boop_fun"))
	})
	t.Run("a field without data sorts every token by address and matches no range", func(t *testing.T) {
		for _, dir := range []string{"asc", "desc"} {
			assert.Equal(t, addrs, hotAddrs(t, "sortBy=marketData.athMarketCapInUsd&sortDirection="+dir), dir)
		}
		assert.Empty(t, hotAddrs(t, "rangeFilters="+rangeOf("marketData.athMarketCapInUsd")))
	})

	t.Run("webhook channels and filterTypes", func(t *testing.T) {
		for _, ch := range []string{"sol.token.migrated", "sol.token.created"} {
			body := map[string]any{"url": "http://127.0.0.1:9/compat", "channels": []string{ch}, "filterTypes": []string{ch}}
			r := e.do(t, "POST", "/v2/webhook/endpoint", body)
			require.Equal(t, 200, r.Status, "%s: %s", ch, r.Body)
			id := r.Object(t)["id"].(string)
			r = e.do(t, "PATCH", "/v2/webhook/endpoint", map[string]any{"endpointId": id, "channels": []string{ch}, "filterTypes": []string{ch}})
			assert.Equal(t, 200, r.Status, "%s: %s", ch, r.Body)
		}
	})
	t.Run("kyt network and direction", func(t *testing.T) {
		refs := map[string][2]string{ // network → address, transaction hash
			"Solana":   {solAddr, solSig},
			"bitcoin":  {"1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", strings.Repeat("ab", 32)},
			"ethereum": {"0x" + strings.Repeat("1f", 20), "0x" + strings.Repeat("2e", 32)},
		}
		for _, n := range []string{"Solana", "bitcoin", "ethereum"} {
			w := map[string]any{"address": refs[n][0], "asset": "CMP", "assetAmount": "1", "assetPrice": "2",
				"attemptTimestamp": "2024-01-15T10:30:00.000Z", "network": n}
			r := e.do(t, "POST", "/v2/kyt/withdrawal", w)
			assert.Equal(t, 200, r.Status, "withdrawal on %s: %s", n, r.Body)
			for _, d := range []string{"sent", "received"} {
				tr := map[string]any{"asset": "CMP", "direction": d, "network": n, "transferReference": refs[n][1] + ":" + refs[n][0]}
				r := e.do(t, "POST", "/v2/kyt/transfer", tr)
				assert.Equal(t, 200, r.Status, "transfer %s on %s: %s", d, n, r.Body)
			}
		}
	})
	t.Run("calculate-pnl chain", func(t *testing.T) {
		for _, c := range compatChainsV2 {
			r := e.do(t, "POST", "/v2/wallet/"+c+"/"+cmpWallet+"/calculate-pnl", map[string]any{})
			assert.Equal(t, 200, r.Status, "%s: %s", c, r.Body)
		}
	})

	// Values in neither list stay 400, naming the parameter and listing what is allowed.
	t.Run("unknown values are 400 with the allowed values", func(t *testing.T) {
		for _, tc := range []struct{ path, param, allowed string }{
			{hot + "?tag=pump", "tag", "pump_fun"},
			{hot + "?tag=pump", "tag", "alpha_fun"},
			{hot + "?launchpadPlatform=boop", "launchpadPlatform", "boop_fun"},
			{hot + "?sortBy=marketData.athMarketCap", "sortBy", "marketData.athMarketCapInUsd"},
			{hot + "?sortBy=marketData.tvlInUsd", "sortBy", "marketData.totalTvlInUsd"},
			{"/v2/wallet/bsc/" + cmpWallet + "/pnl-by-token?tokenAddresses=x&resolution=2d", "resolution", "30d"},
		} {
			r := e.do(t, "GET", tc.path, nil)
			badRequest(t, r, tc.param)
			assert.Contains(t, r.Object(t)["details"].(map[string]any)["allowed_values"], tc.allowed, "%s", tc.path)
		}
	})
}

// TestMalformedResourceIDsAreNotFound: an id that cannot name a resource (not a UUID where the
// resource's ids are UUIDs, NUL bytes, oversized, odd characters) is the same 404 as an unknown
// well-formed id, with the usual error body and no database message.
func TestMalformedResourceIDsAreNotFound(t *testing.T) {
	e := newEnv(t)
	ids := []string{
		"notauuid",
		"00000000-0000-0000-0000-00000000000g",
		"00000000-0000-0000-0000-000000000000", // well-formed, unknown
		"{00000000-0000-0000-0000-000000000000}",
		"%00",
		"a%00b",
		"%FF%FE",
		"%27%3B%20DROP%20TABLE%20jobs%3B--",
		"%C3%A9t%C3%A9",
		strings.Repeat("x", 1000),
	}
	routes := []struct{ method, path string }{
		{"GET", "/v2/kyt/withdrawal/%s/summary"},
		{"GET", "/v2/kyt/transfers/%s/summary"},
		{"GET", "/v2/webhook/endpoint/%s"},
		{"DELETE", "/v2/webhook/endpoint/%s"},
		{"GET", "/v2/webhook/endpoint/%s/secret"},
		{"POST", "/v2/webhook/endpoint/%s/secret/rotate"},
		{"GET", "/v2/webhook/endpoint/%s/attempts"},
		{"GET", "/v2/job/%s"},
		{"GET", "/v2/job/%s/streaming"},
		{"GET", "/v2/redpacket/%s/claims"},
	}
	leaks := []string{"SQLSTATE", "invalid input syntax", "invalid byte sequence", "out of range", "internal error"}
	check := func(t *testing.T, what string, r resp) {
		t.Helper()
		body := requireErrorBody(t, r, 404)
		msg := fmt.Sprint(body["message"])
		for _, l := range leaks {
			assert.NotContains(t, strings.ToLower(msg), strings.ToLower(l), "%s: %s", what, r.Body)
		}
	}
	for _, rt := range routes {
		t.Run(rt.method+" "+rt.path, func(t *testing.T) {
			for _, id := range ids {
				path := fmt.Sprintf(rt.path, id)
				check(t, path, e.do(t, rt.method, path, nil))
			}
		})
	}
	t.Run("PATCH /v2/webhook/endpoint", func(t *testing.T) {
		for _, id := range []string{"notanid", "ep_\xff\xfe", strings.Repeat("x", 4000), "00000000-0000-0000-0000-000000000000"} {
			check(t, fmt.Sprintf("endpointId %q", id), e.do(t, "PATCH", "/v2/webhook/endpoint", map[string]any{"endpointId": id, "description": "x"}))
		}
		// A NUL in a JSON body is refused before anything runs, naming the field (docs/api.md, "Text").
		for _, id := range []string{"ep_\u0000", "\u0000"} {
			body := requireErrorBody(t, e.do(t, "PATCH", "/v2/webhook/endpoint", map[string]any{"endpointId": id, "description": "x"}), 400)
			assert.Equal(t, "endpointId", body["details"].(map[string]any)["parameter"], "endpointId %q", id)
		}
	})
}

// TestKYTWithdrawalUSDAmountIsAlwaysAString: the spec types the withdrawal response's usdAmount
// as a required string. An asset tokenscope cannot price (no assetPrice, no market data, or a
// price in another currency) answers "" — a string, and no invented amount — both from the
// registration and from its summary; a priced one answers the decimal.
func TestKYTWithdrawalUSDAmountIsAlwaysAString(t *testing.T) {
	e := newEnv(t, fastWorkflows)
	evm := "0x" + strings.Repeat("3c", 20)
	for _, tc := range []struct {
		name string
		body map[string]any
		want string
	}{
		{"unknown asset", map[string]any{"address": evm, "asset": "ZZNOPRICE", "assetAmount": "5",
			"attemptTimestamp": "2024-01-15T10:30:00Z", "network": "ethereum"}, ""},
		{"bitcoin without a price", map[string]any{"address": "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", "asset": "BTC", "assetAmount": "0.5",
			"attemptTimestamp": "2024-01-15T10:30:00Z", "network": "bitcoin"}, ""},
		{"priced in another currency", map[string]any{"address": evm, "asset": "ZZNOPRICE", "assetAmount": "5", "assetPrice": "2",
			"assetDenomination": "EUR", "attemptTimestamp": "2024-01-15T10:30:00Z", "network": "ethereum"}, ""},
		{"priced by the caller", map[string]any{"address": evm, "asset": "ZZNOPRICE", "assetAmount": "5", "assetPrice": "2",
			"attemptTimestamp": "2024-01-15T10:30:00Z", "network": "ethereum"}, "10"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(t, "POST", "/v2/kyt/withdrawal", tc.body)
			require.Equal(t, 200, r.Status, "%s", r.Body)
			o := r.Object(t)
			assert.Equal(t, tc.want, o["usdAmount"], "registration: %s", r.Body)
			id := o["externalId"].(string)
			var s map[string]any
			eventually(t, 30*time.Second, "processed", func() bool {
				s = e.do(t, "GET", "/v2/kyt/withdrawal/"+id+"/summary", nil).Object(t)
				return s["status"] != "pending"
			})
			assert.Equal(t, tc.want, s["usdAmount"], "summary: %v", s)
		})
	}
}
