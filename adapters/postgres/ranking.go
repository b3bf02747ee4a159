package postgres

import (
	"context"
	"hash/fnv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tokenscope/tokenscope/adapters/postgres/internal/dbsqlc"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/ranking"
	"github.com/tokenscope/tokenscope/ports"
)

// HotCandidates aggregates the current and previous window of d for every token of c traded in
// the last 2d, in one range scan of the (chain, time) index.
func (s *IngestStore) HotCandidates(ctx context.Context, c chain.Chain, d ranking.Duration, now time.Time) ([]ports.HotCandidate, error) {
	end := now.UnixMilli()
	mid := end - d.Duration().Milliseconds()
	start := mid - d.Duration().Milliseconds()
	rows, err := dbsqlc.New().HotCandidates(ctx, s.pool, dbsqlc.HotCandidatesParams{Chain: string(c), StartMs: start,
		MidMs: mid, EndMs: end})
	if err != nil {
		return nil, interpretError(err, "hot candidates", string(c))
	}
	out := make([]ports.HotCandidate, len(rows))
	for i, r := range rows {
		out[i] = ports.HotCandidate{Address: r.TokenAddress,
			Current: ranking.Activity{Buyers: r.CurrentBuyers, VolumeUSD: r.CurrentVolumeUsd, Trades: r.CurrentTrades},
			Prev:    ranking.Activity{Buyers: r.PrevBuyers, VolumeUSD: r.PrevVolumeUsd, Trades: r.PrevTrades}}
	}
	return out, nil
}

// HotRankingTimes lists when each ranking was last computed.
func (s *IngestStore) HotRankingTimes(ctx context.Context) ([]ports.HotRankingTime, error) {
	rows, err := dbsqlc.New().HotRankingTimes(ctx, s.pool)
	if err != nil {
		return nil, interpretError(err, "hot ranking times", "")
	}
	out := make([]ports.HotRankingTime, len(rows))
	for i, r := range rows {
		out[i] = ports.HotRankingTime{Chain: chain.Chain(r.Chain), Duration: ranking.Duration(r.Duration),
			ComputedAt: time.UnixMilli(r.ComputedAtMs).UTC(), Entries: int(r.Entries)}
	}
	return out, nil
}

// rankingLock is the high half of the advisory lock key of one (chain, duration) ranking.
const rankingLock = 7_346_504

// rankingLockKey is the advisory lock key of the ranking of (c, d): rankingLock in the high half,
// a hash of the chain and duration in the low half (a collision only serialises two rankings).
func rankingLockKey(c chain.Chain, d ranking.Duration) int64 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(string(c) + "/" + string(d)))
	return rankingLock<<32 | int64(h.Sum32())
}

// ReplaceHotTokens swaps one ranking in a transaction, so readers see the old or the new list, and
// records when it was computed in hot_rankings. Writers of one ranking take turns.
func (s *IngestStore) ReplaceHotTokens(ctx context.Context, c chain.Chain, d ranking.Duration, entries []ports.HotEntry, now time.Time) error {
	q := dbsqlc.New()
	err := writeAnnounced(ctx, s.pool, marketRanking(c, d), func(tx pgx.Tx) error {
		// Writers of one ranking take turns (the startup ranking and a refresh round may run at
		// once): a second DELETE would not see the first's new rows, and its COPY would then
		// collide with them.
		if err := q.AdvisoryXactLock(ctx, tx, rankingLockKey(c, d)); err != nil {
			return err
		}
		if err := q.DeleteHotTokens(ctx, tx, dbsqlc.DeleteHotTokensParams{Chain: string(c), Duration: string(d)}); err != nil {
			return err
		}
		rows := make([]dbsqlc.CopyHotTokensParams, len(entries))
		for i, e := range entries {
			rows[i] = dbsqlc.CopyHotTokensParams{Chain: string(c), Duration: string(d), Address: e.Address, Rank: e.Rank,
				Score: e.Score, ComputedAtMs: now.UnixMilli()}
		}
		if _, err := q.CopyHotTokens(ctx, tx, rows); err != nil {
			return err
		}
		return q.UpsertHotRanking(ctx, tx, dbsqlc.UpsertHotRankingParams{Chain: string(c), Duration: string(d),
			ComputedAtMs: now.UnixMilli()})
	})
	return interpretError(err, "hot tokens", string(c)+"/"+string(d))
}
