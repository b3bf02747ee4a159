// Package dexlog turns the decoded logs of Uniswap V2-style pools (PairCreated, Sync, Swap; the
// format PancakeSwap V2 and the other forks copy) into the engine's ingest events: pools, pool
// snapshots, trades with their side, scaled amounts and prices, and token records. Decoding the
// logs and reading token metadata is the EVM adapter's business; this package only maps what it
// decoded, with the pricing rules of docs/engine.md ("Chain follower"). It may import only the
// standard library, github.com/shopspring/decimal and other domain packages.
package dexlog

import (
	"strings"

	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/ingest"
	"github.com/tokenscope/tokenscope/domain/pool"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/domain/trade"
)

// PriceScale is the number of decimal places a division (a price) keeps; products of amounts and
// prices are exact.
const PriceScale = 18

// Family and protocol name of the pools this package maps.
const (
	Family       = "UniswapV2"
	ProtocolName = "Uniswap V2"
)

// Block is where a log was emitted. Time is Unix milliseconds.
type Block struct {
	Number int64
	Hash   string
	Time   int64
}

// Token is an ERC-20's metadata as read from the chain. TotalSupply is in smallest units.
type Token struct {
	Address     string
	Name        string
	Symbol      string
	Decimals    int32
	TotalSupply decimal.Decimal
}

// Pair is a V2 pool: its factory and two tokens in the contract's order.
type Pair struct {
	Address string
	Factory string
	Token0  string
	Token1  string
}

// PairCreated is the factory's log announcing a pair.
type PairCreated struct{ Pair Pair }

// Sync is a pair's reserves after a change, in smallest units.
type Sync struct{ Reserve0, Reserve1 decimal.Decimal }

// Swap is a pair's swap, amounts in smallest units.
type Swap struct{ Amount0In, Amount1In, Amount0Out, Amount1Out decimal.Decimal }

// Log is one decoded log: exactly one of PairCreated, Sync and Swap is set. Address is the
// emitting contract (the pair for Sync and Swap), From the transaction's sender.
type Log struct {
	Block   Block
	TxHash  string
	Index   int32
	From    string
	Address string

	PairCreated *PairCreated
	Sync        *Sync
	Swap        *Swap
}

// Config is a chain's pricing setup. Addresses are compared case-insensitively.
type Config struct {
	Chain chain.Chain
	// Native is the wrapped native token (WETH, WBNB): its price in native is 1.
	Native string
	// Stables are tokens priced at 1 USD.
	Stables []string
	// StablePool, when set, is the only pool that prices the native token in USD; otherwise every
	// pool of the native token with a stable token does (the latest Sync wins).
	StablePool string
}

// Mapper maps logs in chain order, remembering the pairs, tokens, reserves and the native
// token's USD price it has seen. It is not safe for concurrent use.
type Mapper struct {
	cfg       Config
	stables   map[string]bool
	pairs     map[string]Pair
	tokens    map[string]Token
	announced map[string]bool // tokens and pools whose creation events were emitted
	reserves  map[string][2]decimal.Decimal
	nativeUSD decimal.Decimal
}

// NewMapper starts a mapper that knows nothing yet.
func NewMapper(cfg Config) *Mapper {
	cfg.Native = norm(cfg.Native)
	cfg.StablePool = norm(cfg.StablePool)
	m := &Mapper{cfg: cfg, stables: map[string]bool{}, pairs: map[string]Pair{}, tokens: map[string]Token{},
		announced: map[string]bool{}, reserves: map[string][2]decimal.Decimal{}}
	for _, s := range cfg.Stables {
		m.stables[norm(s)] = true
	}
	return m
}

func norm(a string) string { return strings.ToLower(strings.TrimSpace(a)) }

// KnowsPair reports whether the pair's tokens are known (from its PairCreated or AddPair).
func (m *Mapper) KnowsPair(addr string) bool { _, ok := m.pairs[norm(addr)]; return ok }

// KnowsToken reports whether the token's metadata is known.
func (m *Mapper) KnowsToken(addr string) bool { _, ok := m.tokens[norm(addr)]; return ok }

// AddPair teaches the mapper a pair created before the logs it maps (read from the chain).
func (m *Mapper) AddPair(p Pair) {
	p = Pair{Address: norm(p.Address), Factory: norm(p.Factory), Token0: norm(p.Token0), Token1: norm(p.Token1)}
	m.pairs[p.Address] = p
}

// AddToken teaches the mapper a token's metadata; its token.created event goes out with the
// next Map that involves it.
func (m *Mapper) AddToken(t Token) {
	t.Address = norm(t.Address)
	m.tokens[t.Address] = t
}

// SetReserves teaches the mapper a pair's reserves before the logs it maps (read from the chain
// at the block before them), so prices do not wait for the pair's next Sync.
func (m *Mapper) SetReserves(pair string, r0, r1 decimal.Decimal) {
	m.applySync(norm(pair), Sync{Reserve0: r0, Reserve1: r1})
}

// Pair returns a known pair.
func (m *Mapper) Pair(addr string) (Pair, bool) { p, ok := m.pairs[norm(addr)]; return p, ok }

// ForgetNativePrice drops the native token's USD price: trades are valued in USD again only
// after the stable pool's next Sync (or SetReserves).
func (m *Mapper) ForgetNativePrice() { m.nativeUSD = decimal.Zero }

// Map turns logs, in chain order, into ingest events: token.created and pool.created the first
// time a token or pair shows up, a trade per Swap and a pool.snapshot per pair and block (its
// last Sync in the block). Logs of pairs or tokens the mapper does not know are skipped; the
// caller teaches it every pair and token first (AddPair, AddToken).
func (m *Mapper) Map(logs []Log) []ingest.Event {
	var out []ingest.Event
	snaps := map[pool.Key]int{} // the snapshot of a pair and block, by its index in out
	for _, l := range logs {
		switch {
		case l.PairCreated != nil:
			m.AddPair(l.PairCreated.Pair)
			out = m.announce(out, norm(l.PairCreated.Pair.Address), l.Block)
		case l.Sync != nil:
			addr := norm(l.Address)
			if !m.ready(addr) {
				continue
			}
			out = m.announce(out, addr, l.Block)
			m.applySync(addr, *l.Sync)
			s := m.snapshot(addr, l.Block)
			if i, ok := snaps[s.Key()]; ok {
				out[i] = ingest.PoolSnapshot{Snapshot: s}
				continue
			}
			snaps[s.Key()] = len(out)
			out = append(out, ingest.PoolSnapshot{Snapshot: s})
		case l.Swap != nil:
			addr := norm(l.Address)
			if !m.ready(addr) {
				continue
			}
			out = m.announce(out, addr, l.Block)
			if t, ok := m.trade(l); ok {
				out = append(out, ingest.Trade{Trade: t})
			}
		}
	}
	return out
}

// ready reports whether a pair and both its tokens are known.
func (m *Mapper) ready(addr string) bool {
	p, ok := m.pairs[addr]
	return ok && m.KnowsToken(p.Token0) && m.KnowsToken(p.Token1)
}

// announce appends the token.created and pool.created events of a pair not announced yet.
func (m *Mapper) announce(out []ingest.Event, addr string, b Block) []ingest.Event {
	p, ok := m.pairs[addr]
	if !ok || m.announced[addr] || !m.ready(addr) {
		return out
	}
	for _, ta := range []string{p.Token0, p.Token1} {
		if m.announced[ta] {
			continue
		}
		m.announced[ta] = true
		t := m.tokens[ta]
		supply := t.TotalSupply.Shift(-t.Decimals)
		at, height := b.Time, b.Number
		out = append(out, ingest.TokenCreated{
			Token: token.Token{Address: t.Address, Chain: m.cfg.Chain, Decimals: t.Decimals, Name: t.Name, Symbol: t.Symbol,
				CreatedAt: &at, CreatedBlockHeight: &height, Extra: token.Extra{TokenStandard: "ERC20"}},
			TotalSupply: supply, CirculatingSupply: supply,
		})
	}
	m.announced[addr] = true
	base, quote := m.orient(p)
	out = append(out, ingest.PoolCreated{Pool: pool.Pool{Chain: m.cfg.Chain, Address: p.Address, ProgramAddress: p.Factory,
		ProtocolFamily: Family, ProtocolName: ProtocolName, TokenAAddress: base, TokenADecimals: m.tokens[base].Decimals,
		TokenBAddress: quote, TokenBDecimals: m.tokens[quote].Decimals}, At: b.Time})
	return out
}

// orient names a pair's traded token (base) and the token it is priced in (quote): the native
// token is the quote unless the other side is a stable token (then the native token is the
// base: a native/stable pool prices native); otherwise a stable token is the quote; with
// neither, token1 is.
func (m *Mapper) orient(p Pair) (base, quote string) {
	n := m.cfg.Native
	switch {
	case p.Token0 == n && m.stables[p.Token1], p.Token1 == n && !m.stables[p.Token0]:
		return p.Token0, p.Token1
	case p.Token1 == n && m.stables[p.Token0], p.Token0 == n:
		return p.Token1, p.Token0
	case m.stables[p.Token0] && !m.stables[p.Token1]:
		return p.Token1, p.Token0
	}
	return p.Token0, p.Token1
}

// scaled returns a pair's reserves in whole tokens, base first.
func (m *Mapper) scaled(p Pair, base string, r [2]decimal.Decimal) (decimal.Decimal, decimal.Decimal) {
	r0 := r[0].Shift(-m.tokens[p.Token0].Decimals)
	r1 := r[1].Shift(-m.tokens[p.Token1].Decimals)
	if base == p.Token0 {
		return r0, r1
	}
	return r1, r0
}

func (m *Mapper) applySync(addr string, s Sync) {
	m.reserves[addr] = [2]decimal.Decimal{s.Reserve0, s.Reserve1}
	p, ok := m.pairs[addr]
	if !ok || !m.ready(addr) {
		return
	}
	if m.cfg.StablePool != "" && addr != m.cfg.StablePool {
		return
	}
	base, quote := m.orient(p)
	if base != m.cfg.Native || !m.stables[quote] {
		return
	}
	nb, sq := m.scaled(p, base, m.reserves[addr])
	if nb.IsPositive() {
		m.nativeUSD = sq.DivRound(nb, PriceScale)
	}
}

// quotePrice is the price of a quote token in native and in USD (zero: unknown): the native
// token at 1 and the native price; a stable token at the inverse and 1.
func (m *Mapper) quotePrice(q string) (native, usd decimal.Decimal) {
	one := decimal.NewFromInt(1)
	switch {
	case q == m.cfg.Native:
		return one, m.nativeUSD
	case m.stables[q]:
		if m.nativeUSD.IsPositive() {
			return one.DivRound(m.nativeUSD, PriceScale), one
		}
		return decimal.Zero, one
	}
	return decimal.Zero, decimal.Zero
}

// trade maps a Swap: the base token's net flow out of the pool is a BUY, into it a SELL.
func (m *Mapper) trade(l Log) (trade.Trade, bool) {
	addr := norm(l.Address)
	p := m.pairs[addr]
	base, quote := m.orient(p)
	s := *l.Swap
	out0, out1 := s.Amount0Out.Sub(s.Amount0In), s.Amount1Out.Sub(s.Amount1In)
	baseOut, quoteOut := out0, out1
	if base != p.Token0 {
		baseOut, quoteOut = out1, out0
	}
	side := trade.Buy
	if baseOut.IsNegative() {
		side = trade.Sell
	}
	bt, qt := m.tokens[base], m.tokens[quote]
	baseAmt, quoteAmt := baseOut.Abs().Shift(-bt.Decimals), quoteOut.Abs().Shift(-qt.Decimals)
	if baseAmt.IsZero() || quoteAmt.IsZero() {
		return trade.Trade{}, false
	}
	qNative, qUSD := m.quotePrice(quote)
	// Both legs of a swap are worth the same: the quote leg's value is the trade's.
	amtNative, amtUSD := quoteAmt.Mul(qNative), quoteAmt.Mul(qUSD)
	t := trade.Trade{Chain: m.cfg.Chain, TransactionSignature: norm(l.TxHash), InstructionIndex: l.Index,
		BlockHeight: l.Block.Number, BlockSlot: l.Block.Number, BlockTimestamp: l.Block.Time, Wallet: norm(l.From),
		PoolAddress: addr, Side: side, Status: trade.Succeeded,
		TokenAddress: base, TokenName: bt.Name, TokenSymbol: bt.Symbol, TokenAmount: baseAmt,
		TokenAmountInNative: amtNative, TokenAmountInUSD: amtUSD,
		TokenPriceInNative: amtNative.DivRound(baseAmt, PriceScale), TokenPriceInUSD: amtUSD.DivRound(baseAmt, PriceScale),
		SideTokenAddress: quote, SideTokenName: qt.Name, SideTokenSymbol: qt.Symbol, SideTokenAmount: quoteAmt,
		SideTokenAmountInNative: amtNative, SideTokenAmountInUSD: amtUSD, SideTokenPriceInNative: qNative,
		SideTokenPriceInUSD: qUSD, DexProgramAddress: p.Factory, DexProtocolFamily: Family}
	return t, true
}

// snapshot is a pair's state after its latest Sync: the base priced at the reserves' ratio.
func (m *Mapper) snapshot(addr string, b Block) pool.Snapshot {
	p := m.pairs[addr]
	base, quote := m.orient(p)
	r := m.reserves[addr]
	rb, rq := m.scaled(p, base, r)
	rawBase, rawQuote := r[0], r[1]
	if base != p.Token0 {
		rawBase, rawQuote = r[1], r[0]
	}
	qNative, qUSD := m.quotePrice(quote)
	var bNative, bUSD decimal.Decimal
	if rb.IsPositive() {
		inQuote := rq.DivRound(rb, PriceScale)
		bNative, bUSD = inQuote.Mul(qNative), inQuote.Mul(qUSD)
	}
	// The two sides of a constant-product pool hold equal value at its spot price.
	qValNative, qValUSD := rq.Mul(qNative), rq.Mul(qUSD)
	return pool.Snapshot{Chain: m.cfg.Chain, PoolAddress: addr, BlockHeight: b.Number, BlockTimestamp: b.Time, SnapshotTime: b.Time,
		TokenA: pool.Side{TokenAddress: base, Decimals: m.tokens[base].Decimals, AmountInNative: qValNative, AmountInUSD: qValUSD,
			PriceNative: bNative, PriceUSD: bUSD, VaultAmount: pool.VaultAmount(rawBase.String())},
		TokenB: pool.Side{TokenAddress: quote, Decimals: m.tokens[quote].Decimals, AmountInNative: qValNative, AmountInUSD: qValUSD,
			PriceNative: qNative, PriceUSD: qUSD, VaultAmount: pool.VaultAmount(rawQuote.String())},
		TVLInNative: qValNative.Add(qValNative), TVLInUSD: qValUSD.Add(qValUSD)}
}
