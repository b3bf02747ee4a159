//go:build measure

package evm_test

import (
	"context"
	"crypto/ecdsa"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/postgres/pgtest"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/ports"
)

// timedIngest notes the time spent in the ingest transactions.
type timedIngest struct {
	next  ports.CheckpointedIngester
	spent time.Duration
}

func (t *timedIngest) IngestThrough(ctx context.Context, evs []chainevent.Event, cp chainevent.Checkpoint) (chainevent.Result, error) {
	start := time.Now()
	defer func() { t.spent += time.Since(start) }()
	return t.next.IngestThrough(ctx, evs, cp)
}

// TestMeasureBackfill measures a backfill of the simulated chain (not a test: a figure;
// `go test -tags measure -run TestMeasureBackfill -v ./adapters/evm/`).
func TestMeasureBackfill(t *testing.T) {
	const blocks, perBlock = 100, 50
	keys := make([]*ecdsa.PrivateKey, perBlock)
	for i := range keys {
		keys[i] = newKey(t)
	}
	w := newWorld(t, keys...)
	start := time.Now()
	for b := range blocks {
		for i, k := range keys {
			switch (b + i) % 3 {
			case 0:
				w.Swap(k, w.TKNETH, w.WETH, units(1))
			case 1:
				w.Swap(k, w.TKNUSDC, w.USDC, units(100))
			default:
				w.Swap(k, w.Stable, w.USDC, units(100))
			}
		}
		w.Commit()
	}
	t.Logf("made %d swaps in %d blocks in %v", blocks*perBlock, blocks, time.Since(start))
	ti := &timedIngest{next: w.svc.Checkpointed(w.store)}
	a := w.activities(ti)
	start = time.Now()
	w.follow(t, a, 0, 2000)
	took := time.Since(start)
	var n int
	require.NoError(t, pgtest.Pool(t).QueryRow(context.Background(), "SELECT count(*) FROM trades WHERE chain = 'eth'").Scan(&n))
	t.Logf("followed %d trades in %v: %.0f swaps/s; ingest transactions %v, node reads and mapping %v",
		n, took, float64(n)/took.Seconds(), ti.spent, took-ti.spent)
}
