package kyt_test

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/kyt"
)

const (
	solAddr = "D1Mc6j9xQWgR1o1Z7yU5nVVXFQiAYx7FG9AW1aVfwrUM" // base58 of 32 bytes
	solSig  = "5rKfmXQyMhz7F2zRE6SpWWx3YkSxtA4gFqZD8CwGRYMx5YLTB8NhbiM9xEHG9jruiWdUyUz7Fpz8jmB8SKcjsLqe"
	btcAddr = "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa" // 25 bytes, version 0x00
	btcTx   = "4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b"
	ethAddr = "0x742d35Cc6634C0532925a3b844Bc454e4438f44e"
	ethTx   = "0x88df016429689c079f3b2f6ad39fa052532c56795b733da78a91ebe6a713944b"
)

func ptr(s string) *string { return &s }

func faultOf(t *testing.T, err error) *fault.Error {
	t.Helper()
	fe, ok := fault.As(err)
	require.True(t, ok, "want *fault.Error, got %v", err)
	return fe
}

func TestParseNetwork(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want kyt.Network
		ok   bool
	}{
		{"Solana", kyt.Solana, true},
		{"bitcoin", kyt.Bitcoin, true},
		{"ethereum", kyt.Ethereum, true},
		{"solana", "", false}, // case-sensitive, as the public API spells it
		{"Bitcoin", "", false},
		{"ETHEREUM", "", false},
		{"", "", false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := kyt.ParseNetwork(tc.in)
			if !tc.ok {
				fe := faultOf(t, err)
				assert.Equal(t, "network", fe.Param)
				assert.Equal(t, []string{"Solana", "bitcoin", "ethereum"}, fe.Allowed)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestParseDirection(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{{"sent", true}, {"received", true}, {"Sent", false}, {"in", false}} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := kyt.ParseDirection(tc.in)
			if tc.ok {
				require.NoError(t, err)
				assert.Equal(t, kyt.Direction(tc.in), got)
				return
			}
			assert.Equal(t, "direction", faultOf(t, err).Param)
		})
	}
}

func TestValidAddressAndHash(t *testing.T) {
	for _, tc := range []struct {
		name string
		net  kyt.Network
		s    string
		addr bool
		hash bool
	}{
		{"solana address", kyt.Solana, solAddr, true, false},
		{"solana signature", kyt.Solana, solSig, false, true},
		{"solana 64 zero bytes", kyt.Solana, "1111111111111111111111111111111111111111111111111111111111111111", false, true},
		{"solana 0 is not base58", kyt.Solana, "0" + solAddr[1:], false, false},
		{"bitcoin p2pkh", kyt.Bitcoin, btcAddr, true, false},
		{"bitcoin bech32", kyt.Bitcoin, "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", true, false},
		{"bitcoin bech32 upper", kyt.Bitcoin, "BC1QAR0SRRR7XFKVY5L643LYDNW9RE59GTZZWF5MDQ", true, false},
		{"bitcoin bech32 mixed case", kyt.Bitcoin, "bc1qAR0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", false, false},
		{"bitcoin bech32 bad char b", kyt.Bitcoin, "bc1qbr0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", false, false},
		{"bitcoin txid", kyt.Bitcoin, btcTx, false, true},
		{"bitcoin txid with 0x", kyt.Bitcoin, "0x" + btcTx, false, false},
		{"solana address on bitcoin (32 bytes)", kyt.Bitcoin, solAddr, false, false},
		{"ethereum address", kyt.Ethereum, ethAddr, true, false},
		{"ethereum address 39 digits", kyt.Ethereum, ethAddr[:41], false, false},
		{"ethereum tx", kyt.Ethereum, ethTx, false, true},
		{"ethereum tx without 0x", kyt.Ethereum, ethTx[2:], false, false},
		{"ethereum non-hex", kyt.Ethereum, "0x742d35Cc6634C0532925a3b844Bc454e4438f44g", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.addr, kyt.ValidAddress(tc.net, tc.s), "address")
			assert.Equal(t, tc.hash, kyt.ValidHash(tc.net, tc.s), "hash")
		})
	}
}

func validWithdrawal() kyt.WithdrawalRequest {
	return kyt.WithdrawalRequest{Address: solAddr, Asset: "SOL", AssetAmount: "5",
		AttemptTimestamp: "2024-01-15T10:30:00.000Z", Network: kyt.Solana}
}

func TestWithdrawalValidate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(r *kyt.WithdrawalRequest)
		param string // "" = valid
		code  int
	}{
		{"valid", func(*kyt.WithdrawalRequest) {}, "", 0},
		{"valid with every optional", func(r *kyt.WithdrawalRequest) {
			r.AssetDenomination, r.AssetID, r.AssetPrice, r.Memo = ptr("USD"), ptr("sol-native"), ptr("0"), ptr("a memo with spaces")
		}, "", 0},
		{"space-separated timestamp", func(r *kyt.WithdrawalRequest) { r.AttemptTimestamp = "2026-01-04 17:25:40.008307" }, "", 0},
		{"space-separated timestamp with zone", func(r *kyt.WithdrawalRequest) { r.AttemptTimestamp = "2021-11-16 18:33:33+00:00" }, "", 0},
		{"missing address", func(r *kyt.WithdrawalRequest) { r.Address = "" }, "address", fault.CodeMissingParameter},
		{"blank asset", func(r *kyt.WithdrawalRequest) { r.Asset = "  " }, "asset", fault.CodeMissingParameter},
		{"missing assetAmount", func(r *kyt.WithdrawalRequest) { r.AssetAmount = "" }, "assetAmount", fault.CodeMissingParameter},
		{"missing attemptTimestamp", func(r *kyt.WithdrawalRequest) { r.AttemptTimestamp = "" }, "attemptTimestamp", fault.CodeMissingParameter},
		{"missing network", func(r *kyt.WithdrawalRequest) { r.Network = "" }, "network", fault.CodeMissingParameter},
		{"unknown network", func(r *kyt.WithdrawalRequest) { r.Network = "tron" }, "network", fault.CodeInvalidParameter},
		{"address of another network", func(r *kyt.WithdrawalRequest) { r.Address = ethAddr }, "address", fault.CodeInvalidParameter},
		{"asset with a space", func(r *kyt.WithdrawalRequest) { r.Asset = "S OL" }, "asset", fault.CodeInvalidParameter},
		{"asset too long", func(r *kyt.WithdrawalRequest) { r.Asset = string(make([]byte, 65)) }, "asset", fault.CodeInvalidParameter},
		{"negative amount", func(r *kyt.WithdrawalRequest) { r.AssetAmount = "-1" }, "assetAmount", fault.CodeInvalidNumber},
		{"zero amount", func(r *kyt.WithdrawalRequest) { r.AssetAmount = "0.000" }, "assetAmount", fault.CodeInvalidNumber},
		{"text amount", func(r *kyt.WithdrawalRequest) { r.AssetAmount = "abc" }, "assetAmount", fault.CodeInvalidNumber},
		{"exponent amount", func(r *kyt.WithdrawalRequest) { r.AssetAmount = "1e3" }, "assetAmount", fault.CodeInvalidNumber},
		{"amount ending in a point", func(r *kyt.WithdrawalRequest) { r.AssetAmount = "5." }, "assetAmount", fault.CodeInvalidNumber},
		{"bad timestamp", func(r *kyt.WithdrawalRequest) { r.AttemptTimestamp = "yesterday" }, "attemptTimestamp", fault.CodeInvalidTimestamp},
		{"date only", func(r *kyt.WithdrawalRequest) { r.AttemptTimestamp = "2024-01-15" }, "attemptTimestamp", fault.CodeInvalidTimestamp},
		{"negative price", func(r *kyt.WithdrawalRequest) { r.AssetPrice = ptr("-3") }, "assetPrice", fault.CodeInvalidNumber},
		{"empty price", func(r *kyt.WithdrawalRequest) { r.AssetPrice = ptr("") }, "assetPrice", fault.CodeInvalidNumber},
		{"denomination with digits", func(r *kyt.WithdrawalRequest) { r.AssetDenomination = ptr("US1") }, "assetDenomination", fault.CodeInvalidParameter},
		{"memo too long", func(r *kyt.WithdrawalRequest) { r.Memo = ptr(string(make([]rune, 257))) }, "memo", fault.CodeInvalidParameter},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := validWithdrawal()
			tc.edit(&r)
			err := r.Validate()
			if tc.param == "" {
				require.NoError(t, err)
				return
			}
			fe := faultOf(t, err)
			assert.Equal(t, fault.KindInvalid, fe.Kind)
			assert.Equal(t, tc.param, fe.Param)
			assert.Equal(t, tc.code, fe.Code)
		})
	}
}

func TestWithdrawalUSDAmount(t *testing.T) {
	usd, price := "USD", "3"
	r := kyt.WithdrawalRequest{Address: solAddr, Asset: "SOL", AssetAmount: "1.000000000000000001",
		AttemptTimestamp: "2024-01-15T10:30:00.000Z", Network: kyt.Solana, AssetDenomination: &usd, AssetPrice: &price}
	require.NoError(t, r.Validate())
	got, ok := r.USDAmount()
	require.True(t, ok)
	// 1.000000000000000001 × 3 = 3.000000000000000003
	assert.Equal(t, "3.000000000000000003", got.String())
}

func TestTransferValidate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		r     kyt.TransferRequest
		param string
	}{
		{"solana received with address", kyt.TransferRequest{"SOL", kyt.Received, kyt.Solana, solSig + ":" + solAddr}, ""},
		{"solana sent without address", kyt.TransferRequest{"SOL", kyt.Sent, kyt.Solana, solSig}, ""},
		{"bitcoin received with vout", kyt.TransferRequest{"BTC", kyt.Received, kyt.Bitcoin, btcTx + ":1"}, ""},
		{"bitcoin received with address", kyt.TransferRequest{"BTC", kyt.Received, kyt.Bitcoin, btcTx + ":" + btcAddr}, ""},
		{"ethereum received", kyt.TransferRequest{"ETH", kyt.Received, kyt.Ethereum, ethTx + ":" + ethAddr}, ""},
		{"received without address", kyt.TransferRequest{"SOL", kyt.Received, kyt.Solana, solSig}, "transferReference"},
		{"wire probe placeholder", kyt.TransferRequest{"SOL", kyt.Received, kyt.Solana, "tx:addr"}, "transferReference"},
		{"ethereum vout is not an address", kyt.TransferRequest{"ETH", kyt.Received, kyt.Ethereum, ethTx + ":1"}, "transferReference"},
		{"hash of another network", kyt.TransferRequest{"BTC", kyt.Sent, kyt.Bitcoin, ethTx}, "transferReference"},
		{"empty suffix", kyt.TransferRequest{"SOL", kyt.Sent, kyt.Solana, solSig + ":"}, "transferReference"},
		{"missing asset", kyt.TransferRequest{"", kyt.Sent, kyt.Solana, solSig}, "asset"},
		{"missing direction", kyt.TransferRequest{"SOL", "", kyt.Solana, solSig}, "direction"},
		{"bad direction", kyt.TransferRequest{"SOL", "out", kyt.Solana, solSig}, "direction"},
		{"missing network", kyt.TransferRequest{"SOL", kyt.Sent, "", solSig}, "network"},
		{"missing reference", kyt.TransferRequest{"SOL", kyt.Sent, kyt.Solana, ""}, "transferReference"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.r.Validate()
			if tc.param == "" {
				require.NoError(t, err)
				return
			}
			assert.Equal(t, tc.param, faultOf(t, err).Param)
		})
	}
	t.Run("hash and counterparty", func(t *testing.T) {
		r := kyt.TransferRequest{"SOL", kyt.Received, kyt.Solana, " " + solSig + ":" + solAddr}
		assert.Equal(t, solSig, r.Hash())
		assert.Equal(t, solAddr, r.Counterparty())
	})
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestFingerprint(t *testing.T) {
	t.Run("transfer canonical encoding", func(t *testing.T) {
		r := kyt.TransferRequest{" sol ", kyt.Received, kyt.Solana, solSig + ":" + solAddr}
		want := sha(`["transfer","SOL","received","Solana","` + solSig + `:` + solAddr + `"]`)
		assert.Equal(t, want, r.Fingerprint())
		assert.Equal(t, "ebef0e1b8dac0d54e1fd4898f6f623429d3ce33b29f3a936eac86b8c19c3642e", r.Fingerprint())
	})
	t.Run("withdrawal canonical encoding", func(t *testing.T) {
		r := kyt.WithdrawalRequest{Address: solAddr, Asset: "SOL", AssetAmount: "1.50",
			AttemptTimestamp: "2026-01-04 17:25:40.008307", Network: kyt.Solana, AssetPrice: ptr("150.250"), Memo: ptr(" ")}
		// 1.50 → 1.5, 150.250 → 150.25, zone-less time read as UTC, blank memo → null
		want := sha(`["withdrawal","` + solAddr + `","SOL","1.5","2026-01-04T17:25:40.008307Z","Solana",null,null,"150.25",null]`)
		assert.Equal(t, want, r.Fingerprint())
	})
	base := kyt.WithdrawalRequest{Address: solAddr, Asset: "SOL", AssetAmount: "1.5", AttemptTimestamp: "2024-01-15T10:30:00Z", Network: kyt.Solana}
	for _, tc := range []struct {
		name string
		edit func(r *kyt.WithdrawalRequest)
		same bool
	}{
		{"trailing zeros", func(r *kyt.WithdrawalRequest) { r.AssetAmount = "1.500" }, true},
		{"same instant, other zone", func(r *kyt.WithdrawalRequest) { r.AttemptTimestamp = "2024-01-15T12:30:00+02:00" }, true},
		{"space form", func(r *kyt.WithdrawalRequest) { r.AttemptTimestamp = "2024-01-15 10:30:00.000" }, true},
		{"lower-case asset", func(r *kyt.WithdrawalRequest) { r.Asset = "sol" }, true},
		{"blank memo", func(r *kyt.WithdrawalRequest) { r.Memo = ptr(" ") }, true},
		{"other amount", func(r *kyt.WithdrawalRequest) { r.AssetAmount = "1.51" }, false},
		{"with memo", func(r *kyt.WithdrawalRequest) { r.Memo = ptr("x") }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			other := base
			tc.edit(&other)
			require.NoError(t, other.Validate())
			assert.Equal(t, tc.same, base.Fingerprint() == other.Fingerprint())
		})
	}
	t.Run("ethereum hex case", func(t *testing.T) {
		a := kyt.TransferRequest{"ETH", kyt.Sent, kyt.Ethereum, ethTx + ":" + ethAddr}
		b := kyt.TransferRequest{"ETH", kyt.Sent, kyt.Ethereum, "0x88DF016429689C079F3B2F6AD39FA052532C56795B733DA78A91EBE6A713944B:0x742d35cc6634c0532925a3b844bc454e4438f44e"}
		assert.Equal(t, a.Fingerprint(), b.Fingerprint())
	})
}

func TestNameUUIDAndExternalID(t *testing.T) {
	// RFC 9562 appendix A.4: v5 of "www.example.com" in the DNS namespace.
	dns := [16]byte{0x6b, 0xa7, 0xb8, 0x10, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8}
	assert.Equal(t, "2ed6657d-e927-568b-95e1-2665a8aea6a2", kyt.NameUUID(dns, "www.example.com"))

	for _, tc := range []struct{ acct, key, want string }{
		// uuid5(3c0e9a57-6d21-4f8b-a41d-52e7903bc618, "6:acct-1key-1"), computed with Python's uuid module
		{"acct-1", "key-1", "1f9fe70f-d726-527b-9d10-b12e4b47f69f"},
	} {
		t.Run(tc.acct+"/"+tc.key, func(t *testing.T) {
			got := kyt.ExternalID(tc.acct, tc.key)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, got, kyt.ExternalID(tc.acct, tc.key), "deterministic")
		})
	}
	t.Run("account and key boundary is unambiguous", func(t *testing.T) {
		assert.NotEqual(t, kyt.ExternalID("ab", "c"), kyt.ExternalID("a", "bc"))
	})
}

func TestUSDAmount(t *testing.T) {
	for _, tc := range []struct{ amount, price, want string }{
		{"0.1", "3", "0.3"}, // exact, never 0.30000000000000004
		{"5", "1000", "5000"},
		{"1.000000000000000001", "2", "2.000000000000000002"},
		{"12.5", "0", "0"},
	} {
		t.Run(tc.amount+"x"+tc.price, func(t *testing.T) {
			got := kyt.USDAmount(decimal.RequireFromString(tc.amount), decimal.RequireFromString(tc.price))
			assert.Equal(t, tc.want, got.String())
		})
	}
	t.Run("non-USD denomination has no USD amount", func(t *testing.T) {
		r := validWithdrawal()
		r.AssetPrice, r.AssetDenomination = ptr("2"), ptr("EUR")
		_, ok := r.USDAmount()
		assert.False(t, ok)
	})
	t.Run("no price, no USD amount", func(t *testing.T) {
		_, ok := validWithdrawal().USDAmount()
		assert.False(t, ok)
	})
}

func TestParseTimestamp(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Time
	}{
		{"2024-01-15T10:30:00.000Z", time.Date(2024, 1, 15, 10, 30, 0, 0, time.UTC)},
		{"2024-01-15T12:30:00+02:00", time.Date(2024, 1, 15, 10, 30, 0, 0, time.UTC)},
		{"2026-01-04 17:25:40.008307", time.Date(2026, 1, 4, 17, 25, 40, 8307000, time.UTC)},
		{"2021-11-16 18:33:33+00:00", time.Date(2021, 11, 16, 18, 33, 33, 0, time.UTC)},
		{"2024-01-15T10:30:00", time.Date(2024, 1, 15, 10, 30, 0, 0, time.UTC)},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := kyt.ParseTimestamp("attemptTimestamp", tc.in)
			require.NoError(t, err)
			assert.True(t, tc.want.Equal(got), "got %v", got)
			assert.Equal(t, time.UTC, got.Location())
		})
	}
}
