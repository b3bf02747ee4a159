package webhook_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/webhook"
)

func TestEventAndPayload(t *testing.T) {
	t.Run("payload shape, data compacted", func(t *testing.T) {
		e, err := webhook.NewEvent("msg_1", webhook.TokenMigrated, 1706947200000,
			json.RawMessage("{ \"a\": \"6p6x\",\n \"dec\": 9 }"))
		require.NoError(t, err)
		assert.Equal(t, `{"channel":"sol.token.migrated","timestamp":1706947200000,"data":{"a":"6p6x","dec":9}}`,
			string(webhook.Payload(e)))
	})
	t.Run("empty data is null", func(t *testing.T) {
		e, err := webhook.NewEvent("msg_1", webhook.TokenCreated, 5, nil)
		require.NoError(t, err)
		assert.Equal(t, `{"channel":"sol.token.created","timestamp":5,"data":null}`, string(webhook.Payload(e)))
	})
	big := `{"x":"` + strings.Repeat("a", 20_000-len(`{"channel":"sol.token.created","timestamp":1,"data":{"x":""}}`)) + `"}`
	for _, tc := range []struct {
		name, id string
		ch       webhook.Channel
		data     string
		param    string
		kind     fault.Kind
	}{
		{"exactly the size limit", "msg_1", webhook.TokenCreated, big, "", 0},
		{"one byte over", "msg_1", webhook.TokenCreated, big[:len(big)-2] + `a"}`, "", fault.KindTooLarge},
		{"id with a dot", "msg.1", webhook.TokenCreated, `{}`, "id", fault.KindInvalid},
		{"missing id", "", webhook.TokenCreated, `{}`, "id", fault.KindInvalid},
		{"unknown channel", "msg_1", "token.new", `{}`, "channel", fault.KindInvalid},
		{"invalid json", "msg_1", webhook.TokenCreated, `{"a":`, "data", fault.KindInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := webhook.NewEvent(tc.id, tc.ch, 1, json.RawMessage(tc.data))
			if tc.kind == 0 {
				require.NoError(t, err)
				return
			}
			fe := faultOf(t, err)
			assert.Equal(t, tc.kind, fe.Kind)
			assert.Equal(t, tc.param, fe.Param)
		})
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string { return "i/o timeout" }
func (timeoutErr) Timeout() bool { return true }

func TestOutcome(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		err    error
		want   webhook.Result
	}{
		{"200", 200, nil, webhook.Result{Success: true, Reason: "http 200"}},
		{"204", 204, nil, webhook.Result{Success: true, Reason: "http 204"}},
		{"299", 299, nil, webhook.Result{Success: true, Reason: "http 299"}},
		{"302 is a failure", 302, nil, webhook.Result{Reason: "http 302"}},
		{"199", 199, nil, webhook.Result{Reason: "http 199"}},
		{"500", 500, nil, webhook.Result{Reason: "http 500"}},
		{"429 throttles", 429, nil, webhook.Result{Throttled: true, Reason: "http 429"}},
		{"410 gone", 410, nil, webhook.Result{Gone: true, Reason: "http 410"}},
		{"no response", 0, nil, webhook.Result{Reason: "no response"}},
		{"timeout throttles", 0, fmt.Errorf("post: %w", timeoutErr{}), webhook.Result{Throttled: true, Reason: "timeout"}},
		{"deadline exceeded", 0, context.DeadlineExceeded, webhook.Result{Throttled: true, Reason: "timeout"}},
		{"error beats a 2xx", 200, errors.New("connection reset"), webhook.Result{Reason: "error: connection reset"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, webhook.Outcome(tc.status, tc.err))
		})
	}
}

func TestNewAttempt(t *testing.T) {
	a := webhook.NewAttempt("ep_1", "msg_1", 3, 500, nil, 120*time.Millisecond, t0)
	assert.Equal(t, webhook.Attempt{EndpointID: "ep_1", EventID: "msg_1", Number: 3, StatusCode: 500,
		Latency: 120 * time.Millisecond, Error: "http 500", At: t0, Result: webhook.Result{Reason: "http 500"}}, a)
	ok := webhook.NewAttempt("ep_1", "msg_1", 1, 200, nil, time.Millisecond, t0)
	assert.Empty(t, ok.Error)
	assert.True(t, ok.Result.Success)
}

func fixed(v float64) func() float64 { return func() float64 { return v } }

func TestDefaultRetrySchedule(t *testing.T) {
	s := webhook.DefaultRetrySchedule()
	assert.Equal(t, 8, s.MaxAttempts())
	for _, tc := range []struct {
		attempt int
		want    time.Duration
		ok      bool
	}{
		{0, 0, true}, // the first attempt is immediate
		{1, 5 * time.Second, true},
		{2, 5 * time.Minute, true},
		{3, 30 * time.Minute, true},
		{4, 2 * time.Hour, true},
		{5, 5 * time.Hour, true},
		{6, 10 * time.Hour, true},
		{7, 10 * time.Hour, true},
		{8, 0, false}, // the 8th attempt was the last
	} {
		t.Run(fmt.Sprint(tc.attempt), func(t *testing.T) {
			got, ok := s.NextDelay(tc.attempt, nil)
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.want, got)
		})
	}
	t.Run("three failures then success lands at 35m05s", func(t *testing.T) {
		var total time.Duration
		for a := 1; a <= 3; a++ {
			d, _ := s.NextDelay(a, nil)
			total += d
		}
		assert.Equal(t, 35*time.Minute+5*time.Second, total) // 5 s + 5 min + 30 min
	})
}

func TestJitter(t *testing.T) {
	s := webhook.DefaultRetrySchedule()
	for _, tc := range []struct {
		r    float64
		want time.Duration
	}{
		{0, 4 * time.Second},            // 5 s × (1 − 0.2)
		{0.5, 5 * time.Second},          // centre: unchanged
		{0.75, 5500 * time.Millisecond}, // 5 s × (1 + 0.2 × 0.5)
		{1, 6 * time.Second},            // 5 s × 1.2
		{-3, 4 * time.Second},           // out-of-range values are clamped
		{7, 6 * time.Second},
	} {
		t.Run(fmt.Sprint(tc.r), func(t *testing.T) {
			got, ok := s.NextDelay(1, fixed(tc.r))
			require.True(t, ok)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestNextDelayAfter(t *testing.T) {
	s, err := webhook.ParseRetrySchedule("50ms, 100ms,200ms")
	require.NoError(t, err)
	s.OverloadPenalty = 500 * time.Millisecond
	for _, tc := range []struct {
		name       string
		attempt    int
		result     webhook.Result
		retryAfter time.Duration
		r          float64
		want       time.Duration
		ok         bool
	}{
		{"plain failure", 1, webhook.Result{}, 0, 0.5, 50 * time.Millisecond, true},
		{"throttled raises to the penalty", 1, webhook.Result{Throttled: true}, 0, 0.5, 500 * time.Millisecond, true},
		// 429 + Retry-After 1 s: base 500 ms, 1 s is inside [500 ms, 1 s]
		{"429 with Retry-After 1s, low jitter", 1, webhook.Result{Throttled: true}, time.Second, 0, 800 * time.Millisecond, true},
		{"429 with Retry-After 1s, high jitter", 1, webhook.Result{Throttled: true}, time.Second, 1, 1200 * time.Millisecond, true},
		{"Retry-After clamped to 2× base", 2, webhook.Result{}, time.Hour, 0.5, 200 * time.Millisecond, true},
		{"Retry-After below base is raised", 3, webhook.Result{}, time.Millisecond, 0.5, 200 * time.Millisecond, true},
		{"exhausted", 4, webhook.Result{Throttled: true}, time.Second, 0.5, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := s.NextDelayAfter(tc.attempt, tc.result, tc.retryAfter, fixed(tc.r))
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestParseRetrySchedule(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []time.Duration
	}{
		{"5s,5m", []time.Duration{5 * time.Second, 5 * time.Minute}},
		{"0s", []time.Duration{0}},
		{"", nil},
		{"5s,,5m", nil},
		{"-1s", nil},
		{"five", nil},
	} {
		t.Run(tc.in, func(t *testing.T) {
			s, err := webhook.ParseRetrySchedule(tc.in)
			if tc.want == nil {
				assert.Equal(t, "retrySchedule", faultOf(t, err).Param)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, s.Delays)
			assert.Equal(t, 0.2, s.Jitter)
		})
	}
}

func TestAutoDisableDue(t *testing.T) {
	rule := webhook.DefaultAutoDisable()
	for _, tc := range []struct {
		name  string
		first time.Time
		now   time.Time
		want  bool
	}{
		{"never failed", time.Time{}, t0, false},
		{"4 days", t0, t0.Add(96 * time.Hour), false},
		{"exactly 5 days", t0, t0.Add(120 * time.Hour), false},
		{"5 days and a second", t0, t0.Add(120*time.Hour + time.Second), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, rule.Due(tc.first, tc.now))
		})
	}
}
