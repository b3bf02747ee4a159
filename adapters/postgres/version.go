package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tokenscope/tokenscope/adapters/postgres/internal/dbsqlc"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/ranking"
	"github.com/tokenscope/tokenscope/ports"
)

// The market's versions (ports.MarketVersions) follow its writers through Postgres
// notifications on marketChannel: a writer announces in its transaction what derived state it
// changes (writeAnnounced), Postgres delivers the announcement to every listening session at
// commit, and each API process's MarketVersions counts them. A payload names what changed:
// detailsKey for any token's detail, tokensPrefix and a list of tokens for those tokens' details
// only, rankingKey(c, d) for one stored ranking.

// marketChannel is the notification channel (queries/version.sql sends on it).
const marketChannel = "tokenscope_market"

const detailsKey = "details"

// tokensPrefix starts a payload naming tokens: "tokens " then chain:address entries separated by
// spaces, at most maxPayload bytes (Postgres takes up to 8000).
const tokensPrefix = "tokens "

const maxPayload = 7000

func rankingKey(c chain.Chain, d ranking.Duration) string {
	return "ranking/" + string(c) + "/" + string(d)
}

// marketChange is what one writing transaction changes, as notification payloads.
type marketChange []string

// marketDetails: the transaction writes tokens, token_market, token_stats or pools (an ingest
// batch, a window refresh chunk).
var marketDetails = marketChange{detailsKey}

// marketTokens: the transaction writes the details of these tokens only (a window refresh chunk).
func marketTokens(refs []ports.TokenRef) marketChange {
	var ch marketChange
	p := tokensPrefix
	for _, r := range refs {
		e := string(r.Chain) + ":" + r.Address
		if len(p)+len(e)+1 > maxPayload && p != tokensPrefix {
			ch = append(ch, p)
			p = tokensPrefix
		}
		if p != tokensPrefix {
			p += " "
		}
		p += e
	}
	if p != tokensPrefix {
		ch = append(ch, p)
	}
	return ch
}

// marketRanking: the transaction replaces the stored ranking of (c, d).
func marketRanking(c chain.Chain, d ranking.Duration) marketChange {
	return marketChange{rankingKey(c, d)}
}

// writeAnnounced runs fn in one transaction on db and announces ch with it: to every process
// following the market (MarketVersions), by a notification Postgres delivers when the
// transaction commits, and to this process's own followers directly once the commit has
// returned, before writeAnnounced does. So a read this process starts after writeAnnounced returned
// never reuses an answer computed before the write; another process learns of it when the
// notification arrives. Every writer of tokens, token_market, token_stats, pools and hot_tokens
// goes through it. A failed commit is announced locally too: an extra announcement only makes
// readers read again.
func writeAnnounced(ctx context.Context, db interface {
	Begin(context.Context) (pgx.Tx, error)
}, ch marketChange, fn func(pgx.Tx) error) error {
	return writeAnnouncedBy(ctx, db, func(tx pgx.Tx) (marketChange, error) { return ch, fn(tx) })
}

// writeAnnouncedBy is writeAnnounced for a transaction that learns what it changes as it runs:
// fn returns the change, which is announced as writeAnnounced does (marketDetails when fn fails
// before knowing it).
func writeAnnouncedBy(ctx context.Context, db interface {
	Begin(context.Context) (pgx.Tx, error)
}, fn func(pgx.Tx) (marketChange, error)) error {
	ch := marketDetails
	err := pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		got, err := fn(tx)
		if err != nil {
			return err
		}
		ch = got
		if len(ch) == 0 {
			return nil
		}
		if err := dbsqlc.New().NotifyMarket(ctx, tx, ch); err != nil {
			return fmt.Errorf("announce market change: %w", err)
		}
		return nil
	})
	if err == nil {
		committedLocally(ctx)
	}
	localFollowers.changed(ch)
	return err
}

// maxAnnouncedTokens is how many tokens a change names one by one; a transaction that changes
// more announces marketDetails (every kept detail is read again), cheaper than the notifications.
const maxAnnouncedTokens = 1000

// tokensChanged is the change of a transaction that writes the details of refs.
func tokensChanged(refs []ports.TokenRef) marketChange {
	if len(refs) > maxAnnouncedTokens {
		return marketDetails
	}
	return marketTokens(refs)
}

// localFollowers are the MarketVersions of this process that are following, which writeMarket
// tells of its commits directly (a process may run several runtimes, as the tests do; telling
// all of them costs at most a needless re-read).
var localFollowers = &followers{set: map[*MarketVersions]struct{}{}}

type followers struct {
	mu  sync.Mutex
	set map[*MarketVersions]struct{}
}

func (f *followers) add(v *MarketVersions) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.set[v] = struct{}{}
}

func (f *followers) remove(v *MarketVersions) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.set, v)
}

func (f *followers) changed(ch marketChange) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for v := range f.set {
		for _, k := range ch {
			v.bump(k)
		}
	}
}

// MarketVersions implements ports.MarketVersions by following the market's writers: Run
// listens on marketChannel on a connection of its own and counts every announcement. While it
// is not listening (before Run connects, after the connection is lost and until it is back)
// every version is 0, so nothing is reused; when it listens again every version moves past all
// earlier ones, since announcements may have been missed in between.
type MarketVersions struct {
	connect func(context.Context) (*pgx.Conn, error)
	log     *slog.Logger
	// retry is how long Run waits after a lost or failed connection.
	retry time.Duration

	// router, when set (RouteReads), learns of every change before the versions move.
	router *ReadRouter

	mu        sync.Mutex
	following bool
	seq       uint64                    // the latest version handed out
	floor     uint64                    // seq when the current listening session began: no version is below it
	keys      map[string]uint64         // each key's latest version (detailsKey, rankingKey)
	tokens    map[ports.TokenRef]uint64 // each token's latest version, when announced by name
}

var _ ports.MarketVersions = (*MarketVersions)(nil)

// NewMarketVersions follows the writers of pool's database once Run is called.
func NewMarketVersions(pool *pgxpool.Pool, log *slog.Logger) *MarketVersions {
	cfg := pool.Config().ConnConfig
	return &MarketVersions{
		connect: func(ctx context.Context) (*pgx.Conn, error) { return pgx.ConnectConfig(ctx, cfg.Copy()) },
		log:     log, retry: time.Second, keys: map[string]uint64{}, tokens: map[ports.TokenRef]uint64{},
	}
}

// Run follows the writers until ctx ends, reconnecting after a lost connection.
func (v *MarketVersions) Run(ctx context.Context) {
	for {
		err := v.follow(ctx)
		if ctx.Err() != nil {
			return
		}
		v.log.Warn("market versions: not following the writers; token reads go uncached until the connection is back",
			"err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(v.retry):
		}
	}
}

// follow listens on one connection until it fails or ctx ends.
func (v *MarketVersions) follow(ctx context.Context) error {
	conn, err := v.connect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	// hand-built: LISTEN takes an identifier, not a parameter, and sqlc generates no LISTEN.
	if _, err := conn.Exec(ctx, "LISTEN "+marketChannel); err != nil {
		return err
	}
	if v.router != nil {
		v.router.Following(ctx, conn)
		defer v.router.NotFollowing()
	}
	v.start()
	defer v.stop()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		if v.router != nil {
			// Before the version moves: a read that refills what it invalidates must not use a
			// standby that has not replayed the commit behind it.
			v.router.CaughtUp(ctx, conn)
		}
		v.bump(n.Payload)
	}
}

// RouteReads makes r learn of every change this follows, before the versions move; call it
// before Run.
func (v *MarketVersions) RouteReads(r *ReadRouter) { v.router = r }

// start begins a listening session: everything committed before it is visible to any read
// that observes one of its versions, each above every earlier one.
func (v *MarketVersions) start() {
	v.mu.Lock()
	v.following = true
	v.seq++
	v.floor = v.seq
	clear(v.keys) // all below the floor now
	clear(v.tokens)
	v.mu.Unlock()
	localFollowers.add(v)
}

func (v *MarketVersions) stop() {
	localFollowers.remove(v)
	v.mu.Lock()
	v.following = false
	v.mu.Unlock()
}

func (v *MarketVersions) bump(payload string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.seq++
	list, ok := strings.CutPrefix(payload, tokensPrefix)
	if !ok {
		v.keys[payload] = v.seq
		return
	}
	for _, e := range strings.Fields(list) {
		if c, a, ok := strings.Cut(e, ":"); ok {
			v.tokens[ports.TokenRef{Chain: chain.Chain(c), Address: a}] = v.seq
		}
	}
}

func (v *MarketVersions) version(key string) uint64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.following {
		return 0
	}
	return max(v.floor, v.keys[key])
}

// Current implements ports.MarketVersions.
func (v *MarketVersions) Current() uint64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.following {
		return 0
	}
	return v.seq
}

// TokensVersion implements ports.MarketVersions.
func (v *MarketVersions) TokensVersion(c chain.Chain, addrs []string) uint64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.following {
		return 0
	}
	out := max(v.floor, v.keys[detailsKey])
	for _, a := range addrs {
		out = max(out, v.tokens[ports.TokenRef{Chain: c, Address: a}])
	}
	return out
}

// RankingVersion implements ports.MarketVersions.
func (v *MarketVersions) RankingVersion(c chain.Chain, d ranking.Duration) uint64 {
	return v.version(rankingKey(c, d))
}

func refsOf(targets []windowTarget) []ports.TokenRef {
	out := make([]ports.TokenRef, len(targets))
	for i, t := range targets {
		out[i] = t.ref
	}
	return out
}
