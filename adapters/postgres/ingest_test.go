package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/adapters/postgres/pgtest"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/domain/pnl"
	"github.com/tokenscope/tokenscope/domain/redpacket"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/domain/trade"
)

var engineTables = []string{"tokens", "token_market", "token_stats", "pools", "pool_snapshots", "trades", "wallet_labels",
	"wallet_positions", "hot_tokens", "red_packets", "red_packet_claims", "outbox", "refresh_state", "hot_rankings",
	"token_buckets", "token_holder_groups", "market_pending", "position_bases", "trade_retention", "trade_pending",
	"position_day_marks"}

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// now is the pinned clock of these tests: 2023-11-14T22:13:20Z.
var now = time.UnixMilli(1_700_000_000_000).UTC()

func tokenEvent(c chain.Chain, addr string) chainevent.TokenCreated {
	created := now.Add(-time.Hour).UnixMilli()
	height := int64(1000)
	return chainevent.TokenCreated{Token: token.Token{Chain: c, Address: addr, Decimals: 6, Name: "Token " + addr, Symbol: "T",
		CreatedAt: &created, CreatedBlockHeight: &height}, TotalSupply: dec("1000"), CirculatingSupply: dec("1000"), Creator: "dev"}
}

// buy/sell build a trade of `amount` tokens at `price` USD each, `ago` before now.
func swap(wallet string, side trade.Side, amount, price string, ago time.Duration, sig string) chainevent.Trade {
	a, p := dec(amount), dec(price)
	return chainevent.Trade{Trade: trade.Trade{Chain: chain.Sol, TransactionSignature: sig, BlockHeight: 2000 - int64(ago/time.Second),
		BlockTimestamp: now.Add(-ago).UnixMilli(), Wallet: wallet, PoolAddress: "pool1", Side: side, Status: trade.Succeeded,
		TokenAddress: "tok1", TokenAmount: a, TokenAmountInNative: a.Mul(p).Div(dec("100")), TokenAmountInUSD: a.Mul(p),
		TokenPriceInNative: p.Div(dec("100")), TokenPriceInUSD: p, SideTokenAddress: "So11", SideTokenAmount: a.Mul(p).Div(dec("100")),
		SideTokenAmountInNative: a.Mul(p).Div(dec("100")), SideTokenAmountInUSD: a.Mul(p), SideTokenPriceInNative: dec("1"),
		SideTokenPriceInUSD: dec("100")}}
}

func apply(t *testing.T, s *postgres.IngestStore, events ...chainevent.Event) chainevent.Result {
	t.Helper()
	res, err := s.Apply(context.Background(), chainevent.NewBatch(events), now)
	require.NoError(t, err)
	return res
}

func position(t *testing.T, wallet string) pnl.Position {
	t.Helper()
	p := pnl.Position{Chain: chain.Sol, Wallet: wallet, Token: "tok1"}
	err := pgtest.Pool(t).QueryRow(context.Background(), `SELECT balance, cost_usd, buy_amount, buy_amount_usd, sell_amount,
		sell_amount_usd, sold_cost_usd, realized_usd, buys, sells FROM wallet_positions
		WHERE chain = 'sol' AND wallet = $1 AND token_address = 'tok1'`, wallet).Scan(&p.Balance, &p.CostInUSD, &p.BuyAmount,
		&p.BuyAmountInUSD, &p.SellAmount, &p.SellAmountInUSD, &p.SoldCostInUSD, &p.RealizedProfitInUSD, &p.Buys, &p.Sells)
	require.NoError(t, err)
	return p
}

func priceOf(t *testing.T) decimal.Decimal {
	var p decimal.Decimal
	require.NoError(t, pgtest.Pool(t).QueryRow(context.Background(),
		`SELECT price_usd FROM token_market WHERE chain = 'sol' AND address = 'tok1'`).Scan(&p))
	return p
}

func TestIngestPnL(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	s := postgres.NewIngestStore(pgtest.Pool(t))
	tests := []struct {
		name   string
		events []chainevent.Event // applied one batch per event, in this order
		// expected position of wallet "w" and its entry at the token's last trade price
		balance, cost, realized, unrealized, total, price string
		rederived                                         int
	}{
		{
			// buy 100 at $1, buy 100 at $3: 200 tokens cost $400, average $2. sell 150 at $4: proceeds $600,
			// cost removed 150 × 2 = $300, realized 600 − 300 = $300; 50 tokens left costing $100.
			// Another wallet then trades at $5: unrealized 50 × 5 − 100 = $150; total 300 + 150 = $450.
			name: "issue example in order",
			events: []chainevent.Event{swap("w", trade.Buy, "100", "1", 40*time.Second, "a"), swap("w", trade.Buy, "100", "3", 30*time.Second, "b"),
				swap("w", trade.Sell, "150", "4", 20*time.Second, "c"), swap("x", trade.Buy, "1", "5", 10*time.Second, "d")},
			balance: "50", cost: "100", realized: "300", unrealized: "150", total: "450", price: "5",
		},
		{
			// Same trades, the sell arriving first: after it the position is a sell of 150 with nothing
			// known (all $600 profit); each later, earlier-dated buy forces a rebuild, ending where the
			// in-order case ends.
			name: "issue example out of order",
			events: []chainevent.Event{swap("w", trade.Sell, "150", "4", 20*time.Second, "c"), swap("w", trade.Buy, "100", "1", 40*time.Second, "a"),
				swap("w", trade.Buy, "100", "3", 30*time.Second, "b"), swap("x", trade.Buy, "1", "5", 10*time.Second, "d")},
			balance: "50", cost: "100", realized: "300", unrealized: "150", total: "450", price: "5", rederived: 2,
		},
		{
			// buy 100 at $1 ($100), sell 150 at $2 ($300): only the 100 known tokens are matched and take
			// the whole $100 basis; the extra 50 cost nothing. realized 300 − 100 = $200, balance 0.
			// Price stays $2 (the last trade): unrealized 0 × 2 − 0 = 0; total $200.
			name:    "selling more than was bought",
			events:  []chainevent.Event{swap("w", trade.Buy, "100", "1", 40*time.Second, "a"), swap("w", trade.Sell, "150", "2", 30*time.Second, "b")},
			balance: "0", cost: "0", realized: "200", unrealized: "0", total: "200", price: "2",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pgtest.Truncate(t, engineTables...)
			apply(t, s, tokenEvent(chain.Sol, "tok1"))
			rederived := 0
			for _, e := range tc.events {
				rederived += apply(t, s, e).Rederived
			}
			assert.Equal(t, tc.rederived, rederived)
			p := position(t, "w")
			assert.Equal(t, dec(tc.balance).String(), p.Balance.String(), "balance")
			assert.True(t, dec(tc.cost).Equal(p.CostInUSD), "cost %s", p.CostInUSD)
			assert.True(t, dec(tc.realized).Equal(p.RealizedProfitInUSD), "realized %s", p.RealizedProfitInUSD)
			price := priceOf(t)
			assert.True(t, dec(tc.price).Equal(price), "price %s", price)
			e := p.Entry(price)
			assert.True(t, dec(tc.unrealized).Equal(e.UnrealizedProfitInUSD), "unrealized %s", e.UnrealizedProfitInUSD)
			assert.True(t, dec(tc.total).Equal(e.TotalProfitInUSD), "total %s", e.TotalProfitInUSD)
		})
	}
}

func TestIngestWindowsOverPinnedClock(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	s := postgres.NewIngestStore(pgtest.Pool(t))
	apply(t, s, tokenEvent(chain.Sol, "tok1"),
		swap("a", trade.Buy, "10", "2", 30*time.Second, "s1"), // in every window
		swap("b", trade.Sell, "4", "3", 3*time.Minute, "s2"),  // 5m and up
		swap("a", trade.Buy, "6", "1", 2*time.Hour, "s3"),     // 4h and 24h
		swap("c", trade.Buy, "1", "9", 25*time.Hour, "s4"))    // in no window
	type row struct {
		trades, buyers, sellers, traders          int64
		volumeUSD, open, close, high, low, change string
	}
	want := map[token.Window]row{
		// 1m: only s1: 10 × $2 = $20; open = close = 2.
		token.Window1m: {1, 1, 0, 1, "20", "2", "2", "2", "2", "0"},
		// 5m: s2 then s1: $12 + $20 = $32; open 3 (s2 is older), close 2, change (2 − 3) / 3.
		token.Window5m: {2, 1, 1, 2, "32", "3", "2", "3", "2", "-0.333333333333333333"},
		token.Window1h: {2, 1, 1, 2, "32", "3", "2", "3", "2", "-0.333333333333333333"},
		// 4h: s3, s2, s1: $6 + $12 + $20 = $38; open 1, close 2, high 3, low 1, change (2 − 1) / 1 = 1.
		token.Window4h:  {3, 1, 1, 2, "38", "1", "2", "3", "1", "1"},
		token.Window24h: {3, 1, 1, 2, "38", "1", "2", "3", "1", "1"},
	}
	for w, r := range want {
		t.Run(string(w), func(t *testing.T) {
			var got row
			var vol, open, cl, hi, lo, ch decimal.Decimal
			require.NoError(t, pgtest.Pool(t).QueryRow(context.Background(), `SELECT trades, buyers, sellers, traders,
				total_volume_usd, open_usd, close_usd, high_usd, low_usd, price_change_ratio_usd FROM token_stats
				WHERE chain = 'sol' AND address = 'tok1' AND window_name = $1`, string(w)).Scan(&got.trades, &got.buyers,
				&got.sellers, &got.traders, &vol, &open, &cl, &hi, &lo, &ch))
			assert.Equal(t, r.trades, got.trades)
			assert.Equal(t, r.buyers, got.buyers)
			assert.Equal(t, r.sellers, got.sellers)
			assert.Equal(t, r.traders, got.traders)
			for _, p := range []struct {
				want string
				got  decimal.Decimal
			}{{r.volumeUSD, vol}, {r.open, open}, {r.close, cl},
				{r.high, hi}, {r.low, lo}, {r.change, ch}} {
				assert.True(t, dec(p.want).Equal(p.got), "want %s got %s", p.want, p.got)
			}
		})
	}

	// Time alone moves the windows: 1 minute later s1 is 90 s old (out of 1m) and s2 4 min old (still in 5m).
	later := now.Add(time.Minute)
	round, err := s.RefreshWindows(context.Background(), later)
	require.NoError(t, err)
	assert.True(t, round.Full, "no round before: every active token")
	assert.Equal(t, 1, round.Tokens)
	var one, five int64
	require.NoError(t, pgtest.Pool(t).QueryRow(context.Background(), `SELECT
		(SELECT trades FROM token_stats WHERE address = 'tok1' AND window_name = '1m'),
		(SELECT trades FROM token_stats WHERE address = 'tok1' AND window_name = '5m')`).Scan(&one, &five))
	assert.Equal(t, int64(0), one)
	assert.Equal(t, int64(2), five)
}

func TestIngestMarketHoldersAndOutbox(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	s := postgres.NewIngestStore(pgtest.Pool(t))
	sniper := swap("sn", trade.Buy, "100", "1", 50*time.Second, "x1")
	sniper.BlockHeight = 1002 // created at 1000: within stats.SniperBlocks
	apply(t, s, tokenEvent(chain.Sol, "tok1"), tokenEvent(chain.Eth, "tokE"),
		chainevent.WalletLabel{Chain: chain.Sol, Wallet: "k", Label: token.Kol},
		sniper,
		swap("dev", trade.Buy, "50", "1", 40*time.Second, "x2"),
		swap("k", trade.Buy, "30", "1", 30*time.Second, "x3"),
		swap("k", trade.Sell, "30", "2", 20*time.Second, "x4"))
	var holders int64
	var top10, top10Ratio, devH, mcap decimal.Decimal
	var groups map[string]map[string]string
	require.NoError(t, pgtest.Pool(t).QueryRow(context.Background(), `SELECT holders, top10_holdings, top10_ratio, dev_holdings,
		market_cap_usd, groups FROM token_market WHERE chain = 'sol' AND address = 'tok1'`).Scan(&holders, &top10, &top10Ratio,
		&devH, &mcap, &groups))
	// sn holds 100, dev 50, k sold out: 2 holders, top 10 = 150 of a supply of 1000 = 0.15.
	assert.Equal(t, int64(2), holders)
	assert.True(t, dec("150").Equal(top10))
	assert.True(t, dec("0.15").Equal(top10Ratio))
	assert.True(t, dec("50").Equal(devH))
	// Last price $2 × circulating 1000 = $2000.
	assert.True(t, dec("2000").Equal(mcap))
	assert.Equal(t, "1", groups["sniper"]["holders"])
	assert.Equal(t, "100", groups["sniper"]["holdings"])
	assert.Equal(t, "0", groups["kol"]["holders"]) // the kol sold everything

	apply(t, s, chainevent.TokenMigrated{Chain: chain.Sol, Address: "tok1", PoolAddress: "amm1", At: now.UnixMilli()},
		chainevent.TokenMigrated{Chain: chain.Eth, Address: "tokE", PoolAddress: "amm2", At: now.UnixMilli()})
	rows, err := pgtest.Pool(t).Query(context.Background(), `SELECT channel, payload->>'address' FROM outbox ORDER BY seq`)
	require.NoError(t, err)
	var got []string
	for rows.Next() {
		var c, a string
		require.NoError(t, rows.Scan(&c, &a))
		got = append(got, c+" "+a)
	}
	// Lifecycle events exist for sol only.
	assert.Equal(t, []string{"sol.token.created tok1", "sol.token.migrated tok1"}, got)
	var completion decimal.Decimal
	require.NoError(t, pgtest.Pool(t).QueryRow(context.Background(),
		`SELECT completion_ratio FROM token_market WHERE address = 'tok1'`).Scan(&completion))
	assert.True(t, dec("1").Equal(completion))
}

func TestIngestRedPackets(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	s := postgres.NewIngestStore(pgtest.Pool(t))
	p := redpacket.RedPacket{ID: "rp", Chain: chain.Sol, Creator: "c", Mint: "tok1", MaxClaims: 3, TotalAmount: dec("1000"),
		CreatedAt: 1000, Expiration: 60, ExpiredAt: 61_000}
	claim := func(w, amount string) chainevent.Event {
		return chainevent.RedPacketClaimed{Claim: redpacket.Claim{PacketID: "rp", Chain: chain.Sol, Claimer: w, Mint: "tok1",
			Amount: dec(amount), ClaimedAt: 2000}}
	}
	apply(t, s, chainevent.RedPacketCreated{Packet: p}, claim("a", "300"), claim("b", "200"), claim("a", "300"))
	// A replayed claim changes nothing.
	res := apply(t, s, claim("b", "200"))
	assert.Equal(t, 0, res.Inserted)
	apply(t, s, chainevent.RedPacketExpired{PacketID: "rp", At: 61_000})
	var count int32
	var claimed, refunded decimal.Decimal
	var expired bool
	require.NoError(t, pgtest.Pool(t).QueryRow(context.Background(), `SELECT claimed_count, claimed_amount, refunded_amount, expired
		FROM red_packets WHERE id = 'rp'`).Scan(&count, &claimed, &refunded, &expired))
	// Two claims: 300 + 200 = 500 claimed; 1000 − 500 = 500 refunded at expiry.
	assert.Equal(t, int32(2), count)
	assert.True(t, dec("500").Equal(claimed))
	assert.True(t, dec("500").Equal(refunded))
	assert.True(t, expired)
}

// TestTopHoldingsByHolderCount: the top 10/50/100 sums of tokens with 8, 30, 70 and 130 holders
// (each a different path of loadHolders: no balance read, the 10, the 50 or the 100 largest
// read) are the sums of their largest balances; the holder i of a token holds i tokens.
func TestTopHoldingsByHolderCount(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	ctx := context.Background()
	db := pgtest.Pool(t)
	s := postgres.NewIngestStore(db)
	sumTop := func(holders, n int) string {
		total := 0
		for i := holders; i > holders-n && i > 0; i-- {
			total += i
		}
		return fmt.Sprint(total)
	}
	for _, holders := range []int{8, 30, 70, 130} {
		tok := fmt.Sprintf("top%d", holders)
		events := []chainevent.Event{tokenEvent(chain.Sol, tok)}
		for i := 1; i <= holders; i++ {
			tr := swap(fmt.Sprintf("w%03d", i), trade.Buy, fmt.Sprint(i), "1", time.Minute, fmt.Sprintf("%s-%d", tok, i))
			tr.TokenAddress = tok
			events = append(events, tr)
		}
		apply(t, s, events...)
		var n int64
		var top10, top50, top100 string
		require.NoError(t, db.QueryRow(ctx, `SELECT holders, top10_holdings::text, top50_holdings::text, top100_holdings::text
			FROM token_market WHERE chain = 'sol' AND address = $1`, tok).Scan(&n, &top10, &top50, &top100))
		assert.Equal(t, int64(holders), n, tok)
		assert.Equal(t, sumTop(holders, 10), top10, "%s top 10", tok)
		assert.Equal(t, sumTop(holders, 50), top50, "%s top 50", tok)
		assert.Equal(t, sumTop(holders, 100), top100, "%s top 100", tok)
	}
}
