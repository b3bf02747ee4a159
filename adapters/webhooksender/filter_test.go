package webhooksender_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/webhooksender"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/webhook"
)

func TestFilterCompileRejectsBadExpressions(t *testing.T) {
	f, err := webhooksender.NewFilter()
	require.NoError(t, err)
	for _, expr := range []string{
		`data.symbol ==`, // syntax
		`nosuchvar == 1`, // undeclared variable
		`channel + "x"`,  // a string, not a boolean
		`timestamp * 2`,  // an int, not a boolean
	} {
		t.Run(expr, func(t *testing.T) {
			err := f.Compile(expr)
			require.Error(t, err)
			fe, ok := fault.As(err)
			require.True(t, ok)
			assert.Equal(t, fault.KindInvalid, fe.Kind)
			assert.Equal(t, "filter", fe.Param)
		})
	}
	require.NoError(t, f.Compile(`channel == "sol.token.created" && data.symbol == "BONK"`))
}

func TestFilterMatch(t *testing.T) {
	f, err := webhooksender.NewFilter()
	require.NoError(t, err)
	ev := webhook.Event{ID: "msg_1", Channel: webhook.TokenCreated, Timestamp: 1700000000000,
		Data: json.RawMessage(`{"symbol":"BONK","decimals":5,"extra":{"launchFromProtocolFamily":"alpha"}}`)}
	cases := []struct {
		expr string
		want bool
	}{
		{`data.symbol == "BONK"`, true},
		{`data.symbol == "WIF"`, false},
		{`channel == "sol.token.migrated"`, false},
		{`data.decimals == 5`, true},
		{`data.extra.launchFromProtocolFamily.startsWith("al")`, true},
		{`timestamp > 1699999999999`, true},
		{`data.missing == 1`, false}, // evaluation error: no match, never a delivery
	}
	for _, tc := range cases {
		t.Run(tc.expr, func(t *testing.T) {
			assert.Equal(t, tc.want, f.Match(tc.expr, ev))
		})
	}
}
