package stats_test

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/stats"
	"github.com/tokenscope/tokenscope/domain/stats/reference"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/domain/trade"
)

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

const nowMs = int64(1_700_000_000_000)

func tr(ts int64, side trade.Side, wallet, amount, usd, price string) trade.Trade {
	return trade.Trade{
		Chain: chain.Sol, TokenAddress: "T", TransactionSignature: wallet + amount, BlockTimestamp: ts, Side: side,
		Status: trade.Succeeded, Wallet: wallet, TokenAmount: dec(amount), TokenAmountInUSD: dec(usd), TokenPriceInUSD: dec(price),
	}
}

func windowTrades() []trade.Trade {
	failed := tr(nowMs-30_000, trade.Buy, "W8", "1", "100", "100")
	failed.Status = trade.Failed
	// Listed out of time order on purpose.
	return []trade.Trade{
		tr(nowMs, trade.Sell, "W1", "1", "2.5", "2.5"),        // close (the end is inclusive)
		tr(nowMs-180_000, trade.Sell, "W2", "4", "12", "3"),   // high
		tr(nowMs-300_000, trade.Buy, "W1", "999", "999", "9"), // exactly 5m ago: outside (the 5m window starts at now − 299 s)
		tr(nowMs-240_000, trade.Buy, "W1", "10", "20", "2"),   // open
		tr(nowMs+1, trade.Buy, "W9", "7", "7", "1"),           // stamped after now: in every window, the close
		tr(nowMs-120_000, trade.Buy, "W3", "5", "5", "1"),     // low
		failed, // failed: ignored
	}
}

func TestWindow(t *testing.T) {
	now := time.UnixMilli(nowMs)
	tests := []struct {
		name                                     string
		w                                        token.Window
		buys, sells, trades, buyers, sellers, tr int64
		buyVol, buyUSD, sellVol, sellUSD         string
		totalVol, totalUSD                       string
		open, close, high, low, change           string
	}{
		{
			// From now − 299 s on: buys 10@2 (W1), 5@1 (W3) and 7@1 (W9, after now); sells 4@3 (W2)
			// and 1@2.5 (W1). Buy volume 10+5+7 = 22 tokens, $20+$5+$7 = $32; sell volume 4+1 = 5
			// tokens, $12+$2.5 = $14.5. Traders W1, W2, W3, W9. Open 2, close 1 (the trade after now),
			// high 3, low 1; change (1−2)/2 = −0.5.
			name: "5m", w: token.Window5m,
			buys: 3, sells: 2, trades: 5, buyers: 3, sellers: 2, tr: 4,
			buyVol: "22", buyUSD: "32", sellVol: "5", sellUSD: "14.5", totalVol: "27", totalUSD: "46.5",
			open: "2", close: "1", high: "3", low: "1", change: "-0.5",
		},
		{
			// From now − 59 s on: the sell of 1 at 2.5 and the buy of 7 at 1 after now (the failed buy
			// is ignored); change (1−2.5)/2.5 = −0.6.
			name: "1m", w: token.Window1m,
			buys: 1, sells: 1, trades: 2, buyers: 1, sellers: 1, tr: 2,
			buyVol: "7", buyUSD: "7", sellVol: "1", sellUSD: "2.5", totalVol: "8", totalUSD: "9.5",
			open: "2.5", close: "1", high: "2.5", low: "1", change: "-0.6",
		},
		{
			// 15m reaches the trade 5m ago too: buys 999@9 + the three above; open is now 9, close 1,
			// high 9, low 1; change (1−9)/9 = −0.888888888888888889 (18 places, half-up).
			name: "15m", w: token.Window15m,
			buys: 4, sells: 2, trades: 6, buyers: 3, sellers: 2, tr: 4,
			buyVol: "1021", buyUSD: "1031", sellVol: "5", sellUSD: "14.5", totalVol: "1026", totalUSD: "1045.5",
			open: "9", close: "1", high: "9", low: "1", change: "-0.888888888888888889",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := reference.Window(windowTrades(), now, tc.w, dec("1234.5"))
			assert.Equal(t, []int64{tc.buys, tc.sells, tc.trades, tc.buyers, tc.sellers, tc.tr},
				[]int64{s.Buys, s.Sells, s.Trades, s.Buyers, s.Sellers, s.Traders}, "buys, sells, trades, buyers, sellers, traders")
			got := map[string]decimal.Decimal{
				"buyVol": s.BuyVolume, "buyUSD": s.BuyVolumeInUSD, "sellVol": s.SellVolume, "sellUSD": s.SellVolumeInUSD,
				"totalVol": s.TotalVolume, "totalUSD": s.TotalVolumeInUSD, "open": s.OpenInUSD, "close": s.CloseInUSD,
				"high": s.HighInUSD, "low": s.LowInUSD, "change": s.PriceChangeRatioInUSD, "liquidity": s.CurrentLiquidityInUSD,
			}
			want := map[string]string{
				"buyVol": tc.buyVol, "buyUSD": tc.buyUSD, "sellVol": tc.sellVol, "sellUSD": tc.sellUSD,
				"totalVol": tc.totalVol, "totalUSD": tc.totalUSD, "open": tc.open, "close": tc.close,
				"high": tc.high, "low": tc.low, "change": tc.change, "liquidity": "1234.5",
			}
			for k, v := range want {
				assert.Equal(t, dec(v).String(), got[k].String(), k)
			}
		})
	}
}

func TestWindowEmpty(t *testing.T) {
	s := reference.Window(nil, time.UnixMilli(nowMs), token.Window1h, dec("7"))
	assert.Equal(t, int64(0), s.Trades)
	assert.True(t, s.OpenInUSD.IsZero())
	assert.True(t, s.PriceChangeRatioInUSD.IsZero())
	assert.Equal(t, "7", s.CurrentLiquidityInUSD.String())
}

func TestHoldings(t *testing.T) {
	balances := map[string]decimal.Decimal{
		"A": dec("300"), "B": dec("200"), "C": dec("100"), "D": dec("50"),
		"E": dec("0"), "F": dec("-5"),
	}
	// Eleven small holders of 10 each, so the top 10 cuts into them.
	for _, w := range []string{"s01", "s02", "s03", "s04", "s05", "s06", "s07", "s08", "s09", "s10", "s11"} {
		balances[w] = dec("10")
	}
	labels := map[string][]token.HolderGroup{
		"A": {token.Kol, token.Pro},
		"B": {token.Sniper},
		"C": {token.Sniper, token.Sniper}, // a repeated label counts once
		"D": {token.Dev},                  // also the creator: still one dev holder
		"E": {token.Kol},                  // holds nothing: not counted
	}
	m := reference.Holdings(balances, dec("1000"), labels, "D")

	// Positive balances: A, B, C, D and 11 small ones = 15 holders.
	assert.Equal(t, "15", m.Holders.String())
	assert.Equal(t, "1000", m.TotalSupply.String())
	// Top 10: 300 + 200 + 100 + 50 + 6 × 10 = 710 → 710/1000 = 0.71.
	assert.Equal(t, "710", m.Top10.TotalHoldings.String())
	assert.Equal(t, "0.71", m.Top10.HoldingsRatio.String())
	// Top 50 and 100 hold everyone: 650 + 11 × 10 = 760 → 0.76.
	assert.Equal(t, "760", m.Top50.TotalHoldings.String())
	assert.Equal(t, "0.76", m.Top100.HoldingsRatio.String())

	groups := []struct {
		g                 token.HolderGroup
		holders, holdings string
		ratio             string
	}{
		{token.Kol, "1", "300", "0.3"},    // A only (E holds nothing)
		{token.Pro, "1", "300", "0.3"},    // A
		{token.Sniper, "2", "300", "0.3"}, // B 200 + C 100
		{token.Dev, "1", "50", "0.05"},    // D
		{token.Bundle, "0", "0", "0"},     // nobody, but present
		{token.Sandwish, "0", "0", "0"},
	}
	require.Len(t, m.Groups, 9)
	for _, tc := range groups {
		t.Run(string(tc.g), func(t *testing.T) {
			h := m.Groups[tc.g]
			assert.Equal(t, tc.holders, h.TotalHolders.String())
			assert.Equal(t, tc.holdings, h.TotalHoldings.String())
			assert.Equal(t, dec(tc.ratio).String(), h.HoldingsRatio.String())
		})
	}
}

func TestHoldingsCreatorWithoutLabelAndZeroSupply(t *testing.T) {
	m := reference.Holdings(map[string]decimal.Decimal{"X": dec("5"), "Y": dec("1")}, decimal.Zero, nil, "Y")
	// The creator Y counts as dev without a label; with no supply every ratio is 0.
	assert.Equal(t, "1", m.Group(token.Dev).TotalHoldings.String())
	assert.True(t, m.Group(token.Dev).HoldingsRatio.IsZero())
	assert.Equal(t, "6", m.Top10.TotalHoldings.String()) // 5 + 1, fewer than 10 holders
	assert.True(t, m.Top10.HoldingsRatio.IsZero())
}

func TestMarketValues(t *testing.T) {
	v := stats.MarketValues(dec("0.002"), dec("0.00001"), dec("1000000000"), dec("800000000"))
	// Cap: 0.002 × 800 000 000 = 1 600 000 USD; 0.00001 × 800 000 000 = 8 000 SOL.
	// FDV: 0.002 × 1 000 000 000 = 2 000 000 USD; 0.00001 × 1 000 000 000 = 10 000 SOL.
	assert.Equal(t, "1600000", v.MarketCapInUSD.String())
	assert.Equal(t, "8000", v.MarketCapInSol.String())
	assert.Equal(t, "2000000", v.FDVInUSD.String())
	assert.Equal(t, "10000", v.FDVInSol.String())
}

func TestPriceInSol(t *testing.T) {
	// On sol the trade's native price is the SOL price, whatever SOL's USD price.
	assert.Equal(t, "0.00001", stats.PriceInSol(chain.Sol, dec("0.00001"), dec("0.002"), dec("150")).String())
	// Elsewhere: 0.002 USD / 150 USD per SOL, to 18 places.
	assert.Equal(t, "0.000013333333333333", stats.PriceInSol(chain.Eth, dec("0.0000007"), dec("0.002"), dec("150")).String())
	// No SOL price yet: 0, not a division by zero.
	assert.True(t, stats.PriceInSol(chain.Bsc, dec("0.0000007"), dec("0.002"), decimal.Zero).IsZero())
}

func TestCompletionRatio(t *testing.T) {
	tests := []struct {
		name, reserve, target, want string
	}{
		{"half", "42", "84", "0.5"},                   // 42/84
		{"a third", "1", "3", "0.333333333333333333"}, // 1/3 to 18 places
		{"exactly done", "84", "84", "1"},
		{"past the target is capped", "100", "84", "1"},
		{"no target", "5", "0", "0"},
		{"negative reserve", "-1", "84", "0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, dec(tc.want).String(), stats.CompletionRatio(dec(tc.reserve), dec(tc.target)).String())
		})
	}
}

func TestIsSniper(t *testing.T) {
	require.Equal(t, 3, stats.SniperBlocks)
	tests := []struct {
		buyAt int64
		want  bool
	}{
		{100, true},  // creation block
		{103, true},  // 100 + 3
		{104, false}, // one block too late
		{99, false},  // before creation: bad data, not a snipe
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, stats.IsSniper(100, tc.buyAt), "buy at %d", tc.buyAt)
	}
}

func TestIsFresh(t *testing.T) {
	require.Equal(t, 24*time.Hour, stats.FreshPeriod)
	day := int64(86_400_000) // 24 × 60 × 60 × 1000
	tests := []struct {
		name  string
		seen  int64
		buy   int64
		fresh bool
	}{
		{"same moment", 5, 5, true},
		{"exactly a day", 0, day, true},
		{"a day and a ms", 0, day + 1, false},
		{"bought before seen", 10, 5, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.fresh, stats.IsFresh(tc.seen, tc.buy))
		})
	}
}
