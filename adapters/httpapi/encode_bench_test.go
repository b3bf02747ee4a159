package httpapi

import (
	"bytes"
	stdjson "encoding/json"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/app/market"
	"github.com/tokenscope/tokenscope/domain/page"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/domain/trade"
)

// BenchmarkEncode compares JSON encoders on the three hot payloads: the ranking's 100 v2 token
// records, a page of 20 trades and a PnL page of 10 tokens with its summary. Each iteration
// builds the payload's DTOs from the domain values and encodes them into a reused buffer, as a
// handler does.
//
//	go test -run XXX -bench 'BenchmarkEncode$' -benchmem -count 6 ./adapters/httpapi/
//
// Candidates, each checked to write the bytes the API sends before it is timed:
//
//	generated           the chosen one: the generated encoders (dto_json_gen.go)
//	encoding-json       encoding/json as c.JSON uses it (SetEscapeHTML(false))
//
// and, with `make bench-encoders` only, the encoders that were measured against them
// (encode_candidates_bench_test.go; they are not requirements of the module):
//
//	go-json-experiment  encoding/json v2 at its fastest
//	goccy, sonic,       the faster drop-ins, configured like encoding-json (no HTML escaping,
//	jsoniter            sorted map keys)
//
// The drop-ins call MarshalJSON for decimals (shopspring's) and for the token records' value
// types and keyed objects (json_test.go: their own appendJSON, the cheapest they can have).
// easyjson is not a candidate: its writers escape \b and \f as \u0008 and \u000c, not as
// encoding/json does.
func BenchmarkEncode(b *testing.B) {
	details, trades, pnl := benchDetails(100), benchTrades(), benchPnL(10)
	payloads := []struct {
		name      string
		build     func() any            // the DTOs, for the reflecting encoders
		generated func(b []byte) []byte // the chosen encoding
	}{
		{"tokens-100", func() any {
			out := make([]tokenV2DTO, len(details))
			for i := range details {
				out[i] = tokenV2Out(&details[i])
			}
			return out
		}, func(b []byte) []byte { return encodeTokenV2List(b, details) }},
		{"trades-20", func() any { return toPage(trades, tradeOut) },
			func(b []byte) []byte { return toPage(trades, tradeOut).appendJSON(b) }},
		{"pnl-10", func() any { return pnlPageOf(pnl) },
			func(b []byte) []byte { return pnlPageOf(pnl).appendJSON(b) }},
	}
	for _, p := range payloads {
		want := p.generated(nil)
		run := func(name string, encode func(b []byte) []byte) {
			b.Run(p.name+"/"+name, func(b *testing.B) {
				if got := encode(nil); !bytes.Equal(got, want) {
					b.Fatalf("%s wrote other bytes:\n%.300s\n%.300s", name, got, want)
				}
				buf := make([]byte, 0, len(want))
				b.SetBytes(int64(len(want)))
				b.ReportAllocs()
				for b.Loop() {
					buf = encode(buf[:0])
				}
			})
		}
		if base, ok := baselineEncoders[p.name]; ok {
			run("appenders", base)
		}
		run("generated", p.generated)
		for _, c := range encoderCandidates {
			run(c.name, func(b []byte) []byte { return c.encode(b, p.build()) })
		}
	}
}

// encoderCandidate is an encoder of any value, appending to b.
type encoderCandidate struct {
	name   string
	encode func(b []byte, v any) []byte
}

// encoderCandidates are the encoders BenchmarkEncode times beside the generated ones;
// encode_candidates_bench_test.go adds those outside the standard library.
var encoderCandidates = []encoderCandidate{
	{"encoding-json", func(b []byte, v any) []byte {
		buf := bytes.NewBuffer(b)
		enc := stdjson.NewEncoder(buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			panic(err)
		}
		return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	}},
}

// baselineEncoders are other encoders of the payloads by name, measured beside the candidates
// (the hand-written appenders this package had, while both existed).
var baselineEncoders = map[string]func(b []byte) []byte{}

// benchTrades is a page of 20 trades with realistic text (ASCII addresses and URLs) and decimals.
func benchTrades() page.Page[trade.Trade] {
	r := rand.New(rand.NewPCG(11, 12))
	p := page.Page[trade.Trade]{Items: make([]trade.Trade, 20), StartCursor: new(string), EndCursor: new(string), HasNext: true}
	for i := range p.Items {
		t := &p.Items[i]
		fill(r, reflect.ValueOf(t).Elem())
		for _, s := range []*string{&t.Wallet, &t.PoolAddress, &t.TokenAddress, &t.SideTokenAddress, &t.DexProgramAddress} {
			*s = "EKpQGSJtjMFqKZ9KQanSqYXRcF8fBopzLHYxdM65zcjm"
		}
		t.TransactionSignature = strings.Repeat("5VfYmGC8Y2", 8) + "abcdefgh"
		t.TokenImageURL, t.SideTokenImageURL, t.DexImage = "https://bafkreibk3covs5ltyqxa272uodhculbr6kea6betidfwy3ajsav2vjzyum.ipfs.nftstorage.link",
			"https://raw.githubusercontent.com/solana-labs/token-list/main/assets/mainnet/So11111111111111111111111111111111111111112/logo.png",
			"https://dd.dexscreener.com/ds-data/dexes/raydium.png"
		t.TokenName, t.TokenSymbol, t.SideTokenName, t.SideTokenSymbol = "dogwifhat", "$WIF", "Wrapped SOL", "SOL"
		t.Chain, t.Status, t.Side, t.DexProtocolFamily = "sol", trade.Succeeded, trade.Buy, "Raydium"
	}
	return p
}

// benchPnL is a PnL page of n realistic entries and its summary.
func benchPnL(n int) market.PnLResult {
	r := rand.New(rand.NewPCG(23, 24))
	var res market.PnLResult
	realistic(r, reflect.ValueOf(&res.Summary).Elem())
	res.Page.Items = make([]market.PnLEntry, n)
	for i := range res.Page.Items {
		realistic(r, reflect.ValueOf(&res.Page.Items[i]).Elem())
	}
	return res
}

// benchDetails is n token details with realistic values: ASCII addresses and URLs, decimals of
// up to 12 integer and 12 fractional digits, every window's stats and every holder group, a few
// social links; the shape fixture_test.go serves the handler benchmarks.
func benchDetails(n int) []token.Detail {
	r := rand.New(rand.NewPCG(21, 22))
	ds := make([]token.Detail, n)
	for i := range ds {
		d := &ds[i]
		realistic(r, reflect.ValueOf(d).Elem())
		t := time.UnixMilli(1_716_000_000_000 + r.Int64N(1e10))
		d.DevLastTokenCreatedAt = &t
		d.Chain, d.Name, d.Symbol = "sol", "Token "+strconv.Itoa(i), "TK"+strconv.Itoa(i)
		d.Socials = token.Socials{}
		if i%4 != 0 {
			s, err := token.NewSocials(map[string]string{token.SocialTwitter: "https://x.com/tk" + strconv.Itoa(i),
				token.SocialWebsite: "https://tk" + strconv.Itoa(i) + ".fun", token.SocialTelegram: "https://t.me/tk" + strconv.Itoa(i)})
			if err != nil {
				panic(err)
			}
			d.Socials = s
		}
		d.MarketData.Groups = map[token.HolderGroup]token.GroupHolding{}
		for _, g := range token.AllHolderGroups {
			var h token.GroupHolding
			realistic(r, reflect.ValueOf(&h).Elem())
			d.MarketData.Groups[g] = h
		}
		d.Stats = map[token.Window]token.PeriodStats{}
		for _, w := range token.AllWindows {
			var s token.PeriodStats
			realistic(r, reflect.ValueOf(&s).Elem())
			d.Stats[w] = s
		}
	}
	return ds
}

// realistic is fill with production-like values: base58 addresses or URLs for text, amounts
// for decimals, small non-negative integers, pointers set, one or two items in slices; maps
// are left nil (benchDetails sets those it needs).
func realistic(r *rand.Rand, v reflect.Value) {
	if v.Type() == decimalType {
		v.Set(reflect.ValueOf(decimal.New(r.Int64N(1_000_000_000_000), -int32(r.IntN(13)))))
		return
	}
	switch v.Kind() {
	case reflect.String:
		if r.IntN(3) == 0 {
			v.SetString("https://ipfs.io/ipfs/bafkreibk3covs5ltyqxa272uodhculbr6kea6betidfwy3ajsav2vjzyum")
		} else {
			v.SetString("EKpQGSJtjMFqKZ9KQanSqYXRcF8fBopzLHYxdM65zcjm")
		}
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Int32, reflect.Int64:
		v.SetInt(r.Int64N(1_000_000))
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		realistic(r, p.Elem())
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1+r.IntN(2), 2)
		for i := range s.Len() {
			realistic(r, s.Index(i))
		}
		v.Set(s)
	case reflect.Map:
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				realistic(r, v.Field(i))
			}
		}
	default:
		panic("realistic: unhandled kind " + v.Kind().String())
	}
}
