package main

// The generated client (internal/apiclient: oapi-codegen over /openapi.json) against the
// end-to-end server: operations 1–14 each answer 200 and decode into the generated types. Every
// response also goes through the document validator (specTransport).

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	openapitypes "github.com/oapi-codegen/runtime/types"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/domain/pool"
	"github.com/tokenscope/tokenscope/domain/ranking"
	"github.com/tokenscope/tokenscope/domain/redpacket"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/domain/trade"
	"github.com/tokenscope/tokenscope/internal/apiclient"
	"github.com/tokenscope/tokenscope/ports"
)

// The generated client's data: its own addresses on bsc, so the read API tests' sol data and
// rankings stay as they expect (the package shares one database).
const (
	genTokA = "GenBscTokA"
	genTokB = "GenBscTokB"
	genPool = "GenBscPool"
	genW1   = "GenBscW1"
	genC1   = "GenBscC1"
	genRP   = "GenBscRP1"
)

// seedGeneratedOnce seeds the package database once for the tests that read these addresses
// (ingesting again would add a second snapshot and move the times).
var seedGeneratedOnce sync.Once

func seedGenerated(t *testing.T, e *env) {
	t.Helper()
	seedGeneratedOnce.Do(func() { seedGeneratedData(t, e) })
}

func seedGeneratedData(t *testing.T, e *env) {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	tok := func(addr, symbol string) chainevent.TokenCreated {
		return chainevent.TokenCreated{Token: token.Token{Chain: chain.Bsc, Address: addr, Decimals: 18, Name: "Genclient " + symbol,
			Symbol: symbol, CreatedAt: ptr(now.Add(-time.Hour).UnixMilli())}, TotalSupply: dd("1000"), CirculatingSupply: dd("1000")}
	}
	onBsc := func(tr chainevent.Trade) chainevent.Trade { tr.Chain = chain.Bsc; return tr }
	events := []chainevent.Event{tok(genTokA, "GENA"), tok(genTokB, "GENB"),
		chainevent.PoolCreated{Pool: pool.Pool{Chain: chain.Bsc, Address: genPool, ProgramAddress: "GenDex", ProtocolFamily: "Pancake",
			ProtocolName: "Pancake v2", TokenAAddress: genTokA, TokenADecimals: 18, TokenBAddress: mktSol, TokenBDecimals: 18},
			At: now.Add(-time.Hour).UnixMilli()},
		onBsc(mktTrade("GenSig1", genW1, genTokA, genPool, trade.Buy, "10", "2", now.Add(-30*time.Minute), 7001)),
		onBsc(mktTrade("GenSig2", genW1, genTokA, genPool, trade.Sell, "4", "3", now.Add(-20*time.Minute), 7002)),
		onBsc(mktTrade("GenSig3", genW1, genTokB, genPool, trade.Buy, "5", "1", now.Add(-10*time.Minute), 7003)),
		chainevent.PoolSnapshot{Snapshot: pool.Snapshot{Chain: chain.Bsc, PoolAddress: genPool, BlockHeight: 7100,
			BlockTimestamp: now.Add(-5 * time.Minute).UnixMilli(), SnapshotTime: now.Add(-5 * time.Minute).UnixMilli(),
			TokenA: pool.Side{TokenAddress: genTokA, Decimals: 18, AmountInNative: dd("1"), AmountInUSD: dd("50"),
				PriceNative: dd("0.03"), PriceUSD: dd("3"), VaultAmount: "1000"},
			TokenB: pool.Side{TokenAddress: mktSol, Decimals: 18, AmountInNative: dd("1"), AmountInUSD: dd("50"),
				PriceNative: dd("1"), PriceUSD: dd("100"), VaultAmount: "2000"},
			TVLInNative: dd("1"), TVLInUSD: dd("100")}},
	}
	_, err := e.rt.App.Ingest.Ingest(ctx, events)
	require.NoError(t, err)
	created := now.Add(-15 * time.Minute).UnixMilli()
	_, err = e.rt.App.Ingest.Ingest(ctx, []chainevent.Event{chainevent.RedPacketCreated{Packet: redpacket.RedPacket{ID: genRP, Creator: genC1,
		ClaimAuthority: "GenAuth", Mint: genTokA, Chain: chain.Bsc, MaxClaims: 2, TotalAmount: dd("100"), CreatedAt: created,
		ExpiredAt: redpacket.ExpiresAt(created, 3600), Expiration: 3600, Memo: "gen", ShareID: "genshare", TxHash: "gentx"}}})
	require.NoError(t, err)
	_, err = e.rt.App.Ingest.Ingest(ctx, []chainevent.Event{chainevent.RedPacketClaimed{Claim: redpacket.Claim{PacketID: genRP,
		Claimer: "GenK1", Mint: genTokA, Chain: chain.Bsc, Amount: dd("40"), ClaimedAt: created + 1000, TxHash: "genK1"}}})
	require.NoError(t, err)
	require.NoError(t, postgres.NewIngestStore(e.rt.Pool).ReplaceHotTokens(ctx, chain.Bsc, ranking.Duration24h,
		[]ports.HotEntry{{Address: genTokA, Rank: 1, Score: dd("2")}, {Address: genTokB, Rank: 2, Score: dd("1")}}, now))
}

// specTransport validates every response against the served document before the client
// reads it.
type specTransport struct {
	t *testing.T
	e *env
}

func (s specTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	s.e.checkAgainstSpec(s.t, req, res.StatusCode, res.Header, body)
	return res, nil
}

// generatedClient is the generated client for base (the main or the dex address) with the env's key.
func (e *env) generatedClient(t *testing.T, base string) *apiclient.ClientWithResponses {
	t.Helper()
	c, err := apiclient.NewClientWithResponses(base,
		apiclient.WithHTTPClient(&http.Client{Transport: specTransport{t: t, e: e}}),
		apiclient.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
			req.Header.Set("Authorization", "Bearer "+e.key)
			return nil
		}))
	require.NoError(t, err)
	return c
}

// decoded fails unless the call answered 200 and the body decoded into the generated type.
func decoded[T any](t *testing.T, op string, err error, res *http.Response, body []byte, v *T) *T {
	t.Helper()
	require.NoError(t, err, op)
	require.Equal(t, 200, res.StatusCode, "%s: %s", op, body)
	require.NotNil(t, v, "%s: the 200 body did not decode into the generated type: %s", op, body)
	return v
}

func TestGeneratedClient(t *testing.T) {
	e := newEnv(t)
	seedGenerated(t, e)
	ctx := context.Background()
	c := e.generatedClient(t, e.base)
	dex := e.generatedClient(t, e.dex)

	// 1. Token search, both record shapes.
	q, bsc := "Genclient", []apiclient.SearchTokensParamsChains{apiclient.SearchTokensParamsChainsBsc}
	r1, err := c.SearchTokensWithResponse(ctx, &apiclient.SearchTokensParams{Q: &q, Chains: &bsc})
	fast, err := decoded(t, "search (fast)", err, r1.HTTPResponse, r1.Body, r1.JSON200).AsTokenFastPage()
	require.NoError(t, err)
	require.Len(t, fast.Data, 2)
	mode := apiclient.SearchTokensParamsMode("normal")
	r1, err = c.SearchTokensWithResponse(ctx, &apiclient.SearchTokensParams{Q: &q, Chains: &bsc, Mode: &mode})
	full, err := decoded(t, "search (normal)", err, r1.HTTPResponse, r1.Body, r1.JSON200).AsTokenPage()
	require.NoError(t, err)
	require.Len(t, full.Data, 2)
	require.Equal(t, apiclient.TokenChainBsc, full.Data[0].Chain)

	// 2. Multi-token detail on the dex address, v1 and v2 records.
	r2, err := dex.MultiTokensWithResponse(ctx, apiclient.MultiTokensParamsChainBsc,
		&apiclient.MultiTokensParams{TokenAddresses: []string{genTokA, genTokB}})
	multi := decoded(t, "multi (v1)", err, r2.HTTPResponse, r2.Body, r2.JSON200)
	require.Len(t, *multi, 2)
	require.Equal(t, genTokA, (*multi)[0].Address)
	require.Equal(t, 2, (*multi)[0].Stats.Trades1h)
	r2b, err := dex.MultiTokensV2WithResponse(ctx, apiclient.MultiTokensV2ParamsChainBsc,
		&apiclient.MultiTokensV2Params{TokenAddresses: []string{genTokA}})
	require.Len(t, *decoded(t, "multi (v2)", err, r2b.HTTPResponse, r2b.Body, r2b.JSON200), 1)

	// 3. Trades.
	tok := genTokA
	r3, err := c.ListTradesWithResponse(ctx, apiclient.ListTradesParamsChainBsc, &apiclient.ListTradesParams{TokenAddress: &tok})
	trades := decoded(t, "trades", err, r3.HTTPResponse, r3.Body, r3.JSON200).Data
	require.Len(t, trades, 2)
	require.Equal(t, apiclient.TradeTypeSELL, trades[0].Type)

	// 4. Pool snapshots.
	r4, err := c.ListPoolSnapshotsWithResponse(ctx, apiclient.ListPoolSnapshotsParamsChainBsc, genPool, nil)
	require.Len(t, decoded(t, "snapshots", err, r4.HTTPResponse, r4.Body, r4.JSON200).Data, 1)

	// 5–7. Red packets.
	r5, err := c.WalletRedPacketsWithResponse(ctx, genC1, nil)
	require.Len(t, decoded(t, "wallet red packets", err, r5.HTTPResponse, r5.Body, r5.JSON200).Records, 1)
	creator, rpChain := genC1, apiclient.ListRedPacketsParamsChainBsc
	r6, err := c.ListRedPacketsWithResponse(ctx, &apiclient.ListRedPacketsParams{Creator: &creator, Chain: &rpChain})
	require.Len(t, decoded(t, "red packets", err, r6.HTTPResponse, r6.Body, r6.JSON200).Records, 1)
	r7, err := c.RedPacketClaimsWithResponse(ctx, genRP, nil)
	claims := decoded(t, "claims", err, r7.HTTPResponse, r7.Body, r7.JSON200)
	require.Len(t, claims.Records, 1)
	require.Equal(t, "40", claims.Records[0].Amount)

	// 8. Wallet PnL by token.
	r8, err := c.WalletPnlByTokenWithResponse(ctx, apiclient.WalletPnlByTokenParamsChainBsc, genW1,
		&apiclient.WalletPnlByTokenParams{TokenAddresses: []string{genTokA, genTokB}})
	pnl := decoded(t, "pnl by token", err, r8.HTTPResponse, r8.Body, r8.JSON200)
	require.Len(t, pnl.Data, 2)
	require.Equal(t, "2", pnl.Summary.Tokens)

	// 9. Hot tokens.
	r9, err := c.HotTokensWithResponse(ctx, apiclient.HotTokensParamsChainBsc, apiclient.HotTokensParamsDuration("24h"), nil)
	hot := decoded(t, "hot tokens", err, r9.HTTPResponse, r9.Body, r9.JSON200)
	require.Len(t, *hot, 2)
	require.Equal(t, genTokA, (*hot)[0].Address)

	// Candles (beyond the spec's fourteen): the token's two trades fall in at most two hours.
	rk, err := c.TokenCandlesWithResponse(ctx, apiclient.TokenCandlesParamsChainBsc, genTokA,
		&apiclient.TokenCandlesParams{Resolution: apiclient.TokenCandlesParamsResolution("1h")})
	candles := decoded(t, "token candles", err, rk.HTTPResponse, rk.Body, rk.JSON200)
	require.NotEmpty(t, *candles)
	counted := 0
	for _, k := range *candles {
		counted += k.Trades
	}
	require.Equal(t, 2, counted)

	// 10–11. KYT registration, then the summaries.
	r10, err := c.RegisterWithdrawalWithResponse(ctx, nil, apiclient.RegisterWithdrawalJSONRequestBody{Address: solAddr, Asset: "SOL",
		AssetAmount: "1.5", AttemptTimestamp: time.Date(2024, 1, 15, 10, 30, 0, 0, time.UTC), Network: apiclient.RegisterWithdrawalJSONBodyNetworkSolana})
	w := decoded(t, "register withdrawal", err, r10.HTTPResponse, r10.Body, r10.JSON200)
	r11, err := c.RegisterTransferWithResponse(ctx, nil, apiclient.RegisterTransferJSONRequestBody{Asset: "SOL",
		Direction: apiclient.RegisterTransferJSONBodyDirectionSent, Network: apiclient.RegisterTransferJSONBodyNetworkSolana, TransferReference: solSig + ":" + solAddr})
	tr := decoded(t, "register transfer", err, r11.HTTPResponse, r11.Body, r11.JSON200)
	wid, err := uuidOf(w.ExternalId)
	require.NoError(t, err)
	rs, err := c.WithdrawalSummaryWithResponse(ctx, wid)
	decoded(t, "withdrawal summary", err, rs.HTTPResponse, rs.Body, rs.JSON200)
	tid, err := uuidOf(tr.ExternalId)
	require.NoError(t, err)
	rt, err := c.TransferSummaryWithResponse(ctx, tid)
	decoded(t, "transfer summary", err, rt.HTTPResponse, rt.Body, rt.JSON200)

	// 12. A job and its stream (read to its end: the terminal message).
	tokens := []string{genTokA}
	rj, err := c.CalculatePnlWithResponse(ctx, apiclient.CalculatePnlParamsChainBsc, genW1, apiclient.CalculatePnlJSONRequestBody{TokenAddresses: &tokens})
	job := decoded(t, "calculate-pnl", err, rj.HTTPResponse, rj.Body, rj.JSON200)
	r12, err := c.StreamJobWithResponse(ctx, job.JobId, nil)
	require.NoError(t, err)
	require.Equal(t, 200, r12.StatusCode(), "%s", r12.Body)
	require.True(t, strings.HasPrefix(r12.HTTPResponse.Header.Get("Content-Type"), "text/event-stream"))
	require.Contains(t, string(r12.Body), `"status":"completed"`)
	rg, err := c.GetJobWithResponse(ctx, job.JobId)
	require.Equal(t, apiclient.JobStateCompleted, decoded(t, "job", err, rg.HTTPResponse, rg.Body, rg.JSON200).State)

	// 13–14. A webhook endpoint: create, update, get.
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	t.Cleanup(rcv.Close)
	channels := []apiclient.CreateWebhookEndpointJSONBodyChannels{apiclient.CreateWebhookEndpointJSONBodyChannelsSolTokenCreated}
	rc, err := c.CreateWebhookEndpointWithResponse(ctx, apiclient.CreateWebhookEndpointJSONRequestBody{Url: rcv.URL, Channels: &channels})
	ep := decoded(t, "create endpoint", err, rc.HTTPResponse, rc.Body, rc.JSON200)
	desc := "generated client"
	r13, err := c.UpdateWebhookEndpointWithResponse(ctx, apiclient.UpdateWebhookEndpointJSONRequestBody{EndpointId: ep.Id, Description: &desc})
	require.Equal(t, &desc, decoded(t, "update endpoint", err, r13.HTTPResponse, r13.Body, r13.JSON200).Description)
	r14, err := c.GetWebhookEndpointWithResponse(ctx, ep.Id)
	got := decoded(t, "get endpoint", err, r14.HTTPResponse, r14.Body, r14.JSON200)
	require.Equal(t, &desc, got.Description)
	require.Equal(t, rcv.URL, got.Url)
}

// uuidOf is an externalId as the generated client's path parameter type.
func uuidOf(s string) (openapitypes.UUID, error) {
	var id openapitypes.UUID
	err := id.UnmarshalText([]byte(s))
	return id, err
}
