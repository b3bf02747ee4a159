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

	"github.com/bytedance/sonic"
	"github.com/go-json-experiment/json"
	gojson "github.com/goccy/go-json"
	jsoniter "github.com/json-iterator/go"
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
//	go test -run XXX -bench Encode -benchmem -count 6 ./adapters/httpapi/
//
// Candidates, each writing the bytes the API sends (checked before timing):
//
//	go-json-experiment  the chosen one (encode.go): jsonOptions, decimals by appendDecimal, the
//	                    keyed objects and value types through their MarshalJSONTo
//	encoding-json       encoding/json as c.JSON used it (SetEscapeHTML(false)), decimals by
//	                    their MarshalJSON
//	goccy, sonic,       the faster drop-ins, configured like encoding-json (no HTML escaping,
//	jsoniter            sorted map keys), decimals by their MarshalJSON
//
// The drop-ins know only MarshalJSON, so the token records' value types and keyed objects are
// given one here that encodes them with the chosen encoder (marshalJSONVia). easyjson is not a
// candidate: its generated writers escape \b and \f as \u0008 and \u000c, not as encoding/json
// does, and it needs a generator step on every DTO change.
func BenchmarkEncode(b *testing.B) {
	details, trades, pnl := benchDetails(100), benchTrades(), benchPnL(10)
	payloads := []struct {
		name  string
		build func() any
	}{
		{"tokens-100", func() any { return tokenV2List(details) }},
		{"trades-20", func() any { return toPage(trades, tradeOut) }},
		{"pnl-10", func() any { return pnlPageOf(pnl) }},
	}
	sonicAPI := sonic.Config{SortMapKeys: true, ValidateString: true, NoEncoderNewline: true}.Froze()
	iterAPI := jsoniter.Config{SortMapKeys: true, ValidateJsonRawMessage: true}.Froze()
	candidates := []struct {
		name   string
		encode func(b []byte, v any) []byte
	}{
		{"go-json-experiment", mustAppendJSON},
		{"encoding-json", func(b []byte, v any) []byte {
			buf := bytes.NewBuffer(b)
			enc := stdjson.NewEncoder(buf)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(v); err != nil {
				panic(err)
			}
			return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		}},
		{"goccy", func(b []byte, v any) []byte {
			out, err := gojson.MarshalNoEscape(v)
			if err != nil {
				panic(err)
			}
			return append(b, out...)
		}},
		{"sonic", func(b []byte, v any) []byte {
			out, err := sonicAPI.Marshal(v)
			if err != nil {
				panic(err)
			}
			return append(b, out...)
		}},
		{"jsoniter", func(b []byte, v any) []byte {
			out, err := iterAPI.Marshal(v)
			if err != nil {
				panic(err)
			}
			return append(b, out...)
		}},
	}
	for _, p := range payloads {
		want := mustAppendJSON(nil, p.build())
		if base, ok := baselineEncoders[p.name]; ok {
			b.Run(p.name+"/appenders", func(b *testing.B) {
				if got := base(nil); !bytes.Equal(got, want) {
					b.Fatalf("appenders wrote other bytes")
				}
				buf := make([]byte, 0, len(want))
				b.SetBytes(int64(len(want)))
				b.ReportAllocs()
				for b.Loop() {
					buf = base(buf[:0])
				}
			})
		}
		for _, c := range candidates {
			b.Run(p.name+"/"+c.name, func(b *testing.B) {
				if got := c.encode(nil, p.build()); !bytes.Equal(got, want) {
					b.Fatalf("%s wrote other bytes:\n%.300s\n%.300s", c.name, got, want)
				}
				buf := make([]byte, 0, len(want))
				b.SetBytes(int64(len(want)))
				b.ReportAllocs()
				for b.Loop() {
					buf = c.encode(buf[:0], p.build())
				}
			})
		}
	}
}

// baselineEncoders are other encoders of the payloads by name, measured beside the candidates
// (the hand-written appenders this package had, while both existed).
var baselineEncoders = map[string]func(b []byte) []byte{}

// marshalJSONVia is the MarshalJSON the drop-in candidates call on the token records' value
// types and keyed objects: v encoded by the chosen encoder.
func marshalJSONVia(v any) ([]byte, error) { return json.Marshal(v, jsonOptions) }

func (s nullString) MarshalJSON() ([]byte, error)      { return marshalJSONVia(s) }
func (n nullInt) MarshalJSON() ([]byte, error)         { return marshalJSONVia(n) }
func (u utcTime) MarshalJSON() ([]byte, error)         { return marshalJSONVia(u) }
func (l creatorList) MarshalJSON() ([]byte, error)     { return marshalJSONVia(l) }
func (l liquidityList) MarshalJSON() ([]byte, error)   { return marshalJSONVia(l) }
func (v socialsView) MarshalJSON() ([]byte, error)     { return marshalJSONVia(v) }
func (v marketDataV2) MarshalJSON() ([]byte, error)    { return marshalJSONVia(v) }
func (v periodsV2) MarshalJSON() ([]byte, error)       { return marshalJSONVia(v) }
func (v multiStats) MarshalJSON() ([]byte, error)      { return marshalJSONVia(v) }
func (v multiMarketData) MarshalJSON() ([]byte, error) { return marshalJSONVia(v) }

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
