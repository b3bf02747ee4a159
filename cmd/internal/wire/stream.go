package wire

import (
	"context"
	"log/slog"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tokenscope/tokenscope/adapters/httpapi"
	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/adapters/realtime"
	"github.com/tokenscope/tokenscope/app/apikey"
	"github.com/tokenscope/tokenscope/app/candle"
	"github.com/tokenscope/tokenscope/app/config"
	"github.com/tokenscope/tokenscope/app/ingest"
	"github.com/tokenscope/tokenscope/app/market"
	"github.com/tokenscope/tokenscope/app/stream"
	"github.com/tokenscope/tokenscope/domain/ohlcv"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Streams is the realtime server of a process and the publisher that feeds it.
type Streams struct {
	Server    *realtime.Server
	Publisher *stream.Publisher
}

func streamConfig(cfg config.Config, rl httpapi.RateLimit) realtime.Config {
	return realtime.Config{
		RedisURL: cfg.RedisURL, RedisPrefix: cfg.RedisPrefix, QueueBytes: cfg.StreamQueueBytes,
		WriteTimeout: cfg.StreamWriteTimeout, ChannelLimit: cfg.StreamChannelLimit,
		AllowedOrigins: splitList(cfg.StreamAllowedOrigin),
		Limiter:        rl.Limiter, DefaultLimit: rl.Default, ConnectionsPerKey: cfg.StreamConnectionsPerKey,
	}
}

// NewStreams builds the stream node and its publisher over the market reads, and makes ingest
// publish through it. reg (nil: none) gets the connection metrics; rl is the REST calls' rate
// limit, which connects spend from too (zero: connects are not limited).
func NewStreams(cfg config.Config, log *slog.Logger, keys realtime.Authenticator, m *market.Service,
	candles *candle.Service, ing *ingest.Service, clock SystemClock, reg prometheus.Registerer, rl httpapi.RateLimit) (*Streams, error) {
	srv, err := realtime.New(streamConfig(cfg, rl), keys, log, reg)
	if err != nil {
		return nil, err
	}
	pub := stream.New(srv, m, clock, log).WithTick(cfg.StreamCoalesce)
	if candles != nil {
		pub.WithCandles(candleSource(candles))
	}
	srv.OnAnnounce(pub.Announced)
	ing.WithListener(pub)
	if reg != nil {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "tokenscope_stream_dropped_batches_total",
			Help: "Committed ingest batches whose publications were dropped because the publisher's queue was full."},
			func() float64 { return float64(pub.Dropped()) }))
	}
	return &Streams{Server: srv, Publisher: pub}, nil
}

// Run starts the node and publishes until ctx ends; it then publishes what is queued and
// closes the node.
func (s *Streams) Run(ctx context.Context) error {
	if err := s.Server.Run(); err != nil {
		return err
	}
	s.Publisher.Run(ctx)
	sctx, cancel := context.WithTimeout(context.Background(), 5e9)
	defer cancel()
	return s.Server.Shutdown(sctx)
}

// ImportStreams is the publisher of `tokenscope import` when REDIS_URL is set: a node without
// connections that publishes the import's trades through the Redis broker and announces its
// flushes to the API nodes, which recompute their subscribers' coalesced channels. Without
// REDIS_URL an import reaches no subscriber (they are in other processes) and publishes nothing
// (nil).
func ImportStreams(cfg config.Config, log *slog.Logger, pool *pgxpool.Pool, ing *ingest.Service) (*Streams, error) {
	if cfg.RedisURL == "" {
		return nil, nil
	}
	keys := apikey.New(postgres.NewAccountStore(pool), SystemClock{})
	// The import node hosts no connections: candle channels are recomputed by the API nodes
	// that its flush announcements reach, so it needs no candle source.
	return NewStreams(cfg, log, keys, market.New(postgres.NewMarketReader(pool)), nil, ing, SystemClock{}, nil, httpapi.RateLimit{})
}

// splitList reads a comma list, dropping blanks.
func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// candleSource is the stream's candle hook over the candles use case: the current bar of a
// token, pool or pair channel (the latest interval with a trade among the one holding now and
// the one before it, from committed trades), in USD or, on
// the -in-native channels, in the chain's native token. Its time is the bar's start in Unix
// seconds, as the reference's push example shows; n is the bar's trade count.
func candleSource(svc *candle.Service) stream.CandleSource {
	return func(ctx context.Context, ch stream.Channel) (stream.Candle, bool, error) {
		res, err := ohlcv.ParseResolution("resolution", ch.Resolution)
		if err != nil {
			return stream.Candle{}, false, err
		}
		subj := ohlcv.Subject{Kind: ohlcv.Token, Chain: ch.Chain, Address: ch.Address}
		switch strings.TrimSuffix(ch.Kind.Prefix, "-in-native") {
		case stream.KindPoolCandle:
			subj.Kind = ohlcv.Pool
		case stream.KindPairCandle:
			if subj, err = ohlcv.ParsePair("pair", ch.Chain, ch.Address); err != nil {
				return stream.Candle{}, false, err
			}
		}
		price := ohlcv.USD
		if ch.Kind.Native {
			price = ohlcv.Native
		}
		// The bar holding now, or the one just before it when the publication runs after the
		// trade's bar closed (a 1s bar under load): the last of the two most recent intervals.
		list, err := svc.Candles(ctx, candle.Query{Subject: subj, Res: res, Price: price, Limit: 2})
		if err != nil || len(list) == 0 {
			return stream.Candle{}, false, err
		}
		c := list[len(list)-1]
		return stream.Candle{Open: c.Open, High: c.High, Low: c.Low, Close: c.Close, Volume: c.Volume,
			Time: c.Start / 1000, Trades: c.Trades}, true, nil
	}
}
