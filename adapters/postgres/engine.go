package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/adapters/postgres/internal/dbsqlc"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/ranking"
	"github.com/tokenscope/tokenscope/domain/stats"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/domain/trade"
	"github.com/tokenscope/tokenscope/ports"
)

// positions folds the batch's new trades into wallet_positions. A pair whose new trades all sort
// after its last applied trade is advanced in place; any other pair (a trade arrived out of
// order) is rebuilt from every stored trade with pnl.Rederive.
func (a *applier) positions(ctx context.Context) error {
	if len(a.newTrades) == 0 {
		return nil
	}
	byKey := map[posKey][]trade.Trade{}
	var chains, wallets, tokens []string
	for _, t := range a.newTrades {
		k := posKey{t.Chain, t.Wallet, t.TokenAddress}
		if _, ok := byKey[k]; !ok {
			chains, wallets, tokens = append(chains, string(k.chain)), append(wallets, k.wallet), append(tokens, k.token)
		}
		byKey[k] = append(byKey[k], t)
	}
	// hand-built: the select list is generated from positionColumns, and sqlc rejects multi-array unnest (sqlc-dev/sqlc#3507).
	rows, err := a.tx.Query(ctx, `SELECT `+selectPositionColumns("p")+`
		FROM wallet_positions p JOIN unnest($1::text[], $2::text[], $3::text[]) AS k(chain, wallet, token)
		ON p.chain = k.chain AND p.wallet = k.wallet AND p.token_address = k.token`, chains, wallets, tokens)
	if err != nil {
		return fmt.Errorf("load positions: %w", err)
	}
	existing := map[posKey]*positionRow{}
	for rows.Next() {
		r := &positionRow{}
		k, err := r.scan(rows)
		if err != nil {
			rows.Close()
			return fmt.Errorf("load positions: %w", err)
		}
		existing[k] = r
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("load positions: %w", err)
	}

	var out [][]any
	for k, ts := range byKey {
		ts = trade.Sorted(ts)
		r := existing[k]
		if r == nil {
			r = &positionRow{}
		}
		if r.exists && trade.Compare(ts[0], r.last) <= 0 {
			rr, _, err := rederivePosition(ctx, a.tx, k)
			if err != nil {
				return err
			}
			if rr == nil { // not reached: the batch's trades of the pair are stored
				return fmt.Errorf("rederive position %s/%s: no trades", k.wallet, k.token)
			}
			r = rr
			a.res.Rederived++
		} else {
			for _, t := range ts {
				if err := r.pos.Apply(t); err != nil {
					return err
				}
				r.noteFirstBuy(t)
			}
			r.last = ts[len(ts)-1]
		}
		out = append(out, r.values(k, a.now))
	}
	return writePositions(ctx, a.tx, out)
}

func refArrays(refs []ports.TokenRef) ([]string, []string) {
	cs, as := make([]string, len(refs)), make([]string, len(refs))
	for i, r := range refs {
		cs[i], as[i] = string(r.Chain), r.Address
	}
	return cs, as
}

// marketColumns are the token_market fields a batch rewrites, staged in ingest_market and applied
// with one UPDATE. volume_24h_usd and trades_24h are NULL for tokens whose windows the batch did
// not recompute, which keeps their stored values.
var marketColumns = []string{
	"chain", "address", "price_usd", "price_sol", "total_supply", "circulating_supply", "market_cap_usd", "market_cap_sol",
	"fdv_usd", "fdv_sol", "holders", "top10_holdings", "top10_ratio", "top50_holdings", "top50_ratio", "top100_holdings",
	"top100_ratio", "dev_holdings", "dev_ratio", "groups", "completion_ratio", "max_pool_tvl_usd", "max_pool_tvl_sol",
	"total_tvl_usd", "total_tvl_sol", "last_trade_at_ms", "volume_24h_usd", "trades_24h",
}

// deriveMarket recomputes token_market for refs and the windows of windowRefs (a subset of refs),
// writing each table once: price from the newest trade, holders and holdings from
// wallet_positions, TVL from pools, the formulas of domain/stats, and the windows over the trades
// of the last 24 hours with the liquidity just derived. Tokens without a tokens row have neither
// market nor stats rows and are skipped.
func deriveMarket(ctx context.Context, tx pgx.Tx, refs []ports.TokenRef, windowRefs map[ports.TokenRef]bool, now time.Time) error {
	if len(refs) == 0 {
		return nil
	}
	cs, as := refArrays(refs)
	solUSD, err := solPriceUSD(ctx, tx)
	if err != nil {
		return err
	}
	type base struct {
		creator                         string
		total, circ, target             decimal.Decimal
		priceUSD, priceNative, curveRes decimal.Decimal
		migrated                        bool
		holders                         int64
		maxTVLUSD, maxTVLSol            decimal.Decimal
		sumTVLUSD, sumTVLSol            decimal.Decimal
		lastTrade                       int64
	}
	// hand-built: sqlc rejects multi-array unnest (sqlc-dev/sqlc#3507).
	rows, err := tx.Query(ctx, `SELECT t.chain, t.address, COALESCE(t.creator_address, ''),
		t.total_supply, t.circulating_supply, t.curve_target_native, t.migrated_at_ms IS NOT NULL,
		COALESCE(lt.token_price_usd, 0), COALESCE(lt.token_price_native, 0), COALESCE(lt.block_timestamp_ms, 0),
		COALESCE(cp.reserve_b, 0),
		COALESCE(pl.max_usd, 0), COALESCE(pl.max_sol, 0), COALESCE(pl.sum_usd, 0), COALESCE(pl.sum_sol, 0)
		FROM unnest($1::text[], $2::text[]) AS r(chain, address)
		JOIN tokens t ON t.chain = r.chain AND t.address = r.address
		LEFT JOIN LATERAL (SELECT token_price_usd, token_price_native, block_timestamp_ms FROM trades x
			WHERE x.chain = t.chain AND x.token_address = t.address AND x.status = 'SUCCEEDED'
			ORDER BY block_timestamp_ms DESC, seq DESC LIMIT 1) lt ON true
		LEFT JOIN pools cp ON cp.chain = t.chain AND cp.address = t.curve_pool_address
		LEFT JOIN LATERAL (SELECT max(tvl_usd) AS max_usd, max(tvl_sol) AS max_sol, sum(tvl_usd) AS sum_usd, sum(tvl_sol) AS sum_sol
			FROM pools p WHERE p.chain = t.chain AND (p.token_a_address = t.address OR p.token_b_address = t.address)) pl ON true`,
		cs, as)
	if err != nil {
		return fmt.Errorf("market inputs: %w", err)
	}
	bases := map[ports.TokenRef]*base{}
	var order []ports.TokenRef
	for rows.Next() {
		var c, addr string
		b := &base{}
		if err := rows.Scan(&c, &addr, &b.creator, &b.total, &b.circ, &b.target, &b.migrated, &b.priceUSD,
			&b.priceNative, &b.lastTrade, &b.curveRes, &b.maxTVLUSD, &b.maxTVLSol, &b.sumTVLUSD, &b.sumTVLSol); err != nil {
			rows.Close()
			return fmt.Errorf("market inputs: %w", err)
		}
		ref := ports.TokenRef{Chain: chain.Chain(c), Address: addr}
		bases[ref] = b
		order = append(order, ref)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("market inputs: %w", err)
	}

	// One pass over each token's positive balances gives the holder count, the top 100 holders
	// and every holder that is in a group: labelled, the creator, or a sniper (first buy within
	// stats.SniperBlocks blocks of creation; stats.IsSniper decides below).
	// Labels are looked up per holder through wallet_labels' key: joined as one aggregate over
	// every label, a generic plan made while wallet_labels was small re-ran that aggregate for
	// each holder once it was not (a 1M-trade import sat 9 minutes in one batch).
	// hand-built: sqlc rejects multi-array unnest (sqlc-dev/sqlc#3507).
	hrows, err := tx.Query(ctx, `SELECT h.chain, h.token_address, h.n, h.wallet, h.balance, COALESCE(h.labels, '{}'), h.first_block_height,
			h.created_block_height
		FROM (
			SELECT w.chain, w.token_address, w.wallet, w.balance, w.first_block_height,
				(SELECT array_agg(l.label ORDER BY l.label) FROM wallet_labels l WHERE l.chain = w.chain AND l.wallet = w.wallet) AS labels,
				t.creator_address,
				t.created_block_height,
				count(*) OVER (PARTITION BY w.chain, w.token_address) AS n,
				row_number() OVER (PARTITION BY w.chain, w.token_address ORDER BY w.balance DESC, w.wallet) AS rk
			FROM unnest($1::text[], $2::text[]) AS r(chain, address)
			JOIN tokens t ON t.chain = r.chain AND t.address = r.address
			JOIN wallet_positions w ON w.chain = r.chain AND w.token_address = r.address AND w.balance > 0
		) h
		WHERE h.rk <= 100 OR h.wallet = h.creator_address OR h.labels IS NOT NULL
			OR h.first_block_height BETWEEN h.created_block_height AND h.created_block_height + $3`, cs, as, stats.SniperBlocks)
	if err != nil {
		return fmt.Errorf("market holders: %w", err)
	}
	balances := map[ports.TokenRef]map[string]decimal.Decimal{}
	labels := map[ports.TokenRef]map[string][]token.HolderGroup{}
	for hrows.Next() {
		var ref ports.TokenRef
		var c, wallet string
		var n int64
		var balance decimal.Decimal
		var groups []string
		var first, created *int64
		if err := hrows.Scan(&c, &ref.Address, &n, &wallet, &balance, &groups, &first, &created); err != nil {
			hrows.Close()
			return fmt.Errorf("market holders: %w", err)
		}
		ref.Chain = chain.Chain(c)
		if b := bases[ref]; b != nil {
			b.holders = n
		}
		if balances[ref] == nil {
			balances[ref], labels[ref] = map[string]decimal.Decimal{}, map[string][]token.HolderGroup{}
		}
		balances[ref][wallet] = balance
		for _, g := range groups {
			labels[ref][wallet] = append(labels[ref][wallet], token.HolderGroup(g))
		}
		if first != nil && created != nil && stats.IsSniper(*created, *first) {
			labels[ref][wallet] = append(labels[ref][wallet], token.Sniper)
		}
	}
	if err := hrows.Err(); err != nil {
		return fmt.Errorf("market holders: %w", err)
	}

	var wrefs []ports.TokenRef
	liquidity := map[ports.TokenRef]decimal.Decimal{}
	for _, ref := range order {
		if windowRefs[ref] {
			wrefs = append(wrefs, ref)
			liquidity[ref] = bases[ref].sumTVLUSD
		}
	}
	windows, err := computeWindows(ctx, tx, wrefs, liquidity, now)
	if err != nil {
		return err
	}
	day := map[ports.TokenRef]token.PeriodStats{}
	for _, w := range windows {
		if w.window == token.Window24h {
			day[w.ref] = w.stats
		}
	}

	out := make([][]any, 0, len(order))
	for _, ref := range order {
		b := bases[ref]
		md := stats.Holdings(balances[ref], b.total, labels[ref], b.creator)
		md.Holders = decimal.NewFromInt(b.holders)
		priceSol := b.priceNative
		if ref.Chain != chain.Sol {
			priceSol = divOrZero(b.priceUSD, solUSD)
		}
		v := stats.MarketValues(b.priceUSD, priceSol, b.total, b.circ)
		completion := stats.CompletionRatio(b.curveRes, b.target)
		if b.migrated {
			completion = decimal.NewFromInt(1)
		}
		groups := map[string]map[string]string{}
		for _, g := range token.AllHolderGroups {
			gh := md.Group(g)
			groups[string(g)] = map[string]string{"holders": gh.TotalHolders.String(), "holdings": gh.TotalHoldings.String(),
				"ratio": gh.HoldingsRatio.String()}
		}
		groupsJSON, err := json.Marshal(groups)
		if err != nil {
			return fmt.Errorf("market groups: %w", err)
		}
		var vol24 decimal.NullDecimal
		var trades24 *int64
		if s, ok := day[ref]; ok {
			vol24, trades24 = decimal.NullDecimal{Decimal: s.TotalVolumeInUSD, Valid: true}, &s.Trades
		}
		dev := md.Group(token.Dev)
		out = append(out, []any{string(ref.Chain), ref.Address, b.priceUSD, priceSol, b.total, b.circ, v.MarketCapInUSD,
			v.MarketCapInSol, v.FDVInUSD, v.FDVInSol, b.holders, md.Top10.TotalHoldings, md.Top10.HoldingsRatio,
			md.Top50.TotalHoldings, md.Top50.HoldingsRatio, md.Top100.TotalHoldings, md.Top100.HoldingsRatio,
			dev.TotalHoldings, dev.HoldingsRatio, string(groupsJSON), completion, b.maxTVLUSD, b.maxTVLSol, b.sumTVLUSD,
			b.sumTVLSol, b.lastTrade, vol24, trades24})
	}
	if len(out) > 0 {
		// hand-built: COPY into a temporary table, which is not in the schema sqlc reads.
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"ingest_market"}, marketColumns, pgx.CopyFromRows(out)); err != nil {
			return fmt.Errorf("copy market: %w", err)
		}
		set := ""
		for _, c := range marketColumns[2:] {
			switch c {
			case "last_trade_at_ms":
				set += ", last_trade_at_ms = GREATEST(m.last_trade_at_ms, s.last_trade_at_ms)"
			case "volume_24h_usd", "trades_24h":
				set += ", " + c + " = COALESCE(s." + c + ", m." + c + ")"
			default:
				set += ", " + c + " = s." + c
			}
		}
		// hand-built: the SET list is generated from marketColumns; ingest_market is a temporary table.
		if _, err := tx.Exec(ctx, `UPDATE token_market m SET updated_at_ms = $1`+set+`
			FROM ingest_market s WHERE m.chain = s.chain AND m.address = s.address`, now.UnixMilli()); err != nil {
			return fmt.Errorf("update market: %w", err)
		}
	}
	return writeWindows(ctx, tx, windows, now)
}

func divOrZero(a, b decimal.Decimal) decimal.Decimal {
	if b.IsZero() {
		return decimal.Zero
	}
	return a.DivRound(b, stats.Scale)
}

var statsColumns = []string{
	"chain", "address", "window_name", "buys", "sells", "trades", "buyers", "sellers", "traders", "buy_volume",
	"sell_volume", "total_volume", "buy_volume_usd", "sell_volume_usd", "total_volume_usd", "open_usd", "close_usd",
	"high_usd", "low_usd", "price_change_ratio_usd", "current_liquidity_usd", "updated_at_ms",
}

// windowStats is one token_stats row before it is written.
type windowStats struct {
	ref    ports.TokenRef
	window token.Window
	stats  token.PeriodStats
}

// computeWindows derives every window of refs as of now with stats.Window over the trades of the
// last 24 hours, read through the (chain, token, time) index. Each window is handed only the
// trades that can lie in it (a suffix of the token's trades in time order); stats.Window applies
// the exact bounds itself, so the result is the same as handing it all of them.
func computeWindows(ctx context.Context, tx pgx.Tx, refs []ports.TokenRef, liquidity map[ports.TokenRef]decimal.Decimal,
	now time.Time) ([]windowStats, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	cs, as := refArrays(refs)
	end := now.UnixMilli()
	start := end - token.Window24h.Duration().Milliseconds()
	// hand-built: sqlc rejects multi-array unnest (sqlc-dev/sqlc#3507).
	rows, err := tx.Query(ctx, `SELECT r.chain, r.address, x.tx_signature, x.instruction_index, x.block_height,
			x.block_timestamp_ms, x.wallet, x.side, x.status, x.token_amount, x.token_amount_usd, x.token_price_usd
		FROM unnest($1::text[], $2::text[]) AS r(chain, address)
		JOIN LATERAL (SELECT * FROM trades t WHERE t.chain = r.chain AND t.token_address = r.address
			AND t.block_timestamp_ms > $3 AND t.block_timestamp_ms <= $4) x ON true`, cs, as, start, end)
	if err != nil {
		return nil, fmt.Errorf("window trades: %w", err)
	}
	byRef := map[ports.TokenRef][]trade.Trade{}
	for rows.Next() {
		t, err := scanWindowTrade(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		ref := ports.TokenRef{Chain: t.Chain, Address: t.TokenAddress}
		byRef[ref] = append(byRef[ref], t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("window trades: %w", err)
	}
	out := make([]windowStats, 0, len(refs)*len(token.AllWindows))
	for _, ref := range refs {
		ts := trade.Sorted(byRef[ref])
		for _, w := range token.AllWindows {
			from := end - w.Duration().Milliseconds()
			i := sort.Search(len(ts), func(i int) bool { return ts[i].BlockTimestamp > from })
			out = append(out, windowStats{ref: ref, window: w, stats: stats.Window(ts[i:], now, w, liquidity[ref])})
		}
	}
	return out, nil
}

// writeWindows upserts the computed windows into token_stats.
func writeWindows(ctx context.Context, tx pgx.Tx, windows []windowStats, now time.Time) error {
	if len(windows) == 0 {
		return nil
	}
	end := now.UnixMilli()
	out := make([][]any, len(windows))
	for i, w := range windows {
		s := w.stats
		out[i] = []any{string(w.ref.Chain), w.ref.Address, string(w.window), s.Buys, s.Sells, s.Trades, s.Buyers, s.Sellers,
			s.Traders, s.BuyVolume, s.SellVolume, s.TotalVolume, s.BuyVolumeInUSD, s.SellVolumeInUSD, s.TotalVolumeInUSD,
			s.OpenInUSD, s.CloseInUSD, s.HighInUSD, s.LowInUSD, s.PriceChangeRatioInUSD, s.CurrentLiquidityInUSD, end}
	}
	// hand-built: COPY into a temporary table, which is not in the schema sqlc reads.
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"ingest_stats"}, statsColumns, pgx.CopyFromRows(out)); err != nil {
		return fmt.Errorf("copy stats: %w", err)
	}
	cols := joinCols(statsColumns)
	set := ""
	for _, c := range statsColumns[3:] {
		if set != "" {
			set += ", "
		}
		set += c + " = EXCLUDED." + c
	}
	// hand-built: the column and SET lists are generated from statsColumns; ingest_stats is a temporary table.
	if _, err := tx.Exec(ctx, `INSERT INTO token_stats (`+cols+`) SELECT `+cols+` FROM ingest_stats
		ON CONFLICT (chain, address, window_name) DO UPDATE SET `+set); err != nil {
		return fmt.Errorf("upsert stats: %w", err)
	}
	return nil
}

// windowSet is a set of token.AllWindows: bit i stands for token.AllWindows[i].
type windowSet int32

// allWindowsSet holds every window.
var allWindowsSet = windowSet(1<<len(token.AllWindows) - 1)

// widest is the longest window in the set.
func (ws windowSet) widest() time.Duration {
	var d time.Duration
	for i, w := range token.AllWindows {
		if ws&(1<<i) != 0 {
			d = max(d, w.Duration())
		}
	}
	return d
}

// windowTarget is a token and the windows of it a refresh recomputes.
type windowTarget struct {
	ref     ports.TokenRef
	windows windowSet
}

// recomputeWindows rewrites the given windows of the given tokens as of now, with the liquidity
// stored on token_market, and copies the 24h figures of the tokens whose 24h window it rewrote to
// token_market, where search sorts by them. It reads each token's successful trades over its
// widest window only. It is the refresh loop's path; an ingest batch derives all windows of the
// tokens it touches inside deriveMarket.
func recomputeWindows(ctx context.Context, tx pgx.Tx, targets []windowTarget, now time.Time) error {
	if len(targets) == 0 {
		return nil
	}
	end := now.UnixMilli()
	cs, as, starts := make([]string, len(targets)), make([]string, len(targets)), make([]int64, len(targets))
	want := make(map[ports.TokenRef]windowSet, len(targets))
	for i, t := range targets {
		cs[i], as[i], starts[i] = string(t.ref.Chain), t.ref.Address, end-t.windows.widest().Milliseconds()
		want[t.ref] = t.windows
	}
	// hand-built: sqlc rejects multi-array unnest (sqlc-dev/sqlc#3507).
	rows, err := tx.Query(ctx, `SELECT m.chain, m.address, m.total_tvl_usd FROM unnest($1::text[], $2::text[]) AS r(chain, address)
		JOIN token_market m ON m.chain = r.chain AND m.address = r.address`, cs, as)
	if err != nil {
		return fmt.Errorf("window liquidity: %w", err)
	}
	liquidity := map[ports.TokenRef]decimal.Decimal{}
	var known []ports.TokenRef
	for rows.Next() {
		var ref ports.TokenRef
		var c string
		var liq decimal.Decimal
		if err := rows.Scan(&c, &ref.Address, &liq); err != nil {
			rows.Close()
			return fmt.Errorf("window liquidity: %w", err)
		}
		ref.Chain = chain.Chain(c)
		liquidity[ref] = liq
		known = append(known, ref)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("window liquidity: %w", err)
	}
	// hand-built: sqlc rejects multi-array unnest (sqlc-dev/sqlc#3507).
	rows, err = tx.Query(ctx, `SELECT r.chain, r.address, x.tx_signature, x.instruction_index, x.block_height,
			x.block_timestamp_ms, x.wallet, x.side, x.status, x.token_amount, x.token_amount_usd, x.token_price_usd
		FROM unnest($1::text[], $2::text[], $3::bigint[]) AS r(chain, address, start)
		JOIN LATERAL (SELECT * FROM trades t WHERE t.chain = r.chain AND t.token_address = r.address
			AND t.block_timestamp_ms > r.start AND t.block_timestamp_ms <= $4 AND t.status = 'SUCCEEDED') x ON true`,
		cs, as, starts, end)
	if err != nil {
		return fmt.Errorf("window trades: %w", err)
	}
	byRef := map[ports.TokenRef][]trade.Trade{}
	for rows.Next() {
		t, err := scanWindowTrade(rows)
		if err != nil {
			rows.Close()
			return err
		}
		ref := ports.TokenRef{Chain: t.Chain, Address: t.TokenAddress}
		byRef[ref] = append(byRef[ref], t)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("window trades: %w", err)
	}
	var windows []windowStats
	for _, ref := range known {
		ts := trade.Sorted(byRef[ref])
		for i, w := range token.AllWindows {
			if want[ref]&(1<<i) == 0 {
				continue
			}
			// stats.Window applies the exact bounds; hand it only the suffix that can lie in w.
			from := end - w.Duration().Milliseconds()
			j := sort.Search(len(ts), func(j int) bool { return ts[j].BlockTimestamp > from })
			windows = append(windows, windowStats{ref: ref, window: w, stats: stats.Window(ts[j:], now, w, liquidity[ref])})
		}
	}
	if err := writeWindows(ctx, tx, windows, now); err != nil {
		return err
	}
	// hand-built: reads the temporary table ingest_stats, which is not in the schema sqlc reads.
	if _, err := tx.Exec(ctx, `UPDATE token_market m SET volume_24h_usd = s.total_volume_usd, trades_24h = s.trades
		FROM ingest_stats s WHERE s.window_name = '24h' AND m.chain = s.chain AND m.address = s.address`); err != nil {
		return fmt.Errorf("update 24h market figures: %w", err)
	}
	return nil
}

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
// the windows a trade entered or left since the last completed round (every window of every
// token active in the last 24 hours when there is none, or when it is a day or more away),
// recomputed in chunks of refreshChunk tokens, one transaction each, which also records the
// round's position; once all committed, the round's start is recorded as the completed round's
// time. An unfinished round (an attempt that failed or timed out) is continued after its position.
func (s *IngestStore) RefreshWindows(ctx context.Context, now time.Time) (ports.WindowRefresh, error) {
	var res ports.WindowRefresh
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

func refreshRound(ctx context.Context, conn *pgx.Conn, now time.Time) (ports.WindowRefresh, error) {
	var res ports.WindowRefresh
	end := now.UnixMilli()
	day := token.Window24h.Duration().Milliseconds()
	q := dbsqlc.New()
	st, err := q.GetRefreshState(ctx, conn)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return res, fmt.Errorf("refresh state: %w", err)
	}
	// A round is full without a completed round to continue from, or one a day or more away (its
	// spans would cover every trade of the day anyway).
	full := st.WindowsAtMs == nil || max(end-*st.WindowsAtMs, *st.WindowsAtMs-end) >= day
	// An unfinished round is continued unless the clock went back behind its start (the tokens it
	// did are as of a time after now) or it was incremental and has become a day old.
	var after *ports.TokenRef
	if st.RoundAtMs != nil && *st.RoundAtMs <= end && (st.RoundFull || !full) {
		res.Resumed, full = true, st.RoundFull
		if st.RoundAfterChain != nil && st.RoundAfterAddress != nil {
			after = &ports.TokenRef{Chain: chain.Chain(*st.RoundAfterChain), Address: *st.RoundAfterAddress}
		}
	} else {
		if st.RoundAtMs != nil {
			full = true
		}
		if err := q.StartRefreshRound(ctx, conn, dbsqlc.StartRefreshRoundParams{RoundAtMs: &end, RoundFull: full}); err != nil {
			return res, fmt.Errorf("refresh state: %w", err)
		}
	}
	var targets []windowTarget
	if full {
		res.Full = true
		targets, err = activeTokens(ctx, conn, end-day)
	} else {
		res.Since = time.UnixMilli(*st.WindowsAtMs).UTC()
		targets, err = crossedTokens(ctx, conn, crossingSpans(*st.WindowsAtMs, end))
	}
	if err != nil {
		return res, err
	}
	if after != nil {
		// Both lists are in byte order of (chain, address), as is the recorded position.
		i := sort.Search(len(targets), func(i int) bool { return refAfter(targets[i].ref, *after) })
		targets = targets[i:]
	}
	for i := 0; i < len(targets); i += refreshChunk {
		part := targets[i:min(i+refreshChunk, len(targets))]
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if err := lockDerivedState(ctx, tx); err != nil {
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
			return q.SetRefreshRoundPosition(ctx, tx, dbsqlc.SetRefreshRoundPositionParams{
				RoundAfterChain: &doneChain, RoundAfterAddress: &done.Address})
		})
		if err != nil {
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

// crossingSpan is a block-time span (lo, hi] and the windows a successful trade in it entered or
// left.
type crossingSpan struct {
	lo, hi  int64
	windows windowSet
}

// crossingSpans returns the spans holding every trade that entered or left a window between a
// round at from and one at to. A trade at t is in w at time T when T − w < t ≤ T, so it left w
// between the rounds when t lies in (from − w, to − w] (which changes w alone: it is still in
// every wider window and had already left the narrower ones), and entered every window when t lies
// in (from, to] (stamped after the time its writer computed the windows at). Every span starts
// windowRoundOverlap earlier. from > to (a clock that went back) uses (to − w, from − w].
func crossingSpans(from, to int64) []crossingSpan {
	lo, hi := min(from, to)-windowRoundOverlap.Milliseconds(), max(from, to)
	spans := []crossingSpan{{lo, hi, allWindowsSet}}
	for i, w := range token.AllWindows {
		d := w.Duration().Milliseconds()
		spans = append(spans, crossingSpan{lo - d, hi - d, 1 << i})
	}
	return spans
}

// crossedTokens lists the tokens with a successful trade in one of the spans (FAILED trades are
// in no window) and the windows those trades entered or left, by range scans of the (chain, block
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
		// hand-built: sqlc rejects multi-array unnest (sqlc-dev/sqlc#3507), and this plan-tuned statement stays as measured.
		rows, err := tx.Query(ctx, `WITH RECURSIVE chains AS (
				SELECT min(chain) AS chain FROM trades
				UNION ALL
				SELECT (SELECT min(t.chain) FROM trades t WHERE t.chain > c.chain) FROM chains c WHERE c.chain IS NOT NULL)
			SELECT x.chain, x.token_address, bit_or(s.windows)
			FROM chains c
			CROSS JOIN unnest($1::bigint[], $2::bigint[], $3::int[]) AS s(lo, hi, windows)
			CROSS JOIN LATERAL (SELECT t.chain, t.token_address FROM trades t
				WHERE t.chain = c.chain AND t.block_timestamp_ms > s.lo AND t.block_timestamp_ms <= s.hi
					AND t.status = 'SUCCEEDED' OFFSET 0) x
			WHERE c.chain IS NOT NULL
			GROUP BY 1, 2
			ORDER BY x.chain COLLATE "C", x.token_address COLLATE "C"`, los, his, sets)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (windowTarget, error) {
			var t windowTarget
			var c string
			var set int32
			err := row.Scan(&c, &t.ref.Address, &set)
			t.ref.Chain, t.windows = chain.Chain(c), windowSet(set)
			return t, err
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("crossed tokens: %w", err)
	}
	return out, nil
}

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

// ReplaceHotTokens swaps one ranking in a transaction, so readers see the old or the new list, and
// records when it was computed in hot_rankings.
func (s *IngestStore) ReplaceHotTokens(ctx context.Context, c chain.Chain, d ranking.Duration, entries []ports.HotEntry, now time.Time) error {
	q := dbsqlc.New()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
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

// derivedStateLock is the transaction-scoped advisory lock every writer of derived market state
// (ingest batches, window refreshes) holds. Those writers lock token_market, token_stats and
// positions rows of many tokens in different orders (a batch upserts market rows before its
// windows; a refresh writes windows and then the 24h figures on token_market), which deadlocked
// under `make run`'s live trading. Serialising them costs little: a batch is already one
// transaction over every token it touches. Readers never take it.
const derivedStateLock = 7_346_502

func lockDerivedState(ctx context.Context, tx pgx.Tx) error {
	if err := dbsqlc.New().AdvisoryXactLock(ctx, tx, derivedStateLock); err != nil {
		return fmt.Errorf("lock derived state: %w", err)
	}
	return nil
}

// scanWindowTrade reads one row of the window-trade queries: chain, token address, signature,
// instruction index, block height and time, wallet, side, status, token amount, its USD value and
// the USD price.
func scanWindowTrade(rows pgx.Rows) (trade.Trade, error) {
	var c string
	var t trade.Trade
	var side, status string
	if err := rows.Scan(&c, &t.TokenAddress, &t.TransactionSignature, &t.InstructionIndex, &t.BlockHeight,
		&t.BlockTimestamp, &t.Wallet, &side, &status, &t.TokenAmount, &t.TokenAmountInUSD, &t.TokenPriceInUSD); err != nil {
		return trade.Trade{}, fmt.Errorf("window trades: %w", err)
	}
	t.Chain, t.Side, t.Status = chain.Chain(c), trade.Side(side), trade.Status(status)
	return t, nil
}
