package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/adapters/postgres/pgtest"
	"github.com/tokenscope/tokenscope/domain/webhook"
	"github.com/tokenscope/tokenscope/ports"
)

// queueOutbox writes n outbox rows and returns their seqs.
func queueOutbox(t *testing.T, prefix string, n int) []int64 {
	t.Helper()
	var seqs []int64
	for i := range n {
		var seq int64
		require.NoError(t, pgtest.Pool(t).QueryRow(context.Background(), `INSERT INTO outbox (event_id, channel, payload, created_at_ms)
			VALUES ($1, 'sol.token.created', '{"address":"x"}', 1) RETURNING seq`, fmt.Sprintf("%s-%d", prefix, i)).Scan(&seq))
		seqs = append(seqs, seq)
	}
	return seqs
}

func TestWebhookQueue(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	ctx := context.Background()
	pool := pgtest.Pool(t)
	s := postgres.NewWebhookStore(pool)
	freshAccounts(t, "wh-queue")
	a := newTestEndpoint(t, "wh-queue", "ep_queue_a", webhook.Patch{})
	b := newTestEndpoint(t, "wh-queue", "ep_queue_b", webhook.Patch{})
	require.NoError(t, s.Create(ctx, a))
	require.NoError(t, s.Create(ctx, b))
	count := func(q string, args ...any) int {
		var n int
		require.NoError(t, pool.QueryRow(ctx, q, args...).Scan(&n))
		return n
	}
	seqs := queueOutbox(t, "queue-"+time.Now().Format("150405.000000"), 3)
	var ds []ports.QueuedDelivery
	for _, q := range seqs {
		ds = append(ds, ports.QueuedDelivery{EndpointID: a.ID(), Seq: q}, ports.QueuedDelivery{EndpointID: b.ID(), Seq: q})
	}
	ds = append(ds, ports.QueuedDelivery{EndpointID: "ep_queue_gone", Seq: seqs[0]})

	t.Run("fan-out queues per endpoint and stamps the rows, once", func(t *testing.T) {
		require.NoError(t, s.Fanout(ctx, ds, seqs, time.UnixMilli(5)))
		require.NoError(t, s.Fanout(ctx, ds, seqs, time.UnixMilli(9)), "a repeat (a re-read after a crash) is no error")
		assert.Equal(t, 6, count(`SELECT count(*) FROM webhook_queue WHERE outbox_seq = ANY ($1)`, seqs), "an unknown endpoint gets none")
		assert.Equal(t, 3, count(`SELECT count(*) FROM outbox WHERE seq = ANY ($1) AND dispatched_at_ms = 5`, seqs), "stamped by the first")
		ids, err := s.QueuedEndpoints(ctx)
		require.NoError(t, err)
		assert.Subset(t, ids, []string{a.ID(), b.ID()})
		evs, err := s.Queued(ctx, a.ID(), 2)
		require.NoError(t, err)
		require.Len(t, evs, 2)
		assert.Equal(t, seqs[:2], []int64{evs[0].Seq, evs[1].Seq}, "oldest first")
		assert.JSONEq(t, `{"address":"x"}`, string(evs[0].Payload))
	})

	t.Run("complete records attempts in bulk and removes the done rows", func(t *testing.T) {
		at := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
		atts := []webhook.Attempt{
			webhook.NewAttempt(a.ID(), "msg_q1", 1, 200, nil, 3*time.Millisecond, at),
			webhook.NewAttempt(a.ID(), "msg_q2", 1, 500, nil, 4*time.Millisecond, at),
			webhook.NewAttempt(a.ID(), "msg_q3", 1, 0, fmt.Errorf("dial tcp: refused"), 0, at),
		}
		require.NoError(t, s.Complete(ctx, a.ID(), atts, seqs[:1]))
		require.NoError(t, s.Complete(ctx, a.ID(), atts, nil), "a repeat of an attempt is ignored")
		assert.Equal(t, 2, count(`SELECT count(*) FROM webhook_queue WHERE endpoint_id = $1 AND outbox_seq = ANY ($2)`, a.ID(), seqs))
		assert.Equal(t, 3, count(`SELECT count(*) FROM webhook_queue WHERE endpoint_id = $1 AND outbox_seq = ANY ($2)`, b.ID(), seqs))
		got, err := s.RecordedAttempts(ctx, a.ID(), []string{"msg_q1", "msg_q2", "msg_q3"}, 1)
		require.NoError(t, err)
		require.Len(t, got, 3)
		assert.True(t, got["msg_q1"].Result.Success)
		assert.Equal(t, 500, got["msg_q2"].StatusCode)
		assert.Equal(t, 0, got["msg_q3"].StatusCode, "no status is stored as none")
		assert.NotEmpty(t, got["msg_q3"].Error)
	})

	t.Run("an endpoint deleted meanwhile takes its queue with it", func(t *testing.T) {
		require.NoError(t, s.Delete(ctx, "wh-queue", b.ID()))
		assert.Zero(t, count(`SELECT count(*) FROM webhook_queue WHERE endpoint_id = $1`, b.ID()))
		require.NoError(t, s.Complete(ctx, b.ID(), []webhook.Attempt{webhook.NewAttempt(b.ID(), "msg_q1", 1, 200, nil, 0, time.Now())}, seqs),
			"recording for a deleted endpoint is no error")
	})
}

func TestWebhookQueueWatch(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	s := postgres.NewWebhookStore(pgtest.Pool(t))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	held1, woken := make(chan struct{}), make(chan struct{}, 1)
	done1 := make(chan error, 1)
	go func() {
		done1 <- s.Watch(ctx, func() { close(held1) }, func() {
			select {
			case woken <- struct{}{}:
			default:
			}
		})
	}()
	select {
	case <-held1:
	case err := <-done1:
		t.Fatalf("watch ended: %v", err)
	}

	t.Run("an outbox insert wakes the holder", func(t *testing.T) {
		queueOutbox(t, "watch-"+time.Now().Format("150405.000000"), 1)
		select {
		case <-woken:
		case <-time.After(10 * time.Second):
			t.Fatal("no wake-up after an outbox insert")
		}
	})

	t.Run("a second pump waits for the lock until the first lets go", func(t *testing.T) {
		ctx2, cancel2 := context.WithCancel(context.Background())
		defer cancel2()
		held2 := make(chan struct{})
		done2 := make(chan error, 1)
		go func() { done2 <- s.Watch(ctx2, func() { close(held2) }, func() {}) }()
		select {
		case <-held2:
			t.Fatal("two pumps held the lock at once")
		case <-time.After(1500 * time.Millisecond): // it has asked at least once
		}
		cancel()
		require.NoError(t, <-done1)
		select {
		case <-held2:
		case <-time.After(10 * time.Second):
			t.Fatal("the lock was not handed over")
		}
		cancel2()
		require.NoError(t, <-done2)
	})
}
