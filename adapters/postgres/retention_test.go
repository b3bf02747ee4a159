package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/adapters/postgres/pgtest"
	"github.com/tokenscope/tokenscope/app/ingest"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/trade"
	"github.com/tokenscope/tokenscope/internal/fakeclock"
)

// derivedRows is every derived table, row by row as text in key order: what retention must leave
// exactly as it was.
func derivedRows(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, q := range []string{
		`SELECT t::text FROM wallet_positions t ORDER BY chain, wallet, token_address`,
		`SELECT t::text FROM position_day_marks t ORDER BY chain, wallet, token_address, day_ms`,
		`SELECT t::text FROM token_buckets t ORDER BY chain, address, res_ms, start_ms`,
		`SELECT t::text FROM token_holder_groups t ORDER BY chain, address, holder_group`,
		`SELECT t::text FROM token_stats t ORDER BY chain, address, window_name`,
		`SELECT t::text FROM token_market t ORDER BY chain, address`,
		`SELECT t::text FROM pools t ORDER BY chain, address`,
		`SELECT t::text FROM red_packets t ORDER BY id`,
		`SELECT t::text FROM hot_tokens t ORDER BY chain, duration, rank`,
	} {
		rows, err := pgtest.Pool(t).Query(context.Background(), q)
		require.NoError(t, err, q)
		got, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err, q)
		out = append(out, got...)
	}
	return out
}

func countTrades(t *testing.T, where string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, pgtest.Pool(t).QueryRow(context.Background(), `SELECT count(*) FROM trades t WHERE `+where, args...).Scan(&n))
	return n
}

// TestRetentionKeepsEveryDerivedValue removes the trades of a random market (the property test's
// streams: out-of-order trades, replays, FAILED trades, oversells) older than a cut and checks
// that every derived table is unchanged, that each token's newest successful trade is kept, that
// later out-of-order trades re-derive their positions from the bases exactly as replaying every
// trade would, and that a trade before the cut is refused.
func TestRetentionKeepsEveryDerivedValue(t *testing.T) {
	t.Parallel()
	for _, seed := range []uint64{3, 4} {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			pgtest.Fresh(t)
			ctx := context.Background()
			stream := propStream(seed, 5, 20, 600)
			store := postgres.NewIngestStore(pgtest.Pool(t))
			svc := ingest.New(store, fakeclock.At(propNow), 0)
			for i, b := range propBatches(seed, stream) {
				_, err := svc.Ingest(ctx, b)
				require.NoError(t, err, "batch %d", i+1)
			}
			cut := propNow.Add(-10 * time.Hour)
			old := countTrades(t, "block_timestamp_ms < $1", cut.UnixMilli())
			all := countTrades(t, "true")
			require.Greater(t, old, 50, "the stream has trades before the cut")
			require.Greater(t, all-old, 50, "and after it")
			before := derivedRows(t)

			res, err := store.RetainTrades(ctx, cut, time.Minute)
			require.NoError(t, err)
			assert.True(t, res.Done)
			assert.Equal(t, old, res.Removed+res.Kept, "every trade before the cut is folded")
			assert.Equal(t, all-res.Removed, countTrades(t, "true"))
			// What is left before the cut is exactly each token's newest successful trade.
			assert.Equal(t, 0, countTrades(t, `block_timestamp_ms < $1 AND NOT (t.status = 'SUCCEEDED' AND NOT EXISTS (
				SELECT 1 FROM trades y WHERE y.chain = t.chain AND y.token_address = t.token_address AND y.status = 'SUCCEEDED'
				AND (y.block_timestamp_ms, y.block_height, y.tx_signature COLLATE "C", y.instruction_index) >
				    (t.block_timestamp_ms, t.block_height, t.tx_signature COLLATE "C", t.instruction_index)))`, cut.UnixMilli()))
			require.Equal(t, before, derivedRows(t), "retention changed derived state")

			again, err := store.RetainTrades(ctx, cut, time.Minute)
			require.NoError(t, err)
			assert.Equal(t, 0, again.Removed+again.Kept, "a second call finds nothing left to fold")

			// Out-of-order trades after the cut, before their pairs' last trades: each pair is re-derived
			// from its base and the trades kept after it, which must equal replaying every trade.
			late := lateTrades(stream, cut)
			require.NotEmpty(t, late, "the stream has pairs traded before and after the cut")
			r, err := svc.Ingest(ctx, late)
			require.NoError(t, err)
			assert.Positive(t, r.Rederived, "the late trades re-derived their positions")
			ref := newPropRef(t, append(append([]chainevent.Event{}, stream...), late...))
			d := &diffs{t: t, name: "after retention and late trades"}
			checkPositions(t, d, ref)
			d.done()

			// The calculate-pnl job's re-derivation starts from the bases too.
			rederiver := postgres.NewWalletRederiver(pgtest.Pool(t))
			for _, e := range late {
				tr := e.(chainevent.Trade)
				_, err := rederiver.RederivePosition(ctx, tr.Chain, tr.Wallet, tr.TokenAddress, propNow)
				require.NoError(t, err)
			}
			d = &diffs{t: t, name: "after the job re-derived the late pairs"}
			checkPositions(t, d, ref)
			d.done()

			// A new trade before the cut is refused, and nothing of its batch is written; a replay of a
			// kept trade is still skipped.
			tooOld := late[0].(chainevent.Trade)
			tooOld.TransactionSignature, tooOld.BlockTimestamp = "sig-too-old", cut.UnixMilli()-1
			n := countTrades(t, "true")
			_, err = svc.Ingest(ctx, []chainevent.Event{late[1], tooOld})
			require.Error(t, err)
			f, ok := fault.As(err)
			require.True(t, ok, "%v", err)
			assert.Equal(t, fault.KindInvalid, f.Kind)
			assert.Contains(t, err.Error(), "blockTimestamp")
			assert.Equal(t, n, countTrades(t, "true"))

			// Everything before an hour from now: each token keeps its newest successful trade (its
			// price), derived state still does not move, and a replay of a kept trade is skipped.
			before = derivedRows(t)
			res, err = store.RetainTrades(ctx, propNow.Add(time.Hour), time.Minute)
			require.NoError(t, err)
			assert.True(t, res.Done)
			var tokens int
			require.NoError(t, pgtest.Pool(t).QueryRow(ctx, `SELECT count(DISTINCT (chain, token_address)) FROM trades
				WHERE status = 'SUCCEEDED'`).Scan(&tokens))
			assert.Equal(t, tokens, res.Kept, "one trade kept per token")
			assert.Equal(t, tokens, countTrades(t, "true"))
			require.Equal(t, before, derivedRows(t), "retention changed derived state")
			kept := keptTrade(t, append(append([]chainevent.Event{}, stream...), late...), propNow.Add(time.Hour))
			r, err = svc.Ingest(ctx, []chainevent.Event{kept})
			require.NoError(t, err)
			assert.Equal(t, 1, r.Skipped)
		})
	}
}

// lateTrades makes, for pairs with successful trades on both sides of cut, a buy placed just
// before the pair's last trade (after the cut): an out-of-order trade its position must be
// re-derived for.
func lateTrades(stream []chainevent.Event, cut time.Time) []chainevent.Event {
	type pair struct{ wallet, token string }
	first, last := map[pair]trade.Trade{}, map[pair]trade.Trade{}
	var order []pair
	for _, e := range stream {
		tr, ok := e.(chainevent.Trade)
		if !ok || !tr.Succeeded() {
			continue
		}
		p := pair{tr.Wallet, tr.TokenAddress}
		if f, seen := first[p]; !seen || trade.Compare(tr.Trade, f) < 0 {
			if !seen {
				order = append(order, p)
			}
			first[p] = tr.Trade
		}
		if l, seen := last[p]; !seen || trade.Compare(tr.Trade, l) > 0 {
			last[p] = tr.Trade
		}
	}
	var out []chainevent.Event
	for _, p := range order {
		f, l := first[p], last[p]
		if f.BlockTimestamp >= cut.UnixMilli() || l.BlockTimestamp <= cut.UnixMilli()+1 {
			continue
		}
		tr := l
		tr.TransactionSignature = fmt.Sprintf("late-%s-%s", p.wallet, p.token)
		tr.InstructionIndex = 0
		tr.BlockTimestamp = l.BlockTimestamp - 1
		tr.Side = trade.Buy
		tr.TokenAmount = decimal.RequireFromString("12.5")
		tr.TokenAmountInUSD = tr.TokenAmount.Mul(tr.TokenPriceInUSD)
		out = append(out, chainevent.Trade{Trade: tr})
		if len(out) == 8 {
			break
		}
	}
	return out
}

// keptTrade is one trade of stream before cut that retention kept (a token's newest successful
// trade).
func keptTrade(t *testing.T, stream []chainevent.Event, cut time.Time) chainevent.Trade {
	t.Helper()
	var sig string
	var ix int32
	require.NoError(t, pgtest.Pool(t).QueryRow(context.Background(), `SELECT tx_signature, instruction_index FROM trades
		WHERE block_timestamp_ms < $1 ORDER BY tx_signature LIMIT 1`, cut.UnixMilli()).Scan(&sig, &ix))
	for _, e := range stream {
		if tr, ok := e.(chainevent.Trade); ok && tr.TransactionSignature == sig && tr.InstructionIndex == ix {
			return tr
		}
	}
	t.Fatalf("trade %s/%d is not in the stream", sig, ix)
	return chainevent.Trade{}
}

// TestRetentionDerivesListedTradesFirst: trades listed for a flush (a steady stream always has
// some) no longer keep retention off their chain: it derives them, then folds and removes the
// old trades, and the position counts every trade once.
func TestRetentionDerivesListedTradesFirst(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	ctx := context.Background()
	db := pgtest.Pool(t)
	s := postgres.NewIngestStore(db)
	apply(t, s, tokenEvent(chain.Sol, "tok1"), swap("w1", trade.Buy, "10", "2", 2*time.Hour, "old1"),
		swap("w1", trade.Buy, "20", "2", 90*time.Minute, "old2"))
	_, err := s.ApplyPending(ctx, chainevent.NewBatch([]chainevent.Event{swap("w1", trade.Buy, "5", "3", time.Minute, "new1")}), now)
	require.NoError(t, err)

	res, err := s.RetainTrades(ctx, now.Add(-time.Hour), time.Minute)
	require.NoError(t, err)
	assert.True(t, res.Done)
	assert.Equal(t, 2, res.Removed, "both old trades removed (the token's newest is the listed one)")
	var left int
	require.NoError(t, db.QueryRow(ctx, `SELECT count(*) FROM trades WHERE chain = 'sol'`).Scan(&left))
	assert.Equal(t, 1, left)
	assert.Equal(t, "35", position(t, "w1").Balance.String(), "the listed trade derived once, the removed ones kept in the base")
	_, err = s.Flush(ctx, now)
	require.NoError(t, err)
	assert.Equal(t, "35", position(t, "w1").Balance.String())
	assert.Equal(t, "3", priceOf(t).String())
}
