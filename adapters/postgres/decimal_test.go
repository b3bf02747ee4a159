package postgres_test

import (
	"context"
	"math/big"
	"reflect"
	"testing"

	pgxdecimal "github.com/jackc/pgx-shopspring-decimal"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/postgres/pgtest"
)

// TestDecimalScanMatchesTheTextRoundTrip reads the same numerics through the adapter's pool
// (binary digits straight into decimal.Decimal) and through a connection set up as before
// (pgxdecimal only, so decimal's sql.Scanner parses pgx's text form): the decimals must be
// identical, exponent included, so nothing downstream (JSON strings, equality) can tell.
func TestDecimalScanMatchesTheTextRoundTrip(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	ctx := context.Background()
	pool := pgtest.Pool(t)
	plain, err := pgx.Connect(ctx, pgtest.URL(t))
	require.NoError(t, err)
	defer plain.Close(ctx)
	pgxdecimal.Register(plain.TypeMap())

	const values = `SELECT v FROM (VALUES (0::numeric), (0.00), (-0.0), (1), (-1), (10), (1000), (10000), (100000000),
		(1e20), (-1e20), (1.500), (0.0050), (-0.000001), (1e-30), (123456789012345678901234567890.123456789),
		(99999999.99999999), (0.1), (2.5e4), (7.000000000000000000)) t(v)
	UNION ALL SELECT ((i * 7919) % 100003)::numeric / (10 ^ (i % 25))::numeric FROM generate_series(1, 500) i
	UNION ALL SELECT (i::numeric * 10 ^ (i % 30))::numeric FROM generate_series(1, 100) i
	UNION ALL SELECT random()::numeric(40, 18) * 1e6 FROM generate_series(1, 200) i`
	// Both reads must see the same numbers (random() among them): materialise them once.
	read := func(q func(string) (pgx.Rows, error)) []decimal.Decimal {
		rows, err := q(`SELECT v FROM decimal_probe_data ORDER BY n`)
		require.NoError(t, err)
		out, err := pgx.CollectRows(rows, pgx.RowTo[decimal.Decimal])
		require.NoError(t, err)
		return out
	}
	_, err = pool.Exec(ctx, `DROP TABLE IF EXISTS decimal_probe_data; CREATE TABLE decimal_probe_data AS
		SELECT row_number() OVER () AS n, v FROM (`+values+`) s`)
	require.NoError(t, err)
	defer func() { _, _ = pool.Exec(context.Background(), `DROP TABLE IF EXISTS decimal_probe_data`) }()

	fast := read(func(s string) (pgx.Rows, error) { return pool.Query(ctx, s) })
	text := read(func(s string) (pgx.Rows, error) { return plain.Query(ctx, s) })
	require.Len(t, fast, 820)
	require.Len(t, text, len(fast))
	for i := range fast {
		require.True(t, reflect.DeepEqual(text[i], fast[i]), "row %d: text %s (exp %d), binary %s (exp %d)",
			i+1, text[i], text[i].Exponent(), fast[i], fast[i].Exponent())
		require.Equal(t, text[i].String(), fast[i].String())
	}

	// NULL and NaN still fail to scan into a decimal.Decimal (NullDecimal takes NULL).
	var d decimal.Decimal
	assert.Error(t, pool.QueryRow(ctx, `SELECT NULL::numeric`).Scan(&d))
	assert.Error(t, pool.QueryRow(ctx, `SELECT 'NaN'::numeric`).Scan(&d))
	var nd decimal.NullDecimal
	require.NoError(t, pool.QueryRow(ctx, `SELECT NULL::numeric`).Scan(&nd))
	assert.False(t, nd.Valid)
	require.NoError(t, pool.QueryRow(ctx, `SELECT 12.50::numeric`).Scan(&nd))
	assert.Equal(t, "12.5", nd.Decimal.String())
	var p *decimal.Decimal
	require.NoError(t, pool.QueryRow(ctx, `SELECT NULL::numeric`).Scan(&p))
	assert.Nil(t, p)
	require.NoError(t, pool.QueryRow(ctx, `SELECT 1000::numeric`).Scan(&p))
	assert.Equal(t, "1000", p.String())
}

// TestDecimalEncodeMatchesPgx sends the same decimals through the adapter's pool (binary digits
// written straight from the decimal's text) and through a connection with pgx's own numeric
// encoder: Postgres must store the same numbers with the same display scale, which its text shows.
func TestDecimalEncodeMatchesPgx(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	ctx := context.Background()
	pool := pgtest.Pool(t)
	plain, err := pgx.Connect(ctx, pgtest.URL(t))
	require.NoError(t, err)
	defer plain.Close(ctx)
	pgxdecimal.Register(plain.TypeMap())

	var ds []decimal.Decimal
	for _, s := range []string{"0", "0.00", "-0.0", "1", "-1", "10", "1000", "10000", "100000000", "1e20", "-1e20", "1.500",
		"0.0050", "-0.000001", "1e-30", "123456789012345678901234567890.123456789", "99999999.99999999", "0.1", "2.5e4",
		"7.000000000000000000", "0.00012345", "-9999.9999", "12345678.000000000000000001", "1e-400", "5e300"} {
		ds = append(ds, decimal.RequireFromString(s))
	}
	for i := int64(1); i <= 300; i++ {
		ds = append(ds, decimal.New((i*7919)%100003-50000, int32(i%41)-30), decimal.New(0, int32(i%9)-4),
			decimal.NewFromBigInt(new(big.Int).Exp(big.NewInt(i), big.NewInt(i%17+1), nil), -int32(i%23)))
	}
	texts := func(q func(context.Context, string, ...any) (pgx.Rows, error)) []string {
		rows, err := q(ctx, `SELECT v::text FROM unnest($1::numeric[]) WITH ORDINALITY AS u(v, n) ORDER BY n`, ds)
		require.NoError(t, err)
		out, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		return out
	}
	fast := texts(pool.Query)
	want := texts(plain.Query)
	require.Len(t, fast, len(ds))
	require.Equal(t, want, fast)
}
