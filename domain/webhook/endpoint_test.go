package webhook_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/webhook"
)

var t0 = time.Date(2026, 2, 1, 8, 0, 0, 0, time.UTC)

func faultOf(t *testing.T, err error) *fault.Error {
	t.Helper()
	fe, ok := fault.As(err)
	require.True(t, ok, "want *fault.Error, got %v", err)
	return fe
}

func mustEndpoint(t *testing.T, opts ...webhook.Option) *webhook.Endpoint {
	t.Helper()
	e, err := webhook.NewEndpoint("ep_1", "acct-1", "https://example.com/hook", append([]webhook.Option{webhook.CreatedAt(t0)}, opts...)...)
	require.NoError(t, err)
	return e
}

func TestValidateURLSyntax(t *testing.T) {
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"https://example.com", true},
		{"http://example.com:8080/path?q=1", true},
		{"HTTPS://EXAMPLE.COM/x", true},
		{"http://127.0.0.1:9000/hook", true}, // syntax only: address policy is the caller's
		{"http://[::1]:9000/", true},
		{"", false},
		{"ftp://example.com", false},
		{"example.com/hook", false},
		{"/relative", false},
		{"https://", false},
		{"http://a@127.0.0.1/", false},
		{"https://example.com/#frag", false},
		{"https://example.com:0/", false},
		{"https://example.com:70000/", false},
		{"https://example.com:/", false},
		{"https://exa mple.com/", false},
		{"mailto:x@example.com", false},
		{"https://example.com/" + strings.Repeat("a", 2048), false},
	} {
		t.Run(tc.url[:min(len(tc.url), 40)], func(t *testing.T) {
			err := webhook.ValidateURLSyntax(tc.url)
			if tc.ok {
				assert.NoError(t, err)
				return
			}
			assert.Equal(t, "url", faultOf(t, err).Param)
		})
	}
}

func TestNewEndpoint(t *testing.T) {
	for _, tc := range []struct {
		name, id, acct, url, param string
	}{
		{"ok", "ep_01HT7Z4QJ7N2Q9W8P6V3K5M1X2", "a", "https://example.com", ""},
		{"missing id", "", "a", "https://example.com", "id"},
		{"id with a dot", "ep.1", "a", "https://example.com", "id"},
		{"missing account", "ep_1", " ", "https://example.com", "accountId"},
		{"bad url", "ep_1", "a", "ftp://x", "url"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := webhook.NewEndpoint(tc.id, tc.acct, tc.url)
			if tc.param == "" {
				require.NoError(t, err)
				assert.Equal(t, tc.id, e.ID())
				assert.Equal(t, map[string]string{}, e.Metadata())
				assert.Nil(t, e.Channels())
				assert.False(t, e.Disabled())
				return
			}
			assert.Equal(t, tc.param, faultOf(t, err).Param)
		})
	}
	t.Run("with patch", func(t *testing.T) {
		e := mustEndpoint(t, webhook.WithPatch(webhook.Patch{
			URL:       webhook.Value("ftp://ignored"),
			Channels:  webhook.Value([]webhook.Channel{webhook.TokenCreated}),
			RateLimit: webhook.Value[int64](1000),
		}))
		assert.Equal(t, "https://example.com/hook", e.URL(), "the url argument wins")
		assert.Equal(t, []webhook.Channel{webhook.TokenCreated}, e.Channels())
		require.NotNil(t, e.RateLimit())
		assert.Equal(t, int32(1000), *e.RateLimit())
		assert.True(t, e.CreatedAt().Equal(t0))
	})
	t.Run("with invalid patch", func(t *testing.T) {
		_, err := webhook.NewEndpoint("ep_1", "a", "https://example.com",
			webhook.WithPatch(webhook.Patch{FilterTypes: webhook.Value([]string{"token.new"})}))
		assert.Equal(t, "filterTypes", faultOf(t, err).Param)
	})
}

func full(t *testing.T) *webhook.Endpoint {
	desc, filter := "d", `data.n == "X"`
	return mustEndpoint(t, webhook.WithPatch(webhook.Patch{
		Channels:    webhook.Value([]webhook.Channel{webhook.TokenCreated}),
		Description: webhook.Value(desc),
		Disabled:    webhook.Value(true),
		Filter:      webhook.Value(filter),
		FilterTypes: webhook.Value([]string{"sol.token.created"}),
		Metadata:    webhook.Value(map[string]string{"k": "v"}),
		RateLimit:   webhook.Value[int64](5),
	}))
}

func TestApplyTriState(t *testing.T) {
	later := t0.Add(time.Hour)
	t.Run("absent fields stay", func(t *testing.T) {
		e := full(t)
		before := e.State()
		require.NoError(t, e.Apply(webhook.Patch{Description: webhook.Value("new")}, later))
		after := e.State()
		assert.Equal(t, "new", *after.Description)
		after.Description, before.Description = nil, nil
		assert.True(t, after.UpdatedAt.Equal(later))
		after.UpdatedAt, before.UpdatedAt = time.Time{}, time.Time{}
		assert.Equal(t, before, after)
	})
	t.Run("explicit nulls clear", func(t *testing.T) {
		e := full(t)
		require.NoError(t, e.Apply(webhook.Patch{
			Channels: webhook.Null[[]webhook.Channel](), Description: webhook.Null[string](), Disabled: webhook.Null[bool](),
			Filter: webhook.Null[string](), FilterTypes: webhook.Null[[]string](), Metadata: webhook.Null[map[string]string](),
			RateLimit: webhook.Null[int64](),
		}, later))
		assert.Nil(t, e.Channels())
		assert.Nil(t, e.Description())
		assert.False(t, e.Disabled())
		assert.Nil(t, e.Filter())
		assert.Nil(t, e.FilterTypes())
		assert.Equal(t, map[string]string{}, e.Metadata())
		assert.Nil(t, e.RateLimit())
		assert.Equal(t, "https://example.com/hook", e.URL())
	})
	t.Run("empty patch changes nothing, not even updatedAt", func(t *testing.T) {
		e := full(t)
		require.NoError(t, e.Apply(webhook.Patch{}, later))
		assert.True(t, e.UpdatedAt().Equal(t0))
	})
	t.Run("values replace; metadata is replaced, not merged", func(t *testing.T) {
		e := full(t)
		require.NoError(t, e.Apply(webhook.Patch{
			URL:      webhook.Value("http://other.example/x"),
			Channels: webhook.Value([]webhook.Channel{webhook.TokenMigrated, webhook.TokenCreated, webhook.TokenMigrated}),
			Metadata: webhook.Value(map[string]string{"a": "b"}),
		}, later))
		assert.Equal(t, "http://other.example/x", e.URL())
		assert.Equal(t, []webhook.Channel{webhook.TokenMigrated, webhook.TokenCreated}, e.Channels(), "duplicates dropped, order kept")
		assert.Equal(t, map[string]string{"a": "b"}, e.Metadata())
	})
	t.Run("empty lists mean no filter", func(t *testing.T) {
		e := full(t)
		require.NoError(t, e.Apply(webhook.Patch{Channels: webhook.Value([]webhook.Channel{}), FilterTypes: webhook.Value([]string{})}, later))
		assert.Nil(t, e.Channels())
		assert.Nil(t, e.FilterTypes())
	})
	t.Run("getters return copies", func(t *testing.T) {
		e := full(t)
		e.Metadata()["k"] = "changed"
		e.Channels()[0] = "x"
		*e.RateLimit() = 99
		assert.Equal(t, map[string]string{"k": "v"}, e.Metadata())
		assert.Equal(t, []webhook.Channel{webhook.TokenCreated}, e.Channels())
		assert.Equal(t, int32(5), *e.RateLimit())
	})
}

func TestApplyRules(t *testing.T) {
	manyKeys := map[string]string{}
	for i := 0; i < 17; i++ {
		manyKeys[fmt.Sprintf("k%02d", i)] = "v"
	}
	bigValues := map[string]string{}
	for i := 0; i < 9; i++ { // 9 × (3 + 500) = 4527 bytes > 4096
		bigValues[fmt.Sprintf("k%02d", i)] = strings.Repeat("x", 500)
	}
	for _, tc := range []struct {
		name  string
		p     webhook.Patch
		param string
	}{
		{"rateLimit 0 allowed", webhook.Patch{RateLimit: webhook.Value[int64](0)}, ""},
		{"rateLimit max int32", webhook.Patch{RateLimit: webhook.Value[int64](2147483647)}, ""},
		{"rateLimit -1", webhook.Patch{RateLimit: webhook.Value[int64](-1)}, "rateLimit"},
		{"rateLimit max int32 + 1", webhook.Patch{RateLimit: webhook.Value[int64](2147483648)}, "rateLimit"},
		{"url null", webhook.Patch{URL: webhook.Null[string]()}, "url"},
		{"url not http", webhook.Patch{URL: webhook.Value("gopher://x")}, "url"},
		{"unknown channel", webhook.Patch{Channels: webhook.Value([]webhook.Channel{"token.new"})}, "channels"},
		{"11 channels", webhook.Patch{Channels: webhook.Value(make([]webhook.Channel, 11))}, "channels"},
		{"10 repeated channels", webhook.Patch{Channels: webhook.Value([]webhook.Channel{
			"sol.token.created", "sol.token.created", "sol.token.created", "sol.token.created", "sol.token.created",
			"sol.token.created", "sol.token.created", "sol.token.created", "sol.token.created", "sol.token.created"})}, ""},
		{"unknown filter type", webhook.Patch{FilterTypes: webhook.Value([]string{"Sol.Token.Created"})}, "filterTypes"},
		{"description 1024 chars", webhook.Patch{Description: webhook.Value(strings.Repeat("é", 1024))}, ""},
		{"description 1025 chars", webhook.Patch{Description: webhook.Value(strings.Repeat("é", 1025))}, "description"},
		{"filter too long", webhook.Patch{Filter: webhook.Value(strings.Repeat("a", 4097))}, "filter"},
		{"17 metadata keys", webhook.Patch{Metadata: webhook.Value(manyKeys)}, "metadata"},
		{"metadata too big", webhook.Patch{Metadata: webhook.Value(bigValues)}, "metadata"},
		{"empty metadata key", webhook.Patch{Metadata: webhook.Value(map[string]string{"": "v"})}, "metadata"},
		{"metadata key 65 chars", webhook.Patch{Metadata: webhook.Value(map[string]string{strings.Repeat("k", 65): "v"})}, "metadata"},
		{"metadata value 513 chars", webhook.Patch{Metadata: webhook.Value(map[string]string{"k": strings.Repeat("v", 513)})}, "metadata.k"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := full(t)
			before := e.State()
			err := e.Apply(tc.p, t0.Add(time.Hour))
			if tc.param == "" {
				require.NoError(t, err)
				return
			}
			assert.Equal(t, tc.param, faultOf(t, err).Param)
			assert.Equal(t, before, e.State(), "a refused patch changes nothing")
		})
	}
	t.Run("atomic: a valid field before an invalid one is not applied", func(t *testing.T) {
		e := full(t)
		err := e.Apply(webhook.Patch{Description: webhook.Value("x"), RateLimit: webhook.Value[int64](-5)}, t0.Add(time.Hour))
		require.Error(t, err)
		assert.Equal(t, "d", *e.Description())
	})
}

func TestWants(t *testing.T) {
	for _, tc := range []struct {
		name     string
		p        webhook.Patch
		created  bool
		migrated bool
	}{
		{"no filters", webhook.Patch{}, true, true},
		{"channel created", webhook.Patch{Channels: webhook.Value([]webhook.Channel{webhook.TokenCreated})}, true, false},
		{"type migrated", webhook.Patch{FilterTypes: webhook.Value([]string{"sol.token.migrated"})}, false, true},
		{"channel and type disagree", webhook.Patch{Channels: webhook.Value([]webhook.Channel{webhook.TokenCreated}),
			FilterTypes: webhook.Value([]string{"sol.token.migrated"})}, false, false},
		{"disabled", webhook.Patch{Disabled: webhook.Value(true)}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := mustEndpoint(t, webhook.WithPatch(tc.p))
			assert.Equal(t, tc.created, e.Wants(webhook.TokenCreated))
			assert.Equal(t, tc.migrated, e.Wants(webhook.TokenMigrated))
		})
	}
}

func TestThrottle(t *testing.T) {
	for _, tc := range []struct {
		name    string
		p       webhook.Patch
		rate    int32
		limited bool
	}{
		{"null", webhook.Patch{}, 0, false},
		{"zero is unthrottled", webhook.Patch{RateLimit: webhook.Value[int64](0)}, 0, false},
		{"five", webhook.Patch{RateLimit: webhook.Value[int64](5)}, 5, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rate, limited := mustEndpoint(t, webhook.WithPatch(tc.p)).Throttle()
			assert.Equal(t, tc.rate, rate)
			assert.Equal(t, tc.limited, limited)
		})
	}
}

func TestFailureBookkeeping(t *testing.T) {
	rule := webhook.AutoDisable{After: 2 * time.Second}
	t.Run("failures spanning more than the period disable", func(t *testing.T) {
		e := mustEndpoint(t)
		assert.False(t, e.RecordFailure(t0, rule))
		assert.True(t, e.FirstFailureAt().Equal(t0))
		assert.False(t, e.RecordFailure(t0.Add(2*time.Second), rule), "exactly the period is not more than it")
		assert.True(t, e.RecordFailure(t0.Add(2*time.Second+time.Millisecond), rule))
		assert.True(t, e.Disabled())
		assert.True(t, e.UpdatedAt().Equal(t0.Add(2*time.Second+time.Millisecond)))
		assert.False(t, e.RecordFailure(t0.Add(time.Hour), rule), "reports the disabling once")
	})
	t.Run("a success in between resets the clock", func(t *testing.T) {
		e := mustEndpoint(t)
		e.RecordFailure(t0, rule)
		e.RecordSuccess()
		assert.False(t, e.RecordFailure(t0.Add(3*time.Second), rule))
		assert.False(t, e.Disabled())
		assert.True(t, e.FirstFailureAt().Equal(t0.Add(3*time.Second)))
	})
	t.Run("disabled:false on an enabled endpoint keeps the clock", func(t *testing.T) {
		e := mustEndpoint(t)
		e.RecordFailure(t0, rule)
		require.NoError(t, e.Apply(webhook.Patch{Disabled: webhook.Value(false)}, t0.Add(time.Second)))
		assert.True(t, e.FirstFailureAt().Equal(t0))
		assert.True(t, e.RecordFailure(t0.Add(3*time.Second), rule))
	})
	t.Run("re-enabling forgets the failures", func(t *testing.T) {
		e := mustEndpoint(t)
		e.RecordFailure(t0, rule)
		e.Disable(t0)
		require.NoError(t, e.Apply(webhook.Patch{Disabled: webhook.Value(false)}, t0.Add(time.Minute)))
		assert.True(t, e.FirstFailureAt().IsZero())
		assert.False(t, e.Disabled())
	})
}

func TestCheckEndpointLimit(t *testing.T) {
	for _, tc := range []struct {
		current int
		ok      bool
	}{{0, true}, {9, true}, {10, false}, {11, false}} {
		t.Run(fmt.Sprint(tc.current), func(t *testing.T) {
			err := webhook.CheckEndpointLimit(tc.current)
			if tc.ok {
				assert.NoError(t, err)
				return
			}
			fe := faultOf(t, err)
			assert.Equal(t, fault.KindConflict, fe.Kind)
			assert.Equal(t, 52001, fe.Code)
			assert.Equal(t, map[string]any{"current_count": tc.current, "max_allowed": 10}, fe.Details)
		})
	}
}

func TestStateRoundTrip(t *testing.T) {
	e := full(t)
	e.RotateSecret(webhook.NewSecret(seq(24, 7)), t0, time.Hour)
	e.RecordFailure(t0, webhook.DefaultAutoDisable())
	back := webhook.RestoreEndpoint(e.State())
	assert.Equal(t, e.State(), back.State())
}

func TestIDs(t *testing.T) {
	// The ULID spec's example time 1469918176385 ms encodes as 01ARYZ6S41; zero randomness
	// gives sixteen '0's, all-ones randomness sixteen 'Z's (80 bits = 16 × 5).
	ts := time.UnixMilli(1469918176385)
	assert.Equal(t, "ep_01ARYZ6S410000000000000000", webhook.NewEndpointID(ts, [10]byte{}))
	ones := [10]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	assert.Equal(t, "msg_01ARYZ6S41ZZZZZZZZZZZZZZZZ", webhook.NewMessageID(ts, ones))
}
