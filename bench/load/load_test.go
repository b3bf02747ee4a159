package load_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/bench/load"
)

func TestPercentileNearestRank(t *testing.T) {
	s := make([]time.Duration, 100)
	for i := range s {
		s[i] = time.Duration(100-i) * time.Millisecond
	}
	assert.Equal(t, 50*time.Millisecond, load.Percentile(s, 50))
	assert.Equal(t, 99*time.Millisecond, load.Percentile(s, 99))
	assert.Equal(t, time.Duration(0), load.Percentile(nil, 50))
	assert.Equal(t, 7*time.Millisecond, load.Percentile([]time.Duration{7 * time.Millisecond}, 99))
}

func TestRunStopsByCountAndCountsErrors(t *testing.T) {
	res := load.Run(context.Background(), load.Options{Concurrency: 1, Duration: time.Minute, MaxCalls: 40},
		func(_ context.Context, _, i int) error {
			if i%2 == 1 {
				return errors.New("odd")
			}
			return nil
		})
	assert.Equal(t, 40, res.Calls)
	assert.Equal(t, 20, res.Errors, "every second call fails")
	assert.Equal(t, "odd", res.FirstError)
}

func TestLoopbackOnly(t *testing.T) {
	require.NoError(t, load.Loopback("http://127.0.0.1:8080/x"))
	require.NoError(t, load.Loopback("http://[::1]:8080/x"))
	for _, bad := range []string{"http://localhost:8080/", "http://10.0.0.1/", "https://127.0.0.1/", "http://example.com/"} {
		assert.Error(t, load.Loopback(bad), bad)
	}
}

func TestDoAgainstLoopbackServer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/fail" {
			http.Error(w, `{"code":500}`, 500)
			return
		}
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	defer srv.Close()
	c := load.Client(2)
	res := load.Run(context.Background(), load.Options{Concurrency: 2, Duration: time.Minute, MaxCalls: 10},
		func(ctx context.Context, _, _ int) error {
			_, err := load.Do(ctx, c, load.Request{Method: "GET", URL: srv.URL + "/ok"})
			return err
		})
	assert.Equal(t, 10, res.Calls)
	assert.Zero(t, res.Errors)
	assert.Greater(t, res.P99, time.Duration(0))
	_, err := load.Do(context.Background(), c, load.Request{Method: "GET", URL: srv.URL + "/fail"})
	assert.ErrorContains(t, err, "HTTP 500")
}
