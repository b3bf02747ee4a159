package ratelimit_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/ratelimit"
)

func TestNewValidates(t *testing.T) {
	for _, tc := range []struct {
		rate, burst int
		ok          bool
	}{{1, 0, true}, {60, 10, true}, {ratelimit.MaxPerMinute, ratelimit.MaxBurst, true},
		{0, 0, false}, {-1, 0, false}, {ratelimit.MaxPerMinute + 1, 0, false}, {10, -1, false}, {10, ratelimit.MaxBurst + 1, false}} {
		l, err := ratelimit.New("rate", tc.rate, tc.burst)
		if !tc.ok {
			require.Error(t, err, "%d/%d", tc.rate, tc.burst)
			assert.True(t, fault.Is(err, fault.KindInvalid))
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, tc.rate+tc.burst, l.Capacity())
	}
}

func TestOr(t *testing.T) {
	def := ratelimit.Limit{PerMinute: 100, Burst: 5}
	assert.Equal(t, def, ratelimit.Limit{}.Or(def))
	own := ratelimit.Limit{PerMinute: 3, Burst: 0}
	assert.Equal(t, own, own.Or(def))
}

// spend runs n requests at the same instant and returns the decisions.
func spend(l ratelimit.Limit, tat *int64, now int64, n int) []ratelimit.Decision {
	out := make([]ratelimit.Decision, n)
	for i := range out {
		*tat, out[i] = l.Spend(*tat, now)
	}
	return out
}

func TestSpendAllowsRatePlusBurstThenRefuses(t *testing.T) {
	l := ratelimit.Limit{PerMinute: 6, Burst: 4} // one request per 10s, 10 at once
	var tat int64
	now := int64(1_000 * time.Second)
	ds := spend(l, &tat, now, 11)
	for i, d := range ds[:10] {
		require.True(t, d.Allowed, "request %d", i+1)
		assert.Equal(t, 10, d.Limit)
		assert.Equal(t, 9-i, d.Remaining, "request %d", i+1)
		assert.Equal(t, time.Duration(i+1)*10*time.Second, d.ResetAfter, "request %d", i+1)
		assert.Zero(t, d.RetryAfter)
	}
	refused := ds[10]
	assert.False(t, refused.Allowed)
	assert.Equal(t, 0, refused.Remaining)
	assert.Equal(t, 10*time.Second, refused.RetryAfter, "the next token comes one interval later")
	assert.Equal(t, 100*time.Second, refused.ResetAfter)

	// A refusal spends nothing: just before the retry time still refused, at it allowed.
	_, d := l.Spend(tat, now+int64(10*time.Second)-1)
	assert.False(t, d.Allowed)
	assert.Equal(t, time.Duration(1), d.RetryAfter)
	_, d = l.Spend(tat, now+int64(10*time.Second))
	assert.True(t, d.Allowed)
	assert.Equal(t, 0, d.Remaining)
}

func TestSpendRefillsToCapacityOnly(t *testing.T) {
	l := ratelimit.Limit{PerMinute: 60, Burst: 0}
	var tat int64
	now := int64(time.Hour)
	spend(l, &tat, now, 60)
	// An hour idle refills the bucket to its capacity, no more.
	ds := spend(l, &tat, now+int64(time.Hour), 61)
	assert.True(t, ds[59].Allowed)
	assert.False(t, ds[60].Allowed)
	assert.Equal(t, time.Second, ds[60].RetryAfter)
}

func TestSpendLargestLimitStaysInRange(t *testing.T) {
	l := ratelimit.Limit{PerMinute: 1, Burst: ratelimit.MaxBurst}
	var tat int64
	now := int64(time.Hour)
	tat, d := l.Spend(tat, now)
	require.True(t, d.Allowed)
	assert.Equal(t, ratelimit.MaxBurst, d.Remaining)
	assert.Equal(t, time.Minute, d.ResetAfter)
	fast := ratelimit.Limit{PerMinute: ratelimit.MaxPerMinute, Burst: ratelimit.MaxBurst}
	_, d = fast.Spend(0, now)
	require.True(t, d.Allowed)
	assert.Equal(t, fast.Capacity()-1, d.Remaining)
}

func TestRefusedNamesTheLimit(t *testing.T) {
	l := ratelimit.Limit{PerMinute: 120, Burst: 30}
	e := ratelimit.Refused(l, ratelimit.Decision{RetryAfter: 1500 * time.Millisecond})
	assert.Equal(t, fault.KindRateLimited, e.Kind)
	assert.Contains(t, e.Message, "120 requests per minute, burst 30")
	assert.Equal(t, 1500*time.Millisecond, e.RetryAfter)
	assert.Equal(t, 120, e.Details["requestsPerMinute"])
	assert.Equal(t, 30, e.Details["burst"])
}
