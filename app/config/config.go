// Package config is the only place that reads the environment. Every setting has a default that
// works on a laptop; README.md lists them all. Standard library only.
package config

import (
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// Config is everything tokenscope reads from the environment.
type Config struct {
	DatabaseURL         string
	DBMaxConns          int32
	HTTPAddr            string
	DexHTTPAddr         string
	AdminHTTPAddr       string        // /metrics (and health) for operators; no authentication
	AdminPprof          bool          // also serve Go's profiles (/debug/pprof/) on AdminHTTPAddr
	HTTPReadTimeout     time.Duration // how long a client may take to send a request
	IngestIdleTimeout   time.Duration // how long a streamed POST /v2/ingest body may send nothing
	WorkerHealthAddr    string        // the worker's /healthz and /readyz
	TemporalAddress     string        // empty: tokenscope-dev embeds a server
	TemporalNS          string
	TemporalUIPort      int
	TemporalPort        int
	DataDir             string
	LogLevel            string
	LogFormat           string
	RequestTimeout      time.Duration
	ShutdownTimeout     time.Duration
	KYTProviderURL      string
	KYTAPIKey           string
	KYTFlagged          string        // comma list address[=risk] for the built-in provider
	KYTDeadline         time.Duration // KYT_REGISTER_DEADLINE: a KYT registration's, and a job's, workflow start
	WebhookAllowed      string        // CIDRs allowed as webhook targets besides public addresses
	WebhookRetry        string        // comma list of waits between attempts, e.g. "5s,5m"; empty: domain/webhook.DefaultRetrySchedule
	WebhookDisableAfter time.Duration
	WebhookTimeout      time.Duration // one delivery request
	WebhookDispatchPoll time.Duration // outbox poll interval when idle
	JobPollInterval     time.Duration // how often a followed job's state is read
	JobMaxRunning       int           // an account's unfinished jobs at most; one more is 429
	SSEHeartbeat        time.Duration // ": ping" comment interval of the job stream
	SimulateOnDev       bool
	RefreshInterval     time.Duration
	// TradesRetention is how long trades are kept (0: forever); the refresh loop removes older
	// ones without changing derived state (docs/engine.md, "Retention").
	TradesRetention time.Duration
	// Realtime streams (/connection/websocket).
	RedisURL           string        // empty: one node, publications stay in the process
	RedisPrefix        string        // Redis key and channel prefix of the stream broker
	StreamQueueBytes   int           // each connection's outgoing queue; beyond it the client is closed as slow
	StreamWriteTimeout time.Duration // one write to a connection; a client that stops reading is closed
	StreamChannelLimit int           // subscriptions per connection
	// StreamConnectionsPerKey bounds one API key's open stream connections on a process.
	StreamConnectionsPerKey int
	StreamCoalesce          time.Duration // the most often a coalesced channel publishes
	StreamAllowedOrigin     string        // comma list of browser origins allowed besides the server's own; "*" any
	RateLimitPerMinute      int           // each API key's default sustained rate; 0: keys without their own limit are unlimited
	RateLimitBurst          int           // requests a full bucket allows beyond the per-minute rate
	// RateLimitFailedAuthPerMinute is how many requests one client address may get refused 401
	// a minute (and as many at once); 0: not limited.
	RateLimitFailedAuthPerMinute int
	// Chain followers (docs/engine.md, "Chain follower"): one per chain whose RPC URL is set.
	Followers         []Follower
	ChainLogRange     int           // blocks per eth_getLogs at most (halved while a node refuses)
	ChainPollInterval time.Duration // sleep between steps once a follower has caught up
	// DatabaseReplicaURLs are streaming standbys of DatabaseURL that serve the market reads
	// (empty: every read on the primary). ReplicaMaxLag leaves out a standby further behind.
	DatabaseReplicaURLs []string
	ReplicaMaxLag       time.Duration
}

// Follower is one chain's follower configuration. Addresses are as configured (any case).
type Follower struct {
	Chain         string // eth or bsc
	RPC           string
	Confirmations int
	StartBlock    int64 // negative: the confirmed head when the follower first starts
	Native        string
	Stables       []string
	StablePool    string
}

// Load reads the environment.
func Load() (Config, error) {
	var errs []string
	c := Config{
		DatabaseURL:         str("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/tokenscope?sslmode=disable"),
		HTTPAddr:            str("HTTP_ADDR", ":8080"),
		DexHTTPAddr:         str("DEX_HTTP_ADDR", ":8081"),
		AdminHTTPAddr:       str("ADMIN_HTTP_ADDR", "127.0.0.1:9091"),
		WorkerHealthAddr:    str("WORKER_HEALTH_ADDR", ":8090"),
		TemporalAddress:     str("TEMPORAL_ADDRESS", ""),
		TemporalNS:          str("TEMPORAL_NAMESPACE", "default"),
		DataDir:             str("DATA_DIR", ".data"),
		LogLevel:            str("LOG_LEVEL", "info"),
		LogFormat:           str("LOG_FORMAT", "json"),
		KYTProviderURL:      str("KYT_PROVIDER_URL", ""),
		KYTAPIKey:           str("KYT_API_KEY", ""),
		KYTFlagged:          str("KYT_FLAGGED_ADDRESSES", ""),
		WebhookAllowed:      str("WEBHOOK_ALLOWED_CIDRS", ""),
		WebhookRetry:        str("WEBHOOK_RETRY_SCHEDULE", ""),
		RedisURL:            str("REDIS_URL", ""),
		RedisPrefix:         str("REDIS_PREFIX", "tokenscope"),
		StreamAllowedOrigin: str("ALLOWED_ORIGINS", ""),
	}
	c.StreamQueueBytes = integer("STREAM_QUEUE_BYTES", 1<<20, &errs)
	c.StreamWriteTimeout = duration("STREAM_WRITE_TIMEOUT", time.Second, &errs)
	c.StreamChannelLimit = integer("STREAM_CHANNEL_LIMIT", 100, &errs)
	c.StreamConnectionsPerKey = integer("STREAM_CONNECTIONS_PER_KEY", 50, &errs)
	if c.StreamConnectionsPerKey <= 0 {
		errs = append(errs, "STREAM_CONNECTIONS_PER_KEY must be positive, got "+strconv.Itoa(c.StreamConnectionsPerKey))
	}
	c.StreamCoalesce = duration("STREAM_COALESCE", 250*time.Millisecond, &errs)
	c.DBMaxConns = int32(integer("DB_MAX_CONNS", 20, &errs))
	for _, u := range strings.Split(str("DATABASE_REPLICA_URLS", ""), ",") {
		if u = strings.TrimSpace(u); u != "" {
			if p, err := url.Parse(u); err != nil || (p.Scheme != "postgres" && p.Scheme != "postgresql") {
				errs = append(errs, "DATABASE_REPLICA_URLS: each entry must be a postgres:// URL, got "+strconv.Quote(redactURL(u)))
				continue
			}
			c.DatabaseReplicaURLs = append(c.DatabaseReplicaURLs, u)
		}
	}
	c.ReplicaMaxLag = duration("REPLICA_MAX_LAG", 5*time.Second, &errs)
	if c.ReplicaMaxLag <= 0 {
		errs = append(errs, "REPLICA_MAX_LAG must be positive, got "+c.ReplicaMaxLag.String())
	}
	c.TemporalUIPort = integer("TEMPORAL_UI_PORT", 8233, &errs)
	c.TemporalPort = integer("TEMPORAL_PORT", 7233, &errs)
	c.RequestTimeout = duration("REQUEST_TIMEOUT", 15*time.Second, &errs)
	c.HTTPReadTimeout = duration("HTTP_READ_TIMEOUT", 30*time.Second, &errs)
	if c.HTTPReadTimeout <= 0 {
		errs = append(errs, "HTTP_READ_TIMEOUT must be positive, got "+c.HTTPReadTimeout.String())
	}
	c.IngestIdleTimeout = duration("INGEST_IDLE_TIMEOUT", 30*time.Second, &errs)
	if c.IngestIdleTimeout <= 0 {
		errs = append(errs, "INGEST_IDLE_TIMEOUT must be positive, got "+c.IngestIdleTimeout.String())
	}
	c.ShutdownTimeout = duration("SHUTDOWN_TIMEOUT", 20*time.Second, &errs)
	c.KYTDeadline = duration("KYT_REGISTER_DEADLINE", 5*time.Second, &errs)
	c.WebhookDisableAfter = duration("WEBHOOK_DISABLE_AFTER", 5*24*time.Hour, &errs)
	c.WebhookTimeout = duration("WEBHOOK_TIMEOUT", 15*time.Second, &errs)
	c.WebhookDispatchPoll = duration("WEBHOOK_DISPATCH_POLL", 500*time.Millisecond, &errs)
	c.JobPollInterval = duration("JOB_POLL_INTERVAL", 250*time.Millisecond, &errs)
	c.JobMaxRunning = integer("JOB_MAX_RUNNING", 4, &errs)
	if c.JobMaxRunning < 1 {
		errs = append(errs, "JOB_MAX_RUNNING must be at least 1, got "+strconv.Itoa(c.JobMaxRunning))
	}
	c.SSEHeartbeat = duration("SSE_HEARTBEAT", 15*time.Second, &errs)
	c.RefreshInterval = duration("MARKET_REFRESH_INTERVAL", 2*time.Second, &errs)
	c.TradesRetention = retention("TRADES_RETENTION", &errs)
	c.SimulateOnDev = boolean("DEV_SIMULATE", true, &errs)
	c.AdminPprof = boolean("ADMIN_PPROF", false, &errs)
	c.RateLimitPerMinute = integer("RATE_LIMIT_PER_MINUTE", 6000, &errs)
	if c.RateLimitPerMinute < 0 || c.RateLimitPerMinute > 1_000_000_000 {
		errs = append(errs, "RATE_LIMIT_PER_MINUTE must be between 0 and 1000000000, got "+strconv.Itoa(c.RateLimitPerMinute))
	}
	c.RateLimitBurst = integer("RATE_LIMIT_BURST", 3000, &errs)
	if c.RateLimitBurst < 0 || c.RateLimitBurst > 1_000_000 {
		errs = append(errs, "RATE_LIMIT_BURST must be between 0 and 1000000, got "+strconv.Itoa(c.RateLimitBurst))
	}
	c.RateLimitFailedAuthPerMinute = integer("RATE_LIMIT_FAILED_AUTH_PER_MINUTE", 60, &errs)
	if c.RateLimitFailedAuthPerMinute < 0 || c.RateLimitFailedAuthPerMinute > 1_000_000 {
		errs = append(errs, "RATE_LIMIT_FAILED_AUTH_PER_MINUTE must be between 0 and 1000000, got "+strconv.Itoa(c.RateLimitFailedAuthPerMinute))
	}
	c.ChainLogRange = integer("CHAIN_LOG_RANGE", 2000, &errs)
	if c.ChainLogRange < 1 {
		errs = append(errs, "CHAIN_LOG_RANGE must be at least 1, got "+strconv.Itoa(c.ChainLogRange))
	}
	c.ChainPollInterval = duration("CHAIN_POLL_INTERVAL", 3*time.Second, &errs)
	// Each chain's variables are spelled out (not built from the chain's name) so README's table
	// test finds them.
	followers := []Follower{{
		Chain: "eth", RPC: str("CHAIN_RPC_ETH", ""), Confirmations: integer("CHAIN_CONFIRMATIONS_ETH", 12, &errs),
		StartBlock: int64(integer("CHAIN_START_BLOCK_ETH", -1, &errs)),
		Native:     str("CHAIN_NATIVE_TOKEN_ETH", "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2"),
		Stables: list(str("CHAIN_STABLE_TOKENS_ETH",
			"0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48,0xdac17f958d2ee523a2206206994597c13d831ec7,0x6b175474e89094c44da98b954eedeac495271d0f")),
		StablePool: str("CHAIN_STABLE_POOL_ETH", "0xb4e16d0168e52d35cacd2c6185b44281ec28c9dc"),
	}, {
		Chain: "bsc", RPC: str("CHAIN_RPC_BSC", ""), Confirmations: integer("CHAIN_CONFIRMATIONS_BSC", 15, &errs),
		StartBlock: int64(integer("CHAIN_START_BLOCK_BSC", -1, &errs)),
		Native:     str("CHAIN_NATIVE_TOKEN_BSC", "0xbb4cdb9cbd36b01bd1cbaebf2de08d9173bc095c"),
		Stables: list(str("CHAIN_STABLE_TOKENS_BSC",
			"0x55d398326f99059ff775485246999027b3197955,0xe9e7cea3dedca5984780bafc599bd69add087d56,0x8ac76a51cc950d9822d68b83fe1ad97b32cd580d")),
		StablePool: str("CHAIN_STABLE_POOL_BSC", "0x16b9a82891338f9ba80e2d6970fdda79d1eb0dae"),
	}}
	for _, f := range followers {
		if f.Confirmations < 0 {
			errs = append(errs, "CHAIN_CONFIRMATIONS_"+strings.ToUpper(f.Chain)+" must not be negative, got "+strconv.Itoa(f.Confirmations))
		}
		if f.RPC != "" {
			c.Followers = append(c.Followers, f)
		}
	}
	if len(errs) > 0 {
		return c, fmt.Errorf("configuration: %s", strings.Join(errs, "; "))
	}
	return c, nil
}

func str(key, def string) string {
	if v, ok := os.LookupEnv(key); ok && v != "" {
		return v
	}
	return def
}

// list splits a comma list, dropping empty items.
func list(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func integer(key string, def int, errs *[]string) int {
	v := os.Getenv(key)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		*errs = append(*errs, key+" must be an integer, got "+strconv.Quote(v))
		return def
	}
	return n
}

func duration(key string, def time.Duration, errs *[]string) time.Duration {
	v := os.Getenv(key)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		*errs = append(*errs, key+" must be a duration such as 5s, got "+strconv.Quote(v))
		return def
	}
	return d
}

// MinTradesRetention is the shortest TRADES_RETENTION: the windows look back 24 h and the 24h
// ranking compares with the 24 h before them, all read from stored trades, so 48 h must stay, and
// a day more leaves room for late trades and a stopped refresh loop.
const MinTradesRetention = 72 * time.Hour

// retention reads TRADES_RETENTION: empty or 0 keeps every trade; otherwise a duration such as
// 720h, or whole days such as 30d, of at least MinTradesRetention.
func retention(key string, errs *[]string) time.Duration {
	v := strings.TrimSpace(os.Getenv(key))
	if v == "" || v == "0" {
		return 0
	}
	var d time.Duration
	if days, ok := strings.CutSuffix(v, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n <= 0 || n > 100_000 {
			*errs = append(*errs, key+" must be a duration such as 720h or a number of days such as 30d, got "+strconv.Quote(v))
			return 0
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			*errs = append(*errs, key+" must be a duration such as 720h or a number of days such as 30d, got "+strconv.Quote(v))
			return 0
		}
	}
	if d < MinTradesRetention {
		*errs = append(*errs, key+" must be 0 (keep every trade) or at least 72h (3d), got "+strconv.Quote(v))
		return 0
	}
	return d
}

func boolean(key string, def bool, errs *[]string) bool {
	v := os.Getenv(key)
	if v == "" {
		return def
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		*errs = append(*errs, key+" must be true or false, got "+strconv.Quote(v))
		return def
	}
	return b
}

// redactURL drops a URL's password from an error message.
func redactURL(s string) string {
	p, err := url.Parse(s)
	if err != nil || p.User == nil {
		if err != nil {
			return "(unparsable)"
		}
		return s
	}
	return p.Redacted()
}
