package main

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/ndjson"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/domain/trade"
)

func TestCounted1m(t *testing.T) {
	body := []byte(`[{"address":"A","stats":{"address":"A","trades1m":0}},{"address":"B","stats":{"address":"B","trades1m":3}}]`)
	assert.False(t, counted1m(body, "A"))
	assert.True(t, counted1m(body, "B"))
	assert.False(t, counted1m(body, "C"), "absent")
	assert.False(t, counted1m([]byte(`{"code":500}`), "B"), "not a list")
}

func TestPostBodyRetimesTradesAndSamplesAColdToken(t *testing.T) {
	old := time.Now().Add(-2 * coldFor).UnixMilli()
	p := &postBody{lastSent: map[string]int64{"sol/HOT": time.Now().UnixMilli(), "sol/COLD": old}, pickSample: true}
	p.enc = ndjson.NewEncoder(&p.buf)
	future := time.Now().Add(time.Hour).UnixMilli()
	emit := func(tok, sig string, st trade.Status) {
		tr := trade.Trade{Chain: chain.Sol, TransactionSignature: sig, TokenAddress: tok, Status: st, BlockTimestamp: future}
		require.NoError(t, p.Emit(context.Background(), chainevent.Trade{Trade: tr}))
	}
	emit("HOT", "s1", trade.Succeeded)
	emit("COLD", "s2", trade.Failed)
	emit("COLD", "s3", trade.Succeeded)
	emit("NEW", "s4", trade.Succeeded)
	assert.Equal(t, 4, p.trades)
	require.NotNil(t, p.sample)
	assert.Equal(t, "s4", p.sample.signature, "the failed trade is not sampled, and it made COLD hot")
	assert.NotContains(t, p.buf.String(), strconv.FormatInt(future, 10), "every trade re-timed to the wall clock")
	assert.Equal(t, 4, strings.Count(p.buf.String(), "\n"))
}

func TestProcMemoryOfThisProcess(t *testing.T) {
	rss, hwm, err := procMemory(os.Getpid())
	require.NoError(t, err)
	assert.Positive(t, rss)
	assert.GreaterOrEqual(t, hwm, rss)
	m := sampleMemory(os.Getpid(), time.Millisecond)
	peak, maxRSS := m.stop()
	assert.Positive(t, peak)
	assert.Positive(t, maxRSS)
	_, _, err = procMemory(1 << 30)
	assert.Error(t, err)
}
