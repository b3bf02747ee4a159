package postgres

import (
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/stats"
	"github.com/tokenscope/tokenscope/domain/stats/reference"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/ports"
)

// The engine's pure steps, without a database.

func TestHeldGroups(t *testing.T) {
	t.Parallel()
	h := func(v int64) *int64 { return &v }
	c := tokenCreation{creator: "D", height: h(100)}
	assert.Equal(t, []string{"all", "fresh", "kol", "sniper"}, heldGroups("W", []token.HolderGroup{token.Fresh, token.Kol}, c, h(103)))
	assert.Equal(t, []string{"all", "kol"}, heldGroups("W", []token.HolderGroup{token.Kol}, c, h(104)), "4 blocks after creation")
	assert.Equal(t, []string{"all", "dev", "sniper"}, heldGroups("D", []token.HolderGroup{token.Dev}, c, h(100)), "dev once")
	assert.Equal(t, []string{"all"}, heldGroups("W", nil, tokenCreation{}, h(100)), "creation unknown")
	assert.Equal(t, []string{"all"}, heldGroups("W", nil, c, nil), "no first buy")
}

func TestGroupsJSON(t *testing.T) {
	t.Parallel()
	md := reference.Holdings(map[string]decimal.Decimal{"D": decimal.NewFromInt(30), "S": decimal.NewFromInt(10)},
		decimal.NewFromInt(1000), map[string][]token.HolderGroup{"S": {token.Sniper}}, "D")
	got, err := groupsJSON(md)
	require.NoError(t, err)
	// Keys in order, values as strings: the bytes stay what TokenDetails reads back.
	assert.Equal(t, `{"bluechip":{"holders":"0","holdings":"0","ratio":"0"},"bundle":{"holders":"0","holdings":"0","ratio":"0"},`+
		`"dev":{"holders":"1","holdings":"30","ratio":"0.03"},"fresh":{"holders":"0","holdings":"0","ratio":"0"},`+
		`"insider":{"holders":"0","holdings":"0","ratio":"0"},"kol":{"holders":"0","holdings":"0","ratio":"0"},`+
		`"pro":{"holders":"0","holdings":"0","ratio":"0"},"sandwish":{"holders":"0","holdings":"0","ratio":"0"},`+
		`"sniper":{"holders":"1","holdings":"10","ratio":"0.01"}}`, got)
}

func TestMarketRow(t *testing.T) {
	t.Parallel()
	d := decimal.RequireFromString
	in := &marketInput{total: d("1000"), circ: d("800"), priceUSD: d("3"), priceNative: d("0.02"), migrated: true,
		curveRes: d("1"), target: d("10"), sumTVLUSD: d("50"), lastTrade: 7}
	col := func(row []any, name string) any {
		for i, c := range marketColumns {
			if c == name {
				return row[i]
			}
		}
		t.Fatalf("no column %s", name)
		return nil
	}

	row, err := marketRow(ports.TokenRef{Chain: chain.Eth, Address: "T"}, in, nil, d("150"), nil)
	require.NoError(t, err)
	require.Len(t, row, len(marketColumns))
	assert.Equal(t, "0.02", col(row, "price_sol").(decimal.Decimal).String(), "3 USD / 150 USD per SOL")
	assert.Equal(t, "1", col(row, "completion_ratio").(decimal.Decimal).String(), "migrated")
	assert.Equal(t, int64(0), col(row, "holders"))
	assert.False(t, col(row, "volume_24h_usd").(decimal.NullDecimal).Valid, "no 24h window: the stored one stays")
	assert.Nil(t, col(row, "trades_24h").(*int64))

	day := &token.PeriodStats{TotalVolumeInUSD: d("12"), Trades: 4}
	row, err = marketRow(ports.TokenRef{Chain: chain.Sol, Address: "T"}, in,
		&tokenHolders{count: 2, top: stats.TopHoldings{Top10: d("5"), Top50: d("5"), Top100: d("5")}}, d("150"), day)
	require.NoError(t, err)
	assert.Equal(t, "0.02", col(row, "price_sol").(decimal.Decimal).String(), "sol: the native price")
	assert.Equal(t, "2400", col(row, "market_cap_usd").(decimal.Decimal).String())
	assert.Equal(t, int64(2), col(row, "holders"))
	assert.Equal(t, "5", col(row, "top10_holdings").(decimal.Decimal).String())
	assert.Equal(t, "12", col(row, "volume_24h_usd").(decimal.NullDecimal).Decimal.String())
	assert.Equal(t, int64(4), *col(row, "trades_24h").(*int64))
}
