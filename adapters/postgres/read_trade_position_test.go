package postgres_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/adapters/postgres/pgtest"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/page"
	"github.com/tokenscope/tokenscope/domain/trade"
	"github.com/tokenscope/tokenscope/ports"
)

// readTrade is swap on any token and pool, with an instruction index.
func readTrade(wallet string, side trade.Side, token, pool, amount, price string, ago time.Duration, sig string, idx int32) chainevent.Trade {
	tr := swap(wallet, side, amount, price, ago, sig)
	tr.TokenAddress, tr.PoolAddress, tr.InstructionIndex = token, pool, idx
	return tr
}

// seedReads ingests the read suite's market, one trade per batch so that seq follows this
// order: s2 and s3 share a millisecond (s3 is newer by seq), and so do the two instructions
// of s6. tokX has trades but no token row; the side token So11 has no row either.
func seedReads(t *testing.T) {
	t.Helper()
	pgtest.Truncate(t, engineTables...)
	s := postgres.NewIngestStore(pgtest.Pool(t))
	apply(t, s, tokenEvent(chain.Sol, "tok1"), tokenEvent(chain.Sol, "tok2"), tokenEvent(chain.Eth, "tokE"))
	eth := readTrade("w1", trade.Buy, "tokE", "poolE", "1", "1", 5*time.Second, "e1", 0)
	eth.Chain = chain.Eth
	for _, tr := range []chainevent.Trade{
		readTrade("w1", trade.Buy, "tok1", "pool1", "100", "1", 50*time.Second, "s1", 0),
		readTrade("w2", trade.Sell, "tok1", "pool1", "5", "1.5", 40*time.Second, "s2", 0),
		readTrade("w1", trade.Buy, "tok2", "pool2", "7", "2", 40*time.Second, "s3", 0),
		readTrade("w1", trade.Sell, "tok1", "pool2", "50", "2", 30*time.Second, "s4", 0),
		readTrade("w3", trade.Buy, "tokX", "pool3", "1", "9", 20*time.Second, "s5", 0),
		readTrade("w1", trade.Buy, "tok1", "pool1", "10", "3", 10*time.Second, "s6", 0),
		readTrade("w1", trade.Buy, "tok1", "pool1", "10", "3", 10*time.Second, "s6", 1),
		eth,
	} {
		apply(t, s, tr)
	}
}

func tradeIDs(ts []trade.Trade) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.TransactionSignature + "/" + strconv.Itoa(int(t.InstructionIndex))
	}
	return out
}

func msAgo(d time.Duration) *int64 { ms := now.Add(-d).UnixMilli(); return &ms }

func heightAgo(d time.Duration) *int64 { h := 2000 - int64(d/time.Second); return &h }

func TestListTrades(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	ctx := context.Background()
	seedReads(t)
	r := postgres.NewMarketReader(pgtest.Pool(t))
	list := func(t *testing.T, f ports.TradeFilter, p ports.PageRequest) page.Page[trade.Trade] {
		t.Helper()
		pg, err := r.ListTrades(ctx, f, p)
		require.NoError(t, err)
		return pg
	}
	all := []string{"s6/1", "s6/0", "s5/0", "s4/0", "s3/0", "s2/0", "s1/0"}

	t.Run("filters narrow, newest first, seq breaks a shared millisecond", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			f    ports.TradeFilter
			want []string
		}{
			{"chain", ports.TradeFilter{Chain: chain.Sol}, all},
			{"another chain", ports.TradeFilter{Chain: chain.Eth}, []string{"e1/0"}},
			{"token", ports.TradeFilter{Chain: chain.Sol, TokenAddress: "tok1"}, []string{"s6/1", "s6/0", "s4/0", "s2/0", "s1/0"}},
			{"wallet", ports.TradeFilter{Chain: chain.Sol, Wallet: "w1"}, []string{"s6/1", "s6/0", "s4/0", "s3/0", "s1/0"}},
			{"pool", ports.TradeFilter{Chain: chain.Sol, PoolAddress: "pool2"}, []string{"s4/0", "s3/0"}},
			{"signatures", ports.TradeFilter{Chain: chain.Sol, Signatures: []string{"s6", "s2"}}, []string{"s6/1", "s6/0", "s2/0"}},
			{"time bounds are inclusive", ports.TradeFilter{Chain: chain.Sol, FromMs: msAgo(40 * time.Second), ToMs: msAgo(20 * time.Second)},
				[]string{"s5/0", "s4/0", "s3/0", "s2/0"}},
			{"height bounds are inclusive", ports.TradeFilter{Chain: chain.Sol, MinHeight: heightAgo(40 * time.Second), MaxHeight: heightAgo(30 * time.Second)},
				[]string{"s4/0", "s3/0", "s2/0"}},
			{"side", ports.TradeFilter{Chain: chain.Sol, Side: trade.Sell}, []string{"s4/0", "s2/0"}},
			{"filters combine", ports.TradeFilter{Chain: chain.Sol, Wallet: "w1", TokenAddress: "tok1", Side: trade.Buy},
				[]string{"s6/1", "s6/0", "s1/0"}},
			{"nothing matches", ports.TradeFilter{Chain: chain.Sol, Wallet: "nobody"}, []string{}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				pg := list(t, tc.f, ports.PageRequest{Limit: 50, Direction: page.Next})
				assert.Equal(t, tc.want, tradeIDs(pg.Items))
				assert.False(t, pg.HasNext)
				assert.False(t, pg.HasPrev)
			})
		}
	})

	t.Run("a trade comes back whole, with the names of known tokens", func(t *testing.T) {
		pg := list(t, ports.TradeFilter{Chain: chain.Sol, Signatures: []string{"s1"}}, ports.PageRequest{Limit: 1})
		require.Len(t, pg.Items, 1)
		got := pg.Items[0]
		want := readTrade("w1", trade.Buy, "tok1", "pool1", "100", "1", 50*time.Second, "s1", 0).Trade
		want.TokenName, want.TokenSymbol = "Token tok1", "T"
		for _, d := range []struct {
			name      string
			want, got string
		}{
			{"tokenAmount", want.TokenAmount.String(), got.TokenAmount.String()},
			{"tokenAmountInNative", want.TokenAmountInNative.String(), got.TokenAmountInNative.String()},
			{"tokenAmountInUSD", want.TokenAmountInUSD.String(), got.TokenAmountInUSD.String()},
			{"tokenPriceInNative", want.TokenPriceInNative.String(), got.TokenPriceInNative.String()},
			{"tokenPriceInUSD", want.TokenPriceInUSD.String(), got.TokenPriceInUSD.String()},
			{"sideTokenAmount", want.SideTokenAmount.String(), got.SideTokenAmount.String()},
			{"sideTokenAmountInNative", want.SideTokenAmountInNative.String(), got.SideTokenAmountInNative.String()},
			{"sideTokenAmountInUSD", want.SideTokenAmountInUSD.String(), got.SideTokenAmountInUSD.String()},
			{"sideTokenPriceInNative", want.SideTokenPriceInNative.String(), got.SideTokenPriceInNative.String()},
			{"sideTokenPriceInUSD", want.SideTokenPriceInUSD.String(), got.SideTokenPriceInUSD.String()},
		} {
			assert.True(t, dec(d.want).Equal(dec(d.got)), "%s: got %s, want %s", d.name, d.got, d.want)
		}
		// Decimals compared above; the rest must match exactly.
		for _, tr := range []*trade.Trade{&want, &got} {
			tr.TokenAmount, tr.TokenAmountInNative, tr.TokenAmountInUSD, tr.TokenPriceInNative, tr.TokenPriceInUSD = dec("0"), dec("0"), dec("0"), dec("0"), dec("0")
			tr.SideTokenAmount, tr.SideTokenAmountInNative, tr.SideTokenAmountInUSD, tr.SideTokenPriceInNative, tr.SideTokenPriceInUSD = dec("0"), dec("0"), dec("0"), dec("0"), dec("0")
		}
		assert.Equal(t, want, got)
		assert.Empty(t, got.SideTokenName, "the side token has no row")

		pg = list(t, ports.TradeFilter{Chain: chain.Sol, TokenAddress: "tokX"}, ports.PageRequest{Limit: 1})
		require.Len(t, pg.Items, 1)
		assert.Empty(t, pg.Items[0].TokenName, "tokX has no row")
	})

	t.Run("pages forward then back return every trade once, in order", func(t *testing.T) {
		var pages [][]string
		var cursor string
		for i := 0; ; i++ {
			require.Less(t, i, 10, "paging does not end")
			pg := list(t, ports.TradeFilter{Chain: chain.Sol}, ports.PageRequest{Cursor: cursor, Limit: 2, Direction: page.Next})
			assert.Equal(t, i > 0, pg.HasPrev, "page %d hasPrev", i)
			pages = append(pages, tradeIDs(pg.Items))
			if !pg.HasNext {
				break
			}
			cursor = *pg.EndCursor
		}
		assert.Equal(t, [][]string{{"s6/1", "s6/0"}, {"s5/0", "s4/0"}, {"s3/0", "s2/0"}, {"s1/0"}}, pages)

		last := list(t, ports.TradeFilter{Chain: chain.Sol}, ports.PageRequest{Cursor: cursor, Limit: 2, Direction: page.Next})
		var back [][]string
		cursor = *last.StartCursor
		for i := 0; ; i++ {
			require.Less(t, i, 10, "paging back does not end")
			pg := list(t, ports.TradeFilter{Chain: chain.Sol}, ports.PageRequest{Cursor: cursor, Limit: 2, Direction: page.Prev})
			assert.True(t, pg.HasNext, "page %d back hasNext", i)
			back = append(back, tradeIDs(pg.Items))
			if !pg.HasPrev {
				break
			}
			cursor = *pg.StartCursor
		}
		assert.Equal(t, [][]string{{"s3/0", "s2/0"}, {"s5/0", "s4/0"}, {"s6/1", "s6/0"}}, back)

		tail := list(t, ports.TradeFilter{Chain: chain.Sol}, ports.PageRequest{Limit: 2, Direction: page.Prev})
		assert.Equal(t, []string{"s2/0", "s1/0"}, tradeIDs(tail.Items), "prev without a cursor is the end of the list")
		assert.True(t, tail.HasPrev)
	})

	t.Run("cursors it did not issue are invalid", func(t *testing.T) {
		for name, c := range map[string]string{
			"garbage":          "not-a-cursor",
			"another list":     page.Encode("snapshot", "1", "2"),
			"wrong arity":      page.Encode("trade", "1"),
			"wrong value type": page.Encode("trade", "x", "1"),
		} {
			_, err := r.ListTrades(ctx, ports.TradeFilter{Chain: chain.Sol}, ports.PageRequest{Cursor: c, Limit: 2})
			fe, ok := fault.As(err)
			require.True(t, ok, "%s: %v", name, err)
			assert.Equal(t, fault.KindInvalid, fe.Kind, name)
			assert.Equal(t, "cursor", fe.Param, name)
		}
	})
}

func TestPricedPositions(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	ctx := context.Background()
	seedReads(t)
	r := postgres.NewMarketReader(pgtest.Pool(t))
	// A row the engine never writes: no buys and no sells.
	_, err := pgtest.Pool(t).Exec(ctx, `INSERT INTO wallet_positions (chain, wallet, token_address) VALUES ('sol', 'w1', 'tokZ')`)
	require.NoError(t, err)

	t.Run("traded tokens only, in address order, priced and named", func(t *testing.T) {
		got, err := r.PricedPositions(ctx, chain.Sol, "w1", []string{"tok2", "tok1", "tokX", "tokZ", "tokNone"}, nil)
		require.NoError(t, err)
		require.Len(t, got, 2)
		assert.Equal(t, []string{"tok1", "tok2"}, []string{got[0].Position.Token, got[1].Position.Token})

		// tok1: buy 100 at $1; sell 50 at $2 (realized 100 − 50 = $50); buy 10 + 10 at $3:
		// 70 held costing 50 + 60 = $110. Its market price is the last trade's, $3.
		p1 := got[0]
		assert.Equal(t, chain.Sol, p1.Position.Chain)
		assert.Equal(t, "w1", p1.Position.Wallet)
		assert.Equal(t, "Token tok1", p1.Name)
		assert.Equal(t, "T", p1.Symbol)
		assert.Equal(t, int32(6), p1.Decimals)
		assert.True(t, dec("3").Equal(p1.PriceInUSD), "price %s", p1.PriceInUSD)
		assert.True(t, priceOf(t).Equal(p1.PriceInUSD), "the market row's price")
		for _, f := range []struct {
			name string
			want string
			got  interface{ String() string }
		}{
			{"balance", "70", p1.Position.Balance}, {"cost", "110", p1.Position.CostInUSD},
			{"realized", "50", p1.Position.RealizedProfitInUSD}, {"buyAmount", "120", p1.Position.BuyAmount},
			{"buyAmountInUSD", "160", p1.Position.BuyAmountInUSD}, {"sellAmount", "50", p1.Position.SellAmount},
			{"sellAmountInUSD", "100", p1.Position.SellAmountInUSD}, {"soldCost", "50", p1.Position.SoldCostInUSD},
		} {
			assert.True(t, dec(f.want).Equal(dec(f.got.String())), "%s: got %s, want %s", f.name, f.got, f.want)
		}
		assert.Equal(t, int64(3), p1.Position.Buys)
		assert.Equal(t, int64(1), p1.Position.Sells)
		require.NotNil(t, p1.Position.FirstBuyAt)
		assert.Equal(t, *msAgo(50 * time.Second), *p1.Position.FirstBuyAt)
		require.NotNil(t, p1.Position.LastSellAt)
		assert.Equal(t, *msAgo(30 * time.Second), *p1.Position.LastSellAt)

		p2 := got[1]
		assert.Equal(t, "Token tok2", p2.Name)
		assert.True(t, dec("7").Equal(p2.Position.Balance))
		assert.Nil(t, p2.Position.LastSellAt, "never sold")
	})

	t.Run("a token without a row has empty metadata and its newest trade's price", func(t *testing.T) {
		got, err := r.PricedPositions(ctx, chain.Sol, "w3", []string{"tokX"}, nil)
		require.NoError(t, err)
		require.Len(t, got, 1)
		assert.Empty(t, got[0].Name)
		assert.Zero(t, got[0].Decimals)
		assert.Equal(t, "9", got[0].PriceInUSD.String(), "trades may come before token.created, or it may never come")
		assert.True(t, dec("1").Equal(got[0].Position.Balance))
	})

	t.Run("scoped by chain and wallet", func(t *testing.T) {
		for _, tc := range []struct {
			c      chain.Chain
			wallet string
			tokens []string
			want   int
		}{
			{chain.Eth, "w1", []string{"tokE", "tok1"}, 1},
			{chain.Sol, "w1", []string{"tokE"}, 0},
			{chain.Sol, "nobody", []string{"tok1"}, 0},
			{chain.Sol, "w1", nil, 0},
		} {
			got, err := r.PricedPositions(ctx, tc.c, tc.wallet, tc.tokens, nil)
			require.NoError(t, err)
			assert.Len(t, got, tc.want, "%s/%s %v", tc.c, tc.wallet, tc.tokens)
		}
	})
}

// A token that has trades but no token.created row is priced like every other token: at its
// newest successful trade in trade order (time, height, signature, instruction index); a FAILED
// trade sets no price. It was priced at 0, so every wallet's PnL of it showed a total loss.
func TestPricedPositionsOfATokenWithoutARow(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	ctx := context.Background()
	s := postgres.NewIngestStore(pgtest.Pool(t))
	failed := readTrade("w2", trade.Buy, "tokY", "poolY", "1", "100", 10*time.Second, "y9", 0)
	failed.Status = trade.Failed
	for _, tr := range []chainevent.Trade{
		readTrade("w1", trade.Buy, "tokY", "poolY", "10", "4", 40*time.Second, "y1", 0),
		readTrade("w2", trade.Buy, "tokY", "poolY", "5", "7", 20*time.Second, "y3", 0),
		// Same time and height as y3; "y2" sorts before "y3", so y3 is the newer.
		readTrade("w1", trade.Buy, "tokY", "poolY", "5", "6", 20*time.Second, "y2", 0),
		failed,
	} {
		apply(t, s, tr)
	}
	got, err := postgres.NewMarketReader(pgtest.Pool(t)).PricedPositions(ctx, chain.Sol, "w1", []string{"tokY"}, nil)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, "7", got[0].PriceInUSD.String())
}
