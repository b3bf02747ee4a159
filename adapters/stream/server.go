// Package stream is the realtime WebSocket server over the Centrifuge library
// (github.com/centrifugal/centrifuge): connections at /connection/websocket authenticated by API
// key, the channel check and filter of each subscription, the Redis broker that carries
// publications between nodes, and ports.StreamHub for the publisher (app/stream). It imports
// domain, ports and app/stream (for the channel table).
package stream

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/centrifugal/centrifuge"
	"github.com/prometheus/client_golang/prometheus"

	appstream "github.com/tokenscope/tokenscope/app/stream"
	"github.com/tokenscope/tokenscope/domain/account"
	"github.com/tokenscope/tokenscope/domain/fault"
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
}

// Authenticator turns a presented API key into a principal (app/apikey).
type Authenticator interface {
	Authenticate(ctx context.Context, presented string) (account.Principal, error)
}

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
	node.OnConnecting(func(ctx context.Context, e centrifuge.ConnectEvent) (centrifuge.ConnectReply, error) {
		return connecting(ctx, auth, e)
	})
	node.OnConnect(func(c *centrifuge.Client) {
		m.connects.Inc()
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
// empty, the `token` query parameter of the upgrade request (the public client sends both).
// A missing or unknown key closes the connection with 3500 "invalid token", a key without the
// read scope with 3507 "permission denied"; neither is retried by the client.
func connecting(ctx context.Context, auth Authenticator, e centrifuge.ConnectEvent) (centrifuge.ConnectReply, error) {
	key := strings.TrimSpace(e.Token)
	if key == "" {
		key, _ = ctx.Value(queryTokenKey{}).(string)
	}
	if key == "" {
		return centrifuge.ConnectReply{}, centrifuge.DisconnectInvalidToken
	}
	p, err := auth.Authenticate(ctx, key)
	if err != nil {
		if fault.Is(err, fault.KindUnauthorized) {
			return centrifuge.ConnectReply{}, centrifuge.DisconnectInvalidToken
		}
		return centrifuge.ConnectReply{}, centrifuge.ErrorInternal
	}
	if !p.Has(account.ScopeRead) {
		return centrifuge.ConnectReply{}, centrifuge.DisconnectPermissionDenied
	}
	return centrifuge.ConnectReply{Credentials: &centrifuge.Credentials{UserID: p.AccountID}}, nil
}

// subscribe accepts a channel of the table (app/stream) and turns the filter the client sent
// with it (seen by the tap, filter.go) into the library's server tags filter.
func subscribe(c *centrifuge.Client, e centrifuge.SubscribeEvent) (centrifuge.SubscribeReply, error) {
	ch, err := appstream.Parse(e.Channel)
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

// withQueryToken puts the upgrade request's `token` query parameter into the connection's
// context for connecting.
func withQueryToken(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if t := r.URL.Query().Get("token"); t != "" {
			r = r.WithContext(context.WithValue(r.Context(), queryTokenKey{}, t))
		}
		h.ServeHTTP(w, r)
	})
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
}

func newMetrics(node *centrifuge.Node, reg prometheus.Registerer) *metrics {
	m := &metrics{
		connects: prometheus.NewCounter(prometheus.CounterOpts{Name: "tokenscope_stream_connects_total",
			Help: "WebSocket stream connections accepted (authenticated)."}),
		disconnects: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "tokenscope_stream_disconnects_total",
			Help: "WebSocket stream disconnections by close code (3008 slow consumer, 3500 invalid token, 3507 permission denied)."}, []string{"code"}),
	}
	if reg == nil {
		return m
	}
	reg.MustRegister(m.connects, m.disconnects,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "tokenscope_stream_connections",
			Help: "WebSocket stream connections open on this process."}, func() float64 { return float64(node.Hub().NumClients()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "tokenscope_stream_subscriptions",
			Help: "Channel subscriptions held by this process's connections."}, func() float64 { return float64(node.Hub().NumSubscriptions()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "tokenscope_stream_channels",
			Help: "Channels with at least one subscriber on this process."}, func() float64 { return float64(node.Hub().NumChannels()) }),
	)
	return m
}
