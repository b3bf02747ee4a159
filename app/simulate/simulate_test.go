package simulate_test

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/ndjson"
	"github.com/tokenscope/tokenscope/app/simulate"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/internal/fakeclock"
)

func generate(t *testing.T, seed uint64) []byte {
	t.Helper()
	var buf bytes.Buffer
	end := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	sim := simulate.New(simulate.Config{Seed: seed, Tokens: 20, Wallets: 200, Trades: 3000, Start: end.Add(-6 * time.Hour), End: end})
	require.NoError(t, sim.Backfill(context.Background(), simulate.EncoderSink{Enc: ndjson.NewEncoder(&buf)}))
	return buf.Bytes()
}

func TestBackfillIsDeterministic(t *testing.T) {
	a, b, c := generate(t, 7), generate(t, 7), generate(t, 8)
	assert.Equal(t, a, b, "same seed, same bytes")
	assert.NotEqual(t, a, c, "another seed, another market")
}

func TestBackfillCoversEveryEventType(t *testing.T) {
	dec := ndjson.NewDecoder(bytes.NewReader(generate(t, 1)))
	counts := map[chainevent.Type]int{}
	chains := map[string]bool{}
	for {
		e, err := dec.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, "every generated line decodes and validates")
		counts[e.Type()]++
		if tr, ok := e.(chainevent.Trade); ok {
			chains[string(tr.Chain)] = true
		}
	}
	for _, typ := range chainevent.AllTypes {
		assert.Positive(t, counts[typ], "events of type %s", typ)
	}
	assert.Equal(t, 20, counts[chainevent.TypeTokenCreated])
	assert.GreaterOrEqual(t, counts[chainevent.TypeTrade], 3000, "every step trades, launches add dev and sniper buys")
	assert.Equal(t, map[string]bool{"sol": true, "eth": true, "bsc": true}, chains)
}

// recorder keeps the events of a run and ends Live after stop trades.
type recorder struct {
	events []chainevent.Event
	trades int
	stop   int
	cancel context.CancelFunc
}

func (r *recorder) Emit(_ context.Context, e chainevent.Event) error {
	r.events = append(r.events, e)
	if _, ok := e.(chainevent.Trade); ok {
		r.trades++
		if r.stop > 0 && r.trades == r.stop {
			r.cancel()
		}
	}
	return nil
}

func (r *recorder) Flush(context.Context) error { return nil }

// unsnapped lists the pools events trade without a snapshot of the pool at or after the pool's
// first trade among them, and how many pools they trade.
func unsnapped(events []chainevent.Event) (missing []string, traded int) {
	first := map[string]int64{}
	snapped := map[string]bool{}
	for _, e := range events {
		switch v := e.(type) {
		case chainevent.Trade:
			if _, ok := first[v.PoolAddress]; !ok {
				first[v.PoolAddress] = v.BlockTimestamp
			}
		case chainevent.PoolSnapshot:
			if at, ok := first[v.PoolAddress]; ok && v.BlockTimestamp >= at {
				snapped[v.PoolAddress] = true
			}
		}
	}
	for p := range first {
		if !snapped[p] {
			missing = append(missing, p)
		}
	}
	return missing, len(first)
}

// TestEveryTradedPoolGetsASnapshot: in a backfill, and again in the live run that follows it,
// every pool that trades gets a snapshot taken at or after its first trade of that run, so the
// pool snapshots operation answers for a pool a user just saw trade.
func TestEveryTradedPoolGetsASnapshot(t *testing.T) {
	end := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	sim := simulate.New(simulate.Config{Seed: 5, Tokens: 60, Wallets: 300, Trades: 3000, Start: end.Add(-24 * time.Hour), End: end})
	back := &recorder{}
	require.NoError(t, sim.Backfill(context.Background(), back))
	missing, traded := unsnapped(back.events)
	assert.Empty(t, missing, "backfill: %d of %d traded pools without a snapshot", len(missing), traded)
	assert.GreaterOrEqual(t, traded, 60, "every token's pool traded, migrated ones twice")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	live := &recorder{stop: 600, cancel: cancel}
	// The clock moves a second on every read, so a live run of a few hundred steps spans minutes.
	require.NoError(t, sim.Live(ctx, live, fakeclock.Stepping(end, time.Second), 1000))
	missing, traded = unsnapped(live.events)
	assert.Empty(t, missing, "live: %d of %d traded pools without a snapshot", len(missing), traded)
	assert.Greater(t, traded, 20, "the live run trades many pools")
}
