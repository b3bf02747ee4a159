// Package realtime is the realtime WebSocket server over the Centrifuge library
// (github.com/centrifugal/centrifuge): connections at /connection/websocket authenticated by API
// key, the channel check and filter of each subscription, the Redis broker that carries
// publications between nodes, and ports.StreamHub for the publisher (app/stream). It imports
// domain, ports and app/stream (for the channel table).
package realtime

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/centrifugal/centrifuge"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tokenscope/tokenscope/app/stream"
	"github.com/tokenscope/tokenscope/domain/account"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/ratelimit"
	"github.com/tokenscope/tokenscope/ports"
)

// Path is where the public client connects (reference section 1.1).
const Path = "/connection/websocket"

// Config is the server's settings (app/config reads them from the environment).
type Config struct {
	// RedisURL, when set, makes nodes share publications and announcements through Redis.
	RedisURL string
	// RedisPrefix namespaces the Redis keys and channels (tests use one per test).
	RedisPrefix string
	// QueueBytes bounds each connection's outgoing queue; a connection whose queue overflows is
	// closed with code 3008 "slow".
	QueueBytes int
	// WriteTimeout bounds one write to a connection; a client that does not read is closed.
	WriteTimeout time.Duration
	// ChannelLimit is the most subscriptions one connection may hold.
	ChannelLimit int
	// AllowedOrigins lists the browser origins (scheme://host[:port]) allowed besides the
	// server's own host; "*" allows any.
	AllowedOrigins []string
	// Name is the node's name in logs (the hostname when empty).
	Name string
	// Limiter, when set, makes every connect spend one request of its key's rate limit bucket
	// (DefaultLimit for keys without their own; a zero limit: unlimited), the REST calls' bucket.
	Limiter      ports.RateLimiter
	DefaultLimit ratelimit.Limit
	// ConnectionsPerKey bounds one key's open connections on this node (0: unbounded).
	ConnectionsPerKey int
}

// Authenticator turns a presented API key into a principal (app/apikey).
type Authenticator interface {
	Authenticate(ctx context.Context, presented string) (account.Principal, error)
	// Recheck is Authenticate trusting a cached record only when read less than maxAge ago.
	Recheck(ctx context.Context, presented string, maxAge time.Duration) (account.Principal, error)
}

// KeyRecheck is how often an open connection's key is checked again, trusting a record read
// at most this long ago: a key revoked by another process, which requests stop honouring within
// the key cache's 10 s (app/apikey.CacheTTL), closes its streams within 2×KeyRecheck = 10 s.
// A key's end (apikey create --expires) closes them at that second.
const KeyRecheck = 5 * time.Second

// Server is one node: the Centrifuge node, its WebSocket handler and the hub the publisher uses.
type Server struct {
	node      *centrifuge.Node
	handler   http.Handler
	clustered bool
	announce  func([]byte)
	log       *slog.Logger
}

const announceOp = "committed"

// New builds a node; with hostConnections false it only publishes (an importer with Redis),
// and no handler is served. reg gets the connection metrics when not nil.
func New(cfg Config, auth Authenticator, log *slog.Logger, reg prometheus.Registerer) (*Server, error) {
	if cfg.QueueBytes <= 0 {
		cfg.QueueBytes = 1 << 20
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = time.Second
	}
	if cfg.ChannelLimit <= 0 {
		cfg.ChannelLimit = 100
	}
	node, err := centrifuge.New(centrifuge.Config{
		Name: cfg.Name, Version: "tokenscope", LogLevel: centrifuge.LogLevelError,
		LogHandler: func(e centrifuge.LogEntry) {
			log.Warn("stream: "+e.Message, "fields", fmt.Sprint(e.Fields))
		},
		ClientQueueMaxSize: cfg.QueueBytes,
		ClientChannelLimit: cfg.ChannelLimit,
	})
	if err != nil {
		return nil, err
	}
	s := &Server{node: node, log: log}
	if cfg.RedisURL != "" {
		shard, err := centrifuge.NewRedisShard(node, centrifuge.RedisShardConfig{Address: cfg.RedisURL})
		if err != nil {
			return nil, fmt.Errorf("stream: redis: %w", err)
		}
		prefix := cfg.RedisPrefix
		if prefix == "" {
			prefix = "tokenscope"
		}
		broker, err := centrifuge.NewRedisBroker(node, centrifuge.RedisBrokerConfig{Prefix: prefix, Shards: []*centrifuge.RedisShard{shard}})
		if err != nil {
			return nil, fmt.Errorf("stream: redis broker: %w", err)
		}
		node.SetBroker(broker)
		s.clustered = true
	}
	m := newMetrics(node, reg)
	node.OnNotification(func(e centrifuge.NotificationEvent) {
		if e.Op == announceOp && s.announce != nil {
			s.announce(e.Data)
		}
	})
	gate := &connectGate{limiter: cfg.Limiter, def: cfg.DefaultLimit, perKey: cfg.ConnectionsPerKey, open: map[string]int{}, log: log}
	node.OnConnecting(func(ctx context.Context, e centrifuge.ConnectEvent) (centrifuge.ConnectReply, error) {
		reply, p, err := connecting(ctx, auth, e)
		if err != nil {
			return reply, err
		}
		if err := gate.admit(ctx, p); err != nil {
			m.refused.WithLabelValues(fmt.Sprint(err.(*centrifuge.Disconnect).Code)).Inc()
			return centrifuge.ConnectReply{}, err
		}
		return reply, nil
	})
	node.OnConnect(func(c *centrifuge.Client) {
		m.connects.Inc()
		c.OnRefresh(func(_ centrifuge.RefreshEvent, cb centrifuge.RefreshCallback) {
			// Off the connection's timer goroutine: the recheck may read the database.
			go func() { cb(recheck(c.Context(), auth)) }()
		})
		c.OnSubscribe(func(e centrifuge.SubscribeEvent, cb centrifuge.SubscribeCallback) {
			cb(subscribe(c, e))
		})
		c.OnDisconnect(func(e centrifuge.DisconnectEvent) {
			m.disconnects.WithLabelValues(fmt.Sprint(e.Code)).Inc()
		})
	})
	s.handler = withQueryToken(centrifuge.NewWebsocketHandler(node, centrifuge.WebsocketConfig{
		CheckOrigin:  originCheck(cfg.AllowedOrigins),
		WriteTimeout: cfg.WriteTimeout,
		// A read buffer of its own makes the upgrader read through the connection the filter
		// tap wraps (listener.go), not the HTTP server's buffered reader.
		ReadBufferSize: 4096,
		// Mostly idle connections: keep the read loop's stack small (the library's advice).
		ProcessCommandsOffReadLoop: true,
	}))
	return s, nil
}

// OnAnnounce sets the handler every announcement (Announce on any node) reaches.
func (s *Server) OnAnnounce(f func([]byte)) { s.announce = f }

// Run starts the node (and its broker connection).
func (s *Server) Run() error { return s.node.Run() }

// Shutdown closes every connection and the broker.
func (s *Server) Shutdown(ctx context.Context) error { return s.node.Shutdown(ctx) }

// Handler is the WebSocket endpoint (mount it at Path).
func (s *Server) Handler() http.Handler { return s.handler }

// NumClients is the connections this node holds.
func (s *Server) NumClients() int { return s.node.Hub().NumClients() }

var _ ports.StreamHub = (*Server)(nil)

// Publish sends through the broker (every node's subscribers).
func (s *Server) Publish(channel string, data []byte, tags map[string]string) error {
	_, err := s.node.Publish(channel, data, centrifuge.WithTags(tags))
	return err
}

// Deliver sends to this node's subscribers only.
func (s *Server) Deliver(channel string, data []byte, tags map[string]string) error {
	return s.node.Hub().BroadcastPublication(channel, &centrifuge.Publication{Data: data, Tags: tags, Time: time.Now().UnixMilli()}, centrifuge.StreamPosition{})
}

// Reaches: with a shared broker a subscriber may be on any node, so every publication goes to
// Redis (a PUBLISH nobody subscribed to costs Redis nothing more); alone, only channels with a
// subscriber here.
func (s *Server) Reaches(channel string) bool {
	return s.clustered || s.node.Hub().NumSubscribers(channel) > 0
}

// LocalChannels lists the channels with subscribers on this node.
func (s *Server) LocalChannels() []string { return s.node.Hub().Channels() }

// Announce reaches every node's OnAnnounce handler, this one's included.
func (s *Server) Announce(data []byte) error { return s.node.Notify(announceOp, data, "") }

// connecting authenticates a connection by the token of its connect command, or, when that is
// empty, the key of the upgrade request (withQueryToken: a key header or the `token` query
// parameter; the public client sends its token in both the query and the command).
// A missing or unknown key closes the connection with 3500 "invalid token", a key without the
// read scope with 3507 "permission denied"; neither is retried by the client.
func connecting(ctx context.Context, auth Authenticator, e centrifuge.ConnectEvent) (centrifuge.ConnectReply, account.Principal, error) {
	key := strings.TrimSpace(e.Token)
	if key == "" {
		key, _ = ctx.Value(queryTokenKey{}).(string)
	}
	if key == "" {
		return centrifuge.ConnectReply{}, account.Principal{}, centrifuge.DisconnectInvalidToken
	}
	p, err := auth.Authenticate(ctx, key)
	if err != nil {
		if fault.Is(err, fault.KindUnauthorized) {
			return centrifuge.ConnectReply{}, p, centrifuge.DisconnectInvalidToken
		}
		return centrifuge.ConnectReply{}, p, centrifuge.ErrorInternal
	}
	if !p.Has(account.ScopeRead) {
		return centrifuge.ConnectReply{}, p, centrifuge.DisconnectPermissionDenied
	}
	// The connection "expires" every KeyRecheck (or at the key's end): the library then calls
	// the refresh handler (recheck), which keeps it or closes it.
	return centrifuge.ConnectReply{Context: context.WithValue(ctx, connKeyKey{}, key),
		Credentials: &centrifuge.Credentials{UserID: p.AccountID, ExpireAt: nextCheck(time.Now(), p)}}, p, nil
}

// connectGate admits a connect of an authenticated key: it spends one request of the key's
// bucket and holds one of the key's places on this node until the connection ends.
type connectGate struct {
	limiter ports.RateLimiter
	def     ratelimit.Limit
	perKey  int
	log     *slog.Logger

	mu   sync.Mutex
	open map[string]int // connections (and connects under way) by key id
}

// admit refuses a connect with 3013 "too many requests" when the key's bucket is empty (the
// client retries later, with backoff) or 3504 "connection limit" when the key already holds
// ConnectionsPerKey connections (final: the client reports it and does not retry). ctx is the
// connection's: its place is given back when it ends, whether or not the connect completes.
func (g *connectGate) admit(ctx context.Context, p account.Principal) error {
	if l := p.Limit.Or(g.def); g.limiter != nil && !l.IsZero() {
		d, err := g.limiter.Allow(ctx, p.KeyID, l)
		// A limiter that cannot decide lets the connect through, as it does requests.
		if err == nil && !d.Allowed {
			return &centrifuge.DisconnectTooManyRequests
		}
	}
	if g.perKey <= 0 {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.open[p.KeyID] >= g.perKey {
		return &centrifuge.DisconnectConnectionLimit
	}
	g.open[p.KeyID]++
	context.AfterFunc(ctx, func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.open[p.KeyID]--; g.open[p.KeyID] <= 0 {
			delete(g.open, p.KeyID)
		}
	})
	return nil
}

type connKeyKey struct{}

// recheck is the refresh of an open connection: its key checked again. A key revoked, expired
// or gone closes it with 3500, as a connect with it would be refused; a store that cannot
// answer keeps it until the next check (the limiter and the key cache fail open the same way).
func recheck(ctx context.Context, auth Authenticator) (centrifuge.RefreshReply, error) {
	key, _ := ctx.Value(connKeyKey{}).(string)
	p, err := auth.Recheck(ctx, key, KeyRecheck)
	now := time.Now()
	switch {
	case fault.Is(err, fault.KindUnauthorized):
		return centrifuge.RefreshReply{}, centrifuge.DisconnectInvalidToken
	case err != nil:
		return centrifuge.RefreshReply{ExpireAt: now.Add(KeyRecheck).Unix()}, nil
	case !p.Has(account.ScopeRead):
		return centrifuge.RefreshReply{}, centrifuge.DisconnectPermissionDenied
	}
	return centrifuge.RefreshReply{ExpireAt: nextCheck(now, p)}, nil
}

// nextCheck is when a connection's key is checked next (Unix seconds, the library's unit):
// KeyRecheck from now, or the key's end when that comes first (rounded up, so the check finds
// the key ended).
func nextCheck(now time.Time, p account.Principal) int64 {
	next := now.Add(KeyRecheck).Unix()
	if p.ExpiresAt != nil {
		end := p.ExpiresAt.Unix()
		if p.ExpiresAt.After(time.Unix(end, 0)) {
			end++
		}
		next = min(next, end)
	}
	return next
}

// subscribe accepts a channel of the table (app/stream) and turns the filter the client sent
// with it (seen by the tap, filter.go) into the library's server tags filter.
func subscribe(c *centrifuge.Client, e centrifuge.SubscribeEvent) (centrifuge.SubscribeReply, error) {
	ch, err := stream.Parse(e.Channel)
	if err != nil {
		return centrifuge.SubscribeReply{}, centrifuge.ErrorUnknownChannel
	}
	var opts centrifuge.SubscribeOptions
	if expr := filtersOf(c.Context()).take(e.Channel); expr != "" && ch.Kind.Filter {
		node, err := CompileFilter(expr)
		if err != nil {
			return centrifuge.SubscribeReply{}, &centrifuge.Error{Code: centrifuge.ErrorBadRequest.Code, Message: "bad filter: " + err.Error()}
		}
		opts.ServerTagsFilter = node
	}
	return centrifuge.SubscribeReply{Options: opts}, nil
}

type queryTokenKey struct{}

// withQueryToken puts the key the upgrade request presents into the connection's context for
// connecting: the `X-API-KEY` header, else `Authorization: Bearer <key>` (the REST key paths,
// in the REST order), else the `token` query parameter the public client adds to the URL.
// Clients that cannot set a header on the upgrade (browsers) use the query or the connect
// command; the public Go client built with an API key alone sends none of these (its stream
// never reads the key), so it has to be built with the key as its token.
func withQueryToken(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if t := upgradeKey(r); t != "" {
			r = r.WithContext(context.WithValue(r.Context(), queryTokenKey{}, t))
		}
		h.ServeHTTP(w, r)
	})
}

func upgradeKey(r *http.Request) string {
	if k := strings.TrimSpace(r.Header.Get("X-API-KEY")); k != "" {
		return k
	}
	if h := strings.TrimSpace(r.Header.Get("Authorization")); len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		if k := strings.TrimSpace(h[7:]); k != "" {
			return k
		}
	}
	return strings.TrimSpace(r.URL.Query().Get("token"))
}

// originCheck allows requests without an Origin (non-browser clients), the server's own host,
// and the listed origins.
func originCheck(allowed []string) func(r *http.Request) bool {
	return func(r *http.Request) bool {
		origin := r.Header.Get("Origin")
		if origin == "" || slices.Contains(allowed, "*") {
			return true
		}
		u, err := url.Parse(origin)
		if err != nil {
			return false
		}
		if strings.EqualFold(u.Host, r.Host) {
			return true
		}
		return slices.ContainsFunc(allowed, func(a string) bool { return strings.EqualFold(strings.TrimSuffix(a, "/"), origin) })
	}
}

// metrics are the node's connection gauges and disconnect counts on /metrics.
type metrics struct {
	connects    prometheus.Counter
	disconnects *prometheus.CounterVec
	refused     *prometheus.CounterVec
}

func newMetrics(node *centrifuge.Node, reg prometheus.Registerer) *metrics {
	m := &metrics{
		connects: prometheus.NewCounter(prometheus.CounterOpts{Name: "tokenscope_stream_connects_total",
			Help: "WebSocket stream connections accepted (authenticated)."}),
		disconnects: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tokenscope_stream_disconnects_total",
			Help: "WebSocket stream disconnections by close code (3008 slow consumer, 3500 invalid token, 3507 permission denied)."}, []string{"code"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tokenscope_stream_connects_refused_total",
			Help: "WebSocket stream connects of a valid key refused by code (3013 rate limit bucket empty, 3504 STREAM_CONNECTIONS_PER_KEY reached)."}, []string{"code"}),
	}
	if reg == nil {
		return m
	}
	reg.MustRegister(m.connects, m.disconnects, m.refused,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "tokenscope_stream_connections",
			Help: "WebSocket stream connections open on this process."}, func() float64 { return float64(node.Hub().NumClients()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "tokenscope_stream_subscriptions",
			Help: "Channel subscriptions held by this process's connections."}, func() float64 { return float64(node.Hub().NumSubscriptions()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "tokenscope_stream_channels",
			Help: "Channels with at least one subscriber on this process."}, func() float64 { return float64(node.Hub().NumChannels()) }),
	)
	return m
}
