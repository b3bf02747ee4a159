package main

// End-to-end tests of text the API cannot store: Postgres text and jsonb hold neither NUL nor
// invalid UTF-8, so such input must be refused with a 400 naming the field before it reaches
// Postgres or a workflow. The fuzz walks every string (and member name) of a valid body of
// every JSON route and checks that no substitution gives a 5xx.

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/domain/account"
)

// jsonSite is one string of a JSON document: a value, or (key) the name of an object member.
// path leads from the root through member names (string) and array indexes (int).
type jsonSite struct {
	path []any
	key  bool
}

// parseJSON decodes a template, keeping numbers as written.
func parseJSON(t *testing.T, doc string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v), "template: %s", doc)
	return v
}

// sitesOf lists every string value and member name of v, in a stable order.
func sitesOf(v any, path []any) []jsonSite {
	var out []jsonSite
	switch x := v.(type) {
	case string:
		out = append(out, jsonSite{path: slices.Clone(path)})
	case []any:
		for i, e := range x {
			out = append(out, sitesOf(e, append(path, i))...)
		}
	case map[string]any:
		for _, k := range sortedKeys(x) {
			p := append(slices.Clone(path), k)
			out = append(out, jsonSite{path: p, key: true})
			out = append(out, sitesOf(x[k], p)...)
		}
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func samePath(a, b []any) bool {
	return slices.EqualFunc(a, b, func(x, y any) bool { return x == y })
}

// render writes v as JSON with the string at s replaced by lit, a raw JSON string literal
// (quotes included) that json.Marshal could not produce, such as one with invalid UTF-8.
func render(buf *bytes.Buffer, v any, path []any, s jsonSite, lit string) {
	switch x := v.(type) {
	case string:
		if !s.key && samePath(path, s.path) {
			buf.WriteString(lit)
			return
		}
		b, _ := json.Marshal(x)
		buf.Write(b)
	case []any:
		buf.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			render(buf, e, append(path, i), s, lit)
		}
		buf.WriteByte(']')
	case map[string]any:
		buf.WriteByte('{')
		for i, k := range sortedKeys(x) {
			if i > 0 {
				buf.WriteByte(',')
			}
			p := append(slices.Clone(path), k)
			if s.key && samePath(p, s.path) {
				buf.WriteString(lit)
			} else {
				b, _ := json.Marshal(k)
				buf.Write(b)
			}
			buf.WriteByte(':')
			render(buf, x[k], p, s, lit)
		}
		buf.WriteByte('}')
	default:
		b, _ := json.Marshal(x)
		buf.Write(b)
	}
}

// fieldName renders a path the way the API names a field: members joined with dots, array
// elements as [i].
func fieldName(path []any) string {
	var b strings.Builder
	for _, p := range path {
		switch x := p.(type) {
		case int:
			b.WriteString("[" + strconv.Itoa(x) + "]")
		case string:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(x)
		}
	}
	return b.String()
}

// nulLiteral is the JSON text of a string holding a NUL; nulShown is how errors show it.
const (
	nulLiteral = `"a\u0000b"`
	nulShown   = `a\u0000b`
)

// wantParam is the parameter a 400 must name when the string at s holds a NUL: the field
// itself, or for a member name the object holding it (the name itself at the top level).
func wantParam(s jsonSite) string {
	if !s.key {
		return fieldName(s.path)
	}
	if len(s.path) == 1 {
		return nulShown
	}
	return fieldName(s.path[:len(s.path)-1])
}

// longText is n pseudo-random base58 characters: long and incompressible, so it also tests
// what an index or a TOAST-less column does with it.
func longText(n int) string {
	r := rand.New(rand.NewPCG(3, 5))
	b := make([]byte, n)
	for i := range b {
		b[i] = base58Alphabet[r.IntN(len(base58Alphabet))]
	}
	return string(b)
}

const base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

// jsonRoute is one route that takes a JSON (or NDJSON) body, with a valid body to mutate.
type jsonRoute struct {
	name, method, path string
	template           string
	// key returns the API key to send; a route whose successes accumulate (webhook endpoints,
	// at most 10 per account) gives each request its own account.
	key func(t *testing.T) string
	// ingest marks the NDJSON route: its errors also carry the line.
	ingest bool
}

func textRoutes(t *testing.T, e *env) []jsonRoute {
	t.Helper()
	rcv := newReceiver(t)
	n := 0
	freshWebhookKey := func(t *testing.T) string {
		n++
		return e.keyFor(t, "text-wh-"+strconv.Itoa(n), account.ScopeWebhook)
	}
	patchKey := e.keyFor(t, "text-wh-patch", account.ScopeWebhook)
	epID := createEndpoint(t, e, patchKey, map[string]any{"url": rcv.srv.URL})
	same := func(k string) func(*testing.T) string { return func(*testing.T) string { return k } }
	webhookBody := `"url":"` + rcv.srv.URL + `","description":"desk","channels":["sol.token.created"],
		"filterTypes":["sol.token.created"],"filter":"channel == \"sol.token.created\"","metadata":{"team":"ops"}`
	const (
		mint   = "TxtMint111111111111111111111111111111111111"
		side   = "So11111111111111111111111111111111111111112"
		poolA  = "TxtPool111111111111111111111111111111111111"
		wallet = "TxtWallet11111111111111111111111111111111111"
	)
	ingest := func(name, line string) jsonRoute {
		return jsonRoute{name: "ingest " + name, method: "POST", path: "/v2/ingest", template: line, key: same(e.key), ingest: true}
	}
	return []jsonRoute{
		{name: "kyt withdrawal", method: "POST", path: "/v2/kyt/withdrawal", key: same(e.key),
			template: `{"address":"` + solAddr + `","asset":"SOL","assetAmount":"1.5","attemptTimestamp":"2024-01-15T10:30:00.000Z",
				"network":"Solana","assetDenomination":"USD","assetId":"sol-native","assetPrice":"3","memo":"rent"}`},
		{name: "kyt transfer", method: "POST", path: "/v2/kyt/transfer", key: same(e.key),
			template: `{"asset":"SOL","direction":"sent","network":"Solana","transferReference":"` + solSig + `"}`},
		{name: "webhook create", method: "POST", path: "/v2/webhook/endpoint", key: freshWebhookKey,
			template: `{` + webhookBody + `}`},
		{name: "webhook patch", method: "PATCH", path: "/v2/webhook/endpoint", key: same(patchKey),
			template: `{"endpointId":"` + epID + `",` + webhookBody + `}`},
		{name: "calculate-pnl", method: "POST", path: "/v2/wallet/sol/" + solAddr + "/calculate-pnl", key: same(e.key),
			template: `{"tokenAddresses":["` + mint + `","` + side + `"]}`},
		ingest("token.created", `{"type":"token.created","chain":"sol","address":"`+mint+`","decimals":6,"name":"Text",
			"symbol":"TXT","vendorCoinId":"txt","description":"a token","imageUrl":"https://img.example/t.png","market":"pump",
			"metadataAddress":"TxtMeta","uri":"https://meta.example/t.json","tokenCreatedTxSignature":"TxtSig",
			"tokenCreators":[{"address":"TxtDev","isVerified":true,"share":100}],
			"extra":{"collectionAddress":"TxtColl","freezeAuthority":"TxtFreeze","key":"MetadataV1","mintAuthority":"TxtMintAuth",
				"programAddress":"TxtProg","tokenStandard":"Fungible","updateAuthority":"TxtUpd","launchFromProgramAddress":"TxtLP",
				"launchFromProtocolFamily":"Pump"},
			"socialMedias":{"twitter":"https://x.com/txt"},"launchpadTag":"alpha_fun","totalSupply":"1000000",
			"circulatingSupply":"900000","creator":"TxtDev","curvePool":"`+poolA+`","curveTargetInNative":"85"}`),
		ingest("pool.created", `{"type":"pool.created","chain":"sol","poolAddress":"`+poolA+`","programAddress":"TxtProg",
			"protocolFamily":"Raydium","protocolName":"Raydium AMM","image":"https://img.example/r.png",
			"tokenAAddress":"`+mint+`","tokenADecimals":6,"tokenBAddress":"`+side+`","tokenBDecimals":9,"createdAt":1717000000000}`),
		ingest("wallet.label", `{"type":"wallet.label","chain":"sol","wallet":"`+wallet+`","label":"kol"}`),
		ingest("trade", `{"type":"trade","chain":"sol","transactionSignature":"TxtTradeSig1","instructionIndex":0,
			"blockHeight":100,"blockTimestamp":1717000001000,"accountOwnerAddress":"`+wallet+`","poolAddress":"`+poolA+`",
			"side":"BUY","status":"SUCCEEDED","tokenAddress":"`+mint+`","tokenName":"Text","tokenSymbol":"TXT",
			"tokenImageUrl":"https://img.example/t.png","tokenAmount":"10","tokenAmountInNative":"0.1","tokenAmountInUsd":"15",
			"tokenPriceInNative":"0.01","tokenPriceInUsd":"1.5","sideTokenAddress":"`+side+`","sideTokenName":"Wrapped SOL",
			"sideTokenSymbol":"SOL","sideTokenImageUrl":"https://img.example/s.png","sideTokenAmount":"0.1",
			"sideTokenAmountInNative":"0.1","sideTokenAmountInUsd":"15","sideTokenPriceInNative":"1","sideTokenPriceInUsd":"150",
			"dexImage":"https://img.example/d.png","dexProgramAddress":"TxtProg","dexProtocolFamily":"Raydium"}`),
		ingest("pool.snapshot", `{"type":"pool.snapshot","chain":"sol","poolAddress":"`+poolA+`","blockHeight":100,
			"blockTimestamp":1717000001000,"snapshotTime":1717000001000,
			"tokenA":{"amountInNative":"1","amountInUsd":"150","decimals":6,"priceNative":"0.01","priceUsd":"1.5","tokenAddress":"`+mint+`","vaultAmount":"1000"},
			"tokenB":{"amountInNative":"1","amountInUsd":"150","decimals":9,"priceNative":"1","priceUsd":"150","tokenAddress":"`+side+`","vaultAmount":"2000"},
			"tvlInNative":"2","tvlInUsd":"300"}`),
		ingest("token.migrated", `{"type":"token.migrated","chain":"sol","address":"`+mint+`","migratedToPoolAddress":"`+poolA+`",
			"migratedToProgramAddress":"TxtProg","migratedToProtocolFamily":"Raydium","migratedAt":1717000002000}`),
		ingest("redpacket.created", `{"type":"redpacket.created","id":"TxtRP1","chain":"sol","creator":"TxtDev",
			"claimAuthority":"TxtAuth","mint":"`+mint+`","maxClaims":100,"totalAmount":"1000000","createdAt":1717000000000,
			"expiration":86400,"memo":"gong xi","shareId":"TxtShare","txHash":"TxtRPTx"}`),
		ingest("redpacket.claimed", `{"type":"redpacket.claimed","packetId":"TxtRP1","chain":"sol","claimer":"TxtClaimer",
			"mint":"`+mint+`","creator":"TxtDev","amount":"1","claimedAt":1717000003000,"txHash":"TxtClaimTx"}`),
		ingest("redpacket.expired", `{"type":"redpacket.expired","packetId":"TxtRP1","expiredAt":1717100000000}`),
	}
}

// compact turns a multi-line template into one line (NDJSON needs it; the others do not mind).
func compact(t *testing.T, doc string) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, json.Compact(&b, []byte(doc)))
	return b.String()
}

func details(t *testing.T, r resp) map[string]any {
	t.Helper()
	d, _ := r.Object(t)["details"].(map[string]any)
	return d
}

func TestTextFieldsFuzz(t *testing.T) {
	e := newEnv(t, fastWorkflows)
	routes := textRoutes(t, e)
	// Each substitution is a JSON string literal the decoders may meet.
	others := []struct{ name, lit string }{
		{"invalid UTF-8", "\"\xff\xfe\xfd\""},
		{"lone surrogate", `"\ud800x"`},
		{"long", `"` + longText(100_000) + `"`},
	}
	for _, rt := range routes {
		t.Run(rt.name, func(t *testing.T) {
			tmpl := compact(t, rt.template)
			r := e.do(t, rt.method, rt.path, tmpl, "Authorization", "Bearer "+rt.key(t))
			require.Equal(t, 200, r.Status, "the unmodified template must be accepted: %s", r.Body)
			doc := parseJSON(t, tmpl)
			for _, s := range sitesOf(doc, nil) {
				name := fieldName(s.path)
				if s.key {
					name += " (member name)"
				}
				var buf bytes.Buffer
				render(&buf, doc, nil, s, nulLiteral)
				r := e.do(t, rt.method, rt.path, buf.Bytes(), "Authorization", "Bearer "+rt.key(t))
				if assert.Equal(t, 400, r.Status, "NUL in %s: %s", name, r.Body) {
					d := details(t, r)
					assert.Equal(t, wantParam(s), d["parameter"], "NUL in %s: %s", name, r.Body)
					if rt.ingest {
						assert.Equal(t, json.Number("1"), d["line"], "NUL in %s: %s", name, r.Body)
					}
				}
				for _, o := range others {
					buf.Reset()
					render(&buf, doc, nil, s, o.lit)
					r := e.do(t, rt.method, rt.path, buf.Bytes(), "Authorization", "Bearer "+rt.key(t))
					assert.Less(t, r.Status, 500, "%s in %s: %s", o.name, name, r.Body)
					if r.Status == 400 {
						assert.NotEmpty(t, details(t, r)["parameter"], "%s in %s: a 400 names the field: %s", o.name, name, r.Body)
					}
				}
			}
		})
	}
}

// rawGet sends a GET whose target is written byte for byte (net/http would escape it).
func rawGet(t *testing.T, e *env, target string) resp {
	t.Helper()
	addr := strings.TrimPrefix(e.base, "http://")
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(30*time.Second)))
	_, err = fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nConnection: close\r\n\r\n", target, addr, e.key)
	require.NoError(t, err)
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return resp{Status: res.StatusCode, Header: res.Header, Body: body}
}

func TestTextParamsRefused(t *testing.T) {
	e := newEnv(t, fastWorkflows)

	t.Run("calculate-pnl with a NUL token creates no job", func(t *testing.T) {
		key := e.keyFor(t, "text-pnl", account.ScopeRead)
		r := e.do(t, "POST", "/v2/wallet/sol/"+solAddr+"/calculate-pnl", `{"tokenAddresses":["ok","bad\u0000"]}`,
			"Authorization", "Bearer "+key)
		badRequest(t, r, "tokenAddresses[1]")
		assert.Zero(t, countRows(t, e, `SELECT count(*) FROM jobs WHERE account_id = $1`, "text-pnl"))
	})

	t.Run("query values", func(t *testing.T) {
		for _, tc := range []struct{ path, param string }{
			{"/v2/token/search?q=%00", "q"},
			{"/v2/token/search?q=%ff", "q"},
			{"/v2/trade/sol?tokenAddress=a%00b", "tokenAddress"},
			{"/v2/trade/sol?walletAddress=%ff%fe", "walletAddress"},
			{"/v2/trade/sol?transactionsSignature=a,b%00", "transactionsSignature"},
			{"/v2/redpacket?creator=%00", "creator"},
			{"/v2/wallet/sol/" + solAddr + "/pnl-by-token?tokenAddresses=%c3", "tokenAddresses"},
			{"/v2/ranking/sol/hotTokens/1h?searchKeywords=%00", "searchKeywords"},
			{"/v2/ranking/sol/hotTokens/1h?filters=%ff", "filters"},
			{"/v2/token/sol/multi?tokenAddresses=%00", "tokenAddresses"},
			{"/v2/dexpools/sol/" + solAddr + "/snapshots?time=%00", "time"},
			{"/v2/webhook/endpoint?iterator=%00", "iterator"},
			{"/v2/redpacket/wallet/" + solAddr + "/redpackets?cursor=%ff", "cursor"},
		} {
			t.Run(tc.path, func(t *testing.T) { badRequest(t, e.do(t, "GET", tc.path, nil), tc.param) })
		}
	})

	t.Run("an iterator forged to hold a NUL", func(t *testing.T) {
		it := base64.StdEncoding.EncodeToString([]byte(`{"id":"ep\u0000"}`))
		badRequest(t, e.do(t, "GET", "/v2/webhook/endpoint?iterator="+url.QueryEscape(it), nil), "iterator")
	})

	t.Run("path values", func(t *testing.T) {
		for _, tc := range []struct{ path, param string }{
			{"/v2/webhook/endpoint/ep\xff", "id"},
			{"/v2/webhook/endpoint/ep\xff/attempts", "id"},
			{"/v2/job/job\xff", "id"},
			{"/v2/kyt/withdrawal/x\xff/summary", "externalId"},
			{"/v2/kyt/transfers/x\xff/summary", "externalId"},
			{"/v2/wallet/sol/w\xff/pnl-by-token", "walletAddress"},
			{"/v2/redpacket/rp\xff/claims", "id"},
			{"/v2/trade/s\xffl", "chain"},
		} {
			t.Run(strings.ToValidUTF8(tc.path, "?"), func(t *testing.T) { badRequest(t, rawGet(t, e, tc.path), tc.param) })
		}
		// Escapes in a path are not decoded: %00 is three characters, looked up and not found.
		assert.Equal(t, 404, e.do(t, "GET", "/v2/webhook/endpoint/ep%00", nil).Status)
	})

	t.Run("an API key that is not text is unknown, not a failed lookup", func(t *testing.T) {
		requireErrorBody(t, e.do(t, "GET", "/v2/whoami", nil, "X-API-KEY", "tsk_\xff_AAAAAAAAAAAAAAAAAAAAAAAA"), 401)
	})
}
