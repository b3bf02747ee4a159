package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tokenscope/tokenscope/adapters/postgres/internal/dbsqlc"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/webhook"
	"github.com/tokenscope/tokenscope/ports"
)

// WebhookStore implements ports.EndpointStore, ports.AttemptStore and ports.EventSource.
type WebhookStore struct {
	pool *pgxpool.Pool
	q    *dbsqlc.Queries
}

var (
	_ ports.EndpointStore = (*WebhookStore)(nil)
	_ ports.AttemptStore  = (*WebhookStore)(nil)
	_ ports.EventSource   = (*WebhookStore)(nil)
)

// NewWebhookStore builds the store over pool.
func NewWebhookStore(pool *pgxpool.Pool) *WebhookStore {
	return &WebhookStore{pool: pool, q: dbsqlc.New()}
}

// Create counts and inserts under a lock on the account row, so concurrent creates cannot
// both slip under the endpoint limit.
func (s *WebhookStore) Create(ctx context.Context, e *webhook.Endpoint) error {
	st := e.State()
	meta, err := json.Marshal(st.Metadata)
	if err != nil {
		return fmt.Errorf("encode metadata: %w", err)
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := s.q.LockAccount(ctx, tx, st.AccountID); err != nil {
			return err
		}
		n, err := s.q.CountWebhookEndpoints(ctx, tx, st.AccountID)
		if err != nil {
			return err
		}
		if err := webhook.CheckEndpointLimit(int(n)); err != nil {
			return err
		}
		return s.q.InsertWebhookEndpoint(ctx, tx, dbsqlc.InsertWebhookEndpointParams{
			ID: st.ID, AccountID: st.AccountID, Url: st.URL, Description: st.Description,
			Channels: webhookChannelStrings(st.Channels), FilterTypes: st.FilterTypes, Filter: st.Filter, Metadata: meta,
			RateLimit: st.RateLimit, Disabled: st.Disabled, Secret: st.Secret.Reveal(),
			PreviousSecret: webhookPreviousSecret(st.Rotation), PreviousSecretExpiresAt: webhookPreviousExpiry(st.Rotation),
			FirstFailureAt: webhookTimePtr(st.FirstFailureAt), CreatedAt: st.CreatedAt, UpdatedAt: st.UpdatedAt,
		})
	})
	if _, ok := fault.As(err); ok {
		return err
	}
	return interpretError(err, "webhook endpoint", st.ID)
}

func webhookAccountArg(accountID string) *string {
	if accountID == "" {
		return nil
	}
	return &accountID
}

// Get reads one endpoint; accountID "" reads any account's (the delivery worker).
func (s *WebhookStore) Get(ctx context.Context, accountID, id string) (*webhook.Endpoint, error) {
	if unstorableID(id) {
		return nil, fault.NotFound("webhook endpoint", id)
	}
	row, err := s.q.GetWebhookEndpoint(ctx, s.pool, dbsqlc.GetWebhookEndpointParams{ID: id, AccountID: webhookAccountArg(accountID)})
	if err != nil {
		return nil, interpretError(err, "webhook endpoint", id)
	}
	return endpointFromRow(row)
}

// List pages an account's endpoints in creation order.
func (s *WebhookStore) List(ctx context.Context, accountID, cursor string, limit int, descending bool) (ports.EndpointPage, error) {
	var cur *string
	if cursor != "" {
		cur = &cursor
	}
	var (
		rows []dbsqlc.WebhookEndpoint
		err  error
	)
	if descending {
		rows, err = s.q.ListWebhookEndpointsDesc(ctx, s.pool, dbsqlc.ListWebhookEndpointsDescParams{AccountID: accountID, Limit: int32(limit + 1), Cursor: cur})
	} else {
		rows, err = s.q.ListWebhookEndpointsAsc(ctx, s.pool, dbsqlc.ListWebhookEndpointsAscParams{AccountID: accountID, Limit: int32(limit + 1), Cursor: cur})
	}
	if err != nil {
		return ports.EndpointPage{}, interpretError(err, "webhook endpoints", accountID)
	}
	page := ports.EndpointPage{More: len(rows) > limit}
	if page.More {
		rows = rows[:limit]
	}
	for _, r := range rows {
		e, err := endpointFromRow(r)
		if err != nil {
			return ports.EndpointPage{}, err
		}
		page.Endpoints = append(page.Endpoints, e)
	}
	return page, nil
}

// Update is the read-modify-write of one endpoint under FOR UPDATE.
func (s *WebhookStore) Update(ctx context.Context, accountID, id string, fn func(*webhook.Endpoint) error) (*webhook.Endpoint, error) {
	if unstorableID(id) {
		return nil, fault.NotFound("webhook endpoint", id)
	}
	var out *webhook.Endpoint
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		row, err := s.q.GetWebhookEndpointForUpdate(ctx, tx, dbsqlc.GetWebhookEndpointForUpdateParams{ID: id, AccountID: webhookAccountArg(accountID)})
		if err != nil {
			return err
		}
		e, err := endpointFromRow(row)
		if err != nil {
			return err
		}
		if err := fn(e); err != nil {
			return err
		}
		st := e.State()
		meta, err := json.Marshal(st.Metadata)
		if err != nil {
			return err
		}
		out = e
		return s.q.UpdateWebhookEndpoint(ctx, tx, dbsqlc.UpdateWebhookEndpointParams{
			ID: id, Url: st.URL, Description: st.Description, Channels: webhookChannelStrings(st.Channels),
			FilterTypes: st.FilterTypes, Filter: st.Filter, Metadata: meta, RateLimit: st.RateLimit,
			Disabled: st.Disabled, Secret: st.Secret.Reveal(), PreviousSecret: webhookPreviousSecret(st.Rotation),
			PreviousSecretExpiresAt: webhookPreviousExpiry(st.Rotation), FirstFailureAt: webhookTimePtr(st.FirstFailureAt),
			UpdatedAt: st.UpdatedAt,
		})
	})
	if _, ok := fault.As(err); ok {
		return nil, err
	}
	if err != nil {
		return nil, interpretError(err, "webhook endpoint", id)
	}
	return out, nil
}

// Delete removes the account's endpoint (its attempts go with it).
func (s *WebhookStore) Delete(ctx context.Context, accountID, id string) error {
	if unstorableID(id) {
		return fault.NotFound("webhook endpoint", id)
	}
	n, err := s.q.DeleteWebhookEndpoint(ctx, s.pool, dbsqlc.DeleteWebhookEndpointParams{ID: id, AccountID: accountID})
	if err != nil {
		return interpretError(err, "webhook endpoint", id)
	}
	if n == 0 {
		return fault.NotFound("webhook endpoint", id)
	}
	return nil
}

// Subscribers are the enabled endpoints whose channels and filterTypes admit ch.
func (s *WebhookStore) Subscribers(ctx context.Context, ch webhook.Channel) ([]*webhook.Endpoint, error) {
	rows, err := s.q.ListWebhookSubscribers(ctx, s.pool, string(ch))
	if err != nil {
		return nil, interpretError(err, "webhook subscribers", string(ch))
	}
	out := make([]*webhook.Endpoint, 0, len(rows))
	for _, r := range rows {
		e, err := endpointFromRow(r)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// RecordAttempt stores one attempt; a repeat of the same number is ignored.
func (s *WebhookStore) RecordAttempt(ctx context.Context, a webhook.Attempt) error {
	var code *int32
	if a.StatusCode != 0 {
		c := int32(a.StatusCode)
		code = &c
	}
	var errText *string
	if a.Error != "" {
		errText = &a.Error
	}
	err := s.q.InsertWebhookAttempt(ctx, s.pool, dbsqlc.InsertWebhookAttemptParams{
		EndpointID: a.EndpointID, EventID: a.EventID, Attempt: int32(a.Number), StatusCode: code,
		LatencyMs: a.Latency.Milliseconds(), Error: errText, Succeeded: a.Result.Success, AttemptedAt: a.At,
	})
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23503" { // the endpoint was deleted meanwhile
		return nil
	}
	return interpretError(err, "webhook attempt", a.EventID)
}

// ListAttempts pages an endpoint's attempts, newest first.
func (s *WebhookStore) ListAttempts(ctx context.Context, endpointID string, cursor int64, limit int) ([]webhook.Attempt, int64, error) {
	rows, err := s.q.ListWebhookAttempts(ctx, s.pool, dbsqlc.ListWebhookAttemptsParams{EndpointID: endpointID, Limit: int32(limit + 1), Cursor: cursor})
	if err != nil {
		return nil, 0, interpretError(err, "webhook attempts", endpointID)
	}
	var next int64
	if len(rows) > limit {
		rows = rows[:limit]
		next = rows[len(rows)-1].Seq
	}
	out := make([]webhook.Attempt, len(rows))
	for i, r := range rows {
		out[i] = attemptOf(r)
	}
	return out, next, nil
}

// RecordedAttempts returns attempt number `number` of each of eventIDs that has one.
func (s *WebhookStore) RecordedAttempts(ctx context.Context, endpointID string, eventIDs []string, number int) (map[string]webhook.Attempt, error) {
	rows, err := s.q.ListWebhookAttemptsByNumber(ctx, s.pool, dbsqlc.ListWebhookAttemptsByNumberParams{
		EndpointID: endpointID, EventIds: eventIDs, Attempt: int32(number)})
	if err != nil {
		return nil, interpretError(err, "webhook attempts", endpointID)
	}
	out := make(map[string]webhook.Attempt, len(rows))
	for _, r := range rows {
		out[r.EventID] = attemptOf(r)
	}
	return out, nil
}

// attemptOf rebuilds an attempt from its row. The stored outcome keeps what the retry rule
// needs: success, 410 and the overload class (429 or timeout).
func attemptOf(r dbsqlc.WebhookAttempt) webhook.Attempt {
	a := webhook.Attempt{EndpointID: r.EndpointID, EventID: r.EventID, Number: int(r.Attempt),
		Latency: time.Duration(r.LatencyMs) * time.Millisecond, At: r.AttemptedAt.UTC()}
	if r.StatusCode != nil {
		a.StatusCode = int(*r.StatusCode)
	}
	if r.Error != nil {
		a.Error = *r.Error
		a.Result.Reason = *r.Error
	}
	a.Result.Success = r.Succeeded
	a.Result.Gone = a.StatusCode == 410
	a.Result.Throttled = a.StatusCode == 429 || a.Error == "timeout"
	return a
}

// Pending reads undispatched outbox rows, oldest first.
func (s *WebhookStore) Pending(ctx context.Context, limit int) ([]ports.OutboxEvent, error) {
	rows, err := s.q.PendingOutbox(ctx, s.pool, int32(limit))
	if err != nil {
		return nil, interpretError(err, "outbox", "")
	}
	out := make([]ports.OutboxEvent, len(rows))
	for i, r := range rows {
		out[i] = ports.OutboxEvent{Seq: r.Seq, EventID: r.EventID, Channel: r.Channel, Payload: r.Payload, CreatedAtMs: r.CreatedAtMs}
	}
	return out, nil
}

// MarkDispatched stamps the rows.
func (s *WebhookStore) MarkDispatched(ctx context.Context, seqs []int64, at time.Time) error {
	return interpretError(s.q.MarkOutboxDispatched(ctx, s.pool, dbsqlc.MarkOutboxDispatchedParams{AtMs: at.UnixMilli(), Seqs: seqs}), "outbox", "")
}

func endpointFromRow(r dbsqlc.WebhookEndpoint) (*webhook.Endpoint, error) {
	st := webhook.EndpointState{ID: r.ID, AccountID: r.AccountID, URL: r.Url, Description: r.Description,
		Disabled: r.Disabled, Filter: r.Filter, FilterTypes: r.FilterTypes, RateLimit: r.RateLimit,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
	for _, c := range r.Channels {
		st.Channels = append(st.Channels, webhook.Channel(c))
	}
	if r.Channels != nil && st.Channels == nil {
		st.Channels = []webhook.Channel{}
	}
	if err := json.Unmarshal(r.Metadata, &st.Metadata); err != nil {
		return nil, fmt.Errorf("decode endpoint %s metadata: %w", r.ID, err)
	}
	sec, err := webhook.ParseSecret(r.Secret)
	if err != nil {
		return nil, fmt.Errorf("endpoint %s secret: %w", r.ID, err)
	}
	st.Secret = sec
	if r.PreviousSecret != nil && r.PreviousSecretExpiresAt != nil {
		prev, err := webhook.ParseSecret(*r.PreviousSecret)
		if err != nil {
			return nil, fmt.Errorf("endpoint %s previous secret: %w", r.ID, err)
		}
		st.Rotation = webhook.Rotation{Previous: prev, Expires: r.PreviousSecretExpiresAt.UTC()}
	}
	if r.FirstFailureAt != nil {
		st.FirstFailureAt = r.FirstFailureAt.UTC()
	}
	return webhook.RestoreEndpoint(st), nil
}

func webhookChannelStrings(cs []webhook.Channel) []string {
	if cs == nil {
		return nil
	}
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = string(c)
	}
	return out
}

func webhookPreviousSecret(r webhook.Rotation) *string {
	if r.Previous.IsZero() {
		return nil
	}
	s := r.Previous.Reveal()
	return &s
}

func webhookPreviousExpiry(r webhook.Rotation) *time.Time {
	if r.Previous.IsZero() {
		return nil
	}
	return &r.Expires
}

func webhookTimePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// The delivery queue (ports.DeliveryQueue).

var _ ports.DeliveryQueue = (*WebhookStore)(nil)

// pumpLockKey is the session advisory lock only one delivery pump holds.
const pumpLockKey = 7_346_512

// PumpRunning reports whether a delivery pump holds its lock on this database, that is runs
// (in this process or another). Readiness of the processes that run a worker waits for it: after
// a crash the lost pump comes back only when Temporal retries its activity.
func (s *WebhookStore) PumpRunning(ctx context.Context) (bool, error) {
	var running bool
	// hand-built: pg_locks is a system view, which sqlc's catalog does not know.
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted
		AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND classid = 0 AND objid = $1::bigint::oid AND objsubid = 1)`, pumpLockKey).Scan(&running)
	return running, interpretError(err, "delivery pump lock", "")
}

// outboxChannel is what migration 0040's trigger notifies when the outbox gains rows.
const outboxChannel = "webhook_outbox"

// Watch holds the pump lock and listens on a connection of its own, taken out of the pool and
// closed at the end: closing it (or losing it) releases the lock and the LISTEN.
func (s *WebhookStore) Watch(ctx context.Context, held func(), wake func()) error {
	pc, err := s.pool.Acquire(ctx)
	if err != nil {
		return interpretError(err, "delivery pump lock", "")
	}
	conn := pc.Hijack()
	defer conn.Close(context.WithoutCancel(ctx))
	for {
		var got bool
		if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, pumpLockKey).Scan(&got); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return interpretError(err, "delivery pump lock", "")
		}
		if got {
			break
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
	}
	if _, err := conn.Exec(ctx, "LISTEN "+outboxChannel); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return interpretError(err, "outbox listen", "")
	}
	held()
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return interpretError(err, "outbox listen", "")
		}
		wake()
	}
}

// asyncCommit makes the queue's transactions commit without waiting for the WAL flush. They
// are many and small (one per fan-out round, one per lane batch), and what a Postgres crash
// could lose of them is redone: a fan-out lost with its stamp is read and queued again, an
// attempt lost with its queue row is sent again (at least once, as after any crash). A crash of
// the service itself loses nothing committed.
const asyncCommit = "SET LOCAL synchronous_commit = off"

// Fanout queues and stamps in one transaction.
func (s *WebhookStore) Fanout(ctx context.Context, deliveries []ports.QueuedDelivery, seqs []int64, at time.Time) error {
	ids := make([]string, len(deliveries))
	qs := make([]int64, len(deliveries))
	for i, d := range deliveries {
		ids[i], qs[i] = d.EndpointID, d.Seq
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, asyncCommit); err != nil {
			return err
		}
		if len(deliveries) > 0 {
			if err := s.q.EnqueueWebhookDeliveries(ctx, tx, dbsqlc.EnqueueWebhookDeliveriesParams{EndpointIds: ids, Seqs: qs}); err != nil {
				return err
			}
		}
		return s.q.MarkOutboxDispatched(ctx, tx, dbsqlc.MarkOutboxDispatchedParams{AtMs: at.UnixMilli(), Seqs: seqs})
	})
	return interpretError(err, "webhook queue", "")
}

// QueueDepth is the deliveries queued for the pump and the outbox events not yet fanned out.
func (s *WebhookStore) QueueDepth(ctx context.Context) (queued, undispatched int64, err error) {
	row, err := s.q.WebhookQueueDepth(ctx, s.pool)
	return row.Queued, row.Undispatched, interpretError(err, "webhook queue", "")
}

// QueuedEndpoints lists the endpoints with queued deliveries.
func (s *WebhookStore) QueuedEndpoints(ctx context.Context) ([]string, error) {
	ids, err := s.q.QueuedWebhookEndpoints(ctx, s.pool)
	return ids, interpretError(err, "webhook queue", "")
}

// Queued reads an endpoint's queued events with their outbox payloads.
func (s *WebhookStore) Queued(ctx context.Context, endpointID string, limit int) ([]ports.OutboxEvent, error) {
	rows, err := s.q.ListWebhookQueue(ctx, s.pool, dbsqlc.ListWebhookQueueParams{EndpointID: endpointID, Limit: int32(limit)})
	if err != nil {
		return nil, interpretError(err, "webhook queue", endpointID)
	}
	out := make([]ports.OutboxEvent, len(rows))
	for i, r := range rows {
		out[i] = ports.OutboxEvent{Seq: r.Seq, EventID: r.EventID, Channel: r.Channel, Payload: r.Payload, CreatedAtMs: r.CreatedAtMs}
	}
	return out, nil
}

// Complete inserts the attempts with one statement and deletes the done rows, in one
// transaction.
func (s *WebhookStore) Complete(ctx context.Context, endpointID string, attempts []webhook.Attempt, done []int64) error {
	p := dbsqlc.InsertWebhookAttemptsParams{}
	for _, a := range attempts {
		p.EndpointIds = append(p.EndpointIds, a.EndpointID)
		p.EventIds = append(p.EventIds, a.EventID)
		p.Attempts = append(p.Attempts, int32(a.Number))
		p.StatusCodes = append(p.StatusCodes, int32(a.StatusCode))
		p.LatenciesMs = append(p.LatenciesMs, a.Latency.Milliseconds())
		p.Errors = append(p.Errors, a.Error)
		p.Succeeded = append(p.Succeeded, a.Result.Success)
		p.AttemptedAt = append(p.AttemptedAt, a.At)
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, asyncCommit); err != nil {
			return err
		}
		if len(attempts) > 0 {
			if err := s.q.InsertWebhookAttempts(ctx, tx, p); err != nil {
				return err
			}
		}
		if len(done) == 0 {
			return nil
		}
		return s.q.DeleteWebhookQueue(ctx, tx, dbsqlc.DeleteWebhookQueueParams{EndpointID: endpointID, Seqs: done})
	})
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23503" { // the endpoint was deleted meanwhile
		return nil
	}
	return interpretError(err, "webhook attempts", endpointID)
}
