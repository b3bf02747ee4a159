package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/adapters/postgres/pgtest"
	"github.com/tokenscope/tokenscope/app/market"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/domain/pnl"
	"github.com/tokenscope/tokenscope/domain/trade"
	"github.com/tokenscope/tokenscope/internal/fakeclock"
	"github.com/tokenscope/tokenscope/migrations"
	"github.com/tokenscope/tokenscope/ports"
)

// periodNow is when the periods are asked for: Friday 2024-05-10 13:45 UTC. 1d starts May 10
// 00:00, 7d May 4 00:00, 30d April 11 00:00.
var periodNow = time.Date(2024, 5, 10, 13, 45, 0, 0, time.UTC)

func periodTrade(tok string, side trade.Side, at time.Time, amount, price, sig string) chainevent.Trade {
	a, p := dec(amount), dec(price)
	return chainevent.Trade{Trade: trade.Trade{Chain: chain.Sol, TransactionSignature: sig, BlockHeight: at.Unix() / 10,
		BlockTimestamp: at.UnixMilli(), Wallet: "W", PoolAddress: "pool-" + tok, Side: side, Status: trade.Succeeded,
		TokenAddress: tok, TokenAmount: a, TokenAmountInNative: a.Mul(p).Div(dec("100")), TokenAmountInUSD: a.Mul(p),
		TokenPriceInNative: p.Div(dec("100")), TokenPriceInUSD: p, SideTokenAddress: "So11", SideTokenAmount: a.Mul(p).Div(dec("100")),
		SideTokenAmountInNative: a.Mul(p).Div(dec("100")), SideTokenAmountInUSD: a.Mul(p), SideTokenPriceInNative: dec("1"),
		SideTokenPriceInUSD: dec("100")}}
}

func day(m time.Month, d, h int) time.Time { return time.Date(2024, m, d, h, 0, 0, 0, time.UTC) }

// The hand-worked wallet. Token T (average cost), the price now $5 (its last trade):
//
//	t1 Mar 20  buy  100 @ $1 = 100   held 100, cost 100
//	t2 Mar 25  sell  20 @ $2 =  40   removes 20 of cost, realizes 20; held 80, cost 80
//	t3 Apr 20  sell  40 @ $3 = 120   removes 40, realizes 80 (100 so far); held 40, cost 40
//	t4 Apr 25  buy  160 @ $2 = 320   held 200, cost 360
//	t5 May 6   sell 100 @ $4 = 400   average 1.8: removes 180, realizes 220 (320); held 100, cost 180
//	t6 May 10 09:00 buy 100 @ $2.2 = 220   held 200, cost 400
//	t7 May 10 10:00 sell 50 @ $5 = 250     average 2: removes 100, realizes 150 (470); held 150, cost 300
//
// Unrealized now: 150 × 5 − 300 = 450 in every period. Token U, closed on April 16:
//
//	u1 Apr 15 buy 10 @ $1 = 10, u2 Apr 16 sell 10 @ $3 = 30: realizes 20.
var (
	t1 = periodTrade("T", trade.Buy, day(3, 20, 12), "100", "1", "t1")
	t2 = periodTrade("T", trade.Sell, day(3, 25, 12), "20", "2", "t2")
	t3 = periodTrade("T", trade.Sell, day(4, 20, 12), "40", "3", "t3")
	t4 = periodTrade("T", trade.Buy, day(4, 25, 12), "160", "2", "t4")
	t5 = periodTrade("T", trade.Sell, day(5, 6, 12), "100", "4", "t5")
	t6 = periodTrade("T", trade.Buy, day(5, 10, 9), "100", "2.2", "t6")
	t7 = periodTrade("T", trade.Sell, day(5, 10, 10), "50", "5", "t7")
	u1 = periodTrade("U", trade.Buy, day(4, 15, 12), "10", "1", "u1")
	u2 = periodTrade("U", trade.Sell, day(4, 16, 12), "10", "3", "u2")
)

// periodWant is an entry of T over one period (the whole-history state is the same in each:
// balance 150, remaining cost 300, unrealized 450).
type periodWant struct {
	buys, sells                                  int64
	buyAmount, buyUSD, sellAmount, sellUSD       string
	realized, realizedRatio, total, totalRatio   string
	avgPerTrade, avgBuyPrice                     string
	tokens, wins                                 int64
	sumBuyUSD, sumSellUSD, sumRealized, sumTotal string
}

// TestPnLOverPeriods answers 1d, 7d, 30d and all for the hand-worked wallet above, ingested in
// order, and again with trades out of order and retention removing the older ones between.
func TestPnLOverPeriods(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	ctx := context.Background()
	pool := pgtest.Pool(t)
	// Per period, the flows of T are now's minus those at the period's start:
	//   all: everything.
	//   30d: after t2 (1 buy of 100 for 100, 1 sell of 20 for 40, realized 20, sold cost 20).
	//   7d: after t4 (2 buys of 260 for 420, 2 sells of 60 for 160, realized 100, sold cost 60).
	//   1d: after t5 (2 buys of 260 for 420, 3 sells of 160 for 560, realized 320, sold cost 240).
	// total = realized + 450; totalRatio = total / bought in USD; avgPerTrade = total / trades.
	// U realized 20 before April 16 ends: in all and 30d, not in 7d or 1d (closed, not traded).
	want := map[pnl.Resolution]periodWant{
		pnl.ResolutionAll: {buys: 3, sells: 4, buyAmount: "360", buyUSD: "640", sellAmount: "210", sellUSD: "810",
			realized: "470", realizedRatio: "1.382352941176470588", // 470 / 340
			total: "920", totalRatio: "1.4375", avgPerTrade: "131.428571428571428571", avgBuyPrice: "1.777777777777777778",
			tokens: 2, wins: 2, sumBuyUSD: "650", sumSellUSD: "840", sumRealized: "490", sumTotal: "940"},
		pnl.Resolution30d: {buys: 2, sells: 3, buyAmount: "260", buyUSD: "540", sellAmount: "190", sellUSD: "770",
			realized: "450", realizedRatio: "1.40625", // 450 / 320
			total: "900", totalRatio: "1.666666666666666667", avgPerTrade: "180", avgBuyPrice: "2.076923076923076923",
			tokens: 2, wins: 2, sumBuyUSD: "550", sumSellUSD: "800", sumRealized: "470", sumTotal: "920"},
		pnl.Resolution7d: {buys: 1, sells: 2, buyAmount: "100", buyUSD: "220", sellAmount: "150", sellUSD: "650",
			realized: "370", realizedRatio: "1.321428571428571429", // 370 / 280
			total: "820", totalRatio: "3.727272727272727273", avgPerTrade: "273.333333333333333333", avgBuyPrice: "2.2",
			tokens: 1, wins: 1, sumBuyUSD: "220", sumSellUSD: "650", sumRealized: "370", sumTotal: "820"},
		pnl.Resolution1d: {buys: 1, sells: 1, buyAmount: "100", buyUSD: "220", sellAmount: "50", sellUSD: "250",
			realized: "150", realizedRatio: "1.5", // 150 / 100
			total: "600", totalRatio: "2.727272727272727273", avgPerTrade: "300", avgBuyPrice: "2.2",
			tokens: 1, wins: 1, sumBuyUSD: "220", sumSellUSD: "250", sumRealized: "150", sumTotal: "600"},
	}
	svc := market.New(postgres.NewMarketReader(pool), market.WithClock(fakeclock.At(periodNow)))
	store := postgres.NewIngestStore(pool)
	ingestEach := func(t *testing.T, events ...chainevent.Trade) {
		for _, e := range events {
			_, err := store.Apply(ctx, chainevent.NewBatch([]chainevent.Event{e}), periodNow)
			require.NoError(t, err, e.TransactionSignature)
		}
	}
	check := func(t *testing.T) {
		for _, r := range pnl.Resolutions {
			w := want[r]
			res, err := svc.PnLByToken(ctx, chain.Sol, "W", []string{"T", "U"}, r, ports.PageRequest{})
			require.NoError(t, err, r)
			require.NotEmpty(t, res.Page.Items, r)
			e := res.Page.Items[0].Entry
			require.Equal(t, "T", e.TokenAddress, r)
			require.Len(t, res.Page.Items, int(w.tokens), "%s: U only while its trades are in the period", r)
			for _, c := range []struct{ what, got, want string }{
				{"buyAmount", e.BuyAmount.String(), w.buyAmount}, {"buyAmountInUsd", e.BuyAmountInUSD.String(), w.buyUSD},
				{"sellAmount", e.SellAmount.String(), w.sellAmount}, {"sellAmountInUsd", e.SellAmountInUSD.String(), w.sellUSD},
				{"realizedProfitInUsd", e.RealizedProfitInUSD.String(), w.realized},
				{"realizedProfitRatio", e.RealizedProfitRatio.String(), w.realizedRatio},
				{"totalProfitInUsd", e.TotalProfitInUSD.String(), w.total}, {"totalProfitRatio", e.TotalProfitRatio.String(), w.totalRatio},
				{"avgProfitPerTradeInUsd", e.AvgProfitPerTradeInUSD.String(), w.avgPerTrade},
				{"avgBuyPriceInUsd", e.AvgBuyPriceInUSD.String(), w.avgBuyPrice},
				{"balance", e.Balance.String(), "150"}, {"priceInUsd", e.PriceInUSD.String(), "5"},
				{"currentValue", e.CurrentValue.String(), "750"}, {"unrealizedProfitInUsd", e.UnrealizedProfitInUSD.String(), "450"},
				{"unrealizedProfitRatio", e.UnrealizedProfitRatio.String(), "1.5"},
				{"summary.buyAmountInUsd", res.Summary.BuyAmountInUSD.String(), w.sumBuyUSD},
				{"summary.sellAmountInUsd", res.Summary.SellAmountInUSD.String(), w.sumSellUSD},
				{"summary.realizedProfitInUsd", res.Summary.RealizedProfitInUSD.String(), w.sumRealized},
				{"summary.totalProfitInUsd", res.Summary.TotalProfitInUSD.String(), w.sumTotal},
			} {
				assert.Equal(t, dec(c.want).String(), c.got, "%s %s", r, c.what)
			}
			assert.Equal(t, w.buys, e.Buys, "%s buys", r)
			assert.Equal(t, w.sells, e.Sells, "%s sells", r)
			assert.Equal(t, w.tokens, res.Summary.Tokens, "%s summary tokens", r)
			assert.Equal(t, w.wins, res.Summary.Wins, "%s summary wins", r)
		}
		periods, err := svc.PnLPeriods(ctx, chain.Sol, "W", []string{"T", "U"})
		require.NoError(t, err)
		require.Len(t, periods, len(pnl.Resolutions))
		for i, p := range periods {
			assert.Equal(t, pnl.Resolutions[i], p.Resolution)
			assert.Equal(t, dec(want[p.Resolution].sumTotal).String(), p.Summary.TotalProfitInUSD.String(), "stream %s", p.Resolution)
		}
	}

	t.Run("in order", func(t *testing.T) {
		pgtest.Truncate(t, engineTables...)
		ingestEach(t, t1, t2, u1, u2, t3, t4, t5, t6, t7)
		check(t)
	})
	t.Run("out of order, retention between", func(t *testing.T) {
		pgtest.Truncate(t, engineTables...)
		// t3 and t5 arrive late; t3 re-derives T from every trade.
		ingestEach(t, t1, t2, u1, u2, t4, t6, t7, t3)
		// Retention folds everything before April 30 into the bases and removes it (U keeps u2,
		// its price); t5 then arrives out of order after the cut: T is re-derived from its base.
		res, err := store.RetainTrades(ctx, day(4, 30, 0), time.Minute)
		require.NoError(t, err)
		require.True(t, res.Done)
		require.Equal(t, 0, countTrades(t, "token_address = 'T' AND block_timestamp_ms < $1", day(4, 30, 0).UnixMilli()))
		r, err := store.Apply(ctx, chainevent.NewBatch([]chainevent.Event{t5}), periodNow)
		require.NoError(t, err)
		require.Equal(t, 1, r.Rederived, "t5 sorts before t6 and t7")
		check(t)
		// The calculate-pnl job's re-derivation gives the same marks.
		_, err = postgres.NewWalletRederiver(pool).RederivePosition(ctx, chain.Sol, "W", "T", periodNow)
		require.NoError(t, err)
		check(t)
	})
}

// TestPnLPeriodsAfterUpgrade: a database upgraded to migration 0068 has positions but no marks;
// the migration gives each pair a mark of its last trade's day holding its position then, so its
// periods count the trades from the upgrade on, that day's included.
func TestPnLPeriodsAfterUpgrade(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	ctx := context.Background()
	pool := pgtest.Pool(t)
	store := postgres.NewIngestStore(pool)
	for _, e := range []chainevent.Trade{t1, t2, u1, u2, t3, t4, t5, t6} {
		_, err := store.Apply(ctx, chainevent.NewBatch([]chainevent.Event{e}), periodNow)
		require.NoError(t, err)
	}
	// As before the upgrade: no marks; then the migration's backfill statement.
	_, err := pool.Exec(ctx, `TRUNCATE position_day_marks`)
	require.NoError(t, err)
	body, err := migrations.FS.ReadFile("0068_position_day_marks.sql")
	require.NoError(t, err)
	stmt := string(body[strings.Index(string(body), "INSERT INTO position_day_marks"):])
	_, err = pool.Exec(ctx, stmt)
	require.NoError(t, err)
	// After the upgrade, t7 (May 10 10:00, the day of t6, T's last trade before it).
	_, err = store.Apply(ctx, chainevent.NewBatch([]chainevent.Event{t7}), periodNow)
	require.NoError(t, err)

	svc := market.New(postgres.NewMarketReader(pool), market.WithClock(fakeclock.At(periodNow)))
	for _, r := range []pnl.Resolution{pnl.Resolution1d, pnl.Resolution7d, pnl.Resolution30d} {
		res, err := svc.PnLByToken(ctx, chain.Sol, "W", []string{"T", "U"}, r, ports.PageRequest{})
		require.NoError(t, err)
		require.Len(t, res.Page.Items, 1, "%s: U's trades are from before the upgrade", r)
		e := res.Page.Items[0]
		assert.Equal(t, int64(0), e.Buys, r)
		assert.Equal(t, int64(1), e.Sells, "%s: t7 only", r)
		assert.Equal(t, "250", e.SellAmountInUSD.String(), r)
		assert.Equal(t, "150", e.RealizedProfitInUSD.String(), r)
	}
	all, err := svc.PnLByToken(ctx, chain.Sol, "W", []string{"T", "U"}, pnl.ResolutionAll, ports.PageRequest{})
	require.NoError(t, err)
	assert.Equal(t, "920", all.Page.Items[0].TotalProfitInUSD.String(), "the whole history is unchanged")
}

// TestPnLProfitableAndLosingDays counts the days of PnLPeriods (the stream's pd/ld) for the
// hand-worked wallet above plus token L, which loses:
//
//	l1 Apr 10 buy  100 @ $1   = 100   held 100, cost 100
//	l2 Apr 16 sell  50 @ $0.4 =  20   removes 50, realizes −30
//	l3 May 6  sell  50 @ $0.2 =  10   removes 50, realizes −40; closed
//	l4 May 8  buy   10 @ $1   =  10
//	l5 May 9  sell  10 @ $0.5 =   5   removes 10, realizes −5
//
// The wallet's realized profit per day (days of buys only realize 0 and count as neither):
// Mar 20 0 (t1), Mar 25 +20 (t2), Apr 10 0 (l1), Apr 15 0 (u1), Apr 16 +20 − 30 = −10 (u2, l2),
// Apr 20 +80 (t3), Apr 25 0 (t4), May 6 +220 − 40 = +180 (t5, l3), May 8 0 (l4), May 9 −5 (l5),
// May 10 +150 (t6, t7).
func TestPnLProfitableAndLosingDays(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	ctx := context.Background()
	pool := pgtest.Pool(t)
	l1 := periodTrade("L", trade.Buy, day(4, 10, 12), "100", "1", "l1")
	l2 := periodTrade("L", trade.Sell, day(4, 16, 13), "50", "0.4", "l2")
	l3 := periodTrade("L", trade.Sell, day(5, 6, 13), "50", "0.2", "l3")
	l4 := periodTrade("L", trade.Buy, day(5, 8, 12), "10", "1", "l4")
	l5 := periodTrade("L", trade.Sell, day(5, 9, 12), "10", "0.5", "l5")
	// all: profitable Mar 25, Apr 20, May 6, May 10; losing Apr 16, May 9.
	// 30d (from Apr 11): profitable Apr 20, May 6, May 10; losing Apr 16, May 9.
	// 7d (from May 4): profitable May 6, May 10; losing May 9. 1d: profitable May 10.
	want := map[pnl.Resolution][2]int64{pnl.ResolutionAll: {4, 2}, pnl.Resolution30d: {3, 2}, pnl.Resolution7d: {2, 1},
		pnl.Resolution1d: {1, 0}}
	svc := market.New(postgres.NewMarketReader(pool), market.WithClock(fakeclock.At(periodNow)))
	store := postgres.NewIngestStore(pool)
	for _, tc := range []struct {
		name   string
		events []chainevent.Trade
	}{
		{"in order", []chainevent.Trade{t1, t2, l1, u1, u2, l2, t3, t4, t5, l3, l4, l5, t6, t7}},
		// l2 and t3 arrive last: each re-derives its pair's marks.
		{"out of order", []chainevent.Trade{t1, t2, l1, u1, u2, t4, t5, l3, l4, l5, t6, t7, l2, t3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pgtest.Truncate(t, engineTables...)
			for _, e := range tc.events {
				_, err := store.Apply(ctx, chainevent.NewBatch([]chainevent.Event{e}), periodNow)
				require.NoError(t, err, e.TransactionSignature)
			}
			periods, err := svc.PnLPeriods(ctx, chain.Sol, "W", []string{"T", "U", "L"})
			require.NoError(t, err)
			require.Len(t, periods, len(pnl.Resolutions))
			for _, p := range periods {
				assert.Equal(t, want[p.Resolution], [2]int64{p.ProfitableDays, p.LosingDays}, "%s: profitable, losing days", p.Resolution)
			}
			// Only the tokens asked for count: without L, every day that realized something gained.
			periods, err = svc.PnLPeriods(ctx, chain.Sol, "W", []string{"T", "U"})
			require.NoError(t, err)
			assert.Equal(t, [2]int64{5, 0}, [2]int64{periods[3].ProfitableDays, periods[3].LosingDays}, "all, without L")
		})
	}
}
