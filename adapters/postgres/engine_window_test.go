package postgres_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/postgres/pgtest"
	"github.com/tokenscope/tokenscope/domain/stats"
)

// TestDivRound18MatchesTheDomainDivision: the SQL division a window delta merge recomputes the
// price change with (div_round18, migration 0045) gives what the domain's division gives
// (shopspring DivRound to stats.Scale places, half away from zero), for random prices of either
// sign and the cases that sit exactly on a half.
func TestDivRound18MatchesTheDomainDivision(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	require.Equal(t, int32(18), int32(stats.Scale), "div_round18 rounds to stats.Scale places")
	ctx := context.Background()
	pool := pgtest.Pool(t)
	rng := rand.New(rand.NewPCG(11, 18))
	random := func() decimal.Decimal {
		d := decimal.New(rng.Int64N(1_000_000_000_000)-500_000_000_000, -int32(rng.IntN(24)))
		return d
	}
	var as, bs []decimal.Decimal
	for range 2000 {
		as, bs = append(as, random()), append(bs, random())
	}
	// Exact halves at the 18th place, both signs, and a zero divisor and dividend.
	half := decimal.New(5, -19)
	as = append(as, half, half.Neg(), decimal.New(15, -19), decimal.New(-25, -19), decimal.Zero, decimal.NewFromInt(7))
	bs = append(bs, decimal.NewFromInt(1), decimal.NewFromInt(1), decimal.NewFromInt(-1), decimal.NewFromInt(1),
		decimal.NewFromInt(3), decimal.Zero)
	strs := func(ds []decimal.Decimal) []string {
		out := make([]string, len(ds))
		for i, d := range ds {
			out[i] = d.String()
		}
		return out
	}
	rows, err := pool.Query(ctx, `SELECT div_round18(a::numeric, b::numeric)
		FROM ROWS FROM (unnest($1::text[]), unnest($2::text[])) AS r(a, b)`, strs(as), strs(bs))
	require.NoError(t, err)
	i := 0
	for rows.Next() {
		var got decimal.Decimal
		require.NoError(t, rows.Scan(&got))
		want := decimal.Zero
		if !bs[i].IsZero() {
			want = as[i].DivRound(bs[i], stats.Scale)
		}
		require.True(t, got.Equal(want), "%s / %s: got %s, want %s", as[i], bs[i], got, want)
		i++
	}
	require.NoError(t, rows.Err())
	require.Equal(t, len(as), i)
}
