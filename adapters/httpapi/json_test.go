package httpapi

import (
	"bytes"
	"encoding/json"
	"math/big"
	mathrand "math/rand"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"

	"github.com/tokenscope/tokenscope/app/market"
	"github.com/tokenscope/tokenscope/domain/page"
	"github.com/tokenscope/tokenscope/domain/pool"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/domain/trade"
)

// reference is what encodeJSON (c.JSON) writes for v: encoding/json without
// HTML escaping and without the trailing newline.
func reference(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(v))
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// awkwardStrings are the texts whose encoding differs between careless encoders.
var awkwardStrings = []string{
	"", "plain", "EKpQGSJtjMFqKZ9KQanSqYXRcF8fBopzLHYxdM65zcjm", `quote " and backslash \`, "<script>&amp;</script>",
	"tab\tnew\nline\rcr", "\b\f\x00\x01\x1f\x7f", "ünïcødé 漢字 🚀", "\u2028\u2029 separators", "\xff\xfe invalid",
	"trunc\xe2\x82", "\xed\xa0\x80 surrogate", "https://example.com/a?b=c&d=<e>", "'single'", "/slash/",
}

func randomString(r *rand.Rand) string {
	if r.IntN(4) > 0 {
		return awkwardStrings[r.IntN(len(awkwardStrings))]
	}
	b := make([]byte, r.IntN(12))
	for i := range b {
		b[i] = byte(r.IntN(256))
	}
	return string(b)
}

func randomDecimal(r *rand.Rand) decimal.Decimal {
	switch r.IntN(9) {
	case 0:
		return decimal.Zero
	case 1:
		return decimal.New(0, -int32(r.IntN(20)))
	case 2: // long coefficients (Postgres numeric with many digits)
		digits := make([]byte, 15+r.IntN(30))
		for i := range digits {
			digits[i] = byte('0' + r.IntN(10))
		}
		v, _ := new(big.Int).SetString(string(digits), 10)
		if r.IntN(2) == 0 {
			v.Neg(v)
		}
		return decimal.NewFromBigInt(v, -int32(r.IntN(40))+3)
	case 3: // positive exponents
		return decimal.New(r.Int64N(2_000_000)-1_000_000, int32(r.IntN(25)))
	case 4: // trailing zeros in the coefficient
		return decimal.RequireFromString([]string{"100.00", "0.000100", "-2.50", "1e-30", "-1e-3", "12345678901234567.8900",
			"999999999999999999", "-999999999999999999", "1000000000000000000", "0.1", "-0.000000000000000001"}[r.IntN(11)])
	case 5: // quotients carry DivisionPrecision digits
		return decimal.New(r.Int64N(1_000_000)+1, -int32(r.IntN(9))).Div(decimal.New(r.Int64N(999)+1, 0))
	case 6:
		return decimal.NewFromFloat(r.NormFloat64() * 1e6)
	default:
		c := r.Int64N(1_000_000_000_000_000_000)
		if r.IntN(3) == 0 {
			c = -c
		}
		return decimal.New(c, -int32(r.IntN(24)))
	}
}

var decimalType = reflect.TypeFor[decimal.Decimal]()

// fill sets every field reachable from v to a random value; pointers, slices and maps are nil
// sometimes, so both shapes of each are encoded.
func fill(r *rand.Rand, v reflect.Value) {
	if v.Type() == decimalType {
		v.Set(reflect.ValueOf(randomDecimal(r)))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(randomString(r))
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n := r.Int64() >> (r.IntN(64))
		if r.IntN(2) == 0 {
			n = -n
		}
		if v.OverflowInt(n) {
			n = int64(int32(n))
		}
		v.SetInt(n)
	case reflect.Pointer:
		if r.IntN(3) == 0 {
			v.SetZero()
			return
		}
		p := reflect.New(v.Type().Elem())
		fill(r, p.Elem())
		v.Set(p)
	case reflect.Slice:
		switch r.IntN(5) {
		case 0:
			v.SetZero()
			return
		case 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
			return
		}
		s := reflect.MakeSlice(v.Type(), 1+r.IntN(4), 5)
		for i := range s.Len() {
			fill(r, s.Index(i))
		}
		v.Set(s)
	case reflect.Map:
		if r.IntN(4) == 0 {
			v.SetZero()
			return
		}
		m := reflect.MakeMap(v.Type())
		for range r.IntN(6) {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fill(r, k)
			fill(r, e)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() || v.Type().Field(i).Anonymous {
				fill(r, v.Field(i))
			}
		}
	default:
		panic("fill: unhandled kind " + v.Kind().String())
	}
}

// TestPagesMatchEncodingJSON: the generated encoders of the pages (trades, snapshots, PnL) give,
// for random values, the bytes encoding/json writes for the same DTOs.
func TestPagesMatchEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for i := range 300 {
		var trades page.Page[trade.Trade]
		fill(r, reflect.ValueOf(&trades).Elem())
		require.Equal(t, string(reference(t, toPage(trades, tradeOut))),
			string(toPage(trades, tradeOut).appendJSON(nil)), "trades %d", i)

		var snaps page.Page[pool.Snapshot]
		fill(r, reflect.ValueOf(&snaps).Elem())
		require.Equal(t, string(reference(t, toPage(snaps, snapshotOut))),
			string(toPage(snaps, snapshotOut).appendJSON(nil)), "snapshots %d", i)

		var pnl market.PnLResult
		fill(r, reflect.ValueOf(&pnl).Elem())
		require.Equal(t, string(reference(t, pnlPageOf(pnl))), string(pnlPageOf(pnl).appendJSON(nil)), "pnl %d", i)
	}
}

// randomDetail is a token.Detail with every field random (fill), including the parts fill
// cannot reach: the creator's last launch time, social links, and stats and holder groups
// under their real keys (fill's random keys are kept sometimes, and some windows and groups
// are left out so they read as zeros). One detail in ten is the zero value.
func randomDetail(r *rand.Rand) token.Detail {
	var d token.Detail
	if r.IntN(10) == 0 {
		return d
	}
	fill(r, reflect.ValueOf(&d).Elem())
	if d.DevLastTokenCreatedAt != nil {
		t := randomTime(r)
		d.DevLastTokenCreatedAt = &t
	}
	d.Socials = randomSocials(r)
	if r.IntN(5) > 0 {
		groups := map[token.HolderGroup]token.GroupHolding{}
		for _, g := range token.AllHolderGroups {
			if r.IntN(4) > 0 {
				var h token.GroupHolding
				fill(r, reflect.ValueOf(&h).Elem())
				groups[g] = h
			}
		}
		d.MarketData.Groups = groups
	}
	if r.IntN(5) > 0 {
		stats := map[token.Window]token.PeriodStats{}
		for _, w := range token.AllWindows {
			if r.IntN(4) > 0 {
				var s token.PeriodStats
				fill(r, reflect.ValueOf(&s).Elem())
				stats[w] = s
			}
		}
		d.Stats = stats
	}
	return d
}

// randomTime is a time in a random zone (the record shows it in UTC), with or without
// fractional seconds, sometimes the zero time or outside years 0–9999.
func randomTime(r *rand.Rand) time.Time {
	zone := time.FixedZone("z", (r.IntN(49)-24)*1800)
	switch r.IntN(6) {
	case 0:
		return time.Time{}
	case 1:
		return time.Unix(r.Int64N(1<<40)-1<<39, 0).In(zone) // years about −15000 to 19000
	case 2:
		return time.Unix(r.Int64N(2_000_000_000), int64(r.IntN(1000))*1_000_000).In(zone)
	default:
		return time.Unix(r.Int64N(2_000_000_000), r.Int64N(1_000_000_000)).In(zone)
	}
}

// randomSocials is a set of links under random spec keys (or the reddit alias); NewSocials
// drops blank values, so some keys are left without a link.
func randomSocials(r *rand.Rand) token.Socials {
	if r.IntN(4) == 0 {
		return token.Socials{}
	}
	links := map[string]string{}
	for range r.IntN(len(token.SocialKeys) + 2) {
		k := token.SocialKeys[r.IntN(len(token.SocialKeys))]
		if r.IntN(10) == 0 {
			k = "Reddit"
		}
		if k == "Reddit" || k == token.SocialTheService { // one spelling at a time: NewSocials would keep either
			delete(links, "Reddit")
			delete(links, token.SocialTheService)
		}
		links[k] = randomString(r)
	}
	s, err := token.NewSocials(links)
	if err != nil {
		panic(err)
	}
	return s
}

// TestTokenRecordsMatchEncodingJSON: the token records' generated appendJSON gives, for random
// details, the bytes encoding/json writes for the same DTO (the value types and keyed objects
// through their own appendJSON, whose bytes testdata/golden holds).
func TestTokenRecordsMatchEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	ptr := func(v int64) *int64 { return &v }
	yes := true
	socials, err := token.NewSocials(map[string]string{token.SocialTwitter: "@x", token.SocialTheService: "r/x"})
	require.NoError(t, err)
	fixed := []token.Detail{
		{},
		{Token: token.Token{Creators: []token.Creator{}}, Stats: map[token.Window]token.PeriodStats{}, Pools: []token.PoolLiquidity{},
			MarketData: token.MarketData{Groups: map[token.HolderGroup]token.GroupHolding{}}},
		{Token: token.Token{Address: "A", Chain: "sol", Name: "<b>&", Symbol: `"\`, Description: "ünïcødé 漢字 🚀 <i>&amp;</i>\u2028\x00",
			ImageURL: "https://example.com/a?b=c&d=<e>", DevTotalTokens: ptr(0), CreatedAt: ptr(-1),
			CreatedBlockHeight: ptr(-9223372036854775808), CreatedSlot: ptr(9223372036854775807),
			Creators: []token.Creator{{Address: "c", IsVerified: true, Share: -5}},
			Extra:    token.Extra{MigratedAt: ptr(-1999), EditionNonce: ptr(0), Fungible: &yes}, Socials: socials},
			MarketData: token.MarketData{Holders: decimal.RequireFromString("-123456789012345678901234567890.5"),
				Groups: map[token.HolderGroup]token.GroupHolding{token.Dev: {TotalHolders: decimal.RequireFromString("1e30"),
					TotalHoldings: decimal.New(-1, -30), HoldingsRatio: decimal.New(5, 3)}}},
			Stats: map[token.Window]token.PeriodStats{token.Window24h: {Trades: -7, Buys: 1 << 62, TotalVolumeInUSD: decimal.New(1, 40)}},
			Pools: []token.PoolLiquidity{{ProtocolName: "<Raydium & co>", Image: "\xff", TVLInUSD: decimal.New(-5, -3)}}},
	}
	check := func(t *testing.T, d token.Detail, name string) {
		t.Helper()
		v2 := tokenV2Out(&d)
		got := string(v2.appendJSON(nil))
		require.Equal(t, string(reference(t, v2)), got, "tokenV2 %s", name)
		fast := tokenFastOut(&d)
		got = string(fast.appendJSON(nil))
		require.Equal(t, string(reference(t, fast)), got, "tokenFast %s", name)
		for _, ch := range []string{"sol", "ethereum", randomString(r)} {
			multi := multiTokenOut(&d, ch)
			got = string(multi.appendJSON(nil))
			require.Equal(t, string(reference(t, multi)), got, "multiToken %s %q", name, ch)
		}
	}
	for i, d := range fixed {
		check(t, d, "fixed "+strconv.Itoa(i))
	}
	for i := range 2000 {
		check(t, randomDetail(r), "random "+strconv.Itoa(i))
	}
}

// TestTokenListsMatchEncodingJSON: the lists and pages of token records give the bytes c.JSON
// gives for the DTOs: a bare array (never null) for ranking and multi-detail, toPage for search.
func TestTokenListsMatchEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	for i := range 300 {
		var ds []token.Detail
		switch r.IntN(4) {
		case 0: // nil
		case 1:
			ds = []token.Detail{}
		default:
			ds = make([]token.Detail, 1+r.IntN(4))
			for j := range ds {
				ds[j] = randomDetail(r)
			}
		}
		v2 := make([]tokenV2DTO, len(ds))
		multi := make([]multiTokenDTO, len(ds))
		for j := range ds {
			v2[j], multi[j] = tokenV2Out(&ds[j]), multiTokenOut(&ds[j], "sol")
		}
		require.Equal(t, string(reference(t, v2)), string(encodeTokenV2List(nil, ds)), "v2 list %d", i)
		require.Equal(t, string(reference(t, multi)), string(encodeMultiTokenList(nil, ds, "sol")), "multi list %d", i)

		var pg page.Page[token.Detail]
		fill(r, reflect.ValueOf(&pg).Elem()) // cursors, flags and, sometimes nil, items
		pg.Items = ds
		v2Page := toPage(pg, func(d token.Detail) tokenV2DTO { return tokenV2Out(&d) })
		require.Equal(t, string(reference(t, v2Page)), string(v2Page.appendJSON(nil)), "v2 page %d", i)
		fastPage := toPage(pg, func(d token.Detail) tokenFastDTO { return tokenFastOut(&d) })
		require.Equal(t, string(reference(t, fastPage)), string(fastPage.appendJSON(nil)), "fast page %d", i)
	}
}

// TestTokenListResponseMatchesCJSON: what the ranking handler now sends is the body and headers
// c.JSON sent.
func TestTokenListResponseMatchesCJSON(t *testing.T) {
	app := fiber.New(fiber.Config{JSONEncoder: encodeJSON})
	r := rand.New(rand.NewPCG(19, 20))
	ds := []token.Detail{randomDetail(r), randomDetail(r), randomDetail(r)}
	out := make([]tokenV2DTO, len(ds))
	for i := range ds {
		out[i] = tokenV2Out(&ds[i])
	}
	before := app.AcquireCtx(&fasthttp.RequestCtx{})
	defer app.ReleaseCtx(before)
	require.NoError(t, before.JSON(out))
	after := app.AcquireCtx(&fasthttp.RequestCtx{})
	defer app.ReleaseCtx(after)
	after.Response().SetBodyString("stale")
	require.NoError(t, sendBody(after, func(b []byte) []byte { return encodeTokenV2List(b, ds) }))
	assert.Equal(t, string(before.Response().Body()), string(after.Response().Body()))
	assert.Equal(t, before.Response().Header.String(), after.Response().Header.String())
	assert.Equal(t, fiber.MIMEApplicationJSON, string(after.Response().Header.ContentType()))
}

func TestOtherValuesGoThroughEncodingJSON(t *testing.T) {
	for _, v := range []any{
		fiber.Map{"message": "send Authorization: Bearer <key> & retry", "n": 1},
		pageDTO[tokenFastDTO]{Data: []tokenFastDTO{{Name: "<b>"}}},
		pageDTO[tradeDTO]{Data: []tradeDTO{{TokenName: "<b>"}}},
		ErrorBody{Details: map[string]any{"parameter": "q", "value": "\u2028"}},
	} {
		got, err := encodeJSON(v)
		require.NoError(t, err)
		assert.Equal(t, string(reference(t, v)), string(got))
	}
	_, err := encodeJSON(map[string]any{"bad": make(chan int)})
	require.Error(t, err)
}

func TestAppendDecimalMatchesMarshalJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		d := randomDecimal(r)
		want, err := d.MarshalJSON()
		require.NoError(t, err)
		require.Equal(t, string(want), string(appendDecimal(nil, d)), "coefficient %s exponent %d", d.Coefficient(), d.Exponent())
	}
	assert.Equal(t, `x"-0.005"`, string(appendDecimal([]byte("x"), decimal.New(-5, -3))))
	assert.Equal(t, `"1500"`, string(appendDecimal(nil, decimal.New(15, 2))))
	assert.Equal(t, `"12"`, string(appendDecimal(nil, decimal.RequireFromString("12.000"))))
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	var all strings.Builder
	for c := range 256 {
		all.WriteByte(byte(c))
	}
	for _, s := range append(awkwardStrings, all.String(), strings.Repeat("é\u2029\x00", 40)) {
		assert.Equal(t, string(reference(t, s)), string(appendString(nil, s)), "%q", s)
	}
	// Every awkward byte at every offset of 8-byte blocks, for the word-at-a-time scan.
	var specials []string
	for c := range 0x20 {
		specials = append(specials, string(rune(c)))
	}
	specials = append(specials, `"`, `\`, "\x7f", "\x80", "\xff", "\u2028", "é", "🚀", " ", "~")
	for _, sp := range specials {
		for n := range 20 {
			for k := 0; k <= n; k++ {
				s := strings.Repeat("a", k) + sp + strings.Repeat("b", n-k)
				require.Equal(t, string(reference(t, s)), string(appendString(nil, s)), "%q", s)
			}
		}
	}
	r := rand.New(rand.NewPCG(5, 6))
	for range 5000 {
		s := randomString(r) + randomString(r)
		require.Equal(t, string(reference(t, s)), string(appendString(nil, s)), "%q", s)
	}
}

// TestSendJSONReplacesTheBody: sendJSON leaves exactly what it wrote, with c.JSON's content
// type, whatever body the response had.
func TestSendJSONReplacesTheBody(t *testing.T) {
	app := fiber.New(fiber.Config{JSONEncoder: encodeJSON})
	r := rand.New(rand.NewPCG(7, 8))
	for _, stale := range []string{"", "stale body", strings.Repeat("x", 64<<10)} {
		var trades page.Page[trade.Trade]
		fill(r, reflect.ValueOf(&trades).Elem())
		c := app.AcquireCtx(&fasthttp.RequestCtx{})
		c.Response().SetBodyString(stale)
		require.NoError(t, sendJSON(c, toPage(trades, tradeOut)))
		assert.Equal(t, string(reference(t, toPage(trades, tradeOut))), string(c.Response().Body()))
		assert.Equal(t, fiber.MIMEApplicationJSON, string(c.Response().Header.ContentType()))
		app.ReleaseCtx(c)
	}
}

func TestAppendMagnitude(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	limits := []*big.Int{big.NewInt(0), big.NewInt(1), new(big.Int).Lsh(big.NewInt(1), 64), new(big.Int).Lsh(big.NewInt(1), 128)}
	for _, l := range limits[1:] {
		limits = append(limits, new(big.Int).Sub(l, big.NewInt(1)), new(big.Int).Add(l, big.NewInt(1)))
	}
	e38 := new(big.Int).Exp(big.NewInt(10), big.NewInt(38), nil)
	limits = append(limits, e38, new(big.Int).Sub(e38, big.NewInt(1)), new(big.Int).Mul(new(big.Int).SetUint64(10_000_000_000_000_000_000), new(big.Int).Lsh(big.NewInt(1), 64)))
	for range 5000 {
		limits = append(limits, new(big.Int).Rand(mathrand.New(randSource{r}), new(big.Int).Lsh(big.NewInt(1), uint(1+r.IntN(200)))))
	}
	for _, v := range limits {
		for _, sign := range []int64{1, -1} {
			c := new(big.Int).Mul(v, big.NewInt(sign))
			want := new(big.Int).Abs(c).String()
			require.Equal(t, want, string(appendMagnitude(nil, new(big.Int).Set(c))))
		}
	}
}

// randSource adapts math/rand/v2 to the math/rand source big.Int.Rand takes.
type randSource struct{ r *rand.Rand }

func (s randSource) Int63() int64 { return s.r.Int64() }
func (s randSource) Seed(int64)   {}

// MarshalJSON, for encoding/json in these tests and the drop-in candidates of BenchmarkEncode,
// is the value's own appendJSON.
func (s nullString) MarshalJSON() ([]byte, error)     { return s.appendJSON(nil), nil }
func (n nullInt) MarshalJSON() ([]byte, error)        { return n.appendJSON(nil), nil }
func (u utcTime) MarshalJSON() ([]byte, error)        { return u.appendJSON(nil), nil }
func (l creatorList) MarshalJSON() ([]byte, error)    { return l.appendJSON(nil), nil }
func (l liquidityList) MarshalJSON() ([]byte, error)  { return l.appendJSON(nil), nil }
func (v socialsDTO) MarshalJSON() ([]byte, error)     { return v.appendJSON(nil), nil }
func (v marketDataDTO) MarshalJSON() ([]byte, error)  { return v.appendJSON(nil), nil }
func (v periodsDTO) MarshalJSON() ([]byte, error)     { return v.appendJSON(nil), nil }
func (v multiStatsDTO) MarshalJSON() ([]byte, error)  { return v.appendJSON(nil), nil }
func (v multiMarketDTO) MarshalJSON() ([]byte, error) { return v.appendJSON(nil), nil }
