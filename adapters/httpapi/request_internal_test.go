package httpapi

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/app/webhookendpoint"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/kyt"
	"github.com/tokenscope/tokenscope/domain/webhook"
)

// The request decoders are tested here, next to them; what the values may be is tested with
// the domain, and the whole request path by the end-to-end tests.

func requireFault(t *testing.T, err error) *fault.Error {
	t.Helper()
	fe, ok := fault.As(err)
	require.True(t, ok, "want *fault.Error, got %v", err)
	assert.Equal(t, fault.KindInvalid, fe.Kind, "%v", err)
	return fe
}

func TestDecodePatch(t *testing.T) {
	for _, tc := range []struct {
		name string
		body string
		id   string
		want webhook.Patch
	}{
		{"sdk body", `{"channels":["sol.token.created"],"endpointId":"ep_1","filter":"x"}`, "ep_1", webhook.Patch{
			Channels: webhook.Value([]webhook.Channel{"sol.token.created"}), Filter: webhook.Value("x")}},
		{"only the id", `{"endpointId":"ep_2"}`, "ep_2", webhook.Patch{}},
		{"nulls", `{"endpointId":"ep_1","url":null,"channels":null,"description":null,"disabled":null,"filter":null,"filterTypes":null,"metadata":null,"rateLimit":null}`,
			"ep_1", webhook.Patch{URL: webhook.Null[string](), Channels: webhook.Null[[]webhook.Channel](), Description: webhook.Null[string](),
				Disabled: webhook.Null[bool](), Filter: webhook.Null[string](), FilterTypes: webhook.Null[[]string](),
				Metadata: webhook.Null[map[string]string](), RateLimit: webhook.Null[int64]()}},
		{"values", `{"endpointId":"ep_1","url":"https://x.io","description":"","disabled":false,"filterTypes":["sol.token.migrated"],"metadata":{"a":"b"},"rateLimit":1000}`,
			"ep_1", webhook.Patch{URL: webhook.Value("https://x.io"), Description: webhook.Value(""), Disabled: webhook.Value(false),
				FilterTypes: webhook.Value([]string{"sol.token.migrated"}), Metadata: webhook.Value(map[string]string{"a": "b"}),
				RateLimit: webhook.Value[int64](1000)}},
		{"out-of-range rateLimit reaches Apply", `{"endpointId":"ep_1","rateLimit":-3}`, "ep_1", webhook.Patch{RateLimit: webhook.Value[int64](-3)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, p, err := decodePatch([]byte(tc.body))
			require.NoError(t, err)
			assert.Equal(t, tc.id, id)
			assert.Equal(t, tc.want, p)
		})
	}
	for _, tc := range []struct {
		name, body, param string
		code              int
	}{
		{"not json", `{"endpointId":`, "", fault.CodeValidation},
		{"not an object", `[1]`, "", fault.CodeValidation},
		{"missing id", `{"url":"https://x.io"}`, "endpointId", fault.CodeMissingParameter},
		{"null id", `{"endpointId":null}`, "endpointId", fault.CodeMissingParameter},
		{"blank id", `{"endpointId":"  "}`, "endpointId", fault.CodeMissingParameter},
		{"numeric id", `{"endpointId":7}`, "endpointId", fault.CodeInvalidParameter},
		{"rateLimit string", `{"endpointId":"e","rateLimit":"5"}`, "rateLimit", fault.CodeInvalidParameter},
		{"rateLimit fraction", `{"endpointId":"e","rateLimit":1.5}`, "rateLimit", fault.CodeInvalidParameter},
		{"disabled string", `{"endpointId":"e","disabled":"true"}`, "disabled", fault.CodeInvalidParameter},
		{"channels string", `{"endpointId":"e","channels":"sol.token.created"}`, "channels", fault.CodeInvalidParameter},
		{"metadata number value", `{"endpointId":"e","metadata":{"a":1}}`, "metadata", fault.CodeInvalidParameter},
		{"mass assignment of secret", `{"endpointId":"e","secret":"whsec_x"}`, "secret", fault.CodeInvalidParameter},
		{"mass assignment of id", `{"endpointId":"e","id":"x"}`, "id", fault.CodeInvalidParameter},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := decodePatch([]byte(tc.body))
			fe := requireFault(t, err)
			assert.Equal(t, tc.param, fe.Param)
			assert.Equal(t, tc.code, fe.Code)
		})
	}
	t.Run("an unknown member is named with every allowed one", func(t *testing.T) {
		_, _, err := decodePatch([]byte(`{"endpointId":"e","createdAt":"2020-01-01"}`))
		fe := requireFault(t, err)
		assert.Equal(t, `unknown field "createdAt"; allowed: endpointId, url, channels, description, disabled, filter, filterTypes, metadata, rateLimit`, fe.Message)
		assert.Equal(t, []string{"endpointId", "url", "channels", "description", "disabled", "filter", "filterTypes", "metadata", "rateLimit"}, fe.Allowed)
	})
	t.Run("a mistyped member is repeated as sent, cut at 64 bytes on a rune boundary", func(t *testing.T) {
		_, _, err := decodePatch([]byte(`{"endpointId":"e","description":[1, "<b>"]}`))
		assert.Equal(t, `[1, "<b>"]`, requireFault(t, err).Value)
		_, _, err = decodePatch([]byte(`{"endpointId":"e","description":["aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaé"]}`))
		assert.Equal(t, `["aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa…`, requireFault(t, err).Value)
	})
}

func TestDecodeCreate(t *testing.T) {
	t.Run("every member", func(t *testing.T) {
		c, err := decodeCreate([]byte(`{"url":"https://hooks.example/in","secret":"whsec_x","description":"mine",
			"channels":["sol.token.created"],"filter":"data.amount > 10","rateLimit":7,"metadata":{"k":"v"}}`))
		require.NoError(t, err)
		secret := "whsec_x"
		assert.Equal(t, webhookendpoint.Creation{URL: "https://hooks.example/in", Secret: &secret, Fields: webhook.Patch{
			Description: webhook.Value("mine"), Channels: webhook.Value([]webhook.Channel{webhook.TokenCreated}),
			Filter: webhook.Value("data.amount > 10"), RateLimit: webhook.Value[int64](7),
			Metadata: webhook.Value(map[string]string{"k": "v"})}}, c)
	})
	t.Run("a null secret is none", func(t *testing.T) {
		c, err := decodeCreate([]byte(`{"url":"https://hooks.example/in","secret":null,"filter":null}`))
		require.NoError(t, err)
		assert.Equal(t, webhookendpoint.Creation{URL: "https://hooks.example/in", Fields: webhook.Patch{Filter: webhook.Null[string]()}}, c)
	})
	for name, tc := range map[string]struct{ body, param string }{
		"not json":         {`{`, ""},
		"not an object":    {`[1]`, ""},
		"json null":        {`null`, ""},
		"missing url":      {`{"description":"x"}`, "url"},
		"null url":         {`{"url":null}`, "url"},
		"url not a string": {`{"url":42}`, "url"},
		"secret not a str": {`{"url":"https://hooks.example/in","secret":1}`, "secret"},
		"endpointId given": {`{"url":"https://hooks.example/in","endpointId":"ep_mine"}`, "endpointId"},
		"unknown field":    {`{"url":"https://hooks.example/in","createdAt":"2020-01-01"}`, "createdAt"},
		"wrong field type": {`{"url":"https://hooks.example/in","disabled":"yes"}`, "disabled"},
		"bad rateLimit":    {`{"url":"https://hooks.example/in","rateLimit":1.5}`, "rateLimit"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := decodeCreate([]byte(tc.body))
			assert.Equal(t, tc.param, requireFault(t, err).Param)
		})
	}
	t.Run("a mistyped member is repeated in compact form", func(t *testing.T) {
		_, err := decodeCreate([]byte(`{"url":"https://hooks.example/in","description":[1, "<b>"]}`))
		assert.Equal(t, `[1,"\u003cb\u003e"]`, requireFault(t, err).Value)
	})
}

// register decodes and validates a KYT body the way the handler and the use case do.
func register(body string) (kyt.Registration, error) {
	r, err := decodeWithdrawal([]byte(body))
	if err != nil {
		return kyt.Registration{}, err
	}
	return kyt.NewWithdrawal("acc", "", r, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
}

const solAddr = "D1Mc6j9xQWgR1o1Z7yU5nVVXFQiAYx7FG9AW1aVfwrUM"

func TestDecodeWithdrawal(t *testing.T) {
	t.Run("decodes every member, ignoring unknown ones", func(t *testing.T) {
		r, err := decodeWithdrawal([]byte(`{"address":"` + solAddr + `","asset":"SOL","assetAmount":"1.000000000000000001",
			"attemptTimestamp":"2024-01-15T10:30:00.000Z","network":"Solana","assetDenomination":"USD","assetId":null,
			"assetPrice":"3","memo":"m","extra":1}`))
		require.NoError(t, err)
		usd, price, memo := "USD", "3", "m"
		assert.Equal(t, kyt.WithdrawalRequest{Address: solAddr, Asset: "SOL", AssetAmount: "1.000000000000000001",
			AttemptTimestamp: "2024-01-15T10:30:00.000Z", Network: kyt.Solana, AssetDenomination: &usd, AssetPrice: &price,
			Memo: &memo}, r)
	})
	for _, tc := range []struct {
		name, body, param string
		code              int
	}{
		{"not an object", `[]`, "", fault.CodeValidation},
		{"not json", `{`, "", fault.CodeValidation},
		{"number amount", `{"address":"a","asset":"SOL","assetAmount":5}`, "assetAmount", fault.CodeInvalidParameter},
		{"numeric network", `{"network":1}`, "network", fault.CodeInvalidParameter},
		{"null required field", `{"address":null,"asset":"SOL","assetAmount":"1","attemptTimestamp":"2024-01-15T10:30:00Z","network":"Solana"}`, "address", fault.CodeMissingParameter},
		{"object memo", `{"address":"` + solAddr + `","asset":"SOL","assetAmount":"1","attemptTimestamp":"2024-01-15T10:30:00Z","network":"Solana","memo":{}}`, "memo", fault.CodeInvalidParameter},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := register(tc.body)
			fe := requireFault(t, err)
			assert.Equal(t, tc.param, fe.Param)
			assert.Equal(t, tc.code, fe.Code)
		})
	}
	t.Run("a mistyped member is repeated as sent, cut at 64 bytes", func(t *testing.T) {
		_, err := decodeWithdrawal([]byte(`{"memo":[1, "<b>"]}`))
		assert.Equal(t, `[1, "<b>"]`, requireFault(t, err).Value)
	})
	base := `{"address":"` + solAddr + `","asset":"SOL","assetAmount":"1.5","attemptTimestamp":"2024-01-15T10:30:00Z","network":"Solana"}`
	for _, tc := range []struct{ name, body string }{
		{"key order", `{"network":"Solana","attemptTimestamp":"2024-01-15T10:30:00Z","assetAmount":"1.5","asset":"SOL","address":"` + solAddr + `"}`},
		{"explicit nulls", `{"address":"` + solAddr + `","asset":"SOL","assetAmount":"1.5","attemptTimestamp":"2024-01-15T10:30:00Z","network":"Solana","memo":null,"assetPrice":null}`},
	} {
		t.Run(tc.name+" registers the same request", func(t *testing.T) {
			a, err := register(base)
			require.NoError(t, err)
			b, err := register(tc.body)
			require.NoError(t, err)
			assert.Equal(t, a.ExternalID, b.ExternalID)
			assert.Equal(t, a.Fingerprint, b.Fingerprint)
		})
	}
}

func TestDecodeTransfer(t *testing.T) {
	const sig = "5rKfmXQyMhz7F2zRE6SpWWx3YkSxtA4gFqZD8CwGRYMx5YLTB8NhbiM9xEHG9jruiWdUyUz7Fpz8jmB8SKcjsLqe"
	r, err := decodeTransfer([]byte(`{"transferReference":"` + sig + `:` + solAddr + `","network":"Solana","direction":"received","asset":"SOL","x":1}`))
	require.NoError(t, err)
	assert.Equal(t, kyt.TransferRequest{Asset: "SOL", Direction: kyt.Received, Network: kyt.Solana, TransferReference: sig + ":" + solAddr}, r)

	for _, tc := range []struct{ name, body, param string }{
		{"not an object", `"x"`, ""},
		{"numeric direction", `{"direction":1}`, "direction"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeTransfer([]byte(tc.body))
			assert.Equal(t, tc.param, requireFault(t, err).Param)
		})
	}
}
