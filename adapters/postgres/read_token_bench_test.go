package postgres_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/adapters/postgres/pgtest"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/token"
)

// tokenDetailsFixture is 10,000 sol tokens with market data, all 7 windows with many-digit
// numbers and two pools each (paired with a quote token that is not in tokens).
const tokenDetailsFixture = `
INSERT INTO tokens (chain, address, decimals, name, symbol, created_at_ms)
SELECT 'sol', 'btok' || i, 6, 'Bench ' || i, 'B' || i, 1700000000000 + i FROM generate_series(1, 10000) i;
INSERT INTO token_market (chain, address, price_usd, price_sol, market_cap_usd, market_cap_sol, fdv_usd, holders,
	volume_24h_usd, trades_24h, total_tvl_usd, max_pool_tvl_usd)
SELECT chain, address, random()::numeric(30, 18), random()::numeric(30, 18), (random() * 1e9)::numeric(30, 8),
	(random() * 1e7)::numeric(30, 8), (random() * 1e9)::numeric(30, 8), (random() * 1000)::bigint,
	(random() * 1e6)::numeric(30, 8), (random() * 1000)::bigint, (random() * 1e6)::numeric(30, 8), (random() * 1e6)::numeric(30, 8)
FROM tokens WHERE address LIKE 'btok%';
INSERT INTO token_stats (chain, address, window_name, buys, sells, trades, buyers, sellers, traders, buy_volume, sell_volume,
	total_volume, buy_volume_usd, sell_volume_usd, total_volume_usd, open_usd, close_usd, high_usd, low_usd,
	price_change_ratio_usd, current_liquidity_usd)
SELECT chain, address, w, 10, 5, 15, 4, 3, 6, (random() * 1e9)::numeric(40, 9), (random() * 1e9)::numeric(40, 9),
	(random() * 1e9)::numeric(40, 9), (random() * 1e6)::numeric(40, 12), (random() * 1e6)::numeric(40, 12),
	(random() * 1e6)::numeric(40, 12), random()::numeric(40, 18), random()::numeric(40, 18), random()::numeric(40, 18),
	random()::numeric(40, 18), random()::numeric(40, 18), (random() * 1e6)::numeric(40, 12)
FROM tokens CROSS JOIN unnest(ARRAY['1m','5m','15m','30m','1h','4h','24h']) w WHERE address LIKE 'btok%';
INSERT INTO pools (chain, address, protocol_family, token_a_address, token_b_address, tvl_usd, tvl_sol)
SELECT 'sol', 'bpool' || i || '-' || k, 'Raydium', 'btok' || i, 'bquote', (random() * 1e6)::numeric(30, 8), (random() * 1e4)::numeric(30, 8)
FROM generate_series(1, 10000) i CROSS JOIN generate_series(1, 2) k;
ANALYZE tokens; ANALYZE token_market; ANALYZE token_stats; ANALYZE pools;
`

// BenchmarkTokenDetails reads 10 tokens (the multi-detail benchmark's request) per call,
// serially and from 16 goroutines (the HTTP benchmark's concurrency).
func BenchmarkTokenDetails(b *testing.B) {
	pool := pgtest.Pool(b)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `DELETE FROM tokens WHERE address LIKE 'btok%'; DELETE FROM pools WHERE address LIKE 'bpool%'`); err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(ctx, tokenDetailsFixture); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_, _ = pool.Exec(context.Background(), `DELETE FROM tokens WHERE address LIKE 'btok%'; DELETE FROM pools WHERE address LIKE 'bpool%'`)
	})
	r := postgres.NewMarketReader(pool)
	sets := make([][]string, 200)
	for i := range sets {
		for k := range 10 {
			sets[i] = append(sets[i], fmt.Sprintf("btok%d", 1+(i*10+k)*37%10000))
		}
	}
	read := func(set []string) error {
		ds, err := r.TokenDetails(ctx, chain.Sol, set)
		if err == nil && (len(ds) != len(set) || len(ds[0].Stats) != len(token.AllWindows) || len(ds[0].Pools) != 2) {
			err = fmt.Errorf("read %d details of %d", len(ds), len(set))
		}
		return err
	}
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if err := read(sets[i%len(sets)]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("parallel16", func(b *testing.B) {
		b.ReportAllocs()
		b.SetParallelism(8) // 16 goroutines on 2 cores
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				if err := read(sets[i%len(sets)]); err != nil {
					b.Error(err)
					return
				}
				i++
			}
		})
	})
}
