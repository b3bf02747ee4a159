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
	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/adapters/postgres/internal/dbsqlc"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/redpacket"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/domain/trade"
	"github.com/tokenscope/tokenscope/ports"
)

// IngestStore implements ports.IngestStore and ports.MarketRefresher. The per-event statements
// and the engine's reads over several arrays at once (ROWS FROM (unnest(a), unnest(b)), which
// Postgres plans as the multi-array unnest(a, b) sqlc rejects) are sqlc's; the bulk paths use pgx
// directly (COPY into per-connection temporary tables, then one INSERT … SELECT … ON CONFLICT),
// which sqlc cannot express.
type IngestStore struct {
	pool *pgxpool.Pool
	// flushTaken, when set (tests only), runs inside each flush transaction once it has taken
	// the chain's trade lists, before it derives them.
	flushTaken func()
}

var (
	_ ports.IngestStore     = (*IngestStore)(nil)
	_ ports.MarketRefresher = (*IngestStore)(nil)
)

// NewIngestStore builds the store over pool.
func NewIngestStore(pool *pgxpool.Pool) *IngestStore { return &IngestStore{pool: pool} }

// Outbox channels. Only Solana has lifecycle channels in the API, so other chains write none.
const (
	ChannelTokenCreated  = "sol.token.created"
	ChannelTokenMigrated = "sol.token.migrated"
)

// tempTables are created once per connection; ON COMMIT DELETE ROWS empties them after every batch.
const tempTables = `
CREATE TEMP TABLE IF NOT EXISTS ingest_stats (LIKE token_stats) ON COMMIT DELETE ROWS;
CREATE TEMP TABLE IF NOT EXISTS ingest_snapshots (LIKE pool_snapshots) ON COMMIT DELETE ROWS;
CREATE TEMP TABLE IF NOT EXISTS ingest_market (chain TEXT, address TEXT, price_usd NUMERIC, price_sol NUMERIC,
	total_supply NUMERIC, circulating_supply NUMERIC, market_cap_usd NUMERIC, market_cap_sol NUMERIC, fdv_usd NUMERIC,
	fdv_sol NUMERIC, holders BIGINT, top10_holdings NUMERIC, top10_ratio NUMERIC, top50_holdings NUMERIC,
	top50_ratio NUMERIC, top100_holdings NUMERIC, top100_ratio NUMERIC, dev_holdings NUMERIC, dev_ratio NUMERIC,
	groups JSONB, completion_ratio NUMERIC, max_pool_tvl_usd NUMERIC, max_pool_tvl_sol NUMERIC, total_tvl_usd NUMERIC,
	total_tvl_sol NUMERIC, last_trade_at_ms BIGINT, volume_24h_usd NUMERIC, trades_24h BIGINT) ON COMMIT DELETE ROWS;`

var tradeColumns = []string{
	"chain", "tx_signature", "instruction_index", "block_height", "block_slot", "block_timestamp_ms", "wallet",
	"pool_address", "side", "status", "token_address", "token_amount", "token_amount_native", "token_amount_usd",
	"token_price_native", "token_price_usd", "side_token_address", "side_token_amount", "side_token_amount_native",
	"side_token_amount_usd", "side_token_price_native", "side_token_price_usd", "dex_image", "dex_program_address",
	"dex_protocol_family", "ingested_at_ms",
}

// Apply writes the batch and its derivations in one transaction, in chainevent.AllTypes order.
func (s *IngestStore) Apply(ctx context.Context, b chainevent.Batch, now time.Time) (chainevent.Result, error) {
	return s.apply(ctx, b, now, false)
}

// ApplyPending is Apply that leaves the market data and windows of the touched tokens to the next
// Flush, marking them in market_pending in the batch's transaction.
func (s *IngestStore) ApplyPending(ctx context.Context, b chainevent.Batch, now time.Time) (chainevent.Result, error) {
	return s.apply(ctx, b, now, true)
}

func (s *IngestStore) apply(ctx context.Context, b chainevent.Batch, now time.Time, pending bool) (chainevent.Result, error) {
	var res chainevent.Result
	// The batch changes the details of the tokens it touches (their rows, pools and, unless
	// pending, market data and windows).
	// A stored-only batch runs beside its chains' flush: where both lock the same market marks in
	// different orders, Postgres ends one of them as a deadlock, and that one runs again.
	err := retryConflicts(ctx, func() error {
		return writeAnnouncedBy(ctx, s.pool, func(tx pgx.Tx) (marketChange, error) {
			r, touched, err := applyIn(ctx, tx, b, now, pending)
			res = r
			return tokensChanged(touched), err
		})
	})
	if err != nil {
		if _, ok := fault.As(err); ok {
			return chainevent.Result{}, err
		}
		return chainevent.Result{}, interpretError(err, "ingest batch", "")
	}
	res.Events = b.Len() + b.Duplicates
	res.Skipped += b.Duplicates
	return res, nil
}

// deferBelow is the most trades a streamed batch lists for the flush (ApplyPending); a batch with
// more (a bulk import's, 5,000 events) derives them itself, as Apply does, and leaves only its
// market rows to the flush. Coalescing in the flush pays off for the small batches of concurrent
// live streams (a POST of 2,000 trades split by chain); a bulk import's batches are large already,
// and deriving them in their own lanes keeps its chains' derivations side by side with the
// decoding (docs/engine-benchmarks.md, ninth round).
const deferBelow = 2500

// applyIn applies the batch in tx (see Apply) and returns the tokens it touched.
func applyIn(ctx context.Context, tx pgx.Tx, b chainevent.Batch, now time.Time, pending bool) (chainevent.Result, []ports.TokenRef, error) {
	deferred := pending && len(b.Trades) < deferBelow
	// A batch that defers its derivations derives nothing itself: it applies beside its chains'
	// flush (lockStoredOnly).
	lock := lockDerivedState
	if deferred {
		lock = lockStoredOnly
	}
	if err := lock(ctx, tx, batchChains(b)...); err != nil {
		return chainevent.Result{}, nil, err
	}
	// hand-built: DDL of the per-connection temporary tables, which are not in the schema sqlc reads.
	if _, err := tx.Exec(ctx, tempTables); err != nil {
		return chainevent.Result{}, nil, fmt.Errorf("temp tables: %w", err)
	}
	if err := keyedJoins(ctx, tx); err != nil {
		return chainevent.Result{}, nil, err
	}
	a := &applier{tx: tx, q: dbsqlc.New(), now: now, touched: map[ports.TokenRef]bool{},
		buckets: newBucketDeltas(now), groups: groupDeltas{}, deferred: deferred}
	if !deferred {
		// Trades listed by streamed batches are derived first: this batch's positions build on them.
		for _, c := range batchChains(b) {
			refs, err := deriveDeferred(ctx, tx, c, now)
			if err != nil {
				return chainevent.Result{}, nil, err
			}
			for _, r := range refs {
				a.touched[r] = true
			}
		}
	}
	// A deferred batch lists its trades for the flush (deferTrades) instead of deriving them.
	derive := a.positions
	if deferred {
		derive = a.deferTrades
	}
	steps := []func(context.Context, chainevent.Batch) error{
		a.tokens, a.pools, a.labels, a.trades, a.snapshots, a.migrations, a.packets, a.lockPackets, a.claims, a.expiries,
		func(ctx context.Context, _ chainevent.Batch) error { return derive(ctx) },
	}
	if !deferred {
		// A deferred batch's labels and new tokens' holder totals are left to the flush too
		// (deriveDeferredThen, flushChunkIn).
		steps = append(steps, func(ctx context.Context, _ chainevent.Batch) error { return a.derivedTotals(ctx) })
	}
	for _, step := range steps {
		if err := step(ctx, b); err != nil {
			return chainevent.Result{}, nil, err
		}
	}
	touched := a.touchedRefs()
	// Windows of the tokens created in the batch are computed from their buckets when their
	// market data is derived (trades of them may have come first, and had no windows).
	windowed := make(map[ports.TokenRef]bool, len(a.created))
	for _, ref := range a.created {
		windowed[ref] = true
	}
	if pending {
		// The tokens of its trades are derived with the trades; those its other events touched
		// are marked.
		if err := markPending(ctx, tx, touched, windowed); err != nil {
			return chainevent.Result{}, nil, err
		}
		for r := range a.traded {
			if !a.touched[r] {
				touched = append(touched, r)
			}
		}
	} else if err := deriveMarket(ctx, tx, touched, windowed, now); err != nil {
		return chainevent.Result{}, nil, err
	}
	return a.res, touched, nil
}

type applier struct {
	tx      pgx.Tx
	q       *dbsqlc.Queries
	now     time.Time
	res     chainevent.Result
	touched map[ports.TokenRef]bool
	// newTrades are the trades this batch actually inserted (replays excluded).
	newTrades []trade.Trade
	// buckets and groups are the batch's changes to token_buckets and token_holder_groups.
	buckets *bucketDeltas
	groups  groupDeltas
	// created are the tokens whose tokens row this batch inserted.
	created []ports.TokenRef
	// deferred: the batch lists its new trades for the flush (ApplyPending) and traded holds
	// their tokens (touched holds those of its other events).
	deferred bool
	traded   map[ports.TokenRef]bool
}

// derivedTotals writes the batch's bucket changes, the window changes they make
// (writeWindowDeltas) and its holder-total changes, then rebuilds the holder totals of the tokens
// created in the batch (trades of them may have come first).
func (a *applier) derivedTotals(ctx context.Context) error {
	if err := writeBuckets(ctx, a.tx, a.buckets); err != nil {
		return err
	}
	if err := writeWindowDeltas(ctx, a.tx, windowDeltas(a.buckets, a.now), a.now); err != nil {
		return err
	}
	if err := writeGroups(ctx, a.tx, a.groups); err != nil {
		return err
	}
	return rebuildGroups(ctx, a.tx, a.created)
}

func (a *applier) touch(c chain.Chain, addr string) {
	ref := ports.TokenRef{Chain: c, Address: addr}
	a.touched[ref] = true
}

func (a *applier) touchedRefs() []ports.TokenRef {
	out := make([]ports.TokenRef, 0, len(a.touched))
	for r := range a.touched {
		out = append(out, r)
	}
	return out
}

func (a *applier) count(inserted bool) {
	if inserted {
		a.res.Inserted++
	} else {
		a.res.Skipped++
	}
}

func nullStr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// tokenJSON is the token record as the outbox carries it: the v2 field names.
type tokenJSON struct {
	Address                 string            `json:"address"`
	Chain                   string            `json:"chain"`
	Name                    string            `json:"name"`
	Symbol                  string            `json:"symbol"`
	Decimals                int32             `json:"decimals"`
	Description             string            `json:"description,omitempty"`
	ImageURL                string            `json:"imageUrl,omitempty"`
	URI                     string            `json:"uri,omitempty"`
	TokenCreatedAt          *int64            `json:"tokenCreatedAt,omitempty"`
	TokenCreatedBlockHeight *int64            `json:"tokenCreatedBlockHeight,omitempty"`
	TokenCreatedTxSignature string            `json:"tokenCreatedTxSignature,omitempty"`
	TokenCreators           []token.Creator   `json:"tokenCreators"`
	Extra                   token.Extra       `json:"extra"`
	SocialMedias            map[string]string `json:"socialMedias"`
	LaunchpadTag            string            `json:"launchpadTag,omitempty"`
}

func tokenRecord(t token.Token) tokenJSON {
	creators := append(make([]token.Creator, 0, len(t.Creators)), t.Creators...)
	return tokenJSON{Address: t.Address, Chain: string(t.Chain), Name: t.Name, Symbol: t.Symbol, Decimals: t.Decimals,
		Description: t.Description, ImageURL: t.ImageURL, URI: t.URI, TokenCreatedAt: t.CreatedAt,
		TokenCreatedBlockHeight: t.CreatedBlockHeight, TokenCreatedTxSignature: t.CreatedTxSignature,
		TokenCreators: creators, Extra: t.Extra, SocialMedias: t.Socials.Map(), LaunchpadTag: string(t.LaunchpadTag)}
}

// outbox adds an outbox row through db (the transaction, or a queue of statements sent later).
func (a *applier) outbox(ctx context.Context, db dbsqlc.DBTX, eventID, channel string, payload any) error {
	body, err := json.Marshal(payload)
	if err != nil {
		return err
	}
	return a.q.InsertOutboxEvent(ctx, db, dbsqlc.InsertOutboxEventParams{EventID: eventID, Channel: channel, Payload: body,
		CreatedAtMs: a.now.UnixMilli()})
}

func (a *applier) tokens(ctx context.Context, b chainevent.Batch) error {
	if len(b.TokensCreated) == 0 {
		return nil
	}
	inserts := &queued{}
	recs := make([]tokenJSON, len(b.TokensCreated))
	for i, e := range b.TokensCreated {
		t := e.Token
		// A tag sent as the spec's word is stored as the launchpad id it stands for.
		t.LaunchpadTag = token.CanonicalTag(string(t.LaunchpadTag))
		rec := tokenRecord(t)
		recs[i] = rec
		creators, _ := json.Marshal(rec.TokenCreators)
		extra, _ := json.Marshal(rec.Extra)
		socials, _ := json.Marshal(rec.SocialMedias)
		_, _ = a.q.InsertToken(ctx, inserts, dbsqlc.InsertTokenParams{Chain: string(t.Chain), Address: t.Address,
			Decimals: t.Decimals, Name: t.Name, Symbol: t.Symbol, VendorCoinID: nullStr(t.VendorCoinID),
			Description: nullStr(t.Description), ImageUrl: nullStr(t.ImageURL), Market: nullStr(t.Market),
			MetadataAddress: nullStr(t.MetadataAddress), Uri: nullStr(t.URI), CreatorAddress: nullStr(e.Creator),
			DevTotalTokens: t.DevTotalTokens, DevLastTokenCreatedAt: t.DevLastTokenCreatedAt, CreatedAtMs: t.CreatedAt,
			CreatedBlockHeight: t.CreatedBlockHeight, CreatedSlot: t.CreatedSlot, CreatedTxSignature: nullStr(t.CreatedTxSignature),
			Creators: creators, Extra: extra, Socials: socials, LaunchpadTag: nullStr(string(t.LaunchpadTag)),
			LaunchProtocolFamily: nullStr(t.Extra.LaunchFromProtocolFamily), LaunchProgramAddress: nullStr(t.Extra.LaunchFromProgramAddress),
			TotalSupply: e.TotalSupply, CirculatingSupply: e.CirculatingSupply, CurvePoolAddress: nullStr(e.CurvePool),
			CurveTargetNative: e.CurveTargetInNative})
	}
	n, err := inserts.send(ctx, a.tx)
	if err != nil {
		return fmt.Errorf("insert tokens: %w", err)
	}
	// A new token's token_market row is written by deriveMarket (it is touched); sol tokens add
	// their lifecycle event to the outbox.
	outbox := &queued{}
	for i, e := range b.TokensCreated {
		t := e.Token
		inserted := n[i] == 1
		a.count(inserted)
		if !inserted {
			continue
		}
		a.touch(t.Chain, t.Address)
		a.created = append(a.created, ports.TokenRef{Chain: t.Chain, Address: t.Address})
		if t.Chain == chain.Sol {
			if err := a.outbox(ctx, outbox, ChannelTokenCreated+":"+t.Address, ChannelTokenCreated, recs[i]); err != nil {
				return fmt.Errorf("outbox token created: %w", err)
			}
		}
	}
	if _, err := outbox.send(ctx, a.tx); err != nil {
		return fmt.Errorf("outbox token created: %w", err)
	}
	return nil
}

func (a *applier) pools(ctx context.Context, b chainevent.Batch) error {
	inserts := &queued{}
	for _, e := range b.PoolsCreated {
		p := e.Pool
		_, _ = a.q.InsertPool(ctx, inserts, dbsqlc.InsertPoolParams{Chain: string(p.Chain), Address: p.Address,
			ProgramAddress: p.ProgramAddress, ProtocolFamily: p.ProtocolFamily, ProtocolName: p.ProtocolName, Image: p.Image,
			TokenAAddress: p.TokenAAddress, TokenBAddress: p.TokenBAddress, TokenADecimals: p.TokenADecimals,
			TokenBDecimals: p.TokenBDecimals, IsBondingCurve: e.IsBondingCurve, CreatedAtMs: e.At})
	}
	n, err := inserts.send(ctx, a.tx)
	if err != nil {
		return fmt.Errorf("insert pools: %w", err)
	}
	for _, k := range n {
		a.count(k == 1)
	}
	return nil
}

func (a *applier) labels(ctx context.Context, b chainevent.Batch) error {
	inserts := &queued{}
	for _, e := range b.Labels {
		_, _ = a.q.InsertWalletLabel(ctx, inserts, dbsqlc.InsertWalletLabelParams{Chain: string(e.Chain), Wallet: e.Wallet,
			Label: string(e.Label)})
	}
	n, err := inserts.send(ctx, a.tx)
	if err != nil {
		return fmt.Errorf("insert wallet labels: %w", err)
	}
	var added []chainevent.WalletLabel
	for i, e := range b.Labels {
		a.count(n[i] == 1)
		if n[i] == 1 {
			added = append(added, e)
		}
	}
	if a.deferred {
		return a.deferLabels(ctx, added)
	}
	return a.labelHoldings(ctx, added)
}

// labelHoldings moves the holdings of each newly labelled wallet into the label's group in every
// token it holds, unless it was in that group already as the token's creator or a sniper.
func (a *applier) labelHoldings(ctx context.Context, added []chainevent.WalletLabel) error {
	if len(added) == 0 {
		return nil
	}
	rows, err := a.q.LabelledHoldings(ctx, a.tx, dbsqlc.LabelledHoldingsParams{Chains: labelChains(added),
		Wallets: labelWallets(added)})
	if err != nil {
		return fmt.Errorf("labelled holdings: %w", err)
	}
	newLabels := map[[2]string][]token.HolderGroup{}
	for _, e := range added {
		k := [2]string{string(e.Chain), e.Wallet}
		newLabels[k] = append(newLabels[k], token.HolderGroup(e.Label))
	}
	seen := map[posKey]bool{}
	for _, r := range rows {
		k := posKey{chain.Chain(r.Chain), r.Wallet, r.TokenAddress}
		if seen[k] { // the wallet was listed once per new label
			continue
		}
		seen[k] = true
		ref := ports.TokenRef{Chain: k.chain, Address: k.token}
		implied := heldGroups(r.Wallet, nil, tokenCreation{r.CreatorAddress, r.CreatedBlockHeight}, r.FirstBlockHeight)
		for _, l := range newLabels[[2]string{r.Chain, r.Wallet}] {
			if !slicesContains(implied, string(l)) {
				a.groups.add(ref, []string{string(l)}, r.Balance, 1)
			}
		}
		a.touch(k.chain, k.token)
	}
	return nil
}

func labelChains(ls []chainevent.WalletLabel) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = string(l.Chain)
	}
	return out
}

func labelWallets(ls []chainevent.WalletLabel) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.Wallet
	}
	return out
}

func scanRef(row pgx.CollectableRow) (ports.TokenRef, error) {
	var c, addr string
	err := row.Scan(&c, &addr)
	return ports.TokenRef{Chain: chain.Chain(c), Address: addr}, err
}

func (a *applier) trades(ctx context.Context, b chainevent.Batch) error {
	if len(b.Trades) == 0 {
		return nil
	}
	if err := a.refuseBeforeCut(ctx, b.Trades); err != nil {
		return err
	}
	nowMs := a.now.UnixMilli()
	rows := newCopyRows(len(b.Trades) * 900)
	for i := range b.Trades {
		copyTrade(rows, &b.Trades[i], nowMs)
	}
	// Replays (a client's retry, a restarted import) are rare: the batch goes straight into trades
	// with COPY under a savepoint, and only when the primary key rejects a row is the COPY undone
	// and the stored keys looked up (primary-key probes), the rest COPYed again. No other
	// transaction inserts trades of these chains meanwhile: every batch holds its chains' locks
	// (lockDerivedState, or the store locks of lockStoredOnly), and a trade's key starts with its chain.
	copied, err := a.copyTrades(ctx, rows)
	if err != nil {
		return err
	}
	var replay map[trade.Key]bool
	if !copied {
		if replay, err = a.existingTrades(ctx, b.Trades); err != nil {
			return err
		}
		rows = newCopyRows((len(b.Trades) - len(replay)) * 900)
	}
	a.newTrades = make([]trade.Trade, 0, max(len(b.Trades)-len(replay), 0))
	for i := range b.Trades {
		t := &b.Trades[i]
		if len(replay) > 0 && replay[t.Key()] {
			continue
		}
		if !copied {
			copyTrade(rows, t, nowMs)
		}
		a.newTrades = append(a.newTrades, *t)
		if a.deferred {
			ref := ports.TokenRef{Chain: t.Chain, Address: t.TokenAddress}
			if a.traded == nil {
				a.traded = map[ports.TokenRef]bool{}
			}
			a.traded[ref] = true
			continue
		}
		a.touch(t.Chain, t.TokenAddress)
		if t.Succeeded() {
			a.buckets.addTrade(t)
		}
	}
	if !copied {
		// COPY into trades; the column list is tradeColumns (sqlc's :copyfrom would fix it twice).
		if _, err := rows.copyInto(ctx, a.tx, "trades", tradeColumns); err != nil {
			return fmt.Errorf("copy trades: %w", err)
		}
	}
	fresh := len(a.newTrades)
	a.res.Inserted += fresh
	a.res.Skipped += len(b.Trades) - fresh
	a.res.Trades += fresh
	return nil
}

// copyTrades COPYs rows (tradeColumns) into trades under a savepoint and reports whether they went
// in. When the primary key rejects one (a replay), the COPY is undone and copyTrades returns
// false: the caller looks the stored keys up and COPYs the others.
func (a *applier) copyTrades(ctx context.Context, rows *copyRows) (bool, error) {
	sp, err := a.tx.Begin(ctx)
	if err != nil {
		return false, fmt.Errorf("copy trades: %w", err)
	}
	// COPY into trades; the column list is tradeColumns (sqlc's :copyfrom would fix it twice).
	_, err = rows.copyInto(ctx, sp, "trades", tradeColumns)
	if err == nil {
		if err := sp.Commit(ctx); err != nil {
			return false, fmt.Errorf("copy trades: %w", err)
		}
		return true, nil
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "23505" || pgErr.ConstraintName != "trades_pkey" {
		return false, fmt.Errorf("copy trades: %w", err)
	}
	if err := sp.Rollback(ctx); err != nil {
		return false, fmt.Errorf("copy trades: %w", err)
	}
	return false, nil
}

// copyTrade writes t as a trades row (tradeColumns) ingested at nowMs; a zero block slot is NULL.
func copyTrade(c *copyRows, t *trade.Trade, nowMs int64) {
	c.row(len(tradeColumns))
	c.text(string(t.Chain))
	c.text(t.TransactionSignature)
	c.int4(t.InstructionIndex)
	c.int8(t.BlockHeight)
	if t.BlockSlot != 0 {
		c.int8(t.BlockSlot)
	} else {
		c.null()
	}
	c.int8(t.BlockTimestamp)
	c.text(t.Wallet)
	c.text(t.PoolAddress)
	c.text(string(t.Side))
	c.text(string(t.Status))
	c.text(t.TokenAddress)
	c.numeric(t.TokenAmount)
	c.numeric(t.TokenAmountInNative)
	c.numeric(t.TokenAmountInUSD)
	c.numeric(t.TokenPriceInNative)
	c.numeric(t.TokenPriceInUSD)
	c.text(t.SideTokenAddress)
	c.numeric(t.SideTokenAmount)
	c.numeric(t.SideTokenAmountInNative)
	c.numeric(t.SideTokenAmountInUSD)
	c.numeric(t.SideTokenPriceInNative)
	c.numeric(t.SideTokenPriceInUSD)
	c.text(t.DexImage)
	c.text(t.DexProgramAddress)
	c.text(t.DexProtocolFamily)
	c.int8(nowMs)
}

// existingTrades finds which of trades are stored already, by primary-key probes.
func (a *applier) existingTrades(ctx context.Context, trades []trade.Trade) (map[trade.Key]bool, error) {
	cs, sigs, ixs := make([]string, len(trades)), make([]string, len(trades)), make([]int32, len(trades))
	for i, t := range trades {
		cs[i], sigs[i], ixs[i] = string(t.Chain), t.TransactionSignature, t.InstructionIndex
	}
	stored, err := a.q.ExistingTrades(ctx, a.tx, dbsqlc.ExistingTradesParams{Chains: cs, Signatures: sigs, Indexes: ixs})
	if err != nil {
		return nil, fmt.Errorf("find replayed trades: %w", err)
	}
	replay := make(map[trade.Key]bool, len(stored))
	for _, k := range stored {
		replay[trade.Key{Chain: chain.Chain(k.Chain), TransactionSignature: k.TxSignature, InstructionIndex: k.InstructionIndex}] = true
	}
	return replay, nil
}

// copyStaged COPYs rows (cols) into the per-connection temporary table; with ddl it first runs
// ddl, which creates that table when missing. The table is emptied first: one transaction may
// stage into it twice (the trades a flush derives, then the market rows; a job's position after
// the listed trades). The caller then merges the staged rows into their table with one
// statement. what names the rows in errors.
func copyStaged(ctx context.Context, tx pgx.Tx, ddl, table string, cols []string, rows [][]any, what string) error {
	if err := emptyStaging(ctx, tx, ddl, table, what); err != nil {
		return err
	}
	// hand-built: COPY into a temporary table, which is not in the schema sqlc reads.
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{table}, cols, pgx.CopyFromRows(rows)); err != nil {
		return fmt.Errorf("copy %s: %w", what, err)
	}
	return nil
}

// emptyStaging runs ddl (when set) and empties the temporary table (free when it is empty, as it
// is after every commit).
func emptyStaging(ctx context.Context, tx pgx.Tx, ddl, table, what string) error {
	sql := "DELETE FROM " + table
	if ddl != "" {
		sql = ddl + "; " + sql
	}
	// hand-built: DDL and emptying of the per-connection temporary table, which is not in the
	// schema sqlc reads; the table is named by a constant.
	if _, err := tx.Exec(ctx, sql); err != nil {
		return fmt.Errorf("stage %s: %w", what, err)
	}
	return nil
}

// copyStagedRows is copyStaged for rows written with copyRows.
func copyStagedRows(ctx context.Context, tx pgx.Tx, ddl, table string, cols []string, rows *copyRows, what string) error {
	if err := emptyStaging(ctx, tx, ddl, table, what); err != nil {
		return err
	}
	if _, err := rows.copyInto(ctx, tx, table, cols); err != nil {
		return fmt.Errorf("copy %s: %w", what, err)
	}
	return nil
}

func joinCols(cols []string) string {
	out := ""
	for i, c := range cols {
		if i > 0 {
			out += ", "
		}
		out += c
	}
	return out
}

var snapshotColumns = []string{
	"chain", "pool_address", "block_height", "block_slot", "block_timestamp_ms", "snapshot_time_ms",
	"a_token_address", "a_decimals", "a_vault_amount", "a_amount_native", "a_amount_usd", "a_price_native", "a_price_usd",
	"b_token_address", "b_decimals", "b_vault_amount", "b_amount_native", "b_amount_usd", "b_price_native", "b_price_usd",
	"tvl_native", "tvl_usd",
}

func (a *applier) snapshots(ctx context.Context, b chainevent.Batch) error {
	if len(b.Snapshots) == 0 {
		return nil
	}
	rows := make([][]any, len(b.Snapshots))
	for i, s := range b.Snapshots {
		rows[i] = []any{string(s.Chain), s.PoolAddress, s.BlockHeight, s.BlockSlot, s.BlockTimestamp, s.SnapshotTime,
			s.TokenA.TokenAddress, s.TokenA.Decimals, s.TokenA.VaultAmount.Decimal(), s.TokenA.AmountInNative, s.TokenA.AmountInUSD,
			s.TokenA.PriceNative, s.TokenA.PriceUSD,
			s.TokenB.TokenAddress, s.TokenB.Decimals, s.TokenB.VaultAmount.Decimal(), s.TokenB.AmountInNative, s.TokenB.AmountInUSD,
			s.TokenB.PriceNative, s.TokenB.PriceUSD, s.TVLInNative, s.TVLInUSD}
	}
	if err := copyStaged(ctx, a.tx, "", "ingest_snapshots", snapshotColumns, rows, "snapshots"); err != nil {
		return err
	}
	cols := joinCols(snapshotColumns)
	// hand-built: the column list is generated from snapshotColumns; ingest_snapshots is a temporary table.
	ct, err := a.tx.Exec(ctx, `INSERT INTO pool_snapshots (`+cols+`) SELECT `+cols+` FROM ingest_snapshots ON CONFLICT DO NOTHING`)
	if err != nil {
		return fmt.Errorf("insert snapshots: %w", err)
	}
	a.res.Inserted += int(ct.RowsAffected())
	a.res.Skipped += len(b.Snapshots) - int(ct.RowsAffected())
	// The newest snapshot of each pool becomes its current state; an older one arriving late does not.
	// SOL-denominated TVL: the native amount on sol, the USD value over the SOL price elsewhere,
	// divided by the one rule of every ratio (div_round18: 18 places, half away from zero; 0
	// before any sol trade).
	solUSD, err := solPriceUSD(ctx, a.tx)
	if err != nil {
		return err
	}
	// hand-built: reads the temporary table ingest_snapshots, which is not in the schema sqlc reads.
	touched, err := a.tx.Query(ctx, `WITH newest AS (
			SELECT DISTINCT ON (chain, pool_address) * FROM ingest_snapshots ORDER BY chain, pool_address, block_height DESC)
		UPDATE pools p SET reserve_a = n.a_amount_native, reserve_b = n.b_amount_native, tvl_usd = n.tvl_usd,
			tvl_sol = CASE WHEN p.chain = 'sol' THEN n.tvl_native ELSE div_round18(n.tvl_usd, $1::numeric) END,
			snapshot_block_height = n.block_height, updated_at_ms = n.snapshot_time_ms
		FROM newest n WHERE p.chain = n.chain AND p.address = n.pool_address AND n.block_height > p.snapshot_block_height
		RETURNING p.chain, p.token_a_address`, solUSD)
	if err != nil {
		return fmt.Errorf("update pools: %w", err)
	}
	refs, err := pgx.CollectRows(touched, scanRef)
	if err != nil {
		return fmt.Errorf("update pools: %w", err)
	}
	for _, r := range refs {
		a.touch(r.Chain, r.Address)
	}
	return nil
}

// solPriceUSD is the SOL price of the newest sol trade (its side token is SOL in every sol pool
// the engine prices), used to express other chains' values in SOL. Zero before any sol trade;
// any other failure (a broken transaction, a cancelled context) is returned, not swallowed.
//
// The newest trade is one step down trades_chain_time_idx, but on the stale statistics of a bulk
// import the planner preferred a bitmap scan over every sol trade (tens of milliseconds per call,
// growing with the table), so bitmap scans are off for this one statement.
func solPriceUSD(ctx context.Context, q pgx.Tx) (decimal.Decimal, error) {
	// hand-built: planner settings for this statement, not a query.
	if _, err := q.Exec(ctx, `SET LOCAL enable_bitmapscan = off`); err != nil {
		return decimal.Zero, fmt.Errorf("read the SOL price: %w", err)
	}
	p, err := dbsqlc.New().SolPriceUSD(ctx, q)
	// hand-built: planner settings, as above.
	if _, rerr := q.Exec(ctx, `SET LOCAL enable_bitmapscan = on`); rerr != nil && err == nil {
		return decimal.Zero, fmt.Errorf("read the SOL price: %w", rerr)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return decimal.Zero, nil
	}
	if err != nil {
		return decimal.Zero, fmt.Errorf("read the SOL price: %w", err)
	}
	return p, nil
}

func (a *applier) migrations(ctx context.Context, b chainevent.Batch) error {
	for _, e := range b.TokensMigrated {
		_, err := a.q.MigrateToken(ctx, a.tx, dbsqlc.MigrateTokenParams{Chain: string(e.Chain), Address: e.Address,
			MigratedAtMs: &e.At, MigratedPoolAddress: &e.PoolAddress, MigratedProgramAddress: &e.ProgramAddress,
			MigratedProtocolFamily: &e.ProtocolFamily})
		if err == pgx.ErrNoRows {
			// Already migrated (a replay) or an unknown token: nothing changes.
			a.count(false)
			continue
		}
		if err != nil {
			return fmt.Errorf("migrate token %s: %w", e.Address, err)
		}
		a.count(true)
		a.touch(e.Chain, e.Address)
		if e.Chain != chain.Sol {
			continue
		}
		rec, err := storedToken(ctx, a.tx, e.Chain, e.Address)
		if err != nil {
			return err
		}
		if err := a.outbox(ctx, a.tx, ChannelTokenMigrated+":"+e.Address, ChannelTokenMigrated, rec); err != nil {
			return fmt.Errorf("outbox token migrated: %w", err)
		}
	}
	return nil
}

// storedToken reads a token back as the outbox record, with the migration fields now in extra.
func storedToken(ctx context.Context, tx pgx.Tx, c chain.Chain, addr string) (map[string]any, error) {
	body, err := dbsqlc.New().StoredTokenRecord(ctx, tx, dbsqlc.StoredTokenRecordParams{Chain: string(c), Address: addr})
	if err != nil {
		return nil, fmt.Errorf("read token %s: %w", addr, err)
	}
	var out map[string]any
	return out, json.Unmarshal(body, &out)
}

func (a *applier) packets(ctx context.Context, b chainevent.Batch) error {
	for _, e := range b.RedPacketsCreated {
		p := e.Packet
		n, err := a.q.InsertRedPacket(ctx, a.tx, dbsqlc.InsertRedPacketParams{ID: p.ID, Chain: string(p.Chain), Creator: p.Creator,
			ClaimAuthority: p.ClaimAuthority, Mint: p.Mint, MaxClaims: p.MaxClaims, TotalAmount: p.TotalAmount,
			CreatedAtMs: p.CreatedAt, ExpiredAtMs: p.ExpiredAt, Expiration: p.Expiration, Memo: p.Memo, ShareID: p.ShareID,
			TxHash: p.TxHash})
		if err != nil {
			return fmt.Errorf("insert red packet %s: %w", p.ID, err)
		}
		a.count(n == 1)
	}
	return nil
}

// loadPacket reads a packet and its claimers under a row lock.
func loadPacket(ctx context.Context, tx pgx.Tx, id string) (redpacket.RedPacket, error) {
	r, err := dbsqlc.New().LockRedPacket(ctx, tx, id)
	if err != nil {
		return redpacket.RedPacket{}, interpretError(err, "red packet", id)
	}
	return redpacket.RedPacket{ID: r.ID, Chain: chain.Chain(r.Chain), Creator: r.Creator, ClaimAuthority: r.ClaimAuthority,
		Mint: r.Mint, MaxClaims: r.MaxClaims, ClaimedCount: r.ClaimedCount, TotalAmount: r.TotalAmount,
		ClaimedAmount: r.ClaimedAmount, RefundedAmount: r.RefundedAmount, CreatedAt: r.CreatedAtMs, ExpiredAt: r.ExpiredAtMs,
		Expiration: r.Expiration, Expired: r.Expired, Memo: r.Memo, ShareID: r.ShareID, TxHash: r.TxHash,
		Claimers: r.Claimers}, nil
}

func savePacket(ctx context.Context, tx pgx.Tx, p redpacket.RedPacket) error {
	return dbsqlc.New().SaveRedPacket(ctx, tx, dbsqlc.SaveRedPacketParams{ID: p.ID, ClaimedCount: p.ClaimedCount,
		ClaimedAmount: p.ClaimedAmount, RefundedAmount: p.RefundedAmount, Expired: p.Expired})
}

// lockPackets locks the rows of every packet b's claims and expiries name, in id order.
func (a *applier) lockPackets(ctx context.Context, b chainevent.Batch) error {
	if len(b.Claims)+len(b.Expiries) == 0 {
		return nil
	}
	ids := make([]string, 0, len(b.Claims)+len(b.Expiries))
	for _, e := range b.Claims {
		ids = append(ids, e.Claim.PacketID)
	}
	for _, e := range b.Expiries {
		ids = append(ids, e.PacketID)
	}
	if err := a.q.LockRedPackets(ctx, a.tx, ids); err != nil {
		return fmt.Errorf("lock red packets: %w", err)
	}
	return nil
}

func (a *applier) claims(ctx context.Context, b chainevent.Batch) error {
	for _, e := range b.Claims {
		c := e.Claim
		p, err := loadPacket(ctx, a.tx, c.PacketID)
		if err != nil {
			return err
		}
		if slicesContains(p.Claimers, c.Claimer) {
			a.count(false)
			continue
		}
		if c.Creator == "" {
			c.Creator = p.Creator
		}
		if err := p.ApplyClaim(c); err != nil {
			return err
		}
		if err := a.q.InsertRedPacketClaim(ctx, a.tx, dbsqlc.InsertRedPacketClaimParams{PacketID: c.PacketID, Claimer: c.Claimer,
			Chain: string(c.Chain), Mint: c.Mint, Creator: c.Creator, Amount: c.Amount, ClaimedAtMs: c.ClaimedAt,
			TxHash: c.TxHash}); err != nil {
			return fmt.Errorf("insert claim: %w", err)
		}
		if err := savePacket(ctx, a.tx, p); err != nil {
			return fmt.Errorf("update red packet: %w", err)
		}
		a.count(true)
	}
	return nil
}

func slicesContains(ss []string, s string) bool {
	for _, v := range ss {
		if v == s {
			return true
		}
	}
	return false
}

func (a *applier) expiries(ctx context.Context, b chainevent.Batch) error {
	for _, e := range b.Expiries {
		p, err := loadPacket(ctx, a.tx, e.PacketID)
		if err != nil {
			return err
		}
		if p.Expired {
			a.count(false)
			continue
		}
		if err := p.Expire(e.At); err != nil {
			return err
		}
		if err := savePacket(ctx, a.tx, p); err != nil {
			return fmt.Errorf("expire red packet: %w", err)
		}
		a.count(true)
	}
	return nil
}
