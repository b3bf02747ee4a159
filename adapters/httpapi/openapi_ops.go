package httpapi

import (
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/tokenscope/tokenscope/app/market"
	"github.com/tokenscope/tokenscope/domain/account"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/job"
	"github.com/tokenscope/tokenscope/domain/kyt"
	"github.com/tokenscope/tokenscope/domain/ohlcv"
	"github.com/tokenscope/tokenscope/domain/page"
	"github.com/tokenscope/tokenscope/domain/pnl"
	"github.com/tokenscope/tokenscope/domain/ranking"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/domain/trade"
	"github.com/tokenscope/tokenscope/domain/webhook"
)

// apiOp is one operation of the document: a route of routes.go (or of newFiber/New: health,
// the document and the docs page).
type apiOp struct {
	method, path         string // as Fiber routes it (":param")
	id, tag, summary     string
	desc                 string
	scope                account.Scope // "" = no authentication
	params               []schema
	body                 schema   // a requestBody object, or nil
	ok                   schema   // the 200 response object
	more                 []string // error statuses beyond the ones every authenticated operation has
	noContent, dex, bare bool     // 204 too; also on the dex address; no error responses (public)
}

// commonErrors are the statuses any authenticated operation may answer (see docs/api.md,
// "Requests refused before routing", and the rate limits).
var commonErrors = []string{"400", "401", "403", "408", "413", "429", "431", "500", "503"}

func param(in, name string, s schema, desc string) schema {
	p := schema{"name": name, "in": in, "schema": s, "description": desc}
	if in == "path" {
		p["required"] = true
	}
	return p
}

func requiredParam(p schema) schema { p = maps(p); p["required"] = true; return p }

// listParam is an array query parameter: repeated keys, bracket keys or a comma list.
func listParam(name string, items schema, desc string) schema {
	s := arrayOf(items)
	s["maxItems"] = market.MaxAddresses
	p := param("query", name, s, desc+" Repeated keys (`a=1&a=2`), bracket keys (`a[]=1`) and comma lists (`a=1,2`) are accepted; at most 100 items.")
	p["style"], p["explode"] = "form", true
	return p
}

func pageParams(def int) []schema {
	return []schema{
		param("query", "limit", schema{"type": "integer", "minimum": 1, "maximum": page.MaxLimit, "default": def}, "Page size."),
		param("query", "cursor", str(), "Opaque cursor from `startCursor`/`endCursor` of a previous page of the same list."),
		param("query", "direction", schema{"type": "string", "enum": []string{"next", "prev"}, "default": "next"},
			"`next` walks from `endCursor`, `prev` from `startCursor` (case-insensitive)."),
	}
}

func jsonBody(s schema, desc string) schema {
	return schema{"required": true, "description": desc, "content": schema{"application/json": schema{"schema": s}}}
}

func okJSON(s schema, desc string) schema {
	return schema{"description": desc, "content": schema{"application/json": schema{"schema": s}}}
}

// pageOf is the cursor page envelope of items.
func (g *schemas) pageOf(name string, item schema) schema {
	return g.component(name, object(schema{"data": arrayOf(item), "startCursor": nullOr(str()), "endCursor": nullOr(str()),
		"hasNext": boolean(), "hasPrev": boolean()}))
}

// redPacketPageOf is the red packet page envelope of items.
func (g *schemas) redPacketPageOf(name string, item schema) schema {
	return g.component(name, object(schema{"records": arrayOf(item), "hasNextPage": boolean(), "total": integer(),
		"startCursor": nullOr(str()), "endCursor": nullOr(str())}))
}

func parserOf[T any](parse func(string, string) (T, error)) func(string) error {
	return func(s string) error { _, err := parse("p", s); return err }
}

func fieldNames(fs []token.Field) []string {
	return allowedBy(func(s string) error { _, err := token.ParseField("sortBy", s, fs); return err })
}

// apiOperations lists the operations in routes.go's order. g collects the schemas they use.
func apiOperations(g *schemas) []apiOp {
	v2Chain := param("path", "chain", enumOf(allowedBy(parserOf(chain.Parse))), "Chain (case-insensitive).")
	multiChain := param("path", "chain", enumOf(allowedBy(parserOf(chain.ParseMulti))),
		"Chain (case-insensitive); `ethereum` reads the data stored under `eth`, chains without data answer `[]`.")
	sortDirection := param("query", "sortDirection", schema{"type": "string", "enum": []string{"asc", "desc"}, "default": "desc"},
		"Sort direction (case-insensitive; `ASC`/`DESC` too).")
	// Operation 2's sortDirection is the spec's ASC/DESC (operation 9's is asc/desc); both are read
	// case-insensitively.
	multiSortDirection := param("query", "sortDirection",
		schema{"type": "string", "enum": allowedBy(parserOf(token.ParseUpperSortDirection)), "default": "DESC"},
		"Sort direction (case-insensitive; `asc`/`desc` too).")
	multiParams := func(fields []token.Field) []schema {
		return []schema{
			requiredParam(listParam("tokenAddresses", str(), "Token addresses (1–100); unknown ones are left out, repeated ones appear once.")),
			param("query", "sortBy", enumOf(fieldNames(fields)), "Sort field (case-insensitive); without it the input order is kept."),
			multiSortDirection,
			param("query", "filterBy", str(), "A JSON array (or one object) of at most 50 conditions, AND-ed: "+
				"`{\"field\",\"min\"?,\"max\"?}` (inclusive) or `{\"field\",\"operator\",\"value\"}` with operator gt, gte, lt, lte, eq, ne. Fields are the sortBy values."),
		}
	}
	candles := g.component("Candle", object(schema{"open": ref("Decimal"), "high": ref("Decimal"), "low": ref("Decimal"),
		"close": ref("Decimal"), "volume": ref("Decimal"), "volumeInTokenAmount": ref("Decimal"),
		"timestamp": describe(integer(), "The interval's start, Unix milliseconds."), "trades": integer()}))
	tokenV2 := g.of(reflect.TypeFor[tokenV2DTO]())
	endpoint := g.of(reflect.TypeFor[endpointDTO]())
	success := g.component("Success", object(schema{"success": schema{"type": "boolean", "const": true}}))
	kytSummary := func(base reflect.Type, name string) schema {
		s := g.inline(base)
		scr := g.inline(reflect.TypeFor[screeningDTO]())
		props := maps(s["properties"].(schema))
		for k, v := range scr["properties"].(schema) {
			props[k] = v
		}
		return g.component(name, object(props))
	}
	endpointID := param("path", "id", str(), "Webhook endpoint id.")
	jobID := param("path", "id", str(), "Job id (`job_…`).")
	externalID := param("path", "externalId", schema{"type": "string", "format": "uuid"}, "The registration's externalId; an id that is not a UUID is `404`.")
	idempotency := param("header", "Idempotency-Key", schema{"type": "string", "maxLength": 255},
		"Optional: a repeated request with the same key answers the first registration.")
	webhookFields := schema{
		"url": str(), "channels": nullOr(arrayOf(enumOf(channelNames()))), "description": nullOr(str()),
		"disabled": nullOr(boolean()), "filter": nullOr(str()), "filterTypes": nullOr(arrayOf(str())),
		"metadata":  schema{"type": "object", "additionalProperties": str()},
		"rateLimit": nullOr(schema{"type": "integer", "format": "int32", "minimum": 0}),
	}
	create := maps(webhookFields)
	create["secret"] = nullOr(str())
	patch := maps(webhookFields)
	patch["url"] = nullOr(str())
	patch["endpointId"] = str()

	return []apiOp{
		{method: "GET", path: "/healthz", id: "healthz", tag: "Service", summary: "Liveness", bare: true,
			desc: "200 while the process runs; checks no dependency (see readiness for that).",
			ok:   okJSON(object(schema{"status": schema{"type": "string", "const": "up"}}), "The process is up.")},
		{method: "GET", path: "/readyz", id: "readyz", tag: "Service", summary: "Readiness", bare: true,
			desc: "200 when every dependency answers; 503 (with `Retry-After`) naming the ones that do not.",
			ok:   okJSON(g.component("Readiness", readiness()), "Every check is up.")},
		{method: "GET", path: "/openapi.json", id: "openapi", tag: "Service", summary: "This OpenAPI document", bare: true,
			desc: "The OpenAPI 3.1 description of every operation, served without a key.",
			ok:   okJSON(schema{"type": "object"}, "The OpenAPI 3.1 document.")},
		{method: "GET", path: "/docs", id: "docs", tag: "Service", summary: "The API reference page", bare: true,
			desc: "This document rendered as a page, with a client that sends requests to this address; everything it loads comes from this service.",
			ok:   schema{"description": "An HTML page rendering this document.", "content": schema{"text/html": schema{"schema": str()}}}},
		{method: "GET", path: "/live", id: "live", tag: "Service", summary: "The live page", bare: true,
			desc: "Hot tokens, a token's candles and trades, updating from the WebSocket stream; the page asks for a key and keeps it in the browser.",
			ok:   schema{"description": "An HTML page.", "content": schema{"text/html": schema{"schema": str()}}}},
		{method: "GET", path: "/v2/whoami", id: "whoami", tag: "Account", summary: "The key's account and scopes", scope: account.ScopeRead,
			ok: okJSON(g.of(reflect.TypeFor[whoamiDTO]()), "The caller.")},
		{method: "GET", path: "/v2/token/search", id: "searchTokens", tag: "Tokens", summary: "1. Token search", scope: account.ScopeRead,
			desc: "Matches addresses, names and symbols; `mode=fast` (default) returns TokenFast records, `mode=normal` full Token records.",
			params: append([]schema{
				param("query", "q", schema{"type": "string", "maxLength": 128}, "Search text."),
				listParam("chains", enumOf(allowedBy(parserOf(chain.Parse))), "Chains to search."),
				listParam("protocols", str(), "Protocol families the token launched from or migrated to."),
				param("query", "sortBy", enumOf(allowedBy(func(s string) error { _, err := market.ParseSearchSort(s); return err })),
					"Sort field (case-insensitive); default relevance with `q`, else market cap."),
				param("query", "sort", schema{"type": "string", "enum": []string{"asc", "desc"}, "default": "desc"}, "Sort direction (case-insensitive)."),
				param("query", "mode", schema{"type": "string", "enum": []string{"fast", "normal"}, "default": "fast"}, "Record shape."),
			}, pageParams(page.DefaultLimit)...),
			ok: okJSON(schema{"anyOf": []any{g.pageOf("TokenFastPage", g.of(reflect.TypeFor[tokenFastDTO]())), g.pageOf("TokenPage", tokenV2)}},
				"A page of TokenFast records (mode=fast) or Token records (mode=normal).")},
		{method: "GET", path: "/v2/trade/:chain", id: "listTrades", tag: "Trades", summary: "3. Trades", scope: account.ScopeRead,
			desc: "Newest first. Filters combine with AND; times are Unix seconds or milliseconds (values from 10^12 on are ms), inclusive.",
			params: append([]schema{v2Chain,
				param("query", "tokenAddress", str(), "Token address."),
				param("query", "walletAddress", str(), "Wallet address."),
				param("query", "poolAddress", str(), "Pool address."),
				listParam("transactionsSignature", str(), "Transaction signatures."),
				param("query", "afterTimestamp", schema{"type": "integer", "minimum": 0}, "Lower time bound (s or ms)."),
				param("query", "beforeTimestamp", schema{"type": "integer", "minimum": 0}, "Upper time bound (s or ms; seconds include the whole second)."),
				param("query", "afterBlockHeight", schema{"type": "integer", "minimum": 0}, "Lower block height bound."),
				param("query", "beforeBlockHeight", schema{"type": "integer", "minimum": 0}, "Upper block height bound."),
				param("query", "type", enumOf(allowedBy(parserOf(trade.ParseSide))), "Trade side (case-insensitive)."),
			}, pageParams(page.DefaultLimit)...),
			ok: okJSON(g.pageOf("TradePage", g.of(reflect.TypeFor[tradeDTO]())), "A page of trades.")},
		{method: "GET", path: "/v2/dexpools/:chain/:poolAddress/snapshots", id: "listPoolSnapshots", tag: "Pools", summary: "4. Pool snapshots",
			scope: account.ScopeRead, desc: "Newest first; an unknown pool is an empty page.",
			params: append([]schema{v2Chain, param("path", "poolAddress", str(), "Pool address."),
				param("query", "time", schema{"type": "integer", "minimum": 0}, "Only snapshots at or before this Unix time (s or ms)."),
			}, pageParams(page.DefaultLimit)...),
			ok: okJSON(g.pageOf("PoolSnapshotPage", g.of(reflect.TypeFor[snapshotDTO]())), "A page of snapshots.")},
		{method: "GET", path: "/v2/redpacket/wallet/:address/redpackets", id: "walletRedPackets", tag: "Red packets",
			summary: "5. Red packets a wallet created", scope: account.ScopeRead,
			params: append([]schema{param("path", "address", str(), "Creator wallet address.")}, pageParams(redPacketDefaultLimit)...),
			ok:     okJSON(g.redPacketPageOf("RedPacketPage", g.of(reflect.TypeFor[redPacketDTO]())), "A page of red packets, newest first.")},
		{method: "GET", path: "/v2/redpacket", id: "listRedPackets", tag: "Red packets", summary: "6. Red packets", scope: account.ScopeRead,
			params: append([]schema{param("query", "creator", str(), "Creator wallet address."),
				param("query", "chain", enumOf(allowedBy(parserOf(chain.Parse))), "Chain (case-insensitive)."),
			}, pageParams(redPacketDefaultLimit)...),
			ok: okJSON(ref("RedPacketPage"), "A page of red packets, newest first.")},
		{method: "GET", path: "/v2/redpacket/:id/claims", id: "redPacketClaims", tag: "Red packets", summary: "7. Claims of a red packet",
			scope: account.ScopeRead, more: []string{"404"},
			params: append([]schema{param("path", "id", str(), "Red packet id.")}, pageParams(redPacketDefaultLimit)...),
			ok:     okJSON(g.redPacketPageOf("RedPacketClaimPage", g.of(reflect.TypeFor[claimDTO]())), "A page of claims, newest first.")},
		{method: "GET", path: "/v2/wallet/:chain/:walletAddress/pnl-by-token", id: "walletPnlByToken", tag: "Wallets",
			summary: "8. Wallet PnL by token", scope: account.ScopeRead,
			desc: "One entry per requested token the wallet traded, ordered by token address; `summary` covers all of them.",
			params: append([]schema{v2Chain, param("path", "walletAddress", str(), "Wallet address."),
				requiredParam(listParam("tokenAddresses", str(), "Token addresses (1–100).")),
				param("query", "resolution", enumOf(allowedBy(parserOf(pnl.ParseResolution))), "The period the figures cover: the last 1, 7 or 30 UTC calendar days, today included, or the whole history (all, the default). Over a period, counts, amounts bought and sold and realized profit are those of the period's trades; balance, cost, value and unrealized profit are now's."),
			}, pageParams(market.MaxAddresses)...),
			ok: okJSON(g.component("PnlPage", pnlPage(g)), "PnL entries and their summary.")},
		{method: "GET", path: "/v2/ranking/:chain/hotTokens/:duration", id: "hotTokens", tag: "Ranking", summary: "9. Hot tokens",
			scope: account.ScopeRead, desc: "At most 100 tokens of the precomputed ranking, filtered and sorted in memory; a bare array.",
			params: []schema{v2Chain,
				param("path", "duration", enumOf(allowedBy(parserOf(ranking.ParseDuration))), "Ranking window."),
				param("query", "sortBy", enumOf(fieldNames(token.RankingFields)), "Sort field (case-insensitive); default the ranking score."),
				sortDirection,
				param("query", "tag", enumOf(allowedBy(parserOf(token.ParseTag))), "Keep tokens launched on this launchpad."),
				listParam("launchpadPlatform", enumOf(allowedBy(parserOf(token.ParseTag))), "Keep tokens launched on any of these launchpads."),
				listParam("filters", enumOf(allowedBy(parserOf(token.ParseSocialFilter))), "Social link filters; all must hold."),
				param("query", "rangeFilters", str(), "JSON array (or object) of `{field,min?,max?}` / `{field,operator,value}` conditions on the sortBy fields (repeatable; at most 50)."),
				param("query", "filterBy", str(), "Older name of rangeFilters."),
				listParam("searchKeywords", str(), "Keep tokens whose name or symbol contains one of these."),
				listParam("excludeKeywords", str(), "Drop tokens whose name or symbol contains one of these."),
			},
			ok: okJSON(arrayOf(tokenV2), "The ranked tokens.")},
		candleOp("/v2/token/:chain/pool/:poolAddress/candles", "poolCandles", "Candles of a pool",
			param("path", "poolAddress", str(), "Pool address; every successful trade in the pool."), v2Chain, candles),
		candleOp("/v2/token/:chain/pair/:pair/candles", "pairCandles", "Candles of a pair",
			param("path", "pair", schema{"type": "string", "pattern": "^[^-]+-[^-]+$"},
				"`TOKEN_A-TOKEN_B`; the bytewise smaller address is the base whose price the candles carry."), v2Chain, candles),
		candleOp("/v2/token/:chain/:tokenAddress/candles", "tokenCandles", "Candles of a token",
			param("path", "tokenAddress", str(), "Token address."), v2Chain, candles),
		{method: "POST", path: "/v2/kyt/withdrawal", id: "registerWithdrawal", tag: "KYT", summary: "10. Register a withdrawal",
			scope: account.ScopeKYT, more: []string{"409"}, params: []schema{idempotency},
			body: jsonBody(schema{"type": "object", "required": []string{"address", "asset", "assetAmount", "attemptTimestamp", "network"},
				"properties": schema{"address": kytAddress(), "asset": kytText(kyt.MaxAssetLen),
					"assetAmount":       schema{"type": "string", "pattern": kytAmountPattern, "maxLength": kyt.MaxNumberLen},
					"attemptTimestamp":  schema{"type": "string", "format": "date-time", "maxLength": kyt.MaxTimestampLen},
					"network":           enumOf(networkNames()),
					"assetDenomination": nullOr(schema{"type": "string", "pattern": "^[A-Za-z]{0,16}$"}),
					"assetId":           nullOr(schema{"type": "string", "maxLength": kyt.MaxAssetIDLen}),
					"assetPrice":        nullOr(schema{"type": "string", "pattern": kytAmountPattern, "maxLength": kyt.MaxNumberLen}),
					"memo":              nullOr(schema{"type": "string", "maxLength": kyt.MaxMemoLen})}}, "The withdrawal attempt."),
			ok: okJSON(g.of(reflect.TypeFor[withdrawalDTO]()), "The registration (screening runs in the background).")},
		{method: "POST", path: "/v2/kyt/transfer", id: "registerTransfer", tag: "KYT", summary: "11. Register a transfer",
			scope: account.ScopeKYT, more: []string{"409"}, params: []schema{idempotency},
			body: jsonBody(schema{"type": "object", "required": []string{"asset", "direction", "network", "transferReference"},
				"properties": schema{"asset": kytText(kyt.MaxAssetLen), "direction": enumOf([]string{string(kyt.Sent), string(kyt.Received)}),
					"network": enumOf(networkNames()), "transferReference": schema{"type": "string",
						"pattern": "^(?:" + kytHashPattern + ")(?::(?:" + kytAddressPattern + "|[0-9]{1,10}))?$", "maxLength": kyt.MaxTransferReferenceLen}}},
				"The transfer."),
			ok: okJSON(g.of(reflect.TypeFor[transferDTO]()), "The registration; provider fields are null until processed.")},
		{method: "GET", path: "/v2/kyt/withdrawal/:externalId/summary", id: "withdrawalSummary", tag: "KYT", summary: "Withdrawal screening summary",
			scope: account.ScopeKYT, more: []string{"404"}, params: []schema{externalID},
			ok: okJSON(kytSummary(reflect.TypeFor[withdrawalDTO](), "KytWithdrawalSummary"), "The registration with its screening.")},
		{method: "GET", path: "/v2/kyt/transfers/:externalId/summary", id: "transferSummary", tag: "KYT", summary: "Transfer screening summary",
			scope: account.ScopeKYT, more: []string{"404"}, params: []schema{externalID},
			ok: okJSON(kytSummary(reflect.TypeFor[transferDTO](), "KytTransferSummary"), "The registration with its screening.")},
		{method: "POST", path: "/v2/wallet/:chain/:walletAddress/calculate-pnl", id: "calculatePnl", tag: "Jobs", summary: "Start a PnL job",
			scope: account.ScopeRead, desc: "Identical unfinished work shares one job; at most JOB_MAX_RUNNING unfinished jobs per account (429 beyond).",
			params: []schema{v2Chain, param("path", "walletAddress", str(), "Wallet address.")},
			body: jsonBody(schema{"type": "object", "properties": schema{"tokenAddresses": nullOr(schema{"type": "array", "items": str(), "maxItems": 100})}},
				"Tokens to compute (absent, null or [] = every token the wallet traded)."),
			ok: okJSON(g.component("JobStarted", object(schema{"success": schema{"type": "boolean", "const": true}, "jobId": str()})), "The job.")},
		{method: "GET", path: "/v2/job/:id", id: "getJob", tag: "Jobs", summary: "Job state", scope: account.ScopeRead,
			more: []string{"404"}, params: []schema{jobID}, ok: okJSON(g.of(reflect.TypeFor[jobDTO]()), "The job.")},
		{method: "GET", path: "/v2/job/:id/streaming", id: "streamJob", tag: "Jobs", summary: "12. Job stream (server-sent events)",
			scope: account.ScopeRead, more: []string{"404"}, noContent: true,
			desc: "Streams the job's state, then every change, ending after the terminal message. A reconnect (Last-Event-ID or lastEventId) to a finished job is 204.",
			params: []schema{jobID, param("header", "Last-Event-ID", str(), "Set by EventSource on reconnect."),
				param("query", "lastEventId", str(), "Reconnect marker of event-source polyfills.")},
			ok: schema{"description": "An event stream: per message an `id:` line (1, 2, …) and a `data:` line holding one JobMessage as JSON; " +
				"`: ping` comments keep the connection open. The stream ends after the completed or failed message.",
				"content": schema{"text/event-stream": schema{"schema": schema{"type": "string", "contentMediaType": "text/event-stream",
					"description":   "Server-sent events; the JSON of each `data:` line is a JobMessage (contentSchema).",
					"contentSchema": g.of(reflect.TypeFor[job.Message]())}}}}},
		{method: "POST", path: "/v2/webhook/endpoint", id: "createWebhookEndpoint", tag: "Webhooks", summary: "Create a webhook endpoint",
			scope: account.ScopeWebhook, more: []string{"409"},
			body: jsonBody(describe(schema{"type": "object", "required": []string{"url"}, "properties": create, "additionalProperties": false},
				"`secret` (whsec_…) is generated when absent."), "The endpoint."),
			ok: okJSON(endpoint, "The endpoint.")},
		{method: "GET", path: "/v2/webhook/endpoint", id: "listWebhookEndpoints", tag: "Webhooks", summary: "List webhook endpoints",
			scope: account.ScopeWebhook,
			params: []schema{param("query", "limit", schema{"type": "integer", "minimum": 1, "maximum": 100}, "Page size."),
				param("query", "iterator", str(), "`iterator` of the previous page."),
				param("query", "order", schema{"type": "string", "enum": []string{"ascending", "descending"}, "default": "ascending"}, "Order by creation.")},
			ok: okJSON(g.of(reflect.TypeFor[endpointListDTO]()), "A page of endpoints.")},
		{method: "PATCH", path: "/v2/webhook/endpoint", id: "updateWebhookEndpoint", tag: "Webhooks", summary: "13. Update a webhook endpoint",
			scope: account.ScopeWebhook, more: []string{"404", "409"},
			body: jsonBody(schema{"type": "object", "required": []string{"endpointId"}, "properties": patch, "additionalProperties": false},
				"The endpoint id and the fields to change."),
			ok: okJSON(endpoint, "The endpoint.")},
		{method: "GET", path: "/v2/webhook/endpoint/:id", id: "getWebhookEndpoint", tag: "Webhooks", summary: "14. Get a webhook endpoint",
			scope: account.ScopeWebhook, more: []string{"404"}, params: []schema{endpointID}, ok: okJSON(endpoint, "The endpoint.")},
		{method: "DELETE", path: "/v2/webhook/endpoint/:id", id: "deleteWebhookEndpoint", tag: "Webhooks", summary: "Delete a webhook endpoint",
			scope: account.ScopeWebhook, more: []string{"404"}, params: []schema{endpointID}, ok: okJSON(success, "Deleted.")},
		{method: "GET", path: "/v2/webhook/endpoint/:id/secret", id: "getWebhookSecret", tag: "Webhooks", summary: "An endpoint's signing secret",
			scope: account.ScopeWebhook, more: []string{"404"}, params: []schema{endpointID},
			ok: okJSON(g.component("WebhookSecret", object(schema{"secret": str()})), "The secret.")},
		{method: "POST", path: "/v2/webhook/endpoint/:id/secret/rotate", id: "rotateWebhookSecret", tag: "Webhooks",
			summary: "Rotate an endpoint's signing secret", scope: account.ScopeWebhook, more: []string{"404"}, params: []schema{endpointID},
			ok: okJSON(success, "Rotated.")},
		{method: "GET", path: "/v2/webhook/endpoint/:id/attempts", id: "listWebhookAttempts", tag: "Webhooks", summary: "Delivery attempts of an endpoint",
			scope: account.ScopeWebhook, more: []string{"404"},
			params: []schema{endpointID, param("query", "limit", schema{"type": "integer", "minimum": 1, "maximum": 100}, "Page size."),
				param("query", "iterator", str(), "`iterator` of the previous page.")},
			ok: okJSON(g.of(reflect.TypeFor[attemptListDTO]()), "A page of attempts, newest first.")},
		{method: "POST", path: "/v2/ingest", id: "ingest", tag: "Ingest", summary: "Ingest chain events (NDJSON)", scope: account.ScopeIngest,
			desc: "Reads the body as a stream, committing events in batches of 5,000; answers the totals when the body ends.",
			params: []schema{param("query", "wait", schema{"type": "string", "enum": []string{ingestWaitDerived, ingestWaitCommit},
				"default": ingestWaitDerived}, "`derived`: answer after the trades' positions, windows and market data are derived. "+
				"`commit`: answer once the events are committed (trades served at once); derived data follows within a flush.")},
			body: schema{"required": true, "description": "One chain event per line.",
				"content": schema{"application/x-ndjson": schema{"schema": str()}}},
			ok: okJSON(g.of(reflect.TypeFor[ingestResponse]()), "Totals.")},
		{method: "GET", path: "/v1/token/:chain/multi", id: "multiTokens", tag: "Tokens", summary: "2. Multi-token detail", dex: true,
			scope: account.ScopeRead, desc: "Served on the dex address ({dex_base_url}) and the main API alike. A bare array.",
			params: append([]schema{multiChain}, multiParams(token.MultiFields)...),
			ok:     okJSON(arrayOf(g.of(reflect.TypeFor[multiTokenDTO]())), "The tokens.")},
		{method: "GET", path: "/v2/token/:chain/multi", id: "multiTokensV2", tag: "Tokens", summary: "2. Multi-token detail (v2 records)", dex: true,
			scope: account.ScopeRead, desc: "The path the public client sends to {dex_base_url}; served on both addresses. A bare array of Token records.",
			params: append([]schema{v2Chain}, multiParams(token.RankingFields)...),
			ok:     okJSON(arrayOf(tokenV2), "The tokens.")},
	}
}

// candleOp is one of the three candle operations (docs/api.md, "Candles"): they differ in
// their subject only.
func candleOp(path, id, summary string, subject, chainParam, record schema) apiOp {
	return apiOp{method: "GET", path: path, id: id, tag: "Candles", summary: summary, scope: account.ScopeRead,
		desc: "OHLCV, oldest first, a bare array; an interval without a successful trade has no candle. " +
			"`limit=1` without `from`/`to` is the current candle.",
		params: []schema{chainParam, subject,
			requiredParam(param("query", "resolution", enumOf(allowedBy(parserOf(ohlcv.ParseResolution))), "Interval (case-sensitive: `1m` a minute, `1M` a month).")),
			param("query", "priceType", schema{"type": "string", "enum": allowedBy(parserOf(ohlcv.ParsePriceType)), "default": "usd"},
				"Price and volume unit (case-insensitive)."),
			param("query", "from", schema{"type": "integer", "minimum": 0}, "Unix seconds or ms; the interval holding it is included."),
			param("query", "to", schema{"type": "integer", "minimum": 0}, "Unix seconds or ms (default now); the interval holding it is included."),
			param("query", "limit", schema{"type": "integer", "minimum": 1, "maximum": ohlcv.MaxLimit, "default": ohlcv.DefaultLimit}, "Intervals."),
		},
		ok: okJSON(arrayOf(record), "The candles.")}
}

func channelNames() []string {
	out := make([]string, len(webhook.Channels))
	for i, c := range webhook.Channels {
		out[i] = string(c)
	}
	return out
}

func networkNames() []string {
	return allowedBy(func(s string) error { _, err := kyt.ParseNetwork(s); return err })
}

func readiness() schema {
	return object(schema{"status": schema{"type": "string", "enum": []string{"ready", "not ready"}},
		"checks": schema{"type": "object", "additionalProperties": str()}})
}

func pnlPage(g *schemas) schema {
	s := g.inline(reflect.TypeFor[pnlPageDTO]())
	return s
}

// newSchemas starts the component set with the shared schemas.
func newSchemas() *schemas {
	g := &schemas{named: map[string]schema{}, names: map[reflect.Type]string{}, enums: map[reflect.Type][]string{
		reflect.TypeFor[job.Status]():        {string(job.Pending), string(job.Running), string(job.Completed), string(job.Failed)},
		reflect.TypeFor[kyt.Status]():        {string(kyt.StatusPending), string(kyt.StatusRegistered), string(kyt.StatusFailed)},
		reflect.TypeFor[kyt.Rating]():        {string(kyt.LowRisk), string(kyt.MediumRisk), string(kyt.HighRisk), string(kyt.SevereRisk), string(kyt.UnknownRisk)},
		reflect.TypeFor[kyt.Risk]():          {string(kyt.RiskLow), string(kyt.RiskMedium), string(kyt.RiskHigh), string(kyt.RiskSevere)},
		reflect.TypeFor[webhook.Channel]():   channelNames(),
		reflect.TypeFor[account.Scope]():     scopeNames(),
		reflect.TypeFor[token.HolderGroup](): holderGroupNames(),
	}}
	v2, multi := chain.Strings(chain.V2), chain.Strings(chain.Multi)
	g.fieldEnums = map[reflect.Type]map[string][]string{
		reflect.TypeFor[tradeDTO](): {"chain": v2, "type": {string(trade.Buy), string(trade.Sell)},
			"status": {string(trade.Succeeded), string(trade.Failed)}},
		reflect.TypeFor[redPacketDTO](): {"chain": v2}, reflect.TypeFor[claimDTO](): {"chain": v2},
		reflect.TypeFor[tokenV2DTO](): {"chain": v2}, reflect.TypeFor[tokenFastDTO](): {"chain": v2},
		reflect.TypeFor[multiTokenDTO](): {"chain": multi}, reflect.TypeFor[liquidityDTO](): {"chain": multi},
		reflect.TypeFor[withdrawalDTO](): {"network": networkNames()},
		reflect.TypeFor[transferDTO]():   {"network": networkNames(), "direction": {string(kyt.Sent), string(kyt.Received)}},
	}
	for t, name := range map[reflect.Type]string{
		reflect.TypeFor[ErrorBody](): "Error", reflect.TypeFor[whoamiDTO](): "Whoami",
		reflect.TypeFor[tradeDTO](): "Trade", reflect.TypeFor[snapshotDTO](): "PoolSnapshot", reflect.TypeFor[poolSideDTO](): "PoolSnapshotSide",
		reflect.TypeFor[redPacketDTO](): "RedPacket", reflect.TypeFor[claimDTO](): "RedPacketClaim",
		reflect.TypeFor[pnlEntryDTO](): "PnlEntry", reflect.TypeFor[pnlSummaryDTO](): "PnlSummary",
		reflect.TypeFor[tokenV2DTO](): "Token", reflect.TypeFor[tokenFastDTO](): "TokenFast", reflect.TypeFor[multiTokenDTO](): "MultiToken",
		reflect.TypeFor[extraDTO](): "TokenExtra", reflect.TypeFor[creatorDTO](): "TokenCreator", reflect.TypeFor[liquidityDTO](): "PoolLiquidity",
		reflect.TypeFor[extensionDTO](): "MultiTokenExtension",
		reflect.TypeFor[endpointDTO]():  "WebhookEndpoint", reflect.TypeFor[endpointListDTO](): "WebhookEndpointList",
		reflect.TypeFor[attemptDTO](): "WebhookAttempt", reflect.TypeFor[attemptListDTO](): "WebhookAttemptList",
		reflect.TypeFor[withdrawalDTO](): "KytWithdrawal", reflect.TypeFor[transferDTO](): "KytTransfer",
		reflect.TypeFor[kyt.Alert](): "KytAlert", reflect.TypeFor[jobDTO](): "Job", reflect.TypeFor[job.Progress](): "JobProgress",
		reflect.TypeFor[ingestResponse](): "IngestResult", reflect.TypeFor[job.Message](): "JobMessage",
	} {
		g.names[t] = name
	}
	g.named["Decimal"] = schema{"type": "string", "pattern": `^-?[0-9]+(\.[0-9]+)?$`,
		"description": "A decimal number written as a JSON string (never a JSON number)."}
	g.named["DigitString"] = schema{"type": "string", "pattern": digitPattern, "description": "An integer count written as a JSON string."}
	return g
}

func scopeNames() []string {
	out := make([]string, len(account.AllScopes))
	for i, s := range account.AllScopes {
		out[i] = string(s)
	}
	return out
}

func holderGroupNames() []string {
	out := make([]string, len(token.AllHolderGroups))
	for i, h := range token.AllHolderGroups {
		out[i] = string(h)
	}
	return out
}

// openAPIPath turns a Fiber route path into an OpenAPI path template.
func openAPIPath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		if strings.HasPrefix(s, ":") {
			parts[i] = "{" + s[1:] + "}"
		}
	}
	return strings.Join(parts, "/")
}

// rateLimitHeaders are the headers every API response may carry (the per-key rate limits).
func rateLimitHeaders() schema {
	h := func(desc string) schema {
		return schema{"description": desc, "schema": schema{"type": "integer", "minimum": 0}}
	}
	return schema{
		"RateLimit-Limit":     h("Requests the key may make per window."),
		"RateLimit-Remaining": h("Requests left in the current window."),
		"RateLimit-Reset":     h("Seconds until the window resets."),
		"X-Request-Id":        schema{"description": "The request's id (also in error bodies).", "schema": str()},
	}
}

// errorResponseNames names the shared error responses (components/responses) by status.
var errorResponseNames = map[string]string{
	"400": "BadRequest", "401": "Unauthorized", "403": "Forbidden", "404": "NotFound", "408": "RequestTimeout",
	"409": "Conflict", "413": "PayloadTooLarge", "429": "TooManyRequests", "431": "HeadersTooLarge",
	"500": "InternalError", "503": "Unavailable",
}

var errorDescriptions = map[string]string{
	"400": "Invalid input: `details` names `parameter`, the `value` sent and, for enumerations, `allowed_values`.",
	"401": "Missing or unknown API key.",
	"403": "The key lacks the operation's scope.",
	"404": "No such resource (or an id no resource can have).",
	"408": "The request was not received within HTTP_READ_TIMEOUT.",
	"409": "Conflict with the resource's state (e.g. the endpoint limit, an idempotency key reused for other content).",
	"413": "The (decoded) body exceeds 1 MiB.",
	"429": "Rate limited (per key), or too many unfinished jobs: retry after `Retry-After` seconds.",
	"431": "Request line and headers exceed 16 KiB.",
	"500": "Internal error (nothing a client sends produces one).",
	"503": "A dependency is unavailable: retry after `Retry-After` seconds.",
}

// buildOpenAPI assembles the document.
func buildOpenAPI() schema {
	g := newSchemas()
	ops := apiOperations(g)
	g.named["Error"] = g.inline(reflect.TypeFor[ErrorBody]())
	g.named["Error"]["properties"].(schema)["details"] = schema{"type": "object",
		"description": "`parameter`, `value`, `allowed_values` for bad input; other keys per error."}

	responses := schema{}
	for code, desc := range errorDescriptions {
		headers := rateLimitHeaders()
		if code == "429" || code == "503" {
			headers["Retry-After"] = schema{"description": "Seconds to wait before retrying.", "required": code == "429",
				"schema": schema{"type": "integer", "minimum": 0}}
		}
		responses[errorResponseNames[code]] = schema{"description": desc, "headers": headers,
			"content": schema{"application/json": schema{"schema": ref("Error"), "example": errorExample(code)}}}
	}
	for name, s := range g.named {
		annotate(name, s)
	}

	paths := schema{}
	dexServers := []any{
		schema{"url": "/", "description": "The main API."},
		schema{"url": "{dex_base_url}", "description": "The dex address ({dex_base_url}; DEX_HTTP_ADDR, :8081 by default).",
			"variables": schema{"dex_base_url": schema{"default": "http://localhost:8081",
				"description": "Scheme, host and port of the dex address."}}},
	}
	for _, op := range ops {
		p := openAPIPath(op.path)
		item, _ := paths[p].(schema)
		if item == nil {
			item = schema{}
			paths[p] = item
		}
		if op.dex {
			item["servers"] = dexServers
		}
		ok := maps(op.ok)
		ok["headers"] = rateLimitHeaders()
		ok["content"] = contentWithExample(g.named, "op:"+op.id+":200", ok["content"].(schema))
		rs := schema{"200": ok}
		if op.noContent {
			rs["204"] = schema{"description": "A reconnect to a finished job: stop reconnecting.", "headers": rateLimitHeaders()}
		}
		o := schema{"operationId": op.id, "summary": op.summary, "tags": []string{op.tag}, "responses": rs}
		if op.desc != "" {
			o["description"] = op.desc
		}
		if op.bare {
			o["security"] = []any{}
			// The requests refused before routing (docs/api.md) are refused on these routes too.
			for _, code := range []string{"400", "408", "431"} {
				rs[code] = schema{"$ref": "#/components/responses/" + errorResponseNames[code]}
			}
			if op.id == "readyz" {
				rs["503"] = schema{"description": "Not ready.", "headers": schema{"Retry-After": schema{"schema": integer()}},
					"content": schema{"application/json": schema{"schema": ref("Readiness"), "example": schema{"status": "not ready",
						"checks": schema{"postgres": "up", "redis": "up", "temporal": "up", "workflows": "up", "webhooks": "up",
							"rankings": "down: the first ranking refresh has not finished", "chains": "up"}}}}}
			}
		} else {
			o["description"] = strings.TrimSpace(op.desc + "\n\nScope: `" + string(op.scope) + "`.")
			o["x-scope"] = string(op.scope)
			for _, code := range append(append([]string{}, commonErrors...), op.more...) {
				rs[code] = schema{"$ref": "#/components/responses/" + errorResponseNames[code]}
			}
		}
		if len(op.params) > 0 {
			params := make([]any, len(op.params))
			for i, p := range op.params {
				p = maps(p)
				if ex, ok := paramExample(op.id, p["name"].(string)); ok {
					if req, _ := p["required"].(bool); req {
						p["example"] = ex
					} else {
						// An optional parameter's example is shown but not sent by the docs page's
						// client until the user ticks it (Scalar reads x-disabled): a cursor, a time
						// range or a Last-Event-ID of the example would change the answer.
						p["examples"] = schema{"example": schema{"summary": "Example", "value": ex, "x-disabled": true}}
					}
				}
				params[i] = p
			}
			o["parameters"] = params
		}
		if op.body != nil {
			body := maps(op.body)
			body["content"] = contentWithExample(g.named, "op:"+op.id, body["content"].(schema))
			o["requestBody"] = body
		}
		item[strings.ToLower(op.method)] = o
	}

	tags := []any{}
	for _, t := range apiTags {
		tags = append(tags, schema{"name": t.name, "description": t.desc})
	}
	return schema{
		"openapi":           "3.1.0",
		"jsonSchemaDialect": "https://spec.openapis.org/oas/3.1/dialect/base",
		"info": schema{"title": "tokenscope API", "version": "2",
			"description": gettingStarted},
		"servers":  []any{schema{"url": "/", "description": "The main API (this address)."}},
		"security": []any{schema{"bearerAuth": []string{}}, schema{"apiKey": []string{}}},
		"tags":     tags,
		"paths":    paths,
		"components": schema{
			"schemas":   g.named,
			"responses": responses,
			"securitySchemes": schema{
				"bearerAuth": schema{"type": "http", "scheme": "bearer", "description": "`Authorization: Bearer <key>`."},
				"apiKey":     schema{"type": "apiKey", "in": "header", "name": "X-API-KEY", "description": "`X-API-KEY: <key>`."},
			},
		},
	}
}

var gettingStarted = strings.Join([]string{
	"Market data, KYT screening, jobs and webhooks over HTTP. Every operation but the service ones needs an API key; each key carries scopes (" +
		strings.Join(scopeNames(), ", ") + ") and each operation names the one it needs.",
	"## Getting started",
	"**1. A key.** An operator creates one: `tokenscope apikey create --account acme --scopes read,webhook` prints it once. " +
		"(`make run` prints a development key with every scope.) Send it as `Authorization: Bearer <key>` or `X-API-KEY: <key>`.",
	"**2. A first call.** `curl -H \"Authorization: Bearer $KEY\" 'http://localhost:8080/v2/ranking/sol/hotTokens/1h?sortBy=marketData.priceInUsd'` " +
		"lists the hot tokens of the last hour. Decimal values (prices, amounts, ratios) are JSON strings; absent values are `null`, never omitted.",
	"**3. Pagination.** Lists answer `{data, startCursor, endCursor, hasNext, hasPrev}` (red packets: `{records, hasNextPage, total, …}`). " +
		"Pass `cursor=<endCursor>` for the next page, or `cursor=<startCursor>&direction=prev` to walk back; `limit` is 1–" + strconv.Itoa(page.MaxLimit) + ". " +
		"Cursors are opaque and belong to the list that issued them. Webhook lists use `iterator` instead.",
	"**4. Errors.** Every non-2xx answer has one body: `{code, message, timestamp, details, requestId}`. Bad input is `400` with " +
		"`details.parameter`, `details.value` and, for enumerations, `details.allowed_values`. Rate-limited calls are `429` with `Retry-After`; " +
		"responses carry `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`.",
	"**5. Webhooks.** `POST /v2/webhook/endpoint` with `{\"url\": …, \"channels\": [\"sol.token.created\"]}` (scope `webhook`) registers an endpoint; " +
		"deliveries are signed with its secret (`GET /v2/webhook/endpoint/{id}/secret`) and retried; `…/attempts` lists what was tried.",
	"**6. Long work.** `POST /v2/wallet/{chain}/{wallet}/calculate-pnl` starts a job; follow it with `GET /v2/job/{id}/streaming` (server-sent events) or poll `GET /v2/job/{id}`.",
	"**7. Realtime.** Trades, new tokens, pools, token state, wallets, rankings and candles stream over a WebSocket at `/connection/websocket` " +
		"(Centrifuge protocol, the key as connect token or `?token=`, scope `read`; main and dex addresses). It is not an HTTP operation, so " +
		"this document leaves it out: docs/api.md, \"Realtime streams\", describes its channels and messages.",
	"This document: `GET /openapi.json` (OpenAPI 3.1). The multi-token detail operations are also served on the dex address.",
}, "\n\n")

// The KYT inputs' shapes as kyt.ValidAddress, kyt.ValidHash and the amount parser check them,
// written as patterns over every network (the network field picks which one applies):
// base58 (Solana: 32 bytes, 32–44 characters; bitcoin P2PKH/P2SH: 25 bytes), 0x + 40 hex
// (ethereum), bech32 in one case (bitcoin); hashes: base58 of 64 bytes (Solana, 64–88
// characters), 0x + 64 hex (ethereum), 64 hex (bitcoin).
const (
	kytAddressPattern = `[1-9A-HJ-NP-Za-km-z]{25,44}|0[xX][0-9a-fA-F]{40}|(?:bc|tb|bcrt)1[02-9ac-hj-np-z]{7,87}|(?:BC|TB|BCRT)1[02-9AC-HJ-NP-Z]{7,87}`
	kytHashPattern    = `[1-9A-HJ-NP-Za-km-z]{64,88}|0[xX][0-9a-fA-F]{64}|[0-9a-fA-F]{64}`
	kytAmountPattern  = `^\s*[0-9]+(\.[0-9]+)?\s*$`
)

func kytAddress() schema {
	return schema{"type": "string", "pattern": `^\s*(?:` + kytAddressPattern + `)\s*$`, "maxLength": kyt.MaxAddressLen}
}

// kytText is a required single token (no spaces inside) of at most max characters.
func kytText(max int) schema {
	return schema{"type": "string", "pattern": `^\s*\S+\s*$`, "maxLength": max}
}

// apiTags are the document's groups, in the spec's numbering: the group of operation 1 first,
// then the group of the next numbered operation not yet placed, and the groups without
// numbered operations last.
var apiTags = []struct{ name, desc string }{
	{"Tokens", "Operations 1 and 2: token search and multi-token detail."},
	{"Trades", "Operation 3: DEX trades on a chain."},
	{"Pools", "Operation 4: liquidity snapshots of a DEX pool."},
	{"Red packets", "Operations 5 to 7: red packets by wallet, by creator or chain, and a packet's claims."},
	{"Wallets", "Operation 8: a wallet's profit and loss per token."},
	{"Ranking", "Operation 9: hot tokens of a chain over a window."},
	{"KYT", "Operations 10 and 11: compliance registration of withdrawals and transfers, and their screening."},
	{"Jobs", "Operation 12: a job's progress as server-sent events; starting and reading jobs."},
	{"Webhooks", "Operations 13 and 14: webhook endpoints, their secrets and delivery attempts."},
	{"Candles", "OHLCV candles of a token, a pool or a pair."},
	{"Ingest", "Loading chain events (NDJSON)."},
	{"Account", "The caller's key."},
	{"Service", "Health, readiness, this document and the service's pages (no key needed)."},
}

// specNumber is the spec's number of an operation (its summary starts with it), 0 for none.
func specNumber(op apiOp) int {
	n, _, ok := strings.Cut(op.summary, ". ")
	if !ok {
		return 0
	}
	v, err := strconv.Atoi(n)
	if err != nil {
		return 0
	}
	return v
}

// operationOrder lists "METHOD /path" of every operation, the numbered ones first in the spec's
// order, the others after them in routes.go's order: the docs page's order within a group.
func operationOrder() []string {
	ops := apiOperations(newSchemas())
	slices.SortStableFunc(ops, func(a, b apiOp) int {
		na, nb := specNumber(a), specNumber(b)
		switch {
		case na == 0 && nb == 0:
			return 0
		case na == 0:
			return 1
		case nb == 0:
			return -1
		}
		return na - nb
	})
	out := make([]string, len(ops))
	for i, op := range ops {
		out[i] = op.method + " " + openAPIPath(op.path)
	}
	return out
}

// contentWithExample gives each media type of content an example: for JSON one built from the
// schema's fields (an inline schema is annotated first, at ctx); for the other types a sample.
func contentWithExample(named map[string]schema, ctx string, content schema) schema {
	out := schema{}
	for mt, v := range content {
		m := maps(v.(schema))
		if s, ok := m["schema"].(schema); ok {
			annotate(ctx, s)
		}
		if _, has := m["example"]; !has {
			switch mt {
			case "application/json":
				m["example"] = exampleOf(named, m["schema"].(schema))
			case "text/event-stream":
				m["example"] = sseExample
			case "text/html":
				m["example"] = "<!doctype html>\n<html lang=\"en\">…</html>"
			case "application/x-ndjson":
				m["example"] = ndjsonExample
			}
		}
		out[mt] = m
	}
	return out
}
