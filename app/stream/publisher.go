package stream

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/app/market"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/domain/pnl"
	"github.com/tokenscope/tokenscope/domain/ranking"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/domain/trade"
	"github.com/tokenscope/tokenscope/ports"
)

// Market is what the coalesced channels read the current state through (app/market).
type Market interface {
	Multi(ctx context.Context, r market.MultiRequest) (market.Tokens, error)
	PnLPeriods(ctx context.Context, c chain.Chain, wallet string, tokens []string) ([]market.PnLPeriod, error)
	HotTokens(ctx context.Context, r market.HotRequest) (market.Tokens, error)
}

// Candle is the current bar of a candle channel.
type Candle struct {
	Open, High, Low, Close, Volume decimal.Decimal
	// Time is the bar's start (Unix seconds); Trades the swaps in it.
	Time, Trades int64
}

// CandleSource is the candle hook: the current bar of a candle channel (its kind says token,
// pool or pair and USD or native; Address and Resolution name the subject and bar size), false
// when there is none.
//
// cmd/internal/wire plugs the candles use case in through Publisher.WithCandles; without one
// (a process that hosts no connections), candle channels publish nothing.
type CandleSource func(ctx context.Context, ch Channel) (Candle, bool, error)

// DefaultTick is how often coalesced channels publish at most (per channel).
const DefaultTick = 250 * time.Millisecond

// queueSize bounds the committed batches waiting to be published; beyond it a batch's
// publications are dropped (counted in Dropped) rather than slowing ingest.
const queueSize = 256

// CommittedTag is the publication tag (pub.tags) of every trade publication that carries when
// the trade's batch committed, in Unix ms: what the commit → received latency is measured from.
// Clients that read only pub.data (the public client) never see it.
const CommittedTag = "committed_ms"

// committed is a committed batch and when its commit was reported (Unix ms).
type committed struct {
	batch chainevent.Batch
	at    int64
}

// Publisher turns committed ingest into publications. On the committing side (Committed,
// Derived: any process that ingests) it publishes trades, new tokens and pool balances from
// the committed batch and, after each flush, announces what the flush touched to every node.
// On every node that hosts connections (Announced, then each tick) it recomputes the coalesced
// channels its own clients subscribe to and delivers them locally, so each subscriber gets one
// message per tick whichever node computed it.
type Publisher struct {
	hub     ports.StreamHub
	market  Market
	candles CandleSource
	clock   ports.Clock
	log     *slog.Logger
	tick    time.Duration

	queue   chan committed
	derived chan struct{}
	dropped atomic.Int64
	// touched is what the committed batches touched since the last announcement (worker only).
	touched *touchSet

	mu sync.Mutex
	// dirty is what announcements reported since the last tick (every node).
	dirty *touchSet
	// walletTokens remembers the tokens each wallet traded, for the wallet PnL list (the
	// coalescing goroutine only).
	walletTokens map[chain.Chain]map[string]map[string]bool
}

// New builds the publisher; call Run to start it.
func New(hub ports.StreamHub, m Market, clock ports.Clock, log *slog.Logger) *Publisher {
	return &Publisher{hub: hub, market: m, clock: clock, log: log, tick: DefaultTick,
		queue: make(chan committed, queueSize), derived: make(chan struct{}, 1),
		touched: newTouchSet(), dirty: newTouchSet(), walletTokens: map[chain.Chain]map[string]map[string]bool{}}
}

// WithTick sets the coalescing interval (DefaultTick when d ≤ 0).
func (p *Publisher) WithTick(d time.Duration) *Publisher {
	if d > 0 {
		p.tick = d
	}
	return p
}

// WithCandles plugs the candle hook in (see CandleSource).
func (p *Publisher) WithCandles(c CandleSource) *Publisher {
	p.candles = c
	return p
}

var _ ports.CommitListener = (*Publisher)(nil)

// Committed queues a committed batch; it never blocks.
func (p *Publisher) Committed(b chainevent.Batch) {
	select {
	case p.queue <- committed{b, p.clock.Now().UnixMilli()}:
	default:
		p.dropped.Add(1)
	}
}

// Derived marks that the committed batches' market data is current; it never blocks.
func (p *Publisher) Derived() {
	select {
	case p.derived <- struct{}{}:
	default: // one is pending already
	}
}

// Dropped counts committed batches whose publications were dropped because the queue was full.
func (p *Publisher) Dropped() int64 { return p.dropped.Load() }

// Run publishes until ctx ends, then publishes and announces what is still queued (an
// importer's last batches) before it returns.
//
// Per-trade and per-batch publications run on their own goroutine, apart from the coalesced
// recomputations (which read the database at every tick), so a slow read never holds a trade
// back.
func (p *Publisher) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(p.tick)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				p.flushDirty(ctx)
			}
		}
	}()
	defer wg.Wait()
	for {
		select {
		case <-ctx.Done():
			p.drain()
			p.announce()
			return
		case c := <-p.queue:
			p.publishBatch(c.batch, c.at)
		case <-p.derived:
			p.drain()
			p.announce()
		}
	}
}

// drain publishes the batches queued so far.
func (p *Publisher) drain() {
	for {
		select {
		case c := <-p.queue:
			p.publishBatch(c.batch, c.at)
		default:
			return
		}
	}
}

// publish sends one message on ch if it may reach a subscriber.
func (p *Publisher) publish(ch string, k Kind, m any) {
	if !p.hub.Reaches(ch) {
		return
	}
	data := encode(m)
	var tg map[string]string
	if k.Filter {
		tg = tags(data)
	}
	if err := p.hub.Publish(ch, data, tg); err != nil {
		p.log.Warn("stream publish", "channel", ch, "err", err)
	}
}

// publishBatch publishes what a committed batch carries itself and records what it touched.
func (p *Publisher) publishBatch(b chainevent.Batch, committedAt int64) {
	now := p.clock.Now().UnixMilli()
	for _, t := range b.Trades {
		c := t.Chain.Canonical()
		p.touched.trade(c, t)
		if !t.Succeeded() {
			continue // a failed swap moved nothing
		}
		tokenCh, walletCh := Name(KindTokenTrade, c, t.TokenAddress), Name(KindWalletTrade, c, t.Wallet)
		if !p.hub.Reaches(tokenCh) && !p.hub.Reaches(walletCh) {
			continue
		}
		data := encode(tradeMsgOf(t))
		tg := tags(data)
		tg[CommittedTag] = strconv.FormatInt(committedAt, 10)
		for _, ch := range []string{tokenCh, walletCh} {
			if p.hub.Reaches(ch) {
				if err := p.hub.Publish(ch, data, tg); err != nil {
					p.log.Warn("stream publish", "channel", ch, "err", err)
				}
			}
		}
	}
	lists := map[chain.Chain][]newTokenMsg{}
	for _, e := range b.TokensCreated {
		c := e.Token.Chain.Canonical()
		p.touched.token(c, e.Token.Address)
		m := newTokenMsgOf(e.Token, now)
		p.publish(Name(KindNewToken, c, ""), kinds[KindNewToken], m)
		lists[c] = append(lists[c], m)
	}
	for c, l := range lists {
		for _, prefix := range []string{KindNewTokens, KindNewTokensMeta} {
			if ch := Name(prefix, c, ""); p.hub.Reaches(ch) {
				if err := p.hub.Publish(ch, encode(l), nil); err != nil {
					p.log.Warn("stream publish", "channel", ch, "err", err)
				}
			}
		}
	}
	for _, e := range b.TokensMigrated {
		p.touched.token(e.Chain.Canonical(), e.Address)
	}
	for _, s := range b.Snapshots {
		c := s.Chain.Canonical()
		p.touched.pool(c, s.PoolAddress)
		p.publish(Name(KindPoolBalance, c, s.PoolAddress), kinds[KindPoolBalance], poolBalanceMsgOf(s))
	}
}

// announce tells every node what the batches since the last announcement touched.
func (p *Publisher) announce() {
	if p.touched.empty() {
		return
	}
	data, err := json.Marshal(p.touched)
	p.touched = newTouchSet()
	if err == nil {
		err = p.hub.Announce(data)
	}
	if err != nil {
		p.log.Warn("stream announce", "err", err)
	}
}

// Announced merges another node's (or this one's) announcement into what the next tick
// recomputes. It is the hub's announcement handler.
func (p *Publisher) Announced(data []byte) {
	var t touchSet
	if err := json.Unmarshal(data, &t); err != nil {
		p.log.Warn("stream announcement", "err", err)
		return
	}
	p.mu.Lock()
	p.dirty.merge(&t)
	p.mu.Unlock()
}

// flushDirty recomputes the coalesced channels with subscribers here that the announcements
// since the last tick touched.
func (p *Publisher) flushDirty(ctx context.Context) {
	p.mu.Lock()
	d := p.dirty
	if d.empty() {
		p.mu.Unlock()
		return
	}
	p.dirty = newTouchSet()
	p.mu.Unlock()

	byToken := map[chain.Chain]map[string][]Channel{}
	byWallet := map[chain.Chain]map[string][]Channel{}
	var boards, candles []Channel
	for _, name := range p.hub.LocalChannels() {
		ch, err := Parse(name)
		if err != nil || ch.Kind.Mode == PerTrade || ch.Kind.Mode == PerBatch {
			continue
		}
		switch ch.Kind.Subject {
		case SubjectToken:
			if d.Tokens[ch.Chain].has(ch.Address) {
				add(byToken, ch)
			}
		case SubjectWallet:
			if _, ok := d.Wallets[ch.Chain][ch.Address]; ok {
				add(byWallet, ch)
			}
		case SubjectBoard:
			if len(d.Tokens[ch.Chain]) > 0 {
				boards = append(boards, ch)
			}
		case SubjectCandle:
			if d.candle(ch) {
				candles = append(candles, ch)
			}
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	now := p.clock.Now().UnixMilli()
	p.flushTokens(ctx, byToken, now)
	p.flushWallets(ctx, byWallet, d, now)
	p.flushBoards(ctx, boards, now)
	p.flushCandles(ctx, candles)
}

func add(m map[chain.Chain]map[string][]Channel, ch Channel) {
	if m[ch.Chain] == nil {
		m[ch.Chain] = map[string][]Channel{}
	}
	m[ch.Chain][ch.Address] = append(m[ch.Chain][ch.Address], ch)
}

// deliver sends v to ch's subscribers; tagged says whether a filter of ch's kind may match v's
// members (a single message, not an array).
func (p *Publisher) deliver(ch Channel, v any, tagged bool) {
	data := encode(v)
	var tg map[string]string
	if ch.Kind.Filter && tagged {
		tg = tags(data)
	}
	if err := p.hub.Deliver(ch.Name, data, tg); err != nil {
		p.log.Warn("stream deliver", "channel", ch.Name, "err", err)
	}
}

// tokenMsgs are the builders of the token channels.
var tokenMsgs = map[string]func(token.Detail, int64) any{
	KindTokenStats:     func(d token.Detail, now int64) any { return statsMsgOf(d, now) },
	KindTokenHolding:   func(d token.Detail, now int64) any { return holdingMsgOf(d, now) },
	KindTokenSupply:    func(d token.Detail, now int64) any { return supplyMsgOf(d, now) },
	KindTokenStatNum:   func(d token.Detail, now int64) any { return statNumMsgOf(d, now) },
	KindTokenLiquidity: func(d token.Detail, now int64) any { return maxLiquidityMsgOf(d, now) },
	KindTokenTotalLiq:  func(d token.Detail, now int64) any { return totalLiquidityMsgOf(d, now) },
}

func (p *Publisher) flushTokens(ctx context.Context, byToken map[chain.Chain]map[string][]Channel, now int64) {
	for c, subs := range byToken {
		addrs := sortedKeys(subs)
		for chunk := range slices.Chunk(addrs, market.MaxAddresses) {
			ans, err := p.market.Multi(ctx, market.MultiRequest{Chain: c, Addresses: chunk})
			if err != nil {
				p.log.Warn("stream token state", "chain", c, "err", err)
				continue
			}
			for _, d := range ans.List() {
				for _, ch := range subs[d.Address] {
					if build := tokenMsgs[ch.Kind.Prefix]; build != nil {
						p.deliver(ch, build(d, now), true)
					}
				}
			}
		}
	}
}

func (p *Publisher) flushWallets(ctx context.Context, byWallet map[chain.Chain]map[string][]Channel, d *touchSet, now int64) {
	for c, subs := range byWallet {
		for wallet, chs := range subs {
			touched := d.Wallets[c][wallet]
			known := p.rememberWalletTokens(c, wallet, touched)
			periods, err := p.market.PnLPeriods(ctx, c, wallet, known)
			if err != nil {
				p.log.Warn("stream wallet state", "chain", c, "wallet", wallet, "err", err)
				continue
			}
			all := periodOf(periods, pnl.ResolutionAll)
			for _, ch := range chs {
				switch ch.Kind.Prefix {
				case KindWalletPnLList:
					p.deliver(ch, walletPnLListMsg(wallet, periods), false)
				case KindWalletBalance, KindWalletTokenPnL:
					for _, e := range all.Entries {
						if !slices.Contains(touched, e.TokenAddress) {
							continue
						}
						var m any
						if ch.Kind.Prefix == KindWalletBalance {
							m = walletBalanceMsgOf(e.Entry, now)
						} else {
							m = walletTokenPnLMsgOf(e.Entry, periodOf(periods, pnl.Resolution7d), periodOf(periods, pnl.Resolution30d), now)
						}
						p.deliver(ch, m, true)
					}
				}
			}
		}
	}
}

// rememberWalletTokens adds the tokens a wallet just traded to those it is known to hold
// positions in (bounded by the PnL read's limit) and returns them.
func (p *Publisher) rememberWalletTokens(c chain.Chain, wallet string, touched []string) []string {
	if p.walletTokens[c] == nil {
		p.walletTokens[c] = map[string]map[string]bool{}
	}
	set := p.walletTokens[c][wallet]
	if set == nil {
		set = map[string]bool{}
		p.walletTokens[c][wallet] = set
	}
	for _, t := range touched {
		if len(set) < market.MaxAddresses {
			set[t] = true
		}
	}
	return sortedKeys(set)
}

func (p *Publisher) flushBoards(ctx context.Context, boards []Channel, now int64) {
	cache := map[chain.Chain][]token.Detail{}
	for _, ch := range boards {
		ds, ok := cache[ch.Chain]
		if !ok {
			ans, err := p.market.HotTokens(ctx, market.HotRequest{Chain: ch.Chain, Duration: ranking.Duration1h})
			if err != nil {
				p.log.Warn("stream ranking", "chain", ch.Chain, "err", err)
				continue
			}
			ds = ans.List()
			cache[ch.Chain] = ds
		}
		board := boardTokens(ch, ds)
		if board == nil {
			continue // a board tokenscope has no tokens for (stocks)
		}
		p.deliver(ch, rankingMsgs(ch.Kind.Prefix, board, now), false)
	}
}

// boardTokens picks a board's tokens out of the chain's hot ranking: trending is the ranking
// itself, new the newest tokens first, completed the bonding curves closest to completion,
// graduated the tokens that migrated; stocks boards have none (nil).
func boardTokens(ch Channel, hot []token.Detail) []token.Detail {
	var out []token.Detail
	for _, d := range hot {
		if ch.Dex != "" && string(d.LaunchpadTag) != ch.Dex {
			continue
		}
		switch ch.Board {
		case "completed":
			if d.MarketData.CompletionRatio.IsPositive() && d.MarketData.CompletionRatio.LessThan(decimal.NewFromInt(1)) {
				out = append(out, d)
			}
		case "graduated":
			if d.Extra.MigratedAt != nil {
				out = append(out, d)
			}
		case "us_stocks", "stocks":
			return nil
		default:
			out = append(out, d)
		}
	}
	switch ch.Board {
	case "new":
		token.SortDetails(out, token.FieldTokenCreatedAt, true)
	case "completed":
		slices.SortStableFunc(out, func(a, b token.Detail) int {
			return b.MarketData.CompletionRatio.Cmp(a.MarketData.CompletionRatio)
		})
	}
	if out == nil {
		out = []token.Detail{}
	}
	return out
}

func (p *Publisher) flushCandles(ctx context.Context, chs []Channel) {
	if p.candles == nil {
		return
	}
	for _, ch := range chs {
		c, ok, err := p.candles(ctx, ch)
		if err != nil {
			p.log.Warn("stream candle", "channel", ch.Name, "err", err)
			continue
		}
		if ok {
			p.deliver(ch, candleMsgOf(ch, c), true)
		}
	}
}

// candleMsg is a candle channel message (2.2).
type candleMsg struct {
	A string `json:"a"`
	C string `json:"c"`
	H string `json:"h"`
	L string `json:"l"`
	N int64  `json:"n"`
	O string `json:"o"`
	R string `json:"r"`
	T int64  `json:"t"`
	V string `json:"v"`
}

func candleMsgOf(ch Channel, c Candle) candleMsg {
	return candleMsg{A: ch.Address, O: dec(c.Open), C: dec(c.Close), H: dec(c.High), L: dec(c.Low),
		V: dec(c.Volume), R: ch.Resolution, T: c.Time, N: c.Trades}
}

// touchSet is what committed batches touched, as announced between nodes.
type touchSet struct {
	Tokens  map[chain.Chain]strset              `json:"t,omitempty"`
	Wallets map[chain.Chain]map[string][]string `json:"w,omitempty"`
	Pools   map[chain.Chain]strset              `json:"p,omitempty"`
	// Pairs holds `{tokenA}-{tokenB}` in both orders.
	Pairs map[chain.Chain]strset `json:"pr,omitempty"`
}

// strset is a set of strings (a JSON array on the wire).
type strset map[string]struct{}

func (s strset) has(k string) bool { _, ok := s[k]; return ok }

func (s strset) MarshalJSON() ([]byte, error) { return json.Marshal(sortedKeys(s)) }

func (s *strset) UnmarshalJSON(b []byte) error {
	var l []string
	if err := json.Unmarshal(b, &l); err != nil {
		return err
	}
	*s = strset{}
	for _, v := range l {
		(*s)[v] = struct{}{}
	}
	return nil
}

func newTouchSet() *touchSet {
	return &touchSet{Tokens: map[chain.Chain]strset{}, Wallets: map[chain.Chain]map[string][]string{},
		Pools: map[chain.Chain]strset{}, Pairs: map[chain.Chain]strset{}}
}

func (t *touchSet) empty() bool {
	return len(t.Tokens) == 0 && len(t.Wallets) == 0 && len(t.Pools) == 0 && len(t.Pairs) == 0
}

func put(m map[chain.Chain]strset, c chain.Chain, k string) {
	if m[c] == nil {
		m[c] = strset{}
	}
	m[c][k] = struct{}{}
}

func (t *touchSet) token(c chain.Chain, addr string) { put(t.Tokens, c, addr) }
func (t *touchSet) pool(c chain.Chain, addr string)  { put(t.Pools, c, addr) }

func (t *touchSet) wallet(c chain.Chain, wallet, tok string) {
	if t.Wallets[c] == nil {
		t.Wallets[c] = map[string][]string{}
	}
	if !slices.Contains(t.Wallets[c][wallet], tok) {
		t.Wallets[c][wallet] = append(t.Wallets[c][wallet], tok)
	}
}

func (t *touchSet) trade(c chain.Chain, tr trade.Trade) {
	t.token(c, tr.TokenAddress)
	t.pool(c, tr.PoolAddress)
	t.wallet(c, tr.Wallet, tr.TokenAddress)
	put(t.Pairs, c, tr.TokenAddress+"-"+tr.SideTokenAddress)
	put(t.Pairs, c, tr.SideTokenAddress+"-"+tr.TokenAddress)
}

func (t *touchSet) merge(o *touchSet) {
	for _, pair := range []struct{ dst, src map[chain.Chain]strset }{{t.Tokens, o.Tokens}, {t.Pools, o.Pools}, {t.Pairs, o.Pairs}} {
		for c, s := range pair.src {
			for k := range s {
				put(pair.dst, c, k)
			}
		}
	}
	for c, ws := range o.Wallets {
		for w, toks := range ws {
			for _, tok := range toks {
				t.wallet(c, w, tok)
			}
		}
	}
}

// candle reports whether a candle channel's subject was touched.
func (t *touchSet) candle(ch Channel) bool {
	switch ch.Kind.Prefix {
	case KindPoolCandle, KindPoolCandle + "-in-native":
		return t.Pools[ch.Chain].has(ch.Address)
	case KindPairCandle, KindPairCandle + "-in-native":
		return t.Pairs[ch.Chain].has(ch.Address)
	}
	return t.Tokens[ch.Chain].has(ch.Address)
}
