package postgres

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tokenscope/tokenscope/adapters/postgres/internal/dbsqlc"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/stats"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/ports"
)

// refreshRoundLock is the session advisory lock that serialises window refresh rounds: a round
// reads the previous round's time, recomputes and records its own, and two rounds interleaving
// their chunks could record a time some token's windows are not as of.
const refreshRoundLock = 7_346_503

// refreshChunk is how many tokens one window refresh transaction recomputes, so a large round
// never holds the derived-state lock (and the row locks) for long.
const refreshChunk = 200

// windowRoundOverlap widens every span a round scans back past the previous round's time. A
// window is exact as of the time its writer computed it with; an ingest batch takes its time
// before it queues for the derived-state lock, so a batch that took its time just before a round
// started can still write older windows after the round's chunk for the same token. Postgres
// grants that lock in request order, which makes the gap the few milliseconds between a batch
// reading the clock and asking for the lock (more if it waits for a pool connection, or under
// clock skew between hosts); rescanning this much of the previous span covers it.
const windowRoundOverlap = 5 * time.Second

// RefreshWindows brings every token's windows up to date as of now (see ports.MarketRefresher):
// the windows a trade left since the last completed round (every window of every
// token active in the last 24 hours when there is none, or when it is a day or more away),
// recomputed in chunks of refreshChunk tokens, one transaction each, which also records the
// round's position; once all committed, the round's start is recorded as the completed round's
// time. An unfinished round (an attempt that failed or timed out) is continued after its position.
func (s *IngestStore) RefreshWindows(ctx context.Context, now time.Time) (ports.WindowRefresh, error) {
	var res ports.WindowRefresh
	// Market data a stream left pending (a stream that crashed before its flush) is derived first.
	if _, err := s.Flush(ctx, now); err != nil {
		return res, err
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return res, interpretError(err, "refresh windows", "")
	}
	defer conn.Release()
	q := dbsqlc.New()
	if err := q.AdvisoryLock(ctx, conn, refreshRoundLock); err != nil {
		return res, interpretError(err, "refresh windows lock", "")
	}
	defer func() {
		if err := q.AdvisoryUnlock(context.WithoutCancel(ctx), conn, refreshRoundLock); err != nil {
			// A connection that may still hold the lock must not go back to the pool.
			_ = conn.Conn().Close(context.WithoutCancel(ctx))
		}
	}()
	res, err = refreshRound(ctx, conn.Conn(), now)
	return res, interpretError(err, "refresh windows", "")
}

// refreshRound runs one round on conn, which holds refreshRoundLock: it reads refresh_state,
// plans the round (planRound), lists its targets, recomputes them chunk by chunk (refreshPart) and
// records the round as completed.
func refreshRound(ctx context.Context, conn *pgx.Conn, now time.Time) (ports.WindowRefresh, error) {
	var res ports.WindowRefresh
	end := now.UnixMilli()
	day := token.Window24h.Duration().Milliseconds()
	q := dbsqlc.New()
	st, err := q.GetRefreshState(ctx, conn)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return res, fmt.Errorf("refresh state: %w", err)
	}
	plan := planRound(st, end)
	if plan.resumed {
		res.Resumed = true
	} else if err := q.StartRefreshRound(ctx, conn, dbsqlc.StartRefreshRoundParams{RoundAtMs: &end, RoundFull: plan.full}); err != nil {
		return res, fmt.Errorf("refresh state: %w", err)
	}
	var targets []windowTarget
	if plan.full {
		res.Full = true
		targets, err = activeTokens(ctx, conn, end-day)
	} else {
		res.Since = time.UnixMilli(*st.WindowsAtMs).UTC()
		targets, err = crossedTokens(ctx, conn, crossingSpans(*st.WindowsAtMs, end))
	}
	if err != nil {
		return res, err
	}
	if plan.after != nil {
		// Both lists are in byte order of (chain, address), as is the recorded position.
		i := sort.Search(len(targets), func(i int) bool { return refAfter(targets[i].ref, *plan.after) })
		targets = targets[i:]
	}
	for i := 0; i < len(targets); i += refreshChunk {
		part := targets[i:min(i+refreshChunk, len(targets))]
		if err := refreshPart(ctx, conn, part, now); err != nil {
			return res, err
		}
		res.Tokens += len(part)
	}
	// Only now, with every chunk committed, does the round count as done, as of its start: tokens
	// an earlier attempt recomputed are exact as of that attempt's time, which is no earlier.
	if err := q.CompleteRefreshRound(ctx, conn); err != nil {
		return res, fmt.Errorf("refresh state: %w", err)
	}
	return res, nil
}

// roundPlan is what a refresh round does.
type roundPlan struct {
	// full recomputes every window of every active token; otherwise the round recomputes the
	// windows trades crossed since the last completed round.
	full bool
	// resumed continues the unfinished round, after the token after when it recorded one.
	resumed bool
	after   *ports.TokenRef
}

// planRound decides, from refresh_state and the round's time end (Unix ms), whether the round is
// full and whether it continues an unfinished one.
func planRound(st dbsqlc.GetRefreshStateRow, end int64) roundPlan {
	day := token.Window24h.Duration().Milliseconds()
	// A round is full without a completed round to continue from, or one a day or more away (its
	// spans would cover every trade of the day anyway).
	full := st.WindowsAtMs == nil || max(end-*st.WindowsAtMs, *st.WindowsAtMs-end) >= day
	// An unfinished round is continued unless the clock went back behind its start (the tokens it
	// did are as of a time after now) or it was incremental and has become a day old.
	if st.RoundAtMs != nil && *st.RoundAtMs <= end && (st.RoundFull || !full) {
		p := roundPlan{full: st.RoundFull, resumed: true}
		if st.RoundAfterChain != nil && st.RoundAfterAddress != nil {
			p.after = &ports.TokenRef{Chain: chain.Chain(*st.RoundAfterChain), Address: *st.RoundAfterAddress}
		}
		return p
	}
	// An unfinished round that is not continued is replaced by a full one.
	return roundPlan{full: full || st.RoundAtMs != nil}
}

// refreshPart recomputes the windows of one chunk of a round in its own transaction, under the
// chains' flush locks (lockAsFlush: beside their stored-only batches), and records the chunk's last token as the round's position.
func refreshPart(ctx context.Context, conn *pgx.Conn, part []windowTarget, now time.Time) error {
	return writeAnnounced(ctx, conn, marketTokens(refsOf(part)), func(tx pgx.Tx) error {
		if err := lockAsFlush(ctx, tx, chainsOfRefs(refsOf(part))...); err != nil {
			return err
		}
		// hand-built: DDL of the per-connection temporary tables, which are not in the schema sqlc reads.
		if _, err := tx.Exec(ctx, tempTables); err != nil {
			return err
		}
		if err := recomputeWindows(ctx, tx, part, now); err != nil {
			return err
		}
		done := part[len(part)-1].ref
		doneChain := string(done.Chain)
		return dbsqlc.New().SetRefreshRoundPosition(ctx, tx, dbsqlc.SetRefreshRoundPositionParams{
			RoundAfterChain: &doneChain, RoundAfterAddress: &done.Address})
	})
}

// refAfter orders token refs by chain then address, bytewise (COLLATE "C" in SQL).
func refAfter(a, b ports.TokenRef) bool {
	if a.Chain != b.Chain {
		return a.Chain > b.Chain
	}
	return a.Address > b.Address
}

// activeTokens lists the tokens whose windows may differ from zero now or show something: a
// successful trade at or after since, or a stored 24h window that is not empty (its trades may
// all have left since it was computed). All their windows are recomputed.
func activeTokens(ctx context.Context, conn *pgx.Conn, since int64) ([]windowTarget, error) {
	rows, err := dbsqlc.New().ActiveTokens(ctx, conn, since)
	if err != nil {
		return nil, fmt.Errorf("active tokens: %w", err)
	}
	out := make([]windowTarget, len(rows))
	for i, r := range rows {
		out[i] = windowTarget{ref: ports.TokenRef{Chain: chain.Chain(r.Chain), Address: r.Address}, windows: allWindowsSet}
	}
	return out, nil
}

// crossingSpan is a block-time span (lo, hi] and the windows a successful trade in it left (or,
// when the clock went back, entered again).
type crossingSpan struct {
	lo, hi  int64
	windows windowSet
}

// crossingSpans returns the spans holding every trade that left (or, when the clock went back,
// entered again) a window between a round at from and one at to. A trade at t is in w at time T
// when t ≥ stats.WindowStart(T, w), which is at most a step (a second, a minute for 4h and 24h)
// after T − w, so it left w between the rounds when t lies in (from − w, to − w + step] (which
// changes w alone: it is still in every wider window and had already left the narrower ones).
// Every span starts windowRoundOverlap earlier. from > to (a clock that went back) uses (to − w,
// from − w]: those trades are in w again.
//
// No trade enters a window as time passes: a window holds every trade from its start on,
// those stamped after its writer's now included (stats.Cover ends in an open span), so the
// trades of (from, to] were counted when they were derived. Rounds before this rule scanned
// that span too and recomputed every window of every token traded in it: under a live stream,
// all seven windows of nearly every token traded in the last few seconds, every round.
func crossingSpans(from, to int64) []crossingSpan {
	lo, hi := min(from, to)-windowRoundOverlap.Milliseconds(), max(from, to)
	spans := make([]crossingSpan, 0, len(token.AllWindows))
	for i, w := range token.AllWindows {
		d := w.Duration().Milliseconds()
		// A window starts at the first whole second (minute, for 4h and 24h) after T − w
		// (stats.WindowStart): a trade left it by to when it is before to − w + that step.
		step := int64(stats.Second)
		if w.Duration() > time.Hour {
			step = int64(stats.Minute)
		}
		spans = append(spans, crossingSpan{lo - d, hi - d + step, 1 << i})
	}
	return spans
}

// crossedTokens lists the tokens with a successful trade in one of the spans (FAILED trades are
// in no window) and the windows those trades left, by range scans of the (chain, block
// time) index for every chain that has trades (found by skipping through the same index). OFFSET 0
// keeps each scan a parameterised index range scan: flattened into the join, the planner preferred
// reading every trade once (1.5 s instead of 3 ms at 1.2 M trades). The cost estimate of this
// shape is far above the real cost, and JIT compiling it took longer than running it, hence jit
// off.
func crossedTokens(ctx context.Context, conn *pgx.Conn, spans []crossingSpan) ([]windowTarget, error) {
	los, his, sets := make([]int64, len(spans)), make([]int64, len(spans)), make([]int32, len(spans))
	for i, sp := range spans {
		los[i], his[i], sets[i] = sp.lo, sp.hi, int32(sp.windows)
	}
	var out []windowTarget
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if err := dbsqlc.New().JitOff(ctx, tx); err != nil {
			return err
		}
		rows, err := dbsqlc.New().CrossedTokens(ctx, tx, dbsqlc.CrossedTokensParams{Los: los, His: his, Sets: sets})
		if err != nil {
			return err
		}
		out = make([]windowTarget, len(rows))
		for i, r := range rows {
			out[i] = windowTarget{ref: ports.TokenRef{Chain: chain.Chain(r.Chain), Address: r.TokenAddress},
				windows: windowSet(r.Windows)}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("crossed tokens: %w", err)
	}
	return out, nil
}
