package httpapi

import (
	"slices"
	"strings"

	"github.com/tokenscope/tokenscope/domain/token"
)

// The words and examples of the document's record fields and parameters. Descriptions follow
// the spec's wording (service-spec.md, "Resources and their fields"); examples are values the
// development market (app/simulate) produces: its addresses, signatures, names and amounts, so
// /docs shows what a caller will meet. annotate applies them to every object of the document
// after it is built; TestOpenAPIFieldsDescribed fails on a field or parameter left without.

// fieldDoc is what the document says about one field: a description and, for a field holding a
// scalar (or a list or map of scalars), an example. A field holding a record has no example of
// its own: its record's fields carry theirs.
type fieldDoc struct {
	desc string
	ex   any
}

// Example values, all made by the simulator (seed 1): one sol token with its bonding-curve pool,
// creator and a trader, one eth token.
const (
	exToken       = "3TAyqMatDvFE1sytD9r9DqvvpW6tLDZiMuqrTYej9S6T"
	exToken2      = "Cn29Ky94igvRKkxoZKMVe3CnPc3oaUr4Awo7hK7LquGH"
	exPool        = "4Nn9AtL7KtFtiGZvCkngsa4GWXrePuiAWoA75rqMpX1U"
	exWallet      = "zfs4z2f5pPcTKCLtBLqLvU4VhqhofWGGkft1BuBHmek"
	exCreator     = "F9FPj5GQQZPPbWv7pvAZGum4tS5CyrQUWG4MwB6Lj6JD"
	exProgram     = "3ChMoQSzTc2Jv9gvayj4t6TutevVw56TK8bs9Huw7LLv"
	exCurveProg   = "CH8ndbwoYnzAwf2qbYHgP3fA5oPeSXCHnbDS465qwHpa"
	exWSOL        = "So11111111111111111111111111111111111111112"
	exSignature   = "2HmQEvWk9w2uBwXdM5m3upDpS8q2jAoqRksMtvti8yrLN2BgEYHwNpYSdLR7UzgWspTakCBSr3vDBN3cDnd1uMwZ"
	exSignature2  = "2NBje3F2T82jVmYWmvYXy9wBQzmNqfm78dWbcYckbNqvk6AgBEeftFzwEw3e2SuH5fsthNNetNzHPMCiPk143maQ"
	exEthAddress  = "0x237bc1fd87e443601022bdd2d5d47ab44930f0ce"
	exEthTx       = "0xb8c7d6bf5cad6f20cf81004bb1725e891f475eb6d8dbfaea0000000000000016"
	exName        = "Frog 1"
	exSymbol      = "T1"
	exImage       = "https://img.example/3TAyqMat.png"
	exURI         = "https://meta.example/3TAyqMat"
	exTimeMs      = 1795704480000 // 2026-11-27T11:28:00Z
	exCreatedMs   = 1795687200000
	exISOTime     = "2026-11-27T11:28:00.123456789Z"
	exExternalID  = "6f1c2a9e-4b7d-5c3e-9a8f-0d2b4e6f8a1c"
	exJobID       = "job_01JDQ3X5G7M9K2P4R6T8V0W2Y4"
	exEndpointID  = "ep_2pXyQ8Lm4NvR6tZ0aB3cD5eF7g"
	exRedPacketID = "rp_9s3QvK2mW7xY1zA4bC6dE8fG0h"
	exIterator    = "eyJpZCI6ImVwXzJwWHlROExtNE52UjZ0WjBhQjNjRDVlRjdnIn0"
	exFilter      = `data.chain == "sol"`
)

// commonFields are the fields several records share under one meaning.
var commonFields = map[string]fieldDoc{
	"address":         {"Token address (the mint on sol, the contract on the EVM chains).", exToken},
	"chain":           {"Chain identifier.", "sol"},
	"decimals":        {"Decimal places of the token's smallest unit.", 6},
	"name":            {"Token name.", exName},
	"symbol":          {"Token symbol.", exSymbol},
	"imageUrl":        {"Logo URL; null when the token has none.", exImage},
	"uri":             {"Metadata URI; null when the token has none.", exURI},
	"description":     {"Free text the token's creator published; null when none.", "The frog that hops on every chart."},
	"market":          {"Market identifier; null when none.", exPool},
	"metadataAddress": {"On-chain metadata account address; null when none.", "8RkqU6eDfQ1uN5rB1hZ3fK7wS2yX4cV9aJmL0pT6gE3d"},
	"tokenCreatedAt":  {"Creation time, milliseconds since the Unix epoch; null when unknown.", exCreatedMs},
	"tokenCreators":   {"The token's creators with their shares; [] when unknown.", nil},
	"socialMedias":    {"Social links, every key present (null where the token has none).", nil},
	"marketData":      {"Market figures: price, market cap, supply, liquidity and holdings.", nil},
	"stats":           {"Trading statistics per window.", nil},
	"extra":           {"Token extension fields (authorities, launchpad, migration).", nil},
	"tokenAddress":    {"Token address.", exToken},
	"poolAddress":     {"Pool address.", exPool},
	"walletAddress":   {"Wallet address.", exWallet},
	"blockHeight":     {"Block height (slot on sol).", 544669200},
	"blockTimestamp":  {"Block time, milliseconds since the Unix epoch.", exTimeMs},
	"data":            {"The items of the page.", nil},
	"startCursor":     {"Cursor of the start of the page: pass it with `direction=prev` for the previous page; null on an empty page.", "eyJ2IjoxLCJrIjoidHJhZGUiLCJwIjpbIjE3OTU3MDQ0ODAwMDAiXX0"},
	"endCursor":       {"Cursor of the end of the page: pass it as `cursor` for the next page; null on an empty page.", "eyJ2IjoxLCJrIjoidHJhZGUiLCJwIjpbIjE3OTU3MDQ0NzkwMDAiXX0"},
	"hasNext":         {"Whether a next page exists.", true},
	"hasPrev":         {"Whether a previous page exists.", false},
	"records":         {"The items of the page.", nil},
	"hasNextPage":     {"Whether a next page exists.", false},
	"total":           {"Total number of items of the list (all pages).", 1},
	"txHash":          {"Transaction signature (hash on the EVM chains).", exSignature},
	"creator":         {"Creator wallet address.", exCreator},
	"mint":            {"Token address.", exToken},
	"memo":            {"Memo the creator attached.", "gm frens"},
	"success":         {"Always true.", true},
	"secret":          {"The endpoint's signing secret (`whsec_` + base64).", "whsec_MfKQ9r8GKYqrTzSUZ3d5pZ3t1Vx7mAjzF0rO1c2e9Qk="},
}

// recordFields are the fields whose meaning belongs to one record (component name, or
// "component.field" for an object inline in it, or "op:operationId" for a request body).
var recordFields = map[string]map[string]fieldDoc{
	"Error": {
		"code":      {"The HTTP status, repeated.", 400},
		"message":   {"What went wrong, for a human.", "invalid parameter sortDirection: \"up\" (allowed: ASC, DESC)"},
		"timestamp": {"When the error was answered (RFC 3339, UTC).", "2026-11-27T11:28:00.123Z"},
		"details":   {"`parameter`, `value`, `allowed_values` for bad input; other keys per error.", map[string]any{"parameter": "sortDirection", "value": "up", "allowed_values": []any{"ASC", "DESC"}}},
		"requestId": {"The request's id (also the X-Request-Id header).", "01JDQ3X5G7M9K2P4R6T8V0W2Y4"},
	},
	"Whoami": {
		"accountId": {"The account the key belongs to.", "acme"},
		"keyId":     {"The key's id (not the key).", "key_7Hn2Qp9sLx4Vb6Mz"},
		"scopes":    {"The scopes the key carries.", []any{"read", "webhook"}},
	},
	"Readiness": {
		"status": {"`ready` when every check is up.", "ready"},
		"checks": {"Each dependency and its state: `up`, or `down: ` and why.", map[string]any{"postgres": "up", "redis": "up", "temporal": "up", "workflows": "up", "webhooks": "up", "rankings": "up", "chains": "up"}},
	},
	"op:healthz:200": {"status": {"Always `up`.", "up"}},
	"Trade": {
		"accountOwnerAddress":     {"Wallet that made the trade.", exWallet},
		"chain":                   {"Chain identifier.", "sol"},
		"tokenName":               {"Name of the traded token.", exName},
		"tokenSymbol":             {"Symbol of the traded token.", exSymbol},
		"tokenImageUrl":           {"Logo URL of the traded token (\"\" when none).", exImage},
		"tokenAmount":             {"Amount of the traded token, in whole tokens.", "2501725.672014"},
		"tokenAmountInNative":     {"Value of the token amount in the chain's native token.", "0.076"},
		"tokenAmountInUsd":        {"Value of the token amount in USD.", "11.4"},
		"tokenPriceInNative":      {"Price of one token in the native token at the trade.", "0.000000030379030303"},
		"tokenPriceInUsd":         {"Price of one token in USD at the trade.", "0.00000455685454545"},
		"sideTokenAddress":        {"Address of the token paid or received in exchange (the quote side).", exWSOL},
		"sideTokenName":           {"Name of the side token.", "Wrapped SOL"},
		"sideTokenSymbol":         {"Symbol of the side token.", "SOL"},
		"sideTokenImageUrl":       {"Logo URL of the side token (\"\" when none).", "https://img.example/So111111.png"},
		"sideTokenAmount":         {"Amount of the side token, in whole tokens.", "0.076"},
		"sideTokenAmountInNative": {"Value of the side amount in the native token.", "0.076"},
		"sideTokenAmountInUsd":    {"Value of the side amount in USD.", "11.4"},
		"sideTokenPriceInNative":  {"Price of one side token in the native token.", "1"},
		"sideTokenPriceInUsd":     {"Price of one side token in USD.", "150"},
		"status":                  {"Outcome of the transaction.", "SUCCEEDED"},
		"transactionSignature":    {"Transaction signature (hash on the EVM chains).", exSignature},
		"type":                    {"Trade side: BUY (the wallet received the token) or SELL.", "BUY"},
		"dexImage":                {"Logo URL of the DEX (\"\" when none).", "https://img.example/moonit.png"},
		"dexProgramAddress":       {"Program (contract) address of the DEX pool's protocol.", exProgram},
		"dexProtocolFamily":       {"Protocol family of the DEX.", "Moonshot"},
	},
	"PoolSnapshot": {
		"blockSlot":    {"Slot of the snapshot's block (null off sol).", 544825800},
		"blockHeight":  {"Block height of the snapshot.", 544825800},
		"snapshotTime": {"Time of the snapshot, milliseconds since the Unix epoch.", 1795767120000},
		"tokenA":       {"The pool's base side.", nil},
		"tokenB":       {"The pool's quote side.", nil},
		"tvlInNative":  {"Total value locked in the native token.", "90.232874602"},
		"tvlInUsd":     {"Total value locked in USD.", "13534.9311903"},
		"poolAddress":  {"Pool address.", exPool},
	},
	"PoolSnapshotSide": {
		"amountInNative": {"Value of the side's reserve in the native token.", "45.116437301"},
		"amountInUsd":    {"Value of the side's reserve in USD.", "6767.46559515"},
		"decimals":       {"Decimal places of the side's token.", 6},
		"priceNative":    {"Price of one token of the side in the native token.", "0.000000067414444972"},
		"priceUsd":       {"Price of one token of the side in USD.", "0.0000101121667458"},
		"tokenAddress":   {"Address of the side's token.", exToken},
		"vaultAmount":    {"The side's reserve, an integer in smallest units.", "669239913196921"},
	},
	"RedPacket": {
		"id":             {"Red packet identifier.", exRedPacketID},
		"claimAuthority": {"Address allowed to approve claims.", exCreator},
		"chain":          {"Chain identifier.", "sol"},
		"maxClaims":      {"How many wallets may claim.", 10},
		"claimedCount":   {"How many wallets have claimed.", 3},
		"totalAmount":    {"Amount put in, an integer in smallest units.", "1000000000000"},
		"claimedAmount":  {"Amount claimed so far, in smallest units.", "300000000000"},
		"refundedAmount": {"Amount returned to the creator after expiry, in smallest units.", "0"},
		"createdAt":      {"Creation time, milliseconds since the Unix epoch.", exTimeMs},
		"expiredAt":      {"Expiry time, milliseconds since the Unix epoch.", exTimeMs + 86_400_000},
		"expiration":     {"Lifetime the creator set, in seconds.", 86400},
		"expired":        {"Whether the packet has expired.", false},
		"shareId":        {"Share identifier of the packet's link.", "frog-drop-7k2m"},
	},
	"RedPacketClaim": {
		"amount":    {"Amount claimed, an integer in smallest units.", "100000000000"},
		"claimer":   {"Wallet that claimed.", exWallet},
		"packetId":  {"Red packet identifier.", exRedPacketID},
		"chain":     {"Chain identifier.", "sol"},
		"claimedAt": {"Claim time, milliseconds since the Unix epoch.", exTimeMs + 60_000},
	},
	"PnlPage": {"summary": {"Totals over every entry (all pages).", nil}},
	"PnlEntry": {
		"avgBuyPriceInUsd":       {"Average price paid per token, USD.", "0.00000455685454545"},
		"avgProfitPerTradeInUsd": {"Total profit divided by the trades, USD.", "1.26"},
		"avgSellPriceInUsd":      {"Average price received per token, USD.", "0.0000101121667458"},
		"balance":                {"Tokens held now, in whole tokens.", "1250862.836007"},
		"buyAmount":              {"Tokens bought, in whole tokens.", "2501725.672014"},
		"buyAmountInUsd":         {"USD spent on buys.", "11.4"},
		"currentValue":           {"Value of the balance at the current price, USD.", "12.65"},
		"priceInUsd":             {"Current token price, USD.", "0.0000101121667458"},
		"realizedProfitInUsd":    {"Profit of the tokens sold (proceeds minus their average cost), USD.", "6.95"},
		"realizedProfitRatio":    {"Realized profit divided by the cost of the tokens sold.", "1.2191"},
		"sellAmount":             {"Tokens sold, in whole tokens.", "1250862.836007"},
		"sellAmountInUsd":        {"USD received from sells.", "12.65"},
		"totalProfitInUsd":       {"Realized plus unrealized profit, USD.", "13.9"},
		"totalProfitRatio":       {"Total profit divided by the cost.", "1.2193"},
		"unrealizedProfitInUsd":  {"Profit of the balance at the current price over its average cost, USD.", "6.95"},
		"unrealizedProfitRatio":  {"Unrealized profit divided by the balance's cost.", "1.2193"},
		"buys":                   {"Buy trades, an integer count as text.", "2"},
		"sells":                  {"Sell trades, an integer count as text.", "1"},
		"totalTrades":            {"All trades, an integer count as text.", "3"},
		"logoUri":                {"Logo URL of the token (\"\" when none).", exImage},
		"isClosed":               {"Whether the position is closed (nothing held any more).", false},
	},
	"PnlSummary": {
		"avgProfitPerTradeInUsd": {"Total profit divided by the trades, USD.", "2.1"},
		"buyAmountInUsd":         {"USD spent on buys.", "42.6"},
		"currentValue":           {"Value of the balances at current prices, USD.", "31.2"},
		"realizedProfitInUsd":    {"Realized profit, USD.", "9.4"},
		"realizedProfitRatio":    {"Realized profit divided by the cost of what was sold.", "0.8545"},
		"sellAmountInUsd":        {"USD received from sells.", "20.4"},
		"totalCostInUsd":         {"Cost of what was bought, USD.", "42.6"},
		"totalProfitInUsd":       {"Realized plus unrealized profit, USD.", "21"},
		"unrealizedProfitInUsd":  {"Unrealized profit, USD.", "11.6"},
		"winRate":                {"Share of the tokens with a positive total profit (0–1).", "0.5"},
		"buys":                   {"Buy trades, an integer count as text.", "6"},
		"sells":                  {"Sell trades, an integer count as text.", "4"},
		"losses":                 {"Tokens with a negative total profit, as text.", "1"},
		"wins":                   {"Tokens with a positive total profit, as text.", "1"},
		"tokens":                 {"Tokens in the summary, as text.", "2"},
		"totalTrades":            {"All trades, an integer count as text.", "10"},
	},
	"Token": {
		"vendorCoinId":            {"Identifier at an external price-data vendor; null when none.", "frog-1"},
		"devLastTokenCreatedAt":   {"When the token's developer last created a token (ISO 8601); null when unknown.", "2026-11-27T06:40:00Z"},
		"devTotalTokens":          {"Tokens the developer created, an integer count as text; null when unknown.", "3"},
		"extension":               {"Token extension object (same fields as `extra`).", nil},
		"tokenCreatedBlockHeight": {"Block height of the creation, an integer as text; null when unknown.", "544626000"},
		"tokenCreatedSlot":        {"Slot of the creation, an integer as text; null when unknown.", "544626000"},
		"tokenCreatedTxSignature": {"Creation transaction signature; null when unknown.", exSignature2},
	},
	"Token.stats": {
		"address": {"Token address.", exToken},
		"periods": {"Statistics keyed by window.", nil},
	},
	"TokenFast.marketData": {
		"holders":        {"Wallets holding the token.", "412"},
		"marketCapInUsd": {"Market capitalisation, USD.", "10112.17"},
		"priceInUsd":     {"Price of one token, USD.", "0.0000101121667458"},
		"totalTvlInUsd":  {"Liquidity over all the token's pools, USD.", "13534.93"},
	},
	"TokenFast.stats": {
		"address": {"Token address.", exToken},
		"periods": {"Statistics keyed by window (fast mode: 24h only).", nil},
	},
	"TokenFast.stats.periods": {"24h": {"The last 24 hours.", nil}},
	"TokenFast.stats.periods.24h": {
		"totalVolumeInUsd": {"Traded volume in the window, USD.", "20531.8"},
		"trades":           {"Trades in the window, an integer count as text.", "1284"},
	},
	"TokenCreator": {
		"address":    {"Creator wallet address.", exCreator},
		"isVerified": {"Whether the creator signed the metadata.", false},
		"share":      {"Creator's share of royalties, percent.", 100},
	},
	"TokenExtra": {
		"collectionAddress":        {"Collection address; null when none.", "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU"},
		"editionNonce":             {"Edition nonce of the metadata; null when none.", 254},
		"freezeAuthority":          {"Freeze authority; null when none (revoked).", exCreator},
		"fungible":                 {"Whether the token is fungible; null when unknown.", true},
		"isMutable":                {"Whether the metadata can change; null when unknown.", false},
		"isNative":                 {"Whether this is the chain's native token; null when unknown.", false},
		"isVerifiedCollection":     {"Whether the collection is verified; null when unknown.", false},
		"isWrapped":                {"Whether the token wraps another; null when unknown.", false},
		"key":                      {"Metadata account kind; null when none.", "MetadataV1"},
		"launchFromProgramAddress": {"Program address of the launchpad the token launched from; null when none.", exCurveProg},
		"launchFromProtocolFamily": {"Protocol family of that launchpad; null when none.", "Pumpfun"},
		"migratedAt":               {"When the token migrated off its bonding curve: milliseconds since the epoch in Token records, seconds in MultiToken records; null before.", 1795767120000},
		"migratedToPoolAddress":    {"Pool the token migrated to; null before migration.", "9wFFyRfZBsuAha4YcuxcXLKwMxJR43S7fPfQLusDBzvT"},
		"migratedToProgramAddress": {"Program address of the DEX it migrated to; null before migration.", "pAMMBay6oceH9fJKBRHGP5D4bD4sWpmSwMn52FMfXEA"},
		"migratedToProtocolFamily": {"Protocol family of that DEX; null before migration.", "Pumpswap"},
		"mintAuthority":            {"Mint authority; null when none (revoked).", exCreator},
		"primarySaleHappened":      {"Whether the primary sale happened; null when unknown.", true},
		"programAddress":           {"Token program address; null when unknown.", "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"},
		"sellerFeeBasisPoints":     {"Royalty in basis points; null when none.", 0},
		"tokenStandard":            {"Token standard; null when unknown.", "Fungible"},
		"updateAuthority":          {"Metadata update authority; null when none.", exCreator},
	},
	"TokenFast": {},
	"MultiToken": {
		"chain":     {"Chain as the request named it (`ethereum` for data stored under `eth`).", "sol"},
		"extension": {"The token's website and twitter links.", nil},
		"liquidity": {"The token's pools with their liquidity; [] when none.", nil},
		"stats":     {"Trading statistics: the address and each figure per window, suffixed by the window.", nil},
	},
	"MultiTokenExtension": {
		"website": {"Website URL; null when none.", "https://3TAyqMat.example"},
		"twitter": {"Twitter (X) link; null when none.", "https://x.com/3TAyqMat"},
	},
	"PoolLiquidity": {
		"programAddress": {"Program (contract) address of the pool's protocol.", exProgram},
		"protocolFamily": {"Protocol family of the pool.", "Moonshot"},
		"image":          {"Logo URL of the protocol (\"\" when none).", "https://img.example/moonit.png"},
		"chain":          {"Chain as the request named it.", "sol"},
		"protocolName":   {"Protocol name.", "Moonit"},
		"tokenAAddress":  {"The pool's base token.", exToken},
		"tokenBAddress":  {"The pool's quote token.", exWSOL},
		"tvlInUsd":       {"Total value locked, USD.", "13534.9311903"},
		"tvlInSol":       {"Total value locked, SOL.", "90.232874602"},
	},
	"Candle": {
		"open":                {"First trade price of the interval (USD, or the native token with priceType=native).", "0.00000455685454545"},
		"high":                {"Highest trade price of the interval.", "0.0000101121667458"},
		"low":                 {"Lowest trade price of the interval.", "0.00000455685454545"},
		"close":               {"Last trade price of the interval.", "0.0000098412"},
		"volume":              {"Traded value in the interval (USD, or native).", "1532.4"},
		"volumeInTokenAmount": {"Traded amount of the token in the interval, in whole tokens.", "201843112.5"},
		"timestamp":           {"The interval's start, Unix milliseconds.", 1795704480000},
		"trades":              {"Successful trades in the interval.", 17},
	},
	"WebhookEndpoint": {
		"id":          {"Endpoint id.", exEndpointID},
		"url":         {"Destination URL the events are POSTed to.", "https://hooks.acme.example/tokenscope"},
		"channels":    {"Channels the endpoint receives; null for all.", []any{"sol.token.created", "sol.token.migrated"}},
		"createdAt":   {"When the endpoint was created (ISO 8601).", exISOTime},
		"updatedAt":   {"When the endpoint last changed (ISO 8601).", exISOTime},
		"description": {"Free text; null when none.", "New tokens into the listing pipeline"},
		"disabled":    {"Whether deliveries are paused.", false},
		"filter":      {"Event filter: a CEL expression over the event's data; null when none.", exFilter},
		"filterTypes": {"Event types delivered (the channel names); null for all.", []any{"sol.token.created"}},
		"metadata":    {"Free-form key/value pairs kept with the endpoint.", map[string]any{"team": "listings"}},
		"rateLimit":   {"Most deliveries per second to the endpoint; null for no limit.", 10},
	},
	"WebhookEndpointList": {
		"data":         {"The endpoints of the page.", nil},
		"done":         {"Whether this is the last page.", true},
		"iterator":     {"Pass as `iterator` for the next page; null on the last.", exIterator},
		"prevIterator": {"Iterator of the previous page; null on the first.", exIterator},
	},
	"WebhookAttempt": {
		"endpointId":         {"Endpoint id.", exEndpointID},
		"msgId":              {"Id of the delivered message (one per event and endpoint).", "msg_2pXyR1cQ8vN4bT6wZ0aB3dE5f"},
		"attempt":            {"Attempt number for the message, from 1.", 1},
		"responseStatusCode": {"HTTP status the endpoint answered; null when no answer came.", 200},
		"latencyMs":          {"Time to the endpoint's answer, milliseconds.", 84},
		"success":            {"Whether the endpoint answered 2xx.", true},
		"error":              {"Why the attempt failed; null on success.", "endpoint answered 503"},
		"timestamp":          {"When the attempt was made (ISO 8601).", exISOTime},
	},
	"WebhookAttemptList": {
		"data":     {"The attempts of the page, newest first.", nil},
		"done":     {"Whether this is the last page.", true},
		"iterator": {"Pass as `iterator` for the next page; null on the last.", exIterator},
	},
	"WebhookSecret": {},
	"JobStarted":    {"jobId": {"The job's id: follow it with operation 12 or GET /v2/job/{id}.", exJobID}},
	"Job": {
		"id":       {"Job identifier.", exJobID},
		"state":    {"The job's state (same as `status`).", "completed"},
		"status":   {"The job's state.", "completed"},
		"result":   {"Once finished: `success` and `data` (with `message`); {} before.", map[string]any{"success": true, "data": map[string]any{"message": "computed PnL of 2 tokens"}}},
		"progress": {"Work done so far.", nil},
		"error":    {"Why the job failed (failed jobs only).", "wallet has no trades on sol"},
	},
	"JobProgress": {
		"done":    {"Units of work done.", 2},
		"total":   {"Units of work in all (0 while unknown).", 2},
		"message": {"What the job is doing.", "computed 2 of 2 tokens"},
	},
	"JobMessage": {
		"id":       {"Job identifier.", exJobID},
		"status":   {"The job's state.", "completed"},
		"result":   {"The outcome, once the job is terminal.", nil},
		"progress": {"Work done so far.", nil},
		"error":    {"Why the job failed (failed jobs only).", "wallet has no trades on sol"},
	},
	"JobMessage.result": {
		"success": {"Whether the job succeeded.", true},
		"data":    {"The result message and, when the job produced one, its data.", nil},
	},
	"JobMessage.result.data": {
		"message": {"The result message.", "computed PnL of 2 tokens"},
		"detail":  {"The job's data value, when it produced one.", map[string]any{"tokens": 2}},
	},
	"IngestResult": {
		"events":    {"Events read from the body.", 5000},
		"inserted":  {"Events stored for the first time.", 4990},
		"skipped":   {"Events already stored (a re-sent body).", 10},
		"trades":    {"Trades among the inserted events.", 4870},
		"rederived": {"Tokens whose derived state was recomputed.", 12},
	},
	"KytWithdrawal": {
		"address":           {"Withdrawal address.", exWallet},
		"asset":             {"Asset symbol, upper-cased.", "SOL"},
		"assetAmount":       {"Amount of the asset, as sent.", "12.5"},
		"assetId":           {"Asset identifier (e.g. the token address); null when not sent.", exWSOL},
		"attemptIdentifier": {"Identifier of this withdrawal attempt.", "a7Kq2Xz9mP4vR1tY"},
		"externalId":        {"The registration's id (UUID).", exExternalID},
		"memo":              {"Memo; null when not sent.", "payout 2026-11"},
		"network":           {"Network.", "Solana"},
		"updatedAt":         {"When the registration last changed (ISO 8601).", exISOTime},
		"usdAmount":         {"Amount in USD (\"\" while no USD price is known).", "1875"},
	},
	"KytTransfer": {
		"asset":             {"Asset symbol, upper-cased.", "SOL"},
		"assetAmount":       {"Amount transferred; null until processed.", "12.5"},
		"assetId":           {"Asset identifier; null until processed.", exWSOL},
		"externalId":        {"The registration's id (UUID).", exExternalID},
		"idx":               {"Index of the transfer within its transaction; null until processed.", 0},
		"memo":              {"Memo; null until processed.", "deposit 2026-11"},
		"network":           {"Network.", "Solana"},
		"outputAddress":     {"Receiving address; null until processed.", exWallet},
		"timestamp":         {"Transaction time (ISO 8601); null until processed.", exISOTime},
		"transferReference": {"Transaction hash, optionally followed by a colon and an address.", exSignature + ":" + exWallet},
		"tx":                {"Transaction hash; null until processed.", exSignature},
		"updatedAt":         {"When the registration last changed (ISO 8601); null until processed.", exISOTime},
		"usdAmount":         {"Amount in USD; null until processed.", "1875"},
		"direction":         {"Whether the transfer left (sent) or reached (received) the account.", "received"},
	},
	"KytAlert": {
		"alertLevel":   {"Severity of the alert.", "HIGH"},
		"category":     {"Risk category of the counterparty.", "sanctioned entity"},
		"service":      {"Name of the counterparty service.", "Example Mixer"},
		"exposureType": {"DIRECT or INDIRECT exposure.", "DIRECT"},
		"alertAmount":  {"Amount the alert concerns, USD.", "1875"},
		"externalId":   {"The alert's id at the provider.", "b3e1d5f7-2a4c-4e6b-8d0f-1a3c5e7b9d2f"},
	},
	"screening": {
		"status":        {"Screening state: pending, then registered or failed.", "registered"},
		"rating":        {"Risk rating once screened; null before.", "lowRisk"},
		"alerts":        {"Alerts the screening raised; [] when none.", nil},
		"failureReason": {"Why screening failed; null unless failed.", "provider unavailable after 8 attempts"},
		"createdAt":     {"When the registration was accepted (ISO 8601).", exISOTime},
		"processedAt":   {"When screening finished (ISO 8601); null while pending.", exISOTime},
	},
	"op:registerWithdrawal": {
		"address":           {"Withdrawal address: base58 of 32 bytes on Solana, `0x` + 40 hex digits on ethereum, a base58 (P2PKH/P2SH) or bech32 address on bitcoin.", exWallet},
		"asset":             {"Asset symbol (at most 64 characters, no spaces).", "SOL"},
		"assetAmount":       {"Amount of the asset: a positive plain decimal (no sign, exponent or separators).", "12.5"},
		"attemptTimestamp":  {"When the withdrawal was attempted: ISO 8601 / RFC 3339 (`2024-01-15T10:30:00.000Z`); a space instead of `T` and a time without zone (UTC) are accepted too.", "2026-11-27T11:28:00.000Z"},
		"network":           {"Network (case-sensitive).", "Solana"},
		"assetDenomination": {"Currency of assetPrice, letters only (default USD).", "USD"},
		"assetId":           {"Asset identifier, e.g. the token address.", exWSOL},
		"assetPrice":        {"Price of one unit of the asset in assetDenomination: a non-negative plain decimal.", "150"},
		"memo":              {"Memo (at most 256 characters).", "payout 2026-11"},
	},
	"op:registerTransfer": {
		"asset":             {"Asset symbol (at most 64 characters, no spaces).", "SOL"},
		"direction":         {"Whether the transfer left (sent) or reached (received) the account.", "received"},
		"network":           {"Network (case-sensitive).", "Solana"},
		"transferReference": {"Transaction hash (base58 signature on Solana, `0x` + 64 hex on ethereum, 64 hex on bitcoin), optionally followed by `:` and an address on the same network (bitcoin: or an output index); a received transfer must name the receiving address.", exSignature + ":" + exWallet},
	},
	"op:calculatePnl": {"tokenAddresses": {"Tokens to compute (at most 100; absent, null or [] = every token the wallet traded).", []any{exToken, exToken2}}},
	"op:createWebhookEndpoint": {
		"url":         {"Destination URL (https) the events are POSTed to.", "https://hooks.acme.example/tokenscope"},
		"secret":      {"Signing secret (`whsec_` + base64); generated when absent.", "whsec_MfKQ9r8GKYqrTzSUZ3d5pZ3t1Vx7mAjzF0rO1c2e9Qk="},
		"rateLimit":   {"Most deliveries per second to the endpoint (int32, minimum 0); null for no limit.", 10},
		"channels":    {"Channels to receive; null or absent for all.", []any{"sol.token.created"}},
		"description": {"Free text.", "New tokens into the listing pipeline"},
		"disabled":    {"Create paused.", false},
		"filter":      {"Event filter: a CEL expression over the event's data (at most 4096 bytes); null for none.", exFilter},
		"filterTypes": {"Event types delivered (the channel names); null for all.", []any{"sol.token.created"}},
		"metadata":    {"Free-form key/value pairs kept with the endpoint.", map[string]any{"team": "listings"}},
	},
	"op:updateWebhookEndpoint": {
		"endpointId":  {"Id of the endpoint to change.", exEndpointID},
		"url":         {"New destination URL; null or absent keeps it.", "https://hooks.acme.example/tokenscope/v2"},
		"rateLimit":   {"Most deliveries per second (int32, minimum 0); null removes the limit.", 20},
		"channels":    {"Channels to receive; null for all.", []any{"sol.token.created", "sol.token.migrated"}},
		"description": {"Free text.", "New and migrated tokens"},
		"disabled":    {"Pause (true) or resume (false) deliveries.", false},
		"filter":      {"Event filter: a CEL expression over the event's data (at most 4096 bytes); null for none.", exFilter},
		"filterTypes": {"Event types delivered (the channel names); null for all.", []any{"sol.token.created"}},
		"metadata":    {"Free-form key/value pairs kept with the endpoint.", map[string]any{"team": "listings"}},
	},
}

// The summaries are the registration's fields plus the screening's.
func init() {
	for _, s := range []string{"KytWithdrawal", "KytTransfer"} {
		m := cloneDocs(recordFields[s])
		for k, v := range recordFields["screening"] {
			m[k] = v
		}
		recordFields[s+"Summary"] = m
	}
	recordFields["TokenFast"] = map[string]fieldDoc{"marketData": {"Price, market cap, holders and liquidity.", nil}, "stats": {"The 24h volume and trade count.", nil}}
	recordFields["WebhookSecret"] = map[string]fieldDoc{}
}

// docOf finds the words of field name in the object at ctx: the record's own, then the shared
// ones, then the keyed objects' generated ones.
func docOf(ctx, name string) (fieldDoc, bool) {
	if d, ok := recordFields[ctx][name]; ok {
		return d, true
	}
	if d, ok := keyedFieldDoc(ctx, name); ok {
		return d, true
	}
	d, ok := commonFields[name]
	return d, ok
}

// The keyed objects (their keys come from tokenKeys): words made from the key's parts.

var marketDataWords = map[string]fieldDoc{
	"circulatingSupply":   {"Tokens in circulation, in whole tokens.", "1000000000"},
	"completionRatio":     {"How far the bonding curve is completed (0–1; 1 once migrated).", "0.5308"},
	"fdvInSol":            {"Fully diluted valuation, SOL.", "67.414444972"},
	"fdvInUsd":            {"Fully diluted valuation, USD.", "10112.1667458"},
	"holders":             {"Wallets holding the token.", "412"},
	"marketCapInSol":      {"Market capitalisation (price × circulating supply), SOL.", "67.414444972"},
	"marketCapInUsd":      {"Market capitalisation (price × circulating supply), USD.", "10112.1667458"},
	"maxPoolTvlInSol":     {"Liquidity of the token's largest pool, SOL.", "90.232874602"},
	"maxPoolTvlInUsd":     {"Liquidity of the token's largest pool, USD.", "13534.9311903"},
	"priceInSol":          {"Price of one token, SOL.", "0.000000067414444972"},
	"priceInUsd":          {"Price of one token, USD.", "0.0000101121667458"},
	"totalSupply":         {"Total supply, in whole tokens.", "1000000000"},
	"totalTvlInSol":       {"Liquidity over all the token's pools, SOL.", "90.232874602"},
	"totalTvlInUsd":       {"Liquidity over all the token's pools, USD.", "13534.9311903"},
	"tvlInSol":            {"Liquidity over all the token's pools, SOL.", "90.232874602"},
	"tvlInUsd":            {"Liquidity over all the token's pools, USD.", "13534.9311903"},
	"devTeamAmount":       {"Tokens the creator's wallets hold, in whole tokens.", "25000000"},
	"devTeamRatio":        {"Share of the supply the creator's wallets hold (0–1).", "0.025"},
	"devTeamCount":        {"Creator wallets holding the token.", 1},
	"top10HoldingsRatio":  {"Share of the supply the 10 largest holders hold (0–1).", "0.4312"},
	"top10TotalHoldings":  {"Tokens the 10 largest holders hold, in whole tokens.", "431200000"},
	"top50HoldingsRatio":  {"Share of the supply the 50 largest holders hold (0–1).", "0.7105"},
	"top50TotalHoldings":  {"Tokens the 50 largest holders hold, in whole tokens.", "710500000"},
	"top100HoldingsRatio": {"Share of the supply the 100 largest holders hold (0–1).", "0.8841"},
	"top100TotalHoldings": {"Tokens the 100 largest holders hold, in whole tokens.", "884100000"},
	"multiHolders":        {"Wallets holding the token.", 412},
	"groupHoldingsRatio":  {"Share of the supply the %s wallets hold (0–1).", "0.0125"},
	"groupTotalHolders":   {"Wallets labelled %s holding the token.", "4"},
	"groupTotalHoldings":  {"Tokens the %s wallets hold, in whole tokens.", "12500000"},
}

// statWords are the per-window figures (v2 period keys and multi-detail prefixes).
var statWords = map[string]fieldDoc{
	"buyVolumeInUsd":        {"Bought volume, USD", "10265.9"},
	"buyers":                {"Distinct buying wallets", "97"},
	"buys":                  {"Buy trades", "702"},
	"closeInUsd":            {"Last price, USD", "0.0000101121667458"},
	"currentLiquidityInUsd": {"Liquidity at the window's end, USD", "13534.9311903"},
	"highInUsd":             {"Highest price, USD", "0.0000112"},
	"lowInUsd":              {"Lowest price, USD", "0.00000455685454545"},
	"openInUsd":             {"First price, USD", "0.00000455685454545"},
	"priceChangeRatioInUsd": {"Price change from open to close, as a ratio (0.5 = +50%)", "1.2191"},
	"sellVolumeInUsd":       {"Sold volume, USD", "10265.9"},
	"sellers":               {"Distinct selling wallets", "64"},
	"sells":                 {"Sell trades", "582"},
	"totalVolumeInUsd":      {"Traded volume, USD", "20531.8"},
	"traders":               {"Distinct trading wallets", "131"},
	"trades":                {"Trades", "1284"},
	"price":                 {"Last price, USD", "0.0000101121667458"},
	"buyVolumes":            {"Bought volume in tokens", "1015204331.2"},
	"sellsVolumes":          {"Sold volume in tokens", "1015204331.2"},
	"volumes":               {"Traded volume in tokens", "2030408662.4"},
	"buyVolumesInUsd":       {"Bought volume, USD", "10265.9"},
	"sellVolumesInUsd":      {"Sold volume, USD", "10265.9"},
	"volumesInUsd":          {"Traded volume, USD", "20531.8"},
	"openPriceInUsd":        {"First price, USD", "0.00000455685454545"},
	"closePriceInUsd":       {"Last price, USD", "0.0000101121667458"},
}

func keyedFieldDoc(ctx, name string) (fieldDoc, bool) {
	switch ctx {
	case "SocialMedias":
		return fieldDoc{"Link to the token's " + name + " (a URL or a handle); null when none.", socialExample(name)}, true
	case "TokenPeriods":
		return fieldDoc{"Statistics of the last " + name + ".", nil}, true
	case "TokenPeriod":
		w, ok := statWords[name]
		if !ok {
			return fieldDoc{}, false
		}
		ex := w.ex
		if name == "buyers" || name == "buys" || name == "sellers" || name == "sells" || name == "traders" || name == "trades" {
			return fieldDoc{w.desc + " in the window, an integer count as text.", ex}, true
		}
		return fieldDoc{w.desc + " in the window.", ex}, true
	case "MultiTokenStats":
		if name == "address" {
			return fieldDoc{"Token address.", exToken}, true
		}
		for _, win := range windowsLongestFirst() {
			base, ok := strings.CutSuffix(name, win)
			if !ok {
				continue
			}
			w, ok := statWords[base]
			if !ok {
				continue
			}
			ex := w.ex
			switch base {
			case "buyers", "buys", "sellers", "sells", "traders", "trades":
				n := 0
				for _, c := range ex.(string) {
					n = n*10 + int(c-'0')
				}
				return fieldDoc{w.desc + " in the last " + win + ".", n}, true
			}
			return fieldDoc{w.desc + " in the last " + win + ".", ex}, true
		}
	case "TokenMarketData", "MultiTokenMarketData":
		if ctx == "MultiTokenMarketData" && name == "holders" {
			return marketDataWords["multiHolders"], true
		}
		if d, ok := marketDataWords[name]; ok {
			return d, true
		}
		for _, g := range token.AllHolderGroups {
			part, ok := strings.CutPrefix(name, string(g))
			if !ok {
				continue
			}
			if d, ok := marketDataWords["group"+part]; ok {
				return fieldDoc{strings.Replace(d.desc, "%s", string(g), 1), d.ex}, true
			}
		}
	}
	return fieldDoc{}, false
}

// windowsLongestFirst is the window names, longer first so "15m" is not read as "5m".
func windowsLongestFirst() []string {
	ws := windowNames()
	slices.SortFunc(ws, func(a, b string) int { return len(b) - len(a) })
	return ws
}

func socialExample(key string) any {
	switch key {
	case token.SocialTwitter:
		return "https://x.com/3TAyqMat"
	case token.SocialTelegram:
		return "https://t.me/3TAyqMat"
	case token.SocialWebsite:
		return "https://3TAyqMat.example"
	case token.SocialTheService:
		return "https://the-service.example/3TAyqMat"
	}
	return "https://" + key + ".com/3TAyqMat"
}

// paramExamples are the parameters' examples by name; opParamExamples override them for one
// operation.
var paramExamples = map[string]any{
	"chain": "sol", "tokenAddress": exToken, "walletAddress": exWallet, "poolAddress": exPool,
	"address": exCreator, "creator": exCreator, "tokenAddresses": []any{exToken, exToken2},
	"transactionsSignature": []any{exSignature}, "afterTimestamp": 1795700000, "beforeTimestamp": 1795708800,
	"afterBlockHeight": 544600000, "beforeBlockHeight": 544700000, "type": "BUY", "time": 1795767120,
	"limit": 20, "cursor": "eyJ2IjoxLCJrIjoidHJhZGUiLCJwIjpbIjE3OTU3MDQ0NzkwMDAiXX0", "direction": "next",
	"q": "frog", "chains": []any{"sol"}, "protocols": []any{"Pumpfun"}, "sort": "desc", "mode": "fast",
	"sortDirection": "desc", "resolution": "1m", "priceType": "usd", "from": 1795700000, "to": 1795708800,
	"duration": "1h", "tag": "pump_fun", "launchpadPlatform": []any{"pump_fun", "moonit_fun"},
	"filters": []any{"has_twitter"}, "rangeFilters": `[{"field":"marketData.marketCapInUsd","min":"5000"}]`,
	"filterBy":       `[{"field":"marketData.holders","operator":"gte","value":"100"}]`,
	"searchKeywords": []any{"frog"}, "excludeKeywords": []any{"scam"}, "pair": exToken + "-" + exWSOL,
	"id": exEndpointID, "externalId": exExternalID, "Idempotency-Key": "withdrawal-2026-11-27-0001",
	"Last-Event-ID": "3", "lastEventId": "3", "iterator": "eyJpZCI6ImVwXzJwWHlROExtNE52UjZ0WjBhQjNjRDVlRjdnIn0",
	"order": "ascending",
}

var opParamExamples = map[string]map[string]any{
	"multiTokens":       {"sortBy": "marketData.marketCapInUsd", "sortDirection": "DESC"},
	"multiTokensV2":     {"sortBy": "marketData.marketCapInUsd", "sortDirection": "DESC"},
	"hotTokens":         {"sortBy": "marketData.marketCapInUsd"},
	"searchTokens":      {"sortBy": "marketCapInUsd"},
	"walletPnlByToken":  {"resolution": "all", "limit": 100},
	"listRedPackets":    {"limit": 10},
	"walletRedPackets":  {"limit": 10},
	"redPacketClaims":   {"id": exRedPacketID, "limit": 10},
	"ingest":            {"wait": ingestWaitCommit},
	"getJob":            {"id": exJobID},
	"streamJob":         {"id": exJobID},
	"listPoolSnapshots": {"time": 1795767120},
}

// annotate gives each property of the object s (at ctx, see recordFields) and of the objects
// nested in it its words and example; a description already set stays.
func annotate(ctx string, s schema) {
	for _, alt := range alternatives(s) {
		if items, ok := alt["items"].(schema); ok {
			annotate(ctx, items)
		}
		if c, ok := alt["contentSchema"].(schema); ok {
			annotate(ctx, c)
		}
		props, _ := alt["properties"].(schema)
		for name, v := range props {
			p := maps(v.(schema))
			if d, ok := docOf(ctx, name); ok {
				if _, has := p["description"]; !has {
					p["description"] = d.desc
				}
				if d.ex != nil {
					p["example"] = d.ex
				}
			}
			props[name] = p
			annotate(ctx+"."+name, p)
		}
	}
}

// alternatives is s, or the members of its anyOf (a nullable object).
func alternatives(s schema) []schema {
	out := []schema{s}
	if any, ok := s["anyOf"].([]any); ok {
		for _, a := range any {
			if m, ok := a.(schema); ok {
				out = append(out, m)
			}
		}
	}
	return out
}

// exampleOf builds a value of s from its fields' examples (references resolved in named): what
// a response of that schema looks like, for the responses' examples.
func exampleOf(named map[string]schema, s schema) any {
	if ex, ok := s["example"]; ok {
		return ex
	}
	if r, ok := s["$ref"].(string); ok {
		return exampleOf(named, named[strings.TrimPrefix(r, "#/components/schemas/")])
	}
	if any, ok := s["anyOf"].([]any); ok {
		for _, a := range any {
			if m := a.(schema); m["type"] != "null" {
				return exampleOf(named, m)
			}
		}
	}
	if c, ok := s["const"]; ok {
		return c
	}
	if t, ok := s["type"].([]string); ok && slices.Contains(t, "null") {
		return nil // a nullable field without an example of its own
	}
	if e, ok := s["enum"].([]string); ok && len(e) > 0 {
		return e[0]
	}
	if props, ok := s["properties"].(schema); ok {
		out := map[string]any{}
		for k, v := range props {
			out[k] = exampleOf(named, v.(schema))
		}
		return out
	}
	if items, ok := s["items"].(schema); ok {
		return []any{exampleOf(named, items)}
	}
	if ap, ok := s["additionalProperties"].(schema); ok && len(ap) > 0 {
		return map[string]any{}
	}
	switch t := s["type"].(type) {
	case []string:
		if slices.Contains(t, "null") {
			return nil
		}
	case string:
		if t == "object" {
			return map[string]any{}
		}
	}
	return nil
}

// errorExamples are the error bodies of the shared error responses.
var errorExamples = map[string]map[string]any{
	"400": {"code": 40002, "message": "invalid value \"solana\" for parameter \"chain\"; allowed: sol, eth, bsc",
		"details": map[string]any{"parameter": "chain", "value": "solana", "allowed_values": []any{"sol", "eth", "bsc"}}},
	"401": {"code": 401, "message": "missing API key: send Authorization: Bearer <key> or X-API-KEY: <key>", "details": map[string]any{}},
	"403": {"code": 40301, "message": "the key lacks scope \"webhook\"", "details": map[string]any{}},
	"404": {"code": 404, "message": "webhook endpoint not found", "details": map[string]any{}},
	"408": {"code": 408, "message": "request not received within HTTP_READ_TIMEOUT", "details": map[string]any{}},
	"409": {"code": 409, "message": "Idempotency-Key was used for a different request", "details": map[string]any{}},
	"413": {"code": 413, "message": "request body exceeds 1 MiB", "details": map[string]any{}},
	"429": {"code": 429, "message": "rate limit exceeded; retry after 1 s", "details": map[string]any{}},
	"431": {"code": 431, "message": "request line and headers exceed 16 KiB", "details": map[string]any{}},
	"500": {"code": 500, "message": "internal error", "details": map[string]any{}},
	"503": {"code": 503, "message": "database unavailable", "details": map[string]any{}},
}

func errorExample(code string) map[string]any {
	out := make(map[string]any, len(errorExamples[code])+2)
	for k, v := range errorExamples[code] {
		out[k] = v
	}
	out["timestamp"] = "2026-11-27T11:28:00.123Z"
	out["requestId"] = "01JDQ3X5G7M9K2P4R6T8V0W2Y4"
	return out
}

// paramExample is the example of parameter name of operation id.
func paramExample(id, name string) (any, bool) {
	if v, ok := opParamExamples[id][name]; ok {
		return v, true
	}
	v, ok := paramExamples[name]
	return v, ok
}

// sseExample is a job stream from start to end: the state at connect, a change, the outcome.
const sseExample = "id: 1\ndata: {\"id\":\"" + exJobID + "\",\"status\":\"running\",\"progress\":{\"done\":0,\"total\":2}}\n\n" +
	": ping\n\n" +
	"id: 2\ndata: {\"id\":\"" + exJobID + "\",\"status\":\"running\",\"progress\":{\"done\":1,\"total\":2,\"message\":\"computed 1 of 2 tokens\"}}\n\n" +
	"id: 3\ndata: {\"id\":\"" + exJobID + "\",\"status\":\"completed\",\"result\":{\"success\":true,\"data\":{\"message\":\"computed PnL of 2 tokens\"}}," +
	"\"progress\":{\"done\":2,\"total\":2,\"message\":\"computed 2 of 2 tokens\"}}\n\n"

// ndjsonExample is an ingest body: a token, its pool and a trade, as the simulator writes them.
const ndjsonExample = `{"type":"token.created","chain":"sol","address":"` + exToken + `","decimals":6,"name":"` + exName + `","symbol":"` + exSymbol + `","tokenCreatedAt":1795704420000,"creator":"` + exWallet + `","totalSupply":"1000000000"}
{"type":"pool.created","chain":"sol","poolAddress":"` + exPool + `","programAddress":"` + exProgram + `","protocolFamily":"Moonshot","protocolName":"Moonit","tokenAAddress":"` + exToken + `","tokenADecimals":6,"tokenBAddress":"` + exWSOL + `","tokenBDecimals":9,"isBondingCurve":true,"createdAt":1795704420000}
{"type":"trade","chain":"sol","transactionSignature":"` + exSignature + `","instructionIndex":1,"blockHeight":544669200,"blockSlot":544669200,"blockTimestamp":1795704480000,"accountOwnerAddress":"` + exWallet + `","poolAddress":"` + exPool + `","side":"BUY","status":"SUCCEEDED","tokenAddress":"` + exToken + `","tokenAmount":"2501725.672014","tokenAmountInNative":"0.076","tokenAmountInUsd":"11.4","tokenPriceInNative":"0.000000030379030303","tokenPriceInUsd":"0.00000455685454545","sideTokenAddress":"` + exWSOL + `","sideTokenSymbol":"SOL","sideTokenAmount":"0.076","sideTokenAmountInNative":"0.076","sideTokenAmountInUsd":"11.4","sideTokenPriceInNative":"1","sideTokenPriceInUsd":"150"}
`

func cloneDocs(m map[string]fieldDoc) map[string]fieldDoc {
	out := make(map[string]fieldDoc, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
