package pnl_test

import (
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/pnl"
	"github.com/tokenscope/tokenscope/domain/trade"
)

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// tr builds a trade of `amount` tokens at `price` USD each; usd is written out by the caller so
// the test states its own arithmetic.
func tr(token string, side trade.Side, ts int64, sig string, amount, usd string) trade.Trade {
	return trade.Trade{
		Chain: chain.Sol, Wallet: "W", TokenAddress: token, Side: side, Status: trade.Succeeded,
		BlockTimestamp: ts, BlockHeight: ts / 1000, TransactionSignature: sig,
		TokenAmount: dec(amount), TokenAmountInUSD: dec(usd),
	}
}

type want struct {
	balance, cost, soldCost, realized string
	buys, sells                       int64
}

func checkPosition(t *testing.T, w want, p pnl.Position) {
	t.Helper()
	assert.Equal(t, dec(w.balance).String(), p.Balance.String(), "balance")
	assert.Equal(t, dec(w.cost).String(), p.CostInUSD.String(), "remaining cost")
	assert.Equal(t, dec(w.soldCost).String(), p.SoldCostInUSD.String(), "sold cost")
	assert.Equal(t, dec(w.realized).String(), p.RealizedProfitInUSD.String(), "realized")
	assert.Equal(t, w.buys, p.Buys, "buys")
	assert.Equal(t, w.sells, p.Sells, "sells")
}

// The required example: buy 100 at $1, buy 100 at $3, sell 150 at $4.
func requiredTrades() []trade.Trade {
	return []trade.Trade{
		tr("T", trade.Buy, 1000, "a", "100", "100"),  // 100 × $1
		tr("T", trade.Buy, 2000, "b", "100", "300"),  // 100 × $3
		tr("T", trade.Sell, 3000, "c", "150", "600"), // 150 × $4
	}
}

func TestRequiredExample(t *testing.T) {
	p, err := pnl.Rederive(requiredTrades())
	require.NoError(t, err)
	// Cost 100 + 300 = 400 for 200 tokens: average $2. The sell removes 150 × 2 = 300 of cost and
	// realizes 600 − 300 = 300, leaving 50 tokens with 400 − 300 = 100 of cost.
	checkPosition(t, want{balance: "50", cost: "100", soldCost: "300", realized: "300", buys: 2, sells: 1}, p)

	e := p.Entry(dec("5"))
	checks := []struct {
		name string
		got  decimal.Decimal
		want string
	}{
		{"avgBuyPrice 400/200", e.AvgBuyPriceInUSD, "2"},
		{"avgSellPrice 600/150", e.AvgSellPriceInUSD, "4"},
		{"currentValue 50×5", e.CurrentValue, "250"},
		{"unrealized 250−100", e.UnrealizedProfitInUSD, "150"},
		{"realized", e.RealizedProfitInUSD, "300"},
		{"realizedRatio 300/300", e.RealizedProfitRatio, "1"},
		{"unrealizedRatio 150/100", e.UnrealizedProfitRatio, "1.5"},
		{"totalProfit 300+150", e.TotalProfitInUSD, "450"},
		{"totalProfitRatio 450/400", e.TotalProfitRatio, "1.125"},
		{"avgProfitPerTrade 450/3", e.AvgProfitPerTradeInUSD, "150"},
		{"totalCost", e.TotalCostInUSD, "400"},
		{"balance", e.Balance, "50"},
		{"buyAmount", e.BuyAmount, "200"},
		{"sellAmount", e.SellAmount, "150"},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, dec(c.want).String(), c.got.String())
		})
	}
	assert.Equal(t, int64(3), e.TotalTrades)
	assert.False(t, e.IsClosed)
	require.NotNil(t, e.FirstBuyAt)
	require.NotNil(t, e.LastSellAt)
	assert.Equal(t, int64(1000), *e.FirstBuyAt)
	assert.Equal(t, int64(3000), *e.LastSellAt)
	assert.Equal(t, "T", e.TokenAddress)
	assert.Equal(t, "W", e.WalletAddress)
}

func TestOutOfOrderArrival(t *testing.T) {
	in := requiredTrades()
	orders := map[string][]trade.Trade{
		"sell first":          {in[2], in[0], in[1]},
		"reversed":            {in[2], in[1], in[0]},
		"with a replayed buy": {in[1], in[2], in[0], in[1]},
	}
	for name, ts := range orders {
		t.Run(name, func(t *testing.T) {
			p, err := pnl.Rederive(ts)
			require.NoError(t, err)
			// Same as in order: 50 left with $100 cost, $300 realized.
			checkPosition(t, want{balance: "50", cost: "100", soldCost: "300", realized: "300", buys: 2, sells: 1}, p)
		})
	}
}

func TestSameBlockOrderedBySignatureThenIndex(t *testing.T) {
	// All in one block. In (signature, index) order: buy 10 for $10, sell 10 for $30, buy 10 for $50.
	// Replayed that way: realized 30 − 10 = 20, then 10 held at cost 50.
	b1 := tr("T", trade.Buy, 1000, "s", "10", "10")
	b1.InstructionIndex = 0
	s1 := tr("T", trade.Sell, 1000, "s", "10", "30")
	s1.InstructionIndex = 1
	b2 := tr("T", trade.Buy, 1000, "t", "10", "50")
	p, err := pnl.Rederive([]trade.Trade{b2, s1, b1})
	require.NoError(t, err)
	checkPosition(t, want{balance: "10", cost: "50", soldCost: "10", realized: "20", buys: 2, sells: 1}, p)
}

func TestSellMoreThanBought(t *testing.T) {
	tests := []struct {
		name   string
		trades []trade.Trade
		price  string
		pos    want
		ratio  string // realizedProfitRatio
		total  string
		closed bool
	}{
		{
			// Buy 100 for $100, sell 150 for $300: only the 100 held are matched (cost 100); the 50
			// extra cost nothing, so realized = 300 − 100 = 200 and the balance stops at 0.
			name: "excess sell",
			trades: []trade.Trade{
				tr("T", trade.Buy, 1000, "a", "100", "100"),
				tr("T", trade.Sell, 2000, "b", "150", "300"),
			},
			price: "5", pos: want{balance: "0", cost: "0", soldCost: "100", realized: "200", buys: 1, sells: 1},
			ratio: "2", total: "200", closed: true, // 200/100; unrealized 0
		},
		{
			// Selling with nothing known: all $80 is profit, nothing was matched, ratio 80/0 → 0.
			name:   "sell with no buys",
			trades: []trade.Trade{tr("T", trade.Sell, 1000, "a", "40", "80")},
			price:  "3", pos: want{balance: "0", cost: "0", soldCost: "0", realized: "80", sells: 1},
			ratio: "0", total: "80", closed: true,
		},
		{
			// After the excess sell a new buy of 10 for $30 starts a fresh basis: at $4 it is worth 40,
			// unrealized 40 − 30 = 10, total 200 + 10 = 210.
			name: "buy after excess sell",
			trades: []trade.Trade{
				tr("T", trade.Buy, 1000, "a", "100", "100"),
				tr("T", trade.Sell, 2000, "b", "150", "300"),
				tr("T", trade.Buy, 3000, "c", "10", "30"),
			},
			price: "4", pos: want{balance: "10", cost: "30", soldCost: "100", realized: "200", buys: 2, sells: 1},
			ratio: "2", total: "210", closed: false,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := pnl.Rederive(tc.trades)
			require.NoError(t, err)
			checkPosition(t, tc.pos, p)
			e := p.Entry(dec(tc.price))
			assert.Equal(t, dec(tc.ratio).String(), e.RealizedProfitRatio.String())
			assert.Equal(t, dec(tc.total).String(), e.TotalProfitInUSD.String())
			assert.Equal(t, tc.closed, e.IsClosed)
			assert.False(t, e.Balance.IsNegative())
		})
	}
}

func TestPartialSellRounding(t *testing.T) {
	// Buy 3 for $10 (average 3.333…), sell 1 for $5: cost removed 10 × 1 / 3 = 3.333333333333333333
	// (18 places), realized 5 − 3.333333333333333333 = 1.666666666666666667, remaining cost
	// 10 − 3.333333333333333333 = 6.666666666666666667. Then selling the last 2 for $8 takes that
	// whole remaining cost: realized += 8 − 6.666666666666666667, leaving exactly 0 cost.
	p, err := pnl.Rederive([]trade.Trade{
		tr("T", trade.Buy, 1000, "a", "3", "10"),
		tr("T", trade.Sell, 2000, "b", "1", "5"),
	})
	require.NoError(t, err)
	checkPosition(t, want{balance: "2", cost: "6.666666666666666667", soldCost: "3.333333333333333333", realized: "1.666666666666666667", buys: 1, sells: 1}, p)

	require.NoError(t, p.Apply(tr("T", trade.Sell, 3000, "c", "2", "8")))
	// 1.666666666666666667 + 1.333333333333333333 = 3; sold cost 3.333… + 6.666… = 10.
	checkPosition(t, want{balance: "0", cost: "0", soldCost: "10", realized: "3", buys: 1, sells: 2}, p)
}

func TestEntryEmptyPositionHasNoDivisionByZero(t *testing.T) {
	e := pnl.Position{}.Entry(dec("2"))
	for name, v := range map[string]decimal.Decimal{
		"avgBuy": e.AvgBuyPriceInUSD, "avgSell": e.AvgSellPriceInUSD, "realizedRatio": e.RealizedProfitRatio,
		"unrealizedRatio": e.UnrealizedProfitRatio, "totalRatio": e.TotalProfitRatio, "perTrade": e.AvgProfitPerTradeInUSD,
	} {
		assert.True(t, v.IsZero(), name)
	}
	assert.True(t, e.IsClosed)
	assert.Nil(t, e.FirstBuyAt)
}

func TestFailedTradesIgnoredAndMixedRejected(t *testing.T) {
	failed := tr("T", trade.Buy, 1000, "a", "100", "100")
	failed.Status = trade.Failed
	p, err := pnl.Rederive([]trade.Trade{failed, tr("T", trade.Buy, 2000, "b", "1", "2")})
	require.NoError(t, err)
	checkPosition(t, want{balance: "1", cost: "2", soldCost: "0", realized: "0", buys: 1}, p)

	_, err = pnl.Rederive([]trade.Trade{tr("T", trade.Buy, 1000, "a", "1", "1"), tr("U", trade.Buy, 2000, "b", "1", "1")})
	assert.True(t, fault.Is(err, fault.KindInvalid))

	empty, err := pnl.Rederive(nil)
	require.NoError(t, err)
	assert.Equal(t, pnl.Position{}, empty)
}

func TestSummarize(t *testing.T) {
	position := func(ts ...trade.Trade) pnl.Position {
		p, err := pnl.Rederive(ts)
		require.NoError(t, err)
		return p
	}
	// A: the required example at $5: total 450, realized 300, sold cost 300, value 250.
	a := position(requiredTrades()...).Entry(dec("5"))
	// B: buy 100 for $100, sell 150 for $300 at $5: total 200, realized 200, sold cost 100, value 0.
	b := position(tr("B", trade.Buy, 1000, "b1", "100", "100"), tr("B", trade.Sell, 2000, "b2", "150", "300")).Entry(dec("5"))
	// C: buy 100 for $200, now $1.5: value 150, unrealized −50, a loss.
	c := position(tr("C", trade.Buy, 1000, "c1", "100", "200")).Entry(dec("1.5"))
	// D: buy 10 for $10, still $1: break-even, neither win nor loss.
	d := position(tr("D", trade.Buy, 1000, "d1", "10", "10")).Entry(dec("1"))

	s := pnl.Summarize([]pnl.Entry{a, b, c, d})
	assert.Equal(t, int64(4), s.Tokens)
	assert.Equal(t, int64(5), s.Buys)        // 2 + 1 + 1 + 1
	assert.Equal(t, int64(2), s.Sells)       // 1 + 1
	assert.Equal(t, int64(7), s.TotalTrades) // 5 + 2
	assert.Equal(t, int64(2), s.Wins)        // A, B
	assert.Equal(t, int64(1), s.Losses)      // C
	sums := []struct {
		name string
		got  decimal.Decimal
		want string
	}{
		{"buyAmountInUsd 400+100+200+10", s.BuyAmountInUSD, "710"},
		{"totalCost equals buys", s.TotalCostInUSD, "710"},
		{"sellAmountInUsd 600+300", s.SellAmountInUSD, "900"},
		{"currentValue 250+0+150+10", s.CurrentValue, "410"},
		{"realized 300+200", s.RealizedProfitInUSD, "500"},
		{"unrealized 150+0−50+0", s.UnrealizedProfitInUSD, "100"},
		{"totalProfit 450+200−50+0", s.TotalProfitInUSD, "600"},
		{"realizedRatio 500/(300+100)", s.RealizedProfitRatio, "1.25"},
		{"avgProfitPerTrade 600/7 half-up at 18 places", s.AvgProfitPerTradeInUSD, "85.714285714285714286"},
		{"winRate 2/(2+1)", s.WinRate, "0.666666666666666667"},
	}
	for _, c := range sums {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, dec(c.want).String(), c.got.String())
		})
	}
}

func TestSummarizeWinRate(t *testing.T) {
	entry := func(total string) pnl.Entry { return pnl.Entry{TotalProfitInUSD: dec(total)} }
	tests := []struct {
		name    string
		totals  []string
		winRate string
	}{
		{"none", nil, "0"},
		{"only break-even", []string{"0", "0"}, "0"},
		{"all wins", []string{"1", "0.01"}, "1"},
		{"one of four", []string{"5", "-1", "-2", "-3"}, "0.25"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var es []pnl.Entry
			for _, v := range tc.totals {
				es = append(es, entry(v))
			}
			assert.Equal(t, dec(tc.winRate).String(), pnl.Summarize(es).WinRate.String())
		})
	}
}

func TestParseResolution(t *testing.T) {
	for _, in := range []string{"1d", "7d", "30d", "all", "ALL", " 7D "} {
		_, err := pnl.ParseResolution("resolution", in)
		assert.NoError(t, err, in)
	}
	r, err := pnl.ParseResolution("resolution", "")
	require.NoError(t, err)
	assert.Equal(t, pnl.ResolutionAll, r)
	_, err = pnl.ParseResolution("resolution", "2d")
	fe, ok := fault.As(err)
	require.True(t, ok)
	assert.Equal(t, "resolution", fe.Param)
	assert.Equal(t, []string{"1d", "7d", "30d", "all"}, fe.Allowed)
}

func TestResolutionStart(t *testing.T) {
	// 2024-05-10 13:45:00 UTC.
	now := int64(1715348700000)
	may10 := int64(1715299200000)
	for _, tc := range []struct {
		r    pnl.Resolution
		want int64
	}{
		{pnl.Resolution1d, may10},
		{pnl.Resolution7d, may10 - 6*pnl.DayMs},   // May 4, 00:00
		{pnl.Resolution30d, may10 - 29*pnl.DayMs}, // April 11, 00:00
	} {
		got, ok := tc.r.Start(now)
		require.True(t, ok, tc.r)
		assert.Equal(t, tc.want, got, tc.r)
	}
	_, ok := pnl.ResolutionAll.Start(now)
	assert.False(t, ok, "all has no start")
	got, _ := pnl.Resolution1d.Start(may10)
	assert.Equal(t, may10, got, "midnight itself starts its own day")
	assert.Equal(t, may10-pnl.DayMs, pnl.Day(may10-1), "the last ms of a day belongs to it")
}

// TestPositionSince: the period's flows are the difference to the start, the state is now's.
func TestPositionSince(t *testing.T) {
	trades := requiredTrades() // buy 100 at $1, buy 100 at $3, sell 150 at $4
	start, err := pnl.Rederive(trades[:1])
	require.NoError(t, err)
	now, err := pnl.Rederive(trades)
	require.NoError(t, err)
	p := now.Since(start)
	// In the period: one buy of 100 for $300 and the sell of 150 for $600, which removed 300 of
	// cost (average $2) and realized 300. Held now: 50 tokens costing 100.
	checkPosition(t, want{balance: "50", cost: "100", soldCost: "300", realized: "300", buys: 1, sells: 1}, p)
	assert.Equal(t, "100", p.BuyAmount.String())
	assert.Equal(t, "300", p.BuyAmountInUSD.String())
	assert.Equal(t, "150", p.SellAmount.String())
	assert.Equal(t, "600", p.SellAmountInUSD.String())
	e := p.Entry(dec("5"))
	assert.Equal(t, "3", e.AvgBuyPriceInUSD.String(), "the period's buys only")
	assert.Equal(t, "150", e.UnrealizedProfitInUSD.String(), "50 × 5 − 100, at the current price")
	assert.Equal(t, "450", e.TotalProfitInUSD.String())
	assert.Equal(t, "1.5", e.TotalProfitRatio.String(), "450 / 300 bought in the period")
	assert.True(t, p.Active())

	assert.Equal(t, now, now.Since(pnl.Position{}), "a pair first traded in the period counts whole")
	idle := now.Since(now)
	assert.Zero(t, idle.Buys+idle.Sells)
	assert.True(t, idle.RealizedProfitInUSD.IsZero())
	assert.True(t, idle.Active(), "no trade in the period, but a balance held")
	closed, err := pnl.Rederive(append(requiredTrades(), tr("T", trade.Sell, 4000, "d", "50", "250")))
	require.NoError(t, err)
	assert.False(t, closed.Since(closed).Active(), "closed before the period and not traded in it")
}

// TestDayCounts: a day counts by the sum of its pairs' profits, from the start on (every day for
// all); a day that sums to zero is neither profitable nor losing.
func TestDayCounts(t *testing.T) {
	d := func(day int64, profit string) pnl.DayProfit {
		return pnl.DayProfit{Day: day * pnl.DayMs, Profit: decimal.RequireFromString(profit)}
	}
	days := [][]pnl.DayProfit{
		{d(1, "5"), d(2, "10"), d(3, "-1"), d(4, "0")},
		{d(2, "-15"), d(3, "1"), d(5, "-0.01")},
	}
	// day 1 +5, day 2 −5, day 3 0, day 4 0, day 5 −0.01
	pd, ld := pnl.DayCounts(days, 0, true)
	assert.Equal(t, []int64{1, 2}, []int64{pd, ld}, "all")
	pd, ld = pnl.DayCounts(days, 3*pnl.DayMs, false)
	assert.Equal(t, []int64{0, 1}, []int64{pd, ld}, "from day 3")
	pd, ld = pnl.DayCounts(nil, 0, true)
	assert.Equal(t, []int64{0, 0}, []int64{pd, ld}, "no days")
}
