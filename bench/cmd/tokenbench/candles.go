package main

import (
	"context"
	"net/url"

	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/app/candle"
	"github.com/tokenscope/tokenscope/app/market"
	"github.com/tokenscope/tokenscope/bench/load"
	"github.com/tokenscope/tokenscope/domain/ohlcv"
)

// candleOps are the candle rows (-only candles, issue 14: request p99 ≤ 1.5× its raw SQL): the
// last 100 intervals of a token from the hour and the minute buckets, and of a pool from its
// trades. The raw SQL series is app/candle over pgx, the same store the service runs.
func (b *bench) candleOps(t targets) []readOp {
	svc := candle.New(postgres.NewCandleStore(b.st.pool), wallClock{})
	row := func(op, kind, res string, price ohlcv.PriceType, subjects [][2]string) readOp {
		r, err := ohlcv.ParseResolution("resolution", res)
		if err != nil {
			panic(err)
		}
		k, path := ohlcv.Token, "/"
		if kind == "pool" {
			k, path = ohlcv.Pool, "/pool/"
		}
		o := readOp{op: op, goal: sqlGoal,
			http: func(b *bench, w, i int) load.Request {
				s := pick(subjects, w, i)
				return load.Request{Method: "GET", URL: b.st.httpURL + "/v2/token/" + s[0] + path + s[1] + "/candles?" +
					url.Values{"resolution": {r.String()}, "priceType": {string(price)}, "limit": {"100"}}.Encode(), Header: b.auth()}
			},
			sql: func(ctx context.Context, _ *market.Service, w, i int) error {
				s := pick(subjects, w, i)
				_, err := svc.Candles(ctx, candle.Query{Subject: ohlcv.Subject{Kind: k, Chain: mustChain(s[0]), Address: s[1]},
					Res: r, Price: price, Limit: 100})
				return err
			}}
		if len(subjects) == 0 {
			o.missing = "no " + kind + " in the data"
		}
		return o
	}
	return []readOp{
		row("candles, token 1h ×100 (hour buckets)", "token", "1h", ohlcv.USD, t.tokens),
		row("candles, token 1m ×100 (minute buckets)", "token", "1m", ohlcv.USD, t.tokens),
		row("candles, pool 15m ×100 native (trades)", "pool", "15m", ohlcv.Native, t.pools),
	}
}
