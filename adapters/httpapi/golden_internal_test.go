package httpapi

import (
	"bytes"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/app/market"
	"github.com/tokenscope/tokenscope/domain/ohlcv"
	"github.com/tokenscope/tokenscope/domain/page"
	"github.com/tokenscope/tokenscope/domain/pool"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/domain/trade"
)

// updateGolden rewrites the golden files from the current encoders instead of comparing:
//
//	go test -run Golden ./adapters/httpapi/ -update
var updateGolden = flag.Bool("update", false, "rewrite testdata/golden from the current encoders")

// checkGolden compares got with testdata/golden/name, or writes it there under -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *updateGolden {
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	if !bytes.Equal(want, got) {
		i := 0
		for i < len(want) && i < len(got) && want[i] == got[i] {
			i++
		}
		lo := max(0, i-120)
		t.Fatalf("%s: the encoding differs from the golden bytes at byte %d:\nwant …%s\n got …%s", name, i,
			want[lo:min(len(want), i+120)], got[lo:min(len(got), i+120)])
	}
}

// TestGoldenEncodings: the response bodies of the read routes, for values of every shape (fill:
// nulls, empty and nil slices, unicode, invalid UTF-8, HTML-special characters, decimals of every
// scale), are byte for byte those of testdata/golden, which the hand-written encoders this
// package had before wrote (encoding/json's bytes with HTML escaping off). Each file is one
// response body per line.
func TestGoldenEncodings(t *testing.T) {
	ops := []struct {
		name string
		n    int
		body func(r *rand.Rand) []byte
	}{
		{"trades.jsonl", 40, func(r *rand.Rand) []byte {
			var p page.Page[trade.Trade]
			fill(r, reflect.ValueOf(&p).Elem())
			return toPage(p, tradeOut).appendJSON(nil)
		}},
		{"snapshots.jsonl", 40, func(r *rand.Rand) []byte {
			var p page.Page[pool.Snapshot]
			fill(r, reflect.ValueOf(&p).Elem())
			return toPage(p, snapshotOut).appendJSON(nil)
		}},
		{"pnl.jsonl", 40, func(r *rand.Rand) []byte {
			var p market.PnLResult
			fill(r, reflect.ValueOf(&p).Elem())
			return pnlPageOf(p).appendJSON(nil)
		}},
		{"candles.jsonl", 40, func(r *rand.Rand) []byte {
			var list []ohlcv.Candle
			fill(r, reflect.ValueOf(&list).Elem())
			return encodeCandles(nil, list)
		}},
		{"token-v2-list.jsonl", 12, func(r *rand.Rand) []byte { return encodeTokenV2List(nil, randomDetails(r)) }},
		{"token-multi-list.jsonl", 12, func(r *rand.Rand) []byte {
			ds := randomDetails(r)
			return encodeMultiTokenList(nil, ds, []string{"sol", "ethereum", randomString(r)}[r.IntN(3)])
		}},
		{"token-v2-page.jsonl", 12, func(r *rand.Rand) []byte { return tokenV2Page(randomDetailPage(r)).appendJSON(nil) }},
		{"token-fast-page.jsonl", 12, func(r *rand.Rand) []byte { return tokenFastPage(randomDetailPage(r)).appendJSON(nil) }},
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			var all []byte
			r := rand.New(rand.NewPCG(41, 42))
			for range op.n {
				all = append(all, op.body(r)...)
				all = append(all, '\n')
			}
			checkGolden(t, op.name, all)
		})
	}
}

// randomDetails is a list of up to four random details, sometimes nil or empty.
func randomDetails(r *rand.Rand) []token.Detail {
	switch r.IntN(6) {
	case 0:
		return nil
	case 1:
		return []token.Detail{}
	}
	ds := make([]token.Detail, 1+r.IntN(4))
	for i := range ds {
		ds[i] = randomDetail(r)
	}
	return ds
}

// randomDetailPage is a page of randomDetails with random cursors and flags.
func randomDetailPage(r *rand.Rand) page.Page[token.Detail] {
	var p page.Page[token.Detail]
	fill(r, reflect.ValueOf(&p).Elem())
	p.Items = randomDetails(r)
	return p
}
