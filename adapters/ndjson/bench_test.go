package ndjson_test

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"testing"

	"github.com/tokenscope/tokenscope/adapters/ndjson"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/domain/token"
)

// benchEvents is an import-shaped mix: mostly trades, some tokens and labels.
func benchEvents() []chainevent.Event {
	var events []chainevent.Event
	for i := 0; i < 1000; i++ {
		tr := sampleTrade()
		tr.TransactionSignature = "sig" + strconv.Itoa(i)
		events = append(events, chainevent.Trade{Trade: tr})
		if i%20 == 0 {
			events = append(events, chainevent.TokenCreated{Token: token.Token{Address: "t" + strconv.Itoa(i), Chain: chain.Sol,
				Decimals: 6, Name: "Token", Symbol: "TOK", LaunchpadTag: token.PumpFun}, TotalSupply: d("1000000000")},
				chainevent.WalletLabel{Chain: chain.Sol, Wallet: "w" + strconv.Itoa(i), Label: token.Kol})
		}
	}
	return events
}

func BenchmarkDecode(b *testing.B) {
	var buf bytes.Buffer
	enc := ndjson.NewEncoder(&buf)
	for _, e := range benchEvents() {
		if err := enc.Encode(e); err != nil {
			b.Fatal(err)
		}
	}
	in := buf.Bytes()
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		dec := ndjson.NewDecoder(bytes.NewReader(in))
		for {
			if _, err := dec.Next(); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkEncode(b *testing.B) {
	events := benchEvents()
	b.ReportAllocs()
	for b.Loop() {
		enc := ndjson.NewEncoder(io.Discard)
		for _, e := range events {
			if err := enc.Encode(e); err != nil {
				b.Fatal(err)
			}
		}
	}
}
