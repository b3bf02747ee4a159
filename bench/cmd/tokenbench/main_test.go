package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseOnlyTakesNumbersAndGroups(t *testing.T) {
	sel, err := parseOnly(" 2, live ,9,deliveries,")
	require.NoError(t, err)
	assert.Equal(t, []string{"2 ", "9 "}, sel.ops)
	assert.Equal(t, map[string]bool{"live": true, "deliveries": true}, sel.groups)
	assert.Equal(t, "2,live,9,deliveries", sel.text)
	assert.True(t, sel.partial())
	assert.False(t, sel.deliveriesOnly(), "with other rows")

	for _, bad := range []string{"webhook", "0", "-3", "2x"} {
		_, err := parseOnly(bad)
		assert.Error(t, err, bad)
	}

	none, err := parseOnly("")
	require.NoError(t, err)
	assert.False(t, none.partial())
	alone, err := parseOnly("deliveries")
	require.NoError(t, err)
	assert.True(t, alone.deliveriesOnly())
}

func TestOptionsPickAndWant(t *testing.T) {
	ops := []readOp{{op: "1 ranking"}, {op: "2 token details"}, {op: "9 holders"}, {op: "12 multi"}}
	names := func(ops []readOp) []string {
		var out []string
		for _, o := range ops {
			out = append(out, o.op)
		}
		return out
	}
	all := options{}
	assert.Len(t, all.pick(ops), 4)
	assert.True(t, all.want("growth"))

	sel, err := parseOnly("1,2,import")
	require.NoError(t, err)
	o := options{only: sel}
	assert.Equal(t, []string{"1 ranking", "2 token details"}, names(o.pick(ops)), "1 does not pick 12")
	assert.True(t, o.want("import"))
	assert.False(t, o.want("growth"))
	assert.False(t, o.want("reads"))

	sel, err = parseOnly("reads,9")
	require.NoError(t, err)
	assert.Len(t, options{only: sel}.pick(ops), 4, "reads takes every read operation")

	sel, err = parseOnly("live")
	require.NoError(t, err)
	assert.Empty(t, options{only: sel}.pick(ops))
}
