package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tokenscope/tokenscope/adapters/postgres/internal/dbsqlc"
)

// ReadDB is what the read stores (MarketReader, CandleStore) query through: the primary's pool,
// or a ReadRouter that sends each read to a streaming standby or the primary.
type ReadDB interface {
	Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
	Query(context.Context, string, ...any) (pgx.Rows, error)
	QueryRow(context.Context, string, ...any) pgx.Row
	CopyFrom(context.Context, pgx.Identifier, []string, pgx.CopyFromSource) (int64, error)
	SendBatch(context.Context, *pgx.Batch) pgx.BatchResults
	BeginTx(context.Context, pgx.TxOptions) (pgx.Tx, error)
}

var (
	_ ReadDB = (*pgxpool.Pool)(nil)
	_ ReadDB = (*ReadRouter)(nil)
)

// ReadRouter sends the market reads to streaming standbys while they are current enough, else
// to the primary. "Current enough" is one rule, independent of any cache: the router keeps a
// required WAL position, raised to the primary's current position whenever this process learns
// of a committed change (a market notification arrives, MarketVersions.follow; this process
// commits an announced write, writeAnnouncedBy), before that change invalidates anything; a read
// goes to a standby only when the standby's replayed position, polled every interval, is at or
// above it. So no read observes less than a change the process has already acted on: a cache
// entry invalidated by a version is refilled from a database that holds the commit behind it.
// A standby further behind than maxLag, not answering, or promoted serves no read until it
// is a current standby again.
type ReadRouter struct {
	primary  *pgxpool.Pool
	replicas []*Replica
	maxLag   time.Duration
	interval time.Duration
	log      *slog.Logger
	q        *dbsqlc.Queries

	required     atomic.Int64 // WAL byte offset a standby must have replayed to serve a read
	following    atomic.Bool  // Following was called and NotFollowing not since: standbys may serve
	next         atomic.Uint64
	primaryReads atomic.Uint64

	mu      sync.Mutex
	samples []lsnSample // the primary's position over the last 2×maxLag, oldest first
}

type lsnSample struct {
	at  time.Time
	lsn int64
}

// Replica is one standby as the router sees it.
type Replica struct {
	// Name is the standby's host:port/database, without credentials (metric label, /readyz).
	Name string
	pool *pgxpool.Pool

	replay atomic.Int64 // replayed WAL byte offset at the last poll (or replayNow)
	ask    sync.Mutex   // one replayNow question at a time
	lagNs  atomic.Int64
	usable atomic.Bool
	state  atomic.Pointer[string]

	reads                 atomic.Uint64
	skipBehind, skipUnfit atomic.Uint64
}

// ReplicaState is a standby's figures for metrics and readiness.
type ReplicaState struct {
	Name string
	// State is "up", "starting", "lagging …", "down: …" or "promoted (not a standby)".
	State           string
	Usable          bool
	Lag             time.Duration
	Reads           uint64
	SkippedBehind   uint64 // reads sent elsewhere because it had not replayed the required position
	SkippedUnusable uint64 // reads sent elsewhere because it was lagging, down or promoted
}

// replicaLive is every ReadRouter of this process that routes to standbys: writeAnnouncedBy
// raises their required position after each commit (a process may hold several, as tests do).
var replicaLive = struct {
	mu  sync.Mutex
	set map[*ReadRouter]struct{}
}{set: map[*ReadRouter]struct{}{}}

// NewReadRouter connects a pool to each standby URL. The pools connect lazily: a standby that
// is down at start is only left out. Run polls them; until its first poll every read goes to
// the primary.
func NewReadRouter(primary *pgxpool.Pool, urls []string, maxConns int32, maxLag time.Duration, log *slog.Logger) (*ReadRouter, error) {
	r := &ReadRouter{primary: primary, maxLag: maxLag, interval: 100 * time.Millisecond, log: log, q: dbsqlc.New()}
	for _, u := range urls {
		cfg, err := pgxpool.ParseConfig(u)
		if err != nil {
			r.Close()
			return nil, fmt.Errorf("parse DATABASE_REPLICA_URLS: %w", err)
		}
		if maxConns > 0 {
			cfg.MaxConns = maxConns
		}
		cfg.AfterConnect = primary.Config().AfterConnect
		pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
		if err != nil {
			r.Close()
			return nil, fmt.Errorf("replica pool: %w", err)
		}
		rep := &Replica{Name: replicaName(cfg.ConnConfig), pool: pool}
		starting := "starting"
		rep.state.Store(&starting)
		r.replicas = append(r.replicas, rep)
	}
	return r, nil
}

func replicaName(c *pgx.ConnConfig) string {
	return net.JoinHostPort(c.Host, fmt.Sprint(c.Port)) + "/" + c.Database
}

// Close closes the standbys' pools (not the primary's).
func (r *ReadRouter) Close() {
	for _, rep := range r.replicas {
		rep.pool.Close()
	}
}

// Replicas are the standbys in configuration order.
func (r *ReadRouter) Replicas() []*Replica { return r.replicas }

// PrimaryReads counts the reads the router sent to the primary.
func (r *ReadRouter) PrimaryReads() uint64 { return r.primaryReads.Load() }

// State reports the standby's figures.
func (rep *Replica) State() ReplicaState {
	return ReplicaState{Name: rep.Name, State: *rep.state.Load(), Usable: rep.usable.Load(),
		Lag: time.Duration(rep.lagNs.Load()), Reads: rep.reads.Load(),
		SkippedBehind: rep.skipBehind.Load(), SkippedUnusable: rep.skipUnfit.Load()}
}

// Ping reports the standby's state as an error when it serves no reads (readiness details).
func (rep *Replica) Ping(context.Context) error {
	if rep.usable.Load() {
		return nil
	}
	return errors.New(*rep.state.Load())
}

// Run polls the primary's and the standbys' positions every interval until ctx ends. It also
// registers the router for writeAnnouncedBy's commits.
func (r *ReadRouter) Run(ctx context.Context) {
	if len(r.replicas) == 0 {
		return
	}
	replicaLive.mu.Lock()
	replicaLive.set[r] = struct{}{}
	replicaLive.mu.Unlock()
	defer func() {
		replicaLive.mu.Lock()
		delete(replicaLive.set, r)
		replicaLive.mu.Unlock()
	}()
	t := time.NewTicker(r.interval)
	defer t.Stop()
	for {
		r.poll(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// pollTimeout bounds one position query: a standby slower than this is "down" for the round.
func (r *ReadRouter) pollTimeout() time.Duration { return min(time.Second, r.maxLag) }

func (r *ReadRouter) poll(ctx context.Context) {
	pctx, cancel := context.WithTimeout(ctx, r.pollTimeout())
	defer cancel()
	if lsn, err := r.q.PrimaryWalLSN(pctx, r.primary); err == nil {
		now := time.Now()
		r.mu.Lock()
		r.samples = append(r.samples, lsnSample{at: now, lsn: lsn})
		cut := 0
		for cut < len(r.samples)-1 && now.Sub(r.samples[cut+1].at) > 2*r.maxLag {
			cut++
		}
		r.samples = r.samples[cut:]
		r.mu.Unlock()
	}
	var wg sync.WaitGroup
	for _, rep := range r.replicas {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.pollReplica(pctx, rep)
		}()
	}
	wg.Wait()
}

func (r *ReadRouter) pollReplica(ctx context.Context, rep *Replica) {
	row, err := r.q.StandbyReplay(ctx, rep.pool)
	var state string
	switch {
	case ctx.Err() != nil && errors.Is(err, context.Canceled):
		return // stopping
	case err != nil:
		state = "down: " + err.Error()
	case !row.InRecovery:
		state = "promoted (not a standby)"
	default:
		rep.replay.Store(row.Lsn) // may fall: a standby rebuilt, or following a new primary
		lag := r.lagOf(row.Lsn, time.Now())
		rep.lagNs.Store(int64(lag))
		if lag > r.maxLag {
			state = "lagging " + lag.Round(time.Millisecond).String()
		} else {
			state = "up"
		}
	}
	was := *rep.state.Load()
	rep.state.Store(&state)
	rep.usable.Store(state == "up")
	if (was == "up") != (state == "up") && r.log != nil {
		r.log.Warn("read replica state", "replica", rep.Name, "state", state)
	}
}

// lagOf is how long ago the primary first held a position the standby has not replayed: 0 when
// it has replayed the latest sample, else the age of the oldest sample above its position.
func (r *ReadRouter) lagOf(replay int64, now time.Time) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.samples {
		if s.lsn > replay {
			return now.Sub(s.at)
		}
	}
	return 0
}

// Require raises the position a standby must have replayed to serve a read.
func (r *ReadRouter) Require(lsn int64) {
	for {
		cur := r.required.Load()
		if lsn <= cur || r.required.CompareAndSwap(cur, lsn) {
			return
		}
	}
}

// unknown is the required position while the router could not read the primary's: every read
// goes to the primary until a read succeeds.
const unknown = int64(^uint64(0) >> 1)

// Following starts routing to standbys, from the primary's current position read on db (the
// connection that has just begun listening for the market's notifications, so every later
// commit reaches CaughtUp). It resets the required position, which may fall: after a failover
// the new primary's positions continue from where the promoted standby stopped.
func (r *ReadRouter) Following(ctx context.Context, db dbsqlc.DBTX) {
	lsn, err := r.q.PrimaryWalLSN(ctx, db)
	if err != nil {
		r.following.Store(false)
		return
	}
	r.required.Store(lsn)
	r.following.Store(true)
}

// NotFollowing sends every read to the primary: the router can no longer learn of changes.
func (r *ReadRouter) NotFollowing() { r.following.Store(false) }

// CaughtUp raises the required position to the primary's current one, read on db (a primary
// connection): everything committed before the call is at or below it. On failure every read
// goes to the primary until a later call succeeds.
func (r *ReadRouter) CaughtUp(ctx context.Context, db dbsqlc.DBTX) {
	lsn, err := r.q.PrimaryWalLSN(ctx, db)
	if err != nil {
		r.required.Store(unknown)
		return
	}
	if r.required.CompareAndSwap(unknown, lsn) {
		return
	}
	r.Require(lsn)
}

// committedLocally raises every live router's required position after this process committed
// an announced write.
func committedLocally(ctx context.Context) {
	replicaLive.mu.Lock()
	routers := make([]*ReadRouter, 0, len(replicaLive.set))
	for rr := range replicaLive.set {
		routers = append(routers, rr)
	}
	replicaLive.mu.Unlock()
	for _, rr := range routers {
		rr.CaughtUp(context.WithoutCancel(ctx), rr.primary)
	}
}

// pick chooses where one read runs: a usable standby that has replayed the required position,
// round robin, else the primary (rep nil).
func (r *ReadRouter) pick(ctx context.Context) (*pgxpool.Pool, *Replica) {
	n := len(r.replicas)
	if n > 0 && r.following.Load() {
		req := r.required.Load()
		start := int(r.next.Add(1) % uint64(n))
		for i := range n {
			rep := r.replicas[(start+i)%n]
			switch {
			case !rep.usable.Load():
				rep.skipUnfit.Add(1)
			case rep.replay.Load() < req && r.replayNow(ctx, rep) < req:
				rep.skipBehind.Add(1)
			default:
				rep.reads.Add(1)
				return rep.pool, rep
			}
		}
	}
	r.primaryReads.Add(1)
	return r.primary, nil
}

// replayNow asks a standby whose last polled position is below the required one for its
// position now: a change announced a moment ago is usually replayed already (at once with
// synchronous_commit = remote_apply), and the poll is up to an interval old. Concurrent
// readers share one question: whoever waited on the lock reuses the answer.
func (r *ReadRouter) replayNow(ctx context.Context, rep *Replica) int64 {
	req := r.required.Load()
	rep.ask.Lock()
	defer rep.ask.Unlock()
	if got := rep.replay.Load(); got >= req {
		return got
	}
	ctx, cancel := context.WithTimeout(ctx, r.pollTimeout())
	defer cancel()
	row, err := r.q.StandbyReplay(ctx, rep.pool)
	if err != nil || !row.InRecovery {
		return 0 // the next poll says what it is
	}
	for {
		cur := rep.replay.Load()
		if row.Lsn <= cur || rep.replay.CompareAndSwap(cur, row.Lsn) {
			break
		}
	}
	return rep.replay.Load()
}

// retryOnPrimary reports whether a read that failed on a standby before returning anything is
// run again on the primary: the standby's connection failed, or recovery cancelled the query.
func retryOnPrimary(ctx context.Context, err error) bool {
	if err == nil || ctx.Err() != nil {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "40001" || pgErr.Code == "57P01" || pgErr.Code == "57P04"
	}
	return true // not an answer from the server: connecting or the connection failed
}

// fallBack marks a standby down after a failed read, until the next poll sees it answer.
func (r *ReadRouter) fallBack(rep *Replica, err error) {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "40001" {
		return // a conflict with recovery: the standby is fine
	}
	state := "down: " + err.Error()
	rep.state.Store(&state)
	rep.usable.Store(false)
	r.primaryReads.Add(1)
}

// Query implements ReadDB.
func (r *ReadRouter) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	pool, rep := r.pick(ctx)
	rows, err := pool.Query(ctx, sql, args...)
	if rep == nil {
		return rows, err
	}
	if retryOnPrimary(ctx, err) {
		r.fallBack(rep, err)
		return r.primary.Query(ctx, sql, args...)
	}
	if err != nil {
		return rows, err
	}
	return &routedRows{Rows: rows, r: r, rep: rep, ctx: ctx, sql: sql, args: args}, nil
}

// routedRows are a standby's rows that, when the standby fails before the first row (pgx
// reports most errors only then: a lost connection, a query recovery cancelled), are read from
// the primary instead.
type routedRows struct {
	pgx.Rows
	r    *ReadRouter
	rep  *Replica // nil once on the primary, or after the first row
	ctx  context.Context
	sql  string
	args []any
	err  error // the primary's refusal, replacing the standby's error
}

func (w *routedRows) Next() bool {
	if w.Rows.Next() {
		w.rep = nil
		return true
	}
	if w.rep == nil {
		return false
	}
	rep := w.rep
	w.rep = nil
	err := w.Rows.Err()
	if !retryOnPrimary(w.ctx, err) {
		return false
	}
	w.Rows.Close()
	w.r.fallBack(rep, err)
	rows, err := w.r.primary.Query(w.ctx, w.sql, w.args...)
	if err != nil {
		w.err = err
		return false
	}
	w.Rows = rows
	return w.Rows.Next()
}

func (w *routedRows) Err() error {
	if w.err != nil {
		return w.err
	}
	return w.Rows.Err()
}

// QueryRow implements ReadDB.
func (r *ReadRouter) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return routedRow{r: r, ctx: ctx, sql: sql, args: args}
}

// routedRow runs its query when scanned, so a standby's failure can still go to the primary.
type routedRow struct {
	r    *ReadRouter
	ctx  context.Context
	sql  string
	args []any
}

func (row routedRow) Scan(dest ...any) error {
	pool, rep := row.r.pick(row.ctx)
	err := pool.QueryRow(row.ctx, row.sql, row.args...).Scan(dest...)
	if rep != nil && !errors.Is(err, pgx.ErrNoRows) && retryOnPrimary(row.ctx, err) {
		row.r.fallBack(rep, err)
		return row.r.primary.QueryRow(row.ctx, row.sql, row.args...).Scan(dest...)
	}
	return err
}

// Exec implements ReadDB (reads only: a standby refuses writes).
func (r *ReadRouter) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	pool, _ := r.pick(ctx)
	return pool.Exec(ctx, sql, args...)
}

// CopyFrom implements ReadDB; it always runs on the primary (it writes).
func (r *ReadRouter) CopyFrom(ctx context.Context, t pgx.Identifier, cols []string, src pgx.CopyFromSource) (int64, error) {
	return r.primary.CopyFrom(ctx, t, cols, src)
}

// SendBatch implements ReadDB.
func (r *ReadRouter) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	pool, _ := r.pick(ctx)
	return pool.SendBatch(ctx, b)
}

// BeginTx implements ReadDB: a read-only transaction on one database.
func (r *ReadRouter) BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error) {
	pool, rep := r.pick(ctx)
	tx, err := pool.BeginTx(ctx, opts)
	if rep != nil && retryOnPrimary(ctx, err) {
		r.fallBack(rep, err)
		return r.primary.BeginTx(ctx, opts)
	}
	return tx, err
}
