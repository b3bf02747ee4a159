// Package devserver embeds a single-process Temporal server (SQLite persistence) and, optionally,
// the Temporal Web UI, so tokenscope-dev (`make run`) needs nothing but Go and Postgres.
// Production runs a real Temporal cluster instead (see docker-compose.yml). It may import the
// Temporal server and UI server libraries; nothing imports it but cmd/tokenscope-dev, so the
// production binary links neither (cmd/tokenscope/deps_test.go checks it).
package devserver

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uiopts "github.com/temporalio/ui-server/v2/server/server_options"
	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	tlog "go.temporal.io/server/common/log"
	"go.temporal.io/server/common/membership/static"
	"go.temporal.io/server/common/metrics"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/common/primitives"
	sqliteschema "go.temporal.io/server/schema/sqlite"
	"go.temporal.io/server/temporal"

	"github.com/tokenscope/tokenscope/internal/loopback"
)

// Config says where the embedded server keeps its state and where it listens.
type Config struct {
	// DataDir holds temporal.sqlite; empty means in-memory (state lost on exit).
	DataDir string
	// Host is the interface every service binds to (default 127.0.0.1).
	Host string
	// FrontendPort is the gRPC port clients dial (default 7233; 0 picks a free one).
	FrontendPort int
	// UIPort serves the Temporal Web UI; 0 disables it.
	UIPort int
	// Namespace is created at start (default "default").
	Namespace string
	// LogLevel of the server's own logger: debug, info, warn, error (default warn).
	LogLevel string
	// Log, when set, receives the server's lines (through the service's handler, in its shape);
	// otherwise they go to stderr as the server's own JSON.
	Log *slog.Logger
}

// Server is a running embedded Temporal server.
type Server struct {
	srv       temporal.Server
	ui        *uiserver.Server
	hostPort  string
	uiURL     string
	namespace string
	stopping  *atomic.Bool
}

// HostPort is the frontend address clients dial.
func (s *Server) HostPort() string { return s.hostPort }

// UIURL is the Web UI's address, empty when the UI is off.
func (s *Server) UIURL() string { return s.uiURL }

// Start boots the server and returns once its frontend accepts connections.
func Start(cfg Config) (*Server, error) {
	if cfg.Host == "" {
		cfg.Host = "127.0.0.1"
	}
	if cfg.Namespace == "" {
		cfg.Namespace = "default"
	}
	if cfg.LogLevel == "" {
		cfg.LogLevel = "warn"
	}
	// history, matching and worker gRPC, metrics, the frontend's HTTP API (without one the
	// server warns at every start that Nexus is unavailable); then the frontend if unset.
	ports, err := loopback.FreePorts(cfg.Host, 6)
	if err != nil {
		return nil, err
	}
	frontend := cfg.FrontendPort
	if frontend == 0 {
		frontend = ports[5]
	}

	store := config.SQL{PluginName: sqliteplugin.PluginName, ConnectAttributes: map[string]string{}}
	fresh := true
	if cfg.DataDir == "" {
		store.DatabaseName = "tokenscope-" + strconv.FormatInt(time.Now().UnixNano(), 36)
		store.ConnectAttributes["mode"] = "memory"
		store.ConnectAttributes["cache"] = "shared"
	} else {
		if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
			return nil, fmt.Errorf("temporal data dir: %w", err)
		}
		store.DatabaseName = filepath.Join(cfg.DataDir, "temporal.sqlite")
		store.ConnectAttributes["mode"] = "rwc"
		// WAL lets readers (visibility, the UI) proceed while history writes.
		store.ConnectAttributes["_journal_mode"] = "WAL"
		store.ConnectAttributes["_synchronous"] = "NORMAL"
		if _, err := os.Stat(store.DatabaseName); err == nil {
			fresh = false
		}
	}
	if fresh && cfg.DataDir != "" {
		if err := sqliteschema.SetupSchema(&store); err != nil {
			// A half-made file would pass for an existing store at the next start.
			for _, suffix := range []string{"", "-wal", "-shm"} {
				_ = os.Remove(store.DatabaseName + suffix)
			}
			return nil, fmt.Errorf("temporal schema: %w", err)
		}
	}

	c := &config.Config{}
	c.Global.Metrics = &metrics.Config{Prometheus: &metrics.PrometheusConfig{
		ListenAddress: net.JoinHostPort(cfg.Host, strconv.Itoa(ports[3])), HandlerPath: "/metrics"}}
	c.Persistence = config.Persistence{
		DefaultStore: sqliteplugin.PluginName, VisibilityStore: sqliteplugin.PluginName, NumHistoryShards: 1,
		DataStores: map[string]config.DataStore{sqliteplugin.PluginName: {SQL: &store}},
	}
	hostPort := net.JoinHostPort(cfg.Host, strconv.Itoa(frontend))
	c.ClusterMetadata = &cluster.Config{
		FailoverVersionIncrement: 10, MasterClusterName: "active", CurrentClusterName: "active",
		ClusterInformation: map[string]cluster.ClusterInformation{
			"active": {Enabled: true, InitialFailoverVersion: 1, RPCAddress: hostPort},
		},
	}
	c.DCRedirectionPolicy = config.DCRedirectionPolicy{Policy: "noop"}
	grpcPorts := map[primitives.ServiceName]int{
		primitives.FrontendService: frontend,
		primitives.HistoryService:  ports[0],
		primitives.MatchingService: ports[1],
		primitives.WorkerService:   ports[2],
	}
	c.Services = map[string]config.Service{}
	// Static membership: every service of this one process is the only host of its kind, at an
	// address known before start. With ringpop (the default) a service bootstraps its membership
	// from the cluster_membership rows in SQLite, which after a restart still list the previous
	// process's gossip ports (fresh ones every start); the join then waits for its 30 s maximum
	// and a 10 s retry, and for those ~50 s the server answers "Not enough hosts to serve the
	// request" although its frontend accepts connections.
	hosts := map[primitives.ServiceName]static.Hosts{}
	for name, port := range grpcPorts {
		rpc := config.RPC{GRPCPort: port, BindOnIP: cfg.Host}
		if name == primitives.FrontendService {
			rpc.HTTPPort = ports[4]
		}
		c.Services[string(name)] = config.Service{RPC: rpc}
		hosts[name] = static.SingleLocalHost(net.JoinHostPort(cfg.Host, strconv.Itoa(port)))
	}
	c.Archival = config.Archival{
		History:    config.HistoryArchival{State: "disabled"},
		Visibility: config.VisibilityArchival{State: "disabled"},
	}
	c.NamespaceDefaults = config.NamespaceDefaults{Archival: config.ArchivalNamespaceDefaults{
		History:    config.HistoryArchivalNamespaceDefaults{State: "disabled"},
		Visibility: config.VisibilityArchivalNamespaceDefaults{State: "disabled"},
	}}
	c.PublicClient = config.PublicClient{HostPort: hostPort}

	nsCfg, err := sqliteschema.NewNamespaceConfig("active", cfg.Namespace, false, nil)
	if err != nil {
		return nil, fmt.Errorf("temporal namespace: %w", err)
	}
	if err := sqliteschema.CreateNamespaces(&store, nsCfg); err != nil {
		return nil, fmt.Errorf("temporal namespace: %w", err)
	}

	// stderr (no Stdout, no file), like our own logs.
	stopping := &atomic.Bool{}
	var logger tlog.Logger = tlog.NewZapLogger(tlog.BuildZapLogger(tlog.Config{Level: cfg.LogLevel}))
	if cfg.Log != nil {
		logger = newSlogLogger(cfg.Log, cfg.LogLevel, stopping)
	}
	authorizer, err := authorization.GetAuthorizerFromConfig(&c.Global.Authorization)
	if err != nil {
		return nil, err
	}
	claims, err := authorization.GetClaimMapperFromConfig(&c.Global.Authorization, logger)
	if err != nil {
		return nil, err
	}
	srv, err := temporal.NewServer(
		temporal.WithConfig(c),
		temporal.ForServices(temporal.DefaultServices),
		temporal.WithStaticHosts(hosts),
		temporal.WithLogger(logger),
		temporal.WithAuthorizer(authorizer),
		temporal.WithClaimMapper(func(*config.Config) authorization.ClaimMapper { return claims }),
		temporal.WithDynamicConfigClient(dynamicconfig.StaticClient{}),
	)
	if err != nil {
		return nil, fmt.Errorf("temporal server: %w", err)
	}
	if err := srv.Start(); err != nil {
		return nil, fmt.Errorf("temporal server start: %w", err)
	}
	s := &Server{srv: srv, hostPort: hostPort, namespace: cfg.Namespace, stopping: stopping}
	if err := waitTCP(hostPort, 30*time.Second); err != nil {
		_ = srv.Stop()
		return nil, err
	}
	if cfg.UIPort != 0 {
		if err := s.startUI(cfg); err != nil {
			_ = srv.Stop()
			return nil, err
		}
	}
	return s, nil
}

func (s *Server) startUI(cfg Config) error {
	ui := uiserver.NewServer(uiopts.WithConfigProvider(&uiconfig.Config{
		TemporalGRPCAddress: s.hostPort,
		Host:                cfg.Host,
		Port:                cfg.UIPort,
		EnableUI:            true,
		DefaultNamespace:    cfg.Namespace,
		HideLogs:            true,
		DisableNewsFetch:    true,
		CORS:                uiconfig.CORS{CookieInsecure: true},
	}))
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.UIPort))
	errc := make(chan error, 1)
	go func() { errc <- ui.Start() }()
	if err := waitTCP(addr, 10*time.Second); err != nil {
		select {
		case e := <-errc:
			return fmt.Errorf("temporal ui: %w", e)
		default:
			return fmt.Errorf("temporal ui: %w", err)
		}
	}
	s.ui = ui
	s.uiURL = "http://" + addr
	return nil
}

// Stop shuts the UI and the server down; from here on, the server's warnings and errors are
// logged at debug (with Config.Log).
func (s *Server) Stop() error {
	s.stopping.Store(true)
	if s.ui != nil {
		s.ui.Stop()
	}
	return s.srv.Stop()
}

func waitTCP(addr string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			return conn.Close()
		}
		if time.Now().After(deadline) {
			return errors.Join(fmt.Errorf("%s did not accept connections within %s", addr, within), err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
