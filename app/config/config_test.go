package config_test

import (
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/app/config"
)

// TestEveryVariableIsDocumented keeps README.md's configuration table in step with Load.
func TestEveryVariableIsDocumented(t *testing.T) {
	src, err := os.ReadFile("config.go")
	require.NoError(t, err)
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	vars := regexp.MustCompile(`(?:str|integer|duration|boolean)\("([A-Z_]+)"`).FindAllStringSubmatch(string(src), -1)
	require.GreaterOrEqual(t, len(vars), 20, "the pattern should find every variable Load reads")
	for _, v := range vars {
		assert.Contains(t, string(readme), "| `"+v[1]+"` |", "README.md's configuration table lacks %s", v[1])
	}
}

func TestLoadDefaultsAndErrors(t *testing.T) {
	t.Setenv("HTTP_ADDR", "")
	t.Setenv("REQUEST_TIMEOUT", "")
	t.Setenv("ADMIN_HTTP_ADDR", "")
	t.Setenv("HTTP_READ_TIMEOUT", "")
	c, err := config.Load()
	require.NoError(t, err)
	assert.Equal(t, ":8080", c.HTTPAddr)
	assert.Equal(t, 15*time.Second, c.RequestTimeout)
	assert.Equal(t, "127.0.0.1:9091", c.AdminHTTPAddr, "/metrics stays on loopback unless configured")
	assert.Equal(t, 30*time.Second, c.HTTPReadTimeout)

	t.Setenv("REQUEST_TIMEOUT", "soon")
	t.Setenv("DB_MAX_CONNS", "many")
	t.Setenv("HTTP_READ_TIMEOUT", "0s")
	_, err = config.Load()
	require.Error(t, err)
	for _, v := range []string{"REQUEST_TIMEOUT", "DB_MAX_CONNS", "HTTP_READ_TIMEOUT"} {
		assert.Contains(t, err.Error(), v)
	}
}

func TestRankingCacheTTL(t *testing.T) {
	tests := []struct {
		name, ttl, refresh string
		want               time.Duration
		bad                bool
	}{
		{name: "default", want: time.Second},
		{name: "default follows a shorter refresh", refresh: "500ms", want: 500 * time.Millisecond},
		{name: "off", ttl: "0s", want: 0},
		{name: "equal to the refresh interval", ttl: "2s", want: 2 * time.Second},
		{name: "longer than the refresh interval", ttl: "3s", bad: true},
		{name: "longer than a shorter refresh interval", ttl: "1s", refresh: "500ms", bad: true},
		{name: "negative", ttl: "-1s", bad: true},
		{name: "not a duration", ttl: "soon", bad: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("RANKING_CACHE_TTL", tc.ttl)
			t.Setenv("MARKET_REFRESH_INTERVAL", tc.refresh)
			c, err := config.Load()
			if tc.bad {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "RANKING_CACHE_TTL")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, c.RankingCacheTTL)
		})
	}
}
