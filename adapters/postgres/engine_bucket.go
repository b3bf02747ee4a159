package postgres

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/adapters/postgres/internal/dbsqlc"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/stats"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/domain/trade"
	"github.com/tokenscope/tokenscope/ports"
)

// token_buckets: per token, per resolution (stats.Resolutions), what its successful trades in
// each bucket sum to, and the wallets whose last buy/sell/trade lies in it. A batch adds its
// trades and moves its wallets' last activity (bucketDeltas, writeBuckets); windows are read back
// as the sum of at most 59 + 59 + 25 buckets each (loadBuckets, stats.WindowSum).

type bucketKey struct {
	ref   ports.TokenRef
	res   stats.Resolution
	start int64
}

// bucketDeltas are a batch's changes to token_buckets, one merged delta per bucket, by token
// and then by bucket (so a trade hashes its token's strings once, not once per resolution).
// Second buckets are only kept for block times from secondsFrom (now − stats.SecondsKept) on:
// no window reads an older one (a change to one is dropped, never read).
type bucketDeltas struct {
	m           map[ports.TokenRef]map[bucketSlot]*stats.Bucket
	secondsFrom int64
	n           int // buckets in m
}

// bucketSlot is a bucket of a token: its resolution and start.
type bucketSlot struct {
	res   stats.Resolution
	start int64
}

func newBucketDeltas(now time.Time) *bucketDeltas {
	return &bucketDeltas{m: map[ports.TokenRef]map[bucketSlot]*stats.Bucket{},
		secondsFrom: now.Add(-stats.SecondsKept).UnixMilli()}
}

// of is the token ref's deltas.
func (d *bucketDeltas) of(ref ports.TokenRef) map[bucketSlot]*stats.Bucket {
	tb := d.m[ref]
	if tb == nil {
		tb = map[bucketSlot]*stats.Bucket{}
		d.m[ref] = tb
	}
	return tb
}

// at is the delta in tb of the bucket of resolution res holding ms, nil for a second no longer
// kept.
func (d *bucketDeltas) at(tb map[bucketSlot]*stats.Bucket, ms int64, res stats.Resolution) *stats.Bucket {
	if res == stats.Second && ms < d.secondsFrom {
		return nil
	}
	k := bucketSlot{res, stats.BucketStart(ms, res)}
	b := tb[k]
	if b == nil {
		b = &stats.Bucket{Start: k.start, Res: res}
		tb[k] = b
		d.n++
	}
	return b
}

// addTrade adds the successful trade t to its bucket of every resolution.
func (d *bucketDeltas) addTrade(t *trade.Trade) {
	tb := d.of(ports.TokenRef{Chain: t.Chain, Address: t.TokenAddress})
	for _, r := range stats.Resolutions {
		if b := d.at(tb, t.BlockTimestamp, r); b != nil {
			b.AddTrade(t)
		}
	}
}

// moveActivity records that a wallet's last activity on the token ref went from old to updated.
func (d *bucketDeltas) moveActivity(ref ports.TokenRef, old, updated stats.LastActivity) {
	moves := old.Moves(updated)
	if len(moves) == 0 {
		return
	}
	tb := d.of(ref)
	for _, m := range moves {
		for _, r := range stats.Resolutions {
			if b := d.at(tb, m.At, r); b != nil {
				b.Apply(m)
			}
		}
	}
}

// bucketColumns are the token_buckets columns writeBuckets stages, in copyBucket order.
var bucketColumns = []string{
	"chain", "address", "res_ms", "start_ms", "buys", "sells", "buy_volume", "sell_volume", "buy_volume_usd",
	"sell_volume_usd", "open_usd", "open_ms", "open_height", "open_sig", "open_ix", "close_usd", "close_ms",
	"close_height", "close_sig", "close_ix", "high_usd", "low_usd", "last_buyers", "last_sellers", "last_traders",
}

func copyBucket(c *copyRows, k bucketKey, b *stats.Bucket) {
	c.row(len(bucketColumns))
	c.text(string(k.ref.Chain))
	c.text(k.ref.Address)
	c.int8(int64(k.res))
	c.int8(k.start)
	c.int8(b.Buys)
	c.int8(b.Sells)
	c.numeric(b.BuyVolume)
	c.numeric(b.SellVolume)
	c.numeric(b.BuyVolumeInUSD)
	c.numeric(b.SellVolumeInUSD)
	if b.Trades() > 0 {
		for _, m := range [...]*stats.Mark{&b.Open, &b.Close} {
			c.numeric(m.Price)
			c.int8(m.At)
			c.int8(m.Height)
			c.text(m.Signature)
			c.int4(m.Index)
		}
		c.numeric(b.High)
		c.numeric(b.Low)
	} else {
		for range 12 {
			c.null()
		}
	}
	c.int8(b.LastBuyers)
	c.int8(b.LastSellers)
	c.int8(b.LastTraders)
}

// bucketMerge is the ON CONFLICT clause that adds a staged delta to a stored bucket, as
// stats.Bucket.Merge does: sums add, the earlier open and the later close win (row comparison
// in trade.Compare order; the signature columns are COLLATE "C", bytewise like Go), extremes.
var bucketMerge = func() string {
	var set []string
	for _, c := range []string{"buys", "sells", "buy_volume", "sell_volume", "buy_volume_usd", "sell_volume_usd",
		"last_buyers", "last_sellers", "last_traders"} {
		set = append(set, c+" = b."+c+" + EXCLUDED."+c)
	}
	mark := func(side, cmp string) {
		key := func(t string) string {
			return "(" + t + "." + side + "_ms, " + t + "." + side + "_height, " + t + "." + side + "_sig, " + t + "." + side + "_ix)"
		}
		wins := "(b." + side + "_ms IS NULL OR (EXCLUDED." + side + "_ms IS NOT NULL AND " + key("EXCLUDED") + " " + cmp + " " + key("b") + "))"
		for _, c := range []string{"_usd", "_ms", "_height", "_sig", "_ix"} {
			set = append(set, side+c+" = CASE WHEN "+wins+" THEN EXCLUDED."+side+c+" ELSE b."+side+c+" END")
		}
	}
	mark("open", "<")
	mark("close", ">")
	set = append(set, "high_usd = GREATEST(b.high_usd, EXCLUDED.high_usd)", "low_usd = LEAST(b.low_usd, EXCLUDED.low_usd)")
	return strings.Join(set, ", ")
}()

// bucketStaging is the per-connection table writeBuckets copies deltas into.
const bucketStaging = `CREATE TEMP TABLE IF NOT EXISTS ingest_buckets (LIKE token_buckets) ON COMMIT DELETE ROWS`

// writeBuckets adds the deltas to token_buckets: COPY into ingest_buckets, then one
// INSERT … ON CONFLICT that merges.
func writeBuckets(ctx context.Context, tx pgx.Tx, d *bucketDeltas) error {
	rows := newCopyRows(d.n * 512)
	for ref, tb := range d.m {
		for s, b := range tb {
			if b.Trades() == 0 && b.LastBuyers == 0 && b.LastSellers == 0 && b.LastTraders == 0 {
				continue // moves that cancelled out
			}
			copyBucket(rows, bucketKey{ref, s.res, s.start}, b)
		}
	}
	if rows.rows == 0 {
		return nil
	}
	if err := copyStagedRows(ctx, tx, bucketStaging, "ingest_buckets", bucketColumns, rows, "buckets"); err != nil {
		return err
	}
	cols := joinCols(bucketColumns)
	// hand-built: the column list and merge clause are generated from bucketColumns; ingest_buckets is a temporary table.
	if _, err := tx.Exec(ctx, `INSERT INTO token_buckets AS b (`+cols+`) SELECT `+cols+` FROM ingest_buckets
		ON CONFLICT (chain, address, res_ms, start_ms) DO UPDATE SET `+bucketMerge); err != nil {
		return fmt.Errorf("merge buckets: %w", err)
	}
	return nil
}

// windowSpans lists, for the windows of set at now, the bucket spans of ref they sum, merged so
// that no bucket is read twice.
func windowSpans(set windowSet, now time.Time) []stats.Span {
	var spans []stats.Span
	for i, w := range token.AllWindows {
		if set&(1<<i) != 0 {
			spans = append(spans, stats.Cover(stats.WindowStart(now, w))...)
		}
	}
	slices.SortFunc(spans, func(a, b stats.Span) int { return cmp.Or(cmp.Compare(a.Res, b.Res), cmp.Compare(a.From, b.From)) })
	var out []stats.Span
	for _, s := range spans {
		if n := len(out); n > 0 && out[n-1].Res == s.Res && s.From <= out[n-1].To {
			out[n-1].To = max(out[n-1].To, s.To)
			continue
		}
		out = append(out, s)
	}
	return out
}

// loadBuckets reads the buckets the windows of each target sum at now (windowSpans), by token.
func loadBuckets(ctx context.Context, tx pgx.Tx, targets []windowTarget, now time.Time) (map[ports.TokenRef][]stats.Bucket, error) {
	var p dbsqlc.BucketSpansParams
	for _, t := range targets {
		for _, s := range windowSpans(t.windows, now) {
			p.Chains, p.Addresses = append(p.Chains, string(t.ref.Chain)), append(p.Addresses, t.ref.Address)
			p.Resolutions, p.Froms, p.Tos = append(p.Resolutions, int64(s.Res)), append(p.Froms, s.From), append(p.Tos, s.To)
		}
	}
	out := make(map[ports.TokenRef][]stats.Bucket, len(targets))
	if len(p.Chains) == 0 {
		return out, nil
	}
	rows, err := dbsqlc.New().BucketSpans(ctx, tx, p)
	if err != nil {
		return nil, fmt.Errorf("window buckets: %w", err)
	}
	for _, r := range rows {
		ref := ports.TokenRef{Chain: chain.Chain(r.Chain), Address: r.Address}
		out[ref] = append(out[ref], storedBucket(r))
	}
	return out, nil
}

// storedBucket is the stats.Bucket of a token_buckets row.
func storedBucket(r dbsqlc.TokenBucket) stats.Bucket {
	b := stats.Bucket{Start: r.StartMs, Res: stats.Resolution(r.ResMs), Buys: r.Buys, Sells: r.Sells,
		BuyVolume: r.BuyVolume, SellVolume: r.SellVolume, BuyVolumeInUSD: r.BuyVolumeUsd, SellVolumeInUSD: r.SellVolumeUsd,
		LastBuyers: r.LastBuyers, LastSellers: r.LastSellers, LastTraders: r.LastTraders}
	if b.Trades() > 0 && r.OpenMs != nil && r.CloseMs != nil {
		b.Open = stats.Mark{At: *r.OpenMs, Height: deref(r.OpenHeight), Signature: derefStr(r.OpenSig), Index: deref(r.OpenIx),
			Price: r.OpenUsd.Decimal}
		b.Close = stats.Mark{At: *r.CloseMs, Height: deref(r.CloseHeight), Signature: derefStr(r.CloseSig),
			Index: deref(r.CloseIx), Price: r.CloseUsd.Decimal}
		b.High, b.Low = r.HighUsd.Decimal, r.LowUsd.Decimal
	}
	return b
}

func deref[T int32 | int64](p *T) T {
	if p == nil {
		return 0
	}
	return *p
}

func derefStr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// bucketWindows computes the windows of each target at now from its buckets, with its liquidity.
func bucketWindows(ctx context.Context, tx pgx.Tx, targets []windowTarget, liquidity map[ports.TokenRef]decimal.Decimal,
	now time.Time) ([]windowStats, error) {
	buckets, err := loadBuckets(ctx, tx, targets, now)
	if err != nil {
		return nil, err
	}
	out := make([]windowStats, 0, len(targets)*len(token.AllWindows))
	for _, t := range targets {
		for i, w := range token.AllWindows {
			if t.windows&(1<<i) != 0 {
				out = append(out, windowOf(t.ref, w, stats.WindowSum(buckets[t.ref], now, w), liquidity[t.ref]))
			}
		}
	}
	return out, nil
}
