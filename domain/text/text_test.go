package text_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/text"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name, v string
		ok      bool
		shown   string
	}{
		{"plain", "So11111111111111111111111111111111111111112", true, ""},
		{"empty", "", true, ""},
		{"multibyte", "红包 🧧", true, ""},
		{"NUL", "a\x00b", false, `a\u0000b`},
		{"invalid UTF-8", "a\xffb", false, "a\uFFFDb"},
		{"truncated sequence", "\xe7\xba", false, "\uFFFD"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.ok, text.Storable(tc.v))
			err := text.Check("q", tc.v)
			if tc.ok {
				require.NoError(t, err)
				return
			}
			fe, ok := fault.As(err)
			require.True(t, ok)
			assert.Equal(t, fault.KindInvalid, fe.Kind)
			assert.Equal(t, "q", fe.Param)
			assert.Equal(t, tc.shown, fe.Value)
			assert.Contains(t, fe.Message, `"`+tc.shown+`"`)
		})
	}
}

func TestShownIsBounded(t *testing.T) {
	s := text.Shown(strings.Repeat("\x00", 1000))
	assert.Less(t, len(s), 500)
	assert.NotContains(t, s, "\x00")
}

func TestCheckJSON(t *testing.T) {
	for _, tc := range []struct {
		name, doc    string
		param, shown string // "" when the document passes
	}{
		{"no escape", `{"a":"b","c":[1,2,{"d":"e"}]}`, "", ""},
		{"escaped backslash is not a NUL", `{"a":"\\u0000"}`, "", ""},
		{"other escapes", `{"a":"\u0001\u00e9\n"}`, "", ""},
		{"top-level member", `{"memo":"x\u0000"}`, "memo", `x\u0000`},
		{"after other members", `{"a":1,"b":[true,null],"c":"\u0000"}`, "c", `\u0000`},
		{"array element", `{"tokenAddresses":["ok","bad\u0000"]}`, "tokenAddresses[1]", `bad\u0000`},
		{"nested object in array", `{"tokenCreators":[{"address":"a"},{"share":1,"address":"\u0000"}]}`, "tokenCreators[1].address", `\u0000`},
		{"map value", `{"metadata":{"team":"o\u0000ps"}}`, "metadata.team", `o\u0000ps`},
		{"map key names the map", `{"metadata":{"te\u0000am":"ops"}}`, "metadata", `te\u0000am`},
		{"top-level key names itself", `{"a\u0000":1}`, `a\u0000`, `a\u0000`},
		{"after a nested container", `{"a":{"b":[1,{"c":2}]},"d":"\u0000"}`, "d", `\u0000`},
		{"array of arrays", `[[1],["x","\u0000"]]`, "[1][1]", `\u0000`},
		{"bare string", `"\u0000"`, "body", `\u0000`},
		{"a NUL before the document breaks off", `{"a":"\u0000"`, "a", `\u0000`},
		{"syntax error before the NUL", `{"a" 1, "b":"\u0000"}`, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := text.CheckJSON([]byte(tc.doc))
			if tc.param == "" {
				require.NoError(t, err)
				return
			}
			fe, ok := fault.As(err)
			require.True(t, ok, "err: %v", err)
			assert.Equal(t, fault.KindInvalid, fe.Kind)
			assert.Equal(t, tc.param, fe.Param)
			assert.Equal(t, tc.shown, fe.Value)
		})
	}
}

// holdsNUL reports whether any string of a decoded document, value or member name, has a NUL.
func holdsNUL(v any) bool {
	switch x := v.(type) {
	case string:
		return strings.IndexByte(x, 0) >= 0
	case []any:
		for _, e := range x {
			if holdsNUL(e) {
				return true
			}
		}
	case map[string]any:
		for k, e := range x {
			if strings.IndexByte(k, 0) >= 0 || holdsNUL(e) {
				return true
			}
		}
	}
	return false
}

// FuzzCheckJSON: whatever the document, a NUL that encoding/json would decode never passes,
// and a refusal always names a parameter. The seeds run as a normal test.
func FuzzCheckJSON(f *testing.F) {
	for _, s := range []string{
		`{"a":"b"}`, `{"a":"\u0000"}`, `{"a\u0000":"b"}`, `[["\u0000"]]`, `{"a":{"b":["c",{"d":"\u0000"}]}}`,
		`{"a":"\\u0000"}`, `{"a":"\\\u0000"}`, "{\"a\":\"\xff\"}", `"\ud800"`, `{"a":1e400}`, `{"a":"\u0000"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		err := text.CheckJSON(b)
		if err != nil {
			fe, ok := fault.As(err)
			require.True(t, ok)
			assert.NotEmpty(t, fe.Param)
			assert.True(t, bytes.Contains(b, []byte(`\u0000`)))
			return
		}
		var v any
		if json.Unmarshal(b, &v) == nil {
			assert.False(t, holdsNUL(v), "a NUL passed in %q", b)
		}
	})
}
