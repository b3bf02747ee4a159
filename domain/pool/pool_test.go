package pool_test

import (
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/pool"
)

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func TestParseVaultAmount(t *testing.T) {
	tests := []struct {
		raw     string
		wantErr bool
	}{
		{"1000000000000", false},
		{"0", false},
		{"123456789012345678901234567890", false}, // beyond int64, still fine
		{"", true},
		{"1.5", true},
		{"-1", true},
		{"1e9", true},
		{" 12", true},
	}
	for _, tc := range tests {
		t.Run(tc.raw, func(t *testing.T) {
			v, err := pool.ParseVaultAmount("tokenA.vaultAmount", tc.raw)
			if tc.wantErr {
				fe, ok := fault.As(err)
				require.True(t, ok)
				assert.Equal(t, "tokenA.vaultAmount", fe.Param)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.raw, v.Decimal().String())
		})
	}
}

func validSnapshot() pool.Snapshot {
	return pool.Snapshot{
		Chain: chain.Sol, PoolAddress: "P", BlockHeight: 123, BlockTimestamp: 1705312800000, SnapshotTime: 1705312800000,
		TokenA: pool.Side{TokenAddress: "A", Decimals: 6, VaultAmount: "1000"},
		TokenB: pool.Side{TokenAddress: "B", Decimals: 9, VaultAmount: "2000"},
	}
}

func TestSnapshotValidate(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(*pool.Snapshot)
		param string
	}{
		{"valid", func(*pool.Snapshot) {}, ""},
		{"bad chain", func(s *pool.Snapshot) { s.Chain = "btc" }, "chain"},
		{"no pool", func(s *pool.Snapshot) { s.PoolAddress = "" }, "poolAddress"},
		{"negative height", func(s *pool.Snapshot) { s.BlockHeight = -1 }, "blockHeight"},
		{"no snapshot time", func(s *pool.Snapshot) { s.SnapshotTime = 0 }, "snapshotTime"},
		{"no token B", func(s *pool.Snapshot) { s.TokenB.TokenAddress = "" }, "tokenB.tokenAddress"},
		{"decimal vault", func(s *pool.Snapshot) { s.TokenA.VaultAmount = "10.5" }, "tokenA.vaultAmount"},
		{"empty vault", func(s *pool.Snapshot) { s.TokenB.VaultAmount = "" }, "tokenB.vaultAmount"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := validSnapshot()
			tc.edit(&s)
			err := s.Validate()
			if tc.param == "" {
				require.NoError(t, err)
				return
			}
			fe, ok := fault.As(err)
			require.True(t, ok, "want fault, got %v", err)
			assert.Equal(t, tc.param, fe.Param)
		})
	}
}

func TestSnapshotKey(t *testing.T) {
	a := validSnapshot()
	b := validSnapshot()
	b.TVLInUSD = dec("5") // same block, other data
	c := validSnapshot()
	c.Chain = chain.Bsc // same address on another chain
	assert.Equal(t, a.Key(), b.Key())
	assert.NotEqual(t, a.Key(), c.Key())
	assert.Equal(t, pool.Key{Chain: chain.Sol, PoolAddress: "P", BlockHeight: 123}, a.Key())
}

func TestSpotPrice(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		aInB string
		bInA string
	}{
		// 1000 A against 2500 B: one A buys 2500/1000 = 2.5 B; one B buys 1000/2500 = 0.4 A.
		{"simple", "1000", "2500", "2.5", "0.4"},
		// 3 A against 1 B: 1/3 = 0.333… rounded to 18 places.
		{"repeating", "3", "1", "0.333333333333333333", "3"},
		{"empty A", "0", "10", "0", "0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cp := pool.ConstantProduct{ReserveA: dec(tc.a), ReserveB: dec(tc.b)}
			assert.Equal(t, dec(tc.aInB).String(), cp.PriceAInB().String())
			assert.Equal(t, dec(tc.bInA).String(), cp.PriceBInA().String())
		})
	}
}

func TestAmountOut(t *testing.T) {
	tests := []struct {
		name  string
		a, b  string
		in    string
		aToB  bool
		fee   int64
		want  string
		nextA string
		nextB string
	}{
		// No fee: out = 2000 × 100 / (1000 + 100) = 200000/1100 = 181.818181… → 181.818181818181818181 (rounded down).
		{"a to b no fee", "1000", "2000", "100", true, 0, "181.818181818181818181", "1100", "1818.181818181818181819"},
		// 30 bps: in' = 100 × 9970/10000 = 99.7; out = 2000 × 99.7 / 1099.7 = 199400/1099.7 = 181.322178776029826316…
		{"a to b 30 bps", "1000", "2000", "100", true, 30, "181.322178776029826316", "1100", "1818.677821223970173684"},
		// B to A, no fee: out = 1000 × 1000 / (2000 + 1000) = 333.333… → 333.333333333333333333.
		{"b to a", "1000", "2000", "1000", false, 0, "333.333333333333333333", "666.666666666666666667", "3000"},
		// Exact case: 100×100 pool, 25 in with 2000 bps fee → in' = 20; out = 100 × 20 / 120 = 16.666…
		{"big fee", "100", "100", "25", true, 2000, "16.666666666666666666", "125", "83.333333333333333334"},
		// 1 in, 1 000 000 : 1 000 000 pool: out = 1e6 / 1000001 = 0.999999000000999999 (truncated).
		{"small trade near spot", "1000000", "1000000", "1", true, 0, "0.999999000000999999", "1000001", "999999.000000999999000001"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cp := pool.ConstantProduct{ReserveA: dec(tc.a), ReserveB: dec(tc.b)}
			out, next, err := cp.Swap(dec(tc.in), tc.aToB, tc.fee)
			require.NoError(t, err)
			assert.Equal(t, tc.want, out.String())
			assert.Equal(t, tc.nextA, next.ReserveA.String())
			assert.Equal(t, tc.nextB, next.ReserveB.String())
			only, err := cp.AmountOut(dec(tc.in), tc.aToB, tc.fee)
			require.NoError(t, err)
			assert.True(t, out.Equal(only))
		})
	}
}

func TestAmountOutRejects(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		in   string
		fee  int64
		kind fault.Kind
	}{
		{"empty pool", "0", "100", "1", 0, fault.KindConflict},
		{"zero input", "100", "100", "0", 0, fault.KindInvalid},
		{"negative input", "100", "100", "-1", 0, fault.KindInvalid},
		{"negative fee", "100", "100", "1", -1, fault.KindInvalid},
		{"whole input as fee", "100", "100", "1", 10000, fault.KindInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := pool.ConstantProduct{ReserveA: dec(tc.a), ReserveB: dec(tc.b)}.AmountOut(dec(tc.in), true, tc.fee)
			assert.Equal(t, tc.kind, fault.KindOf(err))
		})
	}
}
