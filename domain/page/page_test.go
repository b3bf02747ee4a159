package page_test

import (
	"encoding/base64"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/page"
)

func TestParseDirection(t *testing.T) {
	tests := []struct {
		raw     string
		want    page.Direction
		wantErr bool
	}{
		{"", page.Next, false},
		{"next", page.Next, false},
		{"PREV", page.Prev, false},
		{" prev ", page.Prev, false},
		{"desc", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.raw, func(t *testing.T) {
			got, err := page.ParseDirection(tc.raw)
			if tc.wantErr {
				fe, ok := fault.As(err)
				require.True(t, ok)
				assert.Equal(t, "direction", fe.Param)
				assert.Equal(t, []string{"next", "prev"}, fe.Allowed)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestParseLimit(t *testing.T) {
	tests := []struct {
		raw     string
		want    int
		wantErr bool
	}{
		{"", 20, false},
		{"1", 1, false},
		{"100", 100, false},
		{" 35 ", 35, false},
		{"0", 0, true},
		{"101", 0, true},
		{"-5", 0, true},
		{"ten", 0, true},
		{"2.5", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.raw, func(t *testing.T) {
			got, err := page.ParseLimit(tc.raw, page.DefaultLimit, page.MaxLimit)
			if tc.wantErr {
				fe, ok := fault.As(err)
				require.True(t, ok)
				assert.Equal(t, fault.KindInvalid, fe.Kind)
				assert.Equal(t, "limit", fe.Param)
				assert.Contains(t, fe.Message, "between 1 and 100")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestCursorRoundTrip(t *testing.T) {
	tests := []struct {
		name   string
		kind   string
		values []string
	}{
		{"one value", "trade", []string{"1717334400000"}},
		{"keyset with commas and unicode", "snapshot", []string{"1705312800000", "a,b", "ü/+="}},
		{"empty string value", "redpacket", []string{""}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := page.Encode(tc.kind, tc.values...)
			assert.NotContains(t, c, "+")
			assert.NotContains(t, c, "/")
			assert.NotContains(t, c, "=")
			got, err := page.Decode(tc.kind, c)
			require.NoError(t, err)
			assert.Equal(t, tc.values, got)
		})
	}
}

func TestCursorRejects(t *testing.T) {
	good := page.Encode("trade", "1717334400000", "sig", "3")
	raw, err := base64.RawURLEncoding.DecodeString(good)
	require.NoError(t, err)
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	brokenJSON := enc(string(raw[:len(raw)-1])) // closing brace cut off
	// Same JSON shape as a real cursor, but the position was edited after issue.
	tampered := enc(`{"v":1,"k":"trade","p":["1717334400001","sig","3"],"c":` + checksumOf(t, good) + `}`)

	tests := []struct {
		name string
		kind string
		s    string
	}{
		{"other kind", "snapshot", good},
		{"truncated", "trade", good[:len(good)-4]},
		{"not base64", "trade", "***"},
		{"padded std base64 of json", "trade", base64.StdEncoding.EncodeToString([]byte(`{"id":"123"}`))},
		{"unknown fields", "trade", enc(`{"id":"123"}`)},
		{"broken json", "trade", brokenJSON},
		{"tampered value", "trade", tampered},
		{"wrong version", "trade", enc(`{"v":2,"k":"trade","p":["x"],"c":0}`)},
		{"no values", "trade", page.Encode("trade")},
		{"trailing data", "trade", enc(string(raw) + `{}`)},
		{"empty", "trade", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := page.Decode(tc.kind, tc.s)
			fe, ok := fault.As(err)
			require.True(t, ok, "want a fault, got %v", err)
			assert.Equal(t, fault.KindInvalid, fe.Kind)
			assert.Equal(t, fault.CodeInvalidCursor, fe.Code)
			assert.Equal(t, "cursor", fe.Param)
		})
	}
}

// checksumOf pulls the checksum out of a real cursor so the tampered case differs only in its values.
func checksumOf(t *testing.T, c string) string {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(c)
	require.NoError(t, err)
	s := string(raw)
	i := len(s) - 1
	for i > 0 && s[i-1] != ':' {
		i--
	}
	n, err := strconv.ParseUint(s[i:len(s)-1], 10, 32)
	require.NoError(t, err)
	return strconv.FormatUint(n, 10)
}

func TestBuild(t *testing.T) {
	id := func(n int) string { return strconv.Itoa(n) }
	tests := []struct {
		name      string
		rows      []int
		limit     int
		dir       page.Direction
		hadCursor bool
		want      []int
		hasNext   bool
		hasPrev   bool
	}{
		// First page: 3 rows asked with limit 2 -> the probe row 3 proves a next page.
		{"first page with more", []int{1, 2, 3}, 2, page.Next, false, []int{1, 2}, true, false},
		{"first page exact", []int{1, 2}, 2, page.Next, false, []int{1, 2}, false, false},
		{"middle page forward", []int{3, 4, 5}, 2, page.Next, true, []int{3, 4}, true, true},
		{"last page forward", []int{5}, 2, page.Next, true, []int{5}, false, true},
		// Prev rows arrive in reverse list order (4, 3, then probe 2) and come back as 3, 4.
		{"prev with more", []int{4, 3, 2}, 2, page.Prev, true, []int{3, 4}, true, true},
		{"prev reaching the start", []int{2, 1}, 2, page.Prev, true, []int{1, 2}, true, false},
		{"prev without cursor is the tail", []int{9, 8, 7}, 2, page.Prev, false, []int{8, 9}, false, true},
		{"empty", nil, 2, page.Next, false, []int{}, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := page.Build(tc.rows, tc.limit, tc.dir, tc.hadCursor, func(n int) string { return id(n) })
			assert.Equal(t, tc.want, p.Items)
			assert.Equal(t, tc.hasNext, p.HasNext, "hasNext")
			assert.Equal(t, tc.hasPrev, p.HasPrev, "hasPrev")
			if len(tc.want) == 0 {
				assert.NotNil(t, p.Items)
				assert.Nil(t, p.StartCursor)
				assert.Nil(t, p.EndCursor)
				return
			}
			require.NotNil(t, p.StartCursor)
			require.NotNil(t, p.EndCursor)
			assert.Equal(t, id(tc.want[0]), *p.StartCursor)
			assert.Equal(t, id(tc.want[len(tc.want)-1]), *p.EndCursor)
		})
	}
}

func TestBuildDoesNotAliasRows(t *testing.T) {
	rows := []int{1, 2, 3}
	p := page.Build(rows, 2, page.Next, false, func(n int) string { return strconv.Itoa(n) })
	p.Items[0] = 99
	assert.Equal(t, []int{1, 2, 3}, rows)
}
