package config_test

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/app/config"
	"github.com/tokenscope/tokenscope/domain/webhook"
)

// TestEveryVariableIsDocumented keeps README.md's configuration table in step with Load.
func TestEveryVariableIsDocumented(t *testing.T) {
	src, err := os.ReadFile("config.go")
	require.NoError(t, err)
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	vars := regexp.MustCompile(`(?:str|integer|duration|boolean|retention)\("([A-Z_]+)"`).FindAllStringSubmatch(string(src), -1)
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
	t.Setenv("INGEST_IDLE_TIMEOUT", "")
	c, err := config.Load()
	require.NoError(t, err)
	assert.Equal(t, ":8080", c.HTTPAddr)
	assert.Equal(t, 15*time.Second, c.RequestTimeout)
	assert.Equal(t, "127.0.0.1:9091", c.AdminHTTPAddr, "/metrics stays on loopback unless configured")
	assert.Equal(t, 30*time.Second, c.HTTPReadTimeout)
	assert.Equal(t, 30*time.Second, c.IngestIdleTimeout)

	t.Setenv("REQUEST_TIMEOUT", "soon")
	t.Setenv("DB_MAX_CONNS", "many")
	t.Setenv("HTTP_READ_TIMEOUT", "0s")
	t.Setenv("INGEST_IDLE_TIMEOUT", "-1s")
	_, err = config.Load()
	require.Error(t, err)
	for _, v := range []string{"REQUEST_TIMEOUT", "DB_MAX_CONNS", "HTTP_READ_TIMEOUT", "INGEST_IDLE_TIMEOUT"} {
		assert.Contains(t, err.Error(), v)
	}
}

func TestRateLimitSettings(t *testing.T) {
	t.Setenv("RATE_LIMIT_PER_MINUTE", "")
	t.Setenv("RATE_LIMIT_BURST", "")
	t.Setenv("REDIS_URL", "")
	c, err := config.Load()
	require.NoError(t, err)
	assert.Equal(t, 6000, c.RateLimitPerMinute)
	assert.Equal(t, 3000, c.RateLimitBurst)
	assert.Empty(t, c.RedisURL, "limits per process unless REDIS_URL is set")

	t.Setenv("RATE_LIMIT_PER_MINUTE", "0")
	t.Setenv("REDIS_URL", "redis://10.0.0.5:6379/2")
	c, err = config.Load()
	require.NoError(t, err)
	assert.Equal(t, 0, c.RateLimitPerMinute, "0 turns the default limit off")
	assert.Equal(t, "redis://10.0.0.5:6379/2", c.RedisURL)

	t.Setenv("RATE_LIMIT_PER_MINUTE", "-1")
	t.Setenv("RATE_LIMIT_BURST", "2000000")
	_, err = config.Load()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "RATE_LIMIT_PER_MINUTE must be between 0 and")
	assert.Contains(t, err.Error(), "RATE_LIMIT_BURST must be between 0 and 1000000")
}

// readmeDefaults reads README.md's configuration table: variable → default cell.
func readmeDefaults(t *testing.T) map[string]string {
	t.Helper()
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	rows := regexp.MustCompile("(?m)^\\| `([A-Z_]+)` \\| ([^|]*) \\|").FindAllStringSubmatch(string(readme), -1)
	out := map[string]string{}
	for _, r := range rows {
		out[r[1]] = strings.TrimSpace(r[2])
	}
	return out
}

// readmeValue is the value a default cell states: "" for a cell starting with "empty", else
// its first `code` span.
func readmeValue(cell string) (string, bool) {
	if strings.HasPrefix(cell, "empty") {
		return "", true
	}
	m := regexp.MustCompile("`([^`]*)`").FindStringSubmatch(cell)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// goDuration evaluates a default such as 5*24*time.Hour or 500*time.Millisecond.
func goDuration(t *testing.T, expr string) time.Duration {
	t.Helper()
	units := map[string]time.Duration{"time.Millisecond": time.Millisecond, "time.Second": time.Second,
		"time.Minute": time.Minute, "time.Hour": time.Hour}
	d := time.Duration(1)
	for _, f := range strings.Split(expr, "*") {
		f = strings.TrimSpace(f)
		if u, ok := units[f]; ok {
			d *= u
			continue
		}
		n, err := strconv.Atoi(f)
		require.NoError(t, err, "duration default %q", expr)
		d *= time.Duration(n)
	}
	return d
}

// TestREADMEDefaultsMatchTheCode: every literal default in Load is the one README.md's table
// states. WEBHOOK_RETRY_SCHEDULE is empty in Load (domain/webhook's schedule applies), so its
// README value is compared with webhook.DefaultRetrySchedule.
func TestREADMEDefaultsMatchTheCode(t *testing.T) {
	src, err := os.ReadFile("config.go")
	require.NoError(t, err)
	readme := readmeDefaults(t)
	calls := regexp.MustCompile(`(str|integer|duration|boolean)\("([A-Z_]+)", ("[^"]*"|[^,)]+)`).FindAllStringSubmatch(string(src), -1)
	require.GreaterOrEqual(t, len(calls), 20)
	checked := 0
	for _, c := range calls {
		fn, name, def := c[1], c[2], strings.TrimSpace(c[3])
		t.Run(name, func(t *testing.T) {
			cell, ok := readme[name]
			require.True(t, ok, "README.md's table lacks %s", name)
			want, ok := readmeValue(cell)
			require.True(t, ok, "README.md states no default for %s: %q", name, cell)
			switch fn {
			case "str":
				lit, err := strconv.Unquote(def)
				require.NoError(t, err, "default %s of %s is not a string literal this test reads", def, name)
				if name == "WEBHOOK_RETRY_SCHEDULE" {
					require.Empty(t, lit, "the domain's schedule is the one default")
					s, err := webhook.ParseRetrySchedule(want)
					require.NoError(t, err, "README's %s", name)
					assert.Equal(t, webhook.DefaultRetrySchedule().Delays, s.Delays, "README's %s is not the code's default", name)
					break
				}
				assert.Equal(t, lit, want, "README's default of %s", name)
			case "integer":
				n, ok := intLiteral(def)
				require.True(t, ok, "default %s of %s is not an integer literal this test reads (digits, or a<<b)", def, name)
				assert.Equal(t, strconv.Itoa(n), want, "README's default of %s", name)
			case "duration":
				require.Contains(t, def, "time.", "default %s of %s is not a duration literal this test reads", def, name)
				d, err := time.ParseDuration(want)
				require.NoError(t, err, "README's default of %s", name)
				assert.Equal(t, goDuration(t, def), d, "README's default of %s", name)
			case "boolean":
				assert.Equal(t, def, want, "README's default of %s", name)
			}
			checked++
		})
	}
	assert.GreaterOrEqual(t, checked, 20)
}

func TestJobMaxRunning(t *testing.T) {
	t.Setenv("JOB_MAX_RUNNING", "")
	c, err := config.Load()
	require.NoError(t, err)
	assert.Equal(t, 4, c.JobMaxRunning)
	for _, bad := range []string{"0", "-1", "many"} {
		t.Setenv("JOB_MAX_RUNNING", bad)
		_, err := config.Load()
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "JOB_MAX_RUNNING")
	}
}

func TestTradesRetention(t *testing.T) {
	for _, c := range []struct {
		value string
		want  time.Duration
		err   bool
	}{
		{"", 0, false},
		{"0", 0, false},
		{"30d", 30 * 24 * time.Hour, false},
		{"720h", 720 * time.Hour, false},
		{"72h", 72 * time.Hour, false},
		{"3d", 72 * time.Hour, false},
		{"48h", 0, true}, // under the minimum: the windows and rankings read 48 h of trades
		{"2d", 0, true},
		{"-5d", 0, true},
		{"thirty days", 0, true},
		{"1.5d", 0, true},
	} {
		t.Run(c.value, func(t *testing.T) {
			t.Setenv("TRADES_RETENTION", c.value)
			got, err := config.Load()
			if c.err {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "TRADES_RETENTION")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, got.TradesRetention)
		})
	}
}

// A chain is followed only when its RPC URL is set, with its own documented defaults.
func TestChainFollowers(t *testing.T) {
	t.Setenv("CHAIN_RPC_ETH", "")
	t.Setenv("CHAIN_RPC_BSC", "")
	c, err := config.Load()
	require.NoError(t, err)
	assert.Empty(t, c.Followers, "no follower unless configured")

	t.Setenv("CHAIN_RPC_BSC", "ws://10.0.0.7:8546")
	t.Setenv("CHAIN_STABLE_TOKENS_BSC", " 0xA, ,0xB ")
	c, err = config.Load()
	require.NoError(t, err)
	require.Len(t, c.Followers, 1)
	f := c.Followers[0]
	assert.Equal(t, "bsc", f.Chain)
	assert.Equal(t, "ws://10.0.0.7:8546", f.RPC)
	assert.Equal(t, 15, f.Confirmations)
	assert.Equal(t, int64(-1), f.StartBlock)
	assert.Equal(t, []string{"0xA", "0xB"}, f.Stables)

	t.Setenv("CHAIN_CONFIRMATIONS_BSC", "-2")
	t.Setenv("CHAIN_LOG_RANGE", "0")
	_, err = config.Load()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "CHAIN_CONFIRMATIONS_BSC must not be negative")
	assert.Contains(t, err.Error(), "CHAIN_LOG_RANGE must be at least 1")
}

// intLiteral reads an integer default as config.go writes them: digits (with _ separators) or a
// shift such as 1<<20.
func intLiteral(def string) (int, bool) {
	def = strings.ReplaceAll(def, "_", "")
	if a, b, ok := strings.Cut(def, "<<"); ok {
		x, err1 := strconv.Atoi(strings.TrimSpace(a))
		y, err2 := strconv.Atoi(strings.TrimSpace(b))
		return x << y, err1 == nil && err2 == nil && y >= 0 && y < 62
	}
	n, err := strconv.Atoi(def)
	return n, err == nil
}

func TestReplicaSettings(t *testing.T) {
	t.Setenv("DATABASE_REPLICA_URLS", "")
	t.Setenv("REPLICA_MAX_LAG", "")
	c, err := config.Load()
	require.NoError(t, err)
	assert.Empty(t, c.DatabaseReplicaURLs, "no replica by default: every read on the primary")
	assert.Equal(t, 5*time.Second, c.ReplicaMaxLag)

	t.Setenv("DATABASE_REPLICA_URLS", " postgres://a:1/x , ,postgres://b:2/x")
	t.Setenv("REPLICA_MAX_LAG", "250ms")
	c, err = config.Load()
	require.NoError(t, err)
	assert.Equal(t, []string{"postgres://a:1/x", "postgres://b:2/x"}, c.DatabaseReplicaURLs)
	assert.Equal(t, 250*time.Millisecond, c.ReplicaMaxLag)

	t.Setenv("REPLICA_MAX_LAG", "0s")
	_, err = config.Load()
	require.ErrorContains(t, err, "REPLICA_MAX_LAG")
}

func TestReplicaURLMustBePostgres(t *testing.T) {
	t.Setenv("DATABASE_REPLICA_URLS", "http://u:secret@a/x")
	_, err := config.Load()
	require.ErrorContains(t, err, "DATABASE_REPLICA_URLS")
	assert.NotContains(t, err.Error(), "secret", "the password stays out of the message")
}
