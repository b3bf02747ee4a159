// Package dexlog turns the decoded logs of Uniswap V2-style pools (PairCreated, Sync, Swap; the
// format PancakeSwap V2 and the other forks copy) and Uniswap V3-style pools (PoolCreated,
// Initialize, Swap) into the engine's ingest events: pools, pool snapshots, trades with their
// side, scaled amounts and prices, and token records. Decoding the
// logs and reading token metadata is the EVM adapter's business; this package only maps what it
// decoded, with the pricing rules of docs/engine.md ("Chain follower"). It may import only the
// standard library, github.com/shopspring/decimal and other domain packages.
package dexlog

import (
	"math/big"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
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
	FamilyV3     = "UniswapV3"
	ProtocolV3   = "Uniswap V3"
)

// Version is a pool's log format: V2 (constant product, Sync reserves) or V3 (concentrated
// liquidity, sqrtPriceX96).
type Version uint8

const (
	V2 Version = iota
	V3
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

// Pair is a pool: its factory, two tokens in the contract's order and its log format (V2 when
// not set).
type Pair struct {
	Address string
	Factory string
	Token0  string
	Token1  string
	Version Version
}

func (p Pair) family() (family, name string) {
	if p.Version == V3 {
		return FamilyV3, ProtocolV3
	}
	return Family, ProtocolName
}

// PairCreated is the factory's log announcing a pair.
type PairCreated struct{ Pair Pair }

// Sync is a pair's reserves after a change, in smallest units.
type Sync struct{ Reserve0, Reserve1 decimal.Decimal }

// Swap is a pair's swap, amounts in smallest units.
type Swap struct{ Amount0In, Amount1In, Amount0Out, Amount1Out decimal.Decimal }

// PoolCreated is a V3 factory's log announcing a pool (Pair.Version V3).
type PoolCreated struct{ Pair Pair }

// V3State is a V3 pool's price after a log, and its token balances (smallest units) at the end
// of the log's block as read from the chain; Balances nil: not known (the snapshot's values and
// vault amounts are then zero).
type V3State struct {
	SqrtPriceX96 decimal.Decimal
	Balances     *[2]decimal.Decimal
}

// Initialize is a V3 pool's first price.
type Initialize struct{ State V3State }

// SwapV3 is a V3 pool's swap: the pool's signed balance changes (positive: into the pool), in
// smallest units, and its state after it.
type SwapV3 struct {
	Amount0, Amount1 decimal.Decimal
	State            V3State
}

// Log is one decoded log: exactly one of PairCreated, Sync, Swap, PoolCreated, Initialize and
// SwapV3 is set. Address is the emitting contract (the pool for all but the factories' logs),
// From the transaction's sender.
type Log struct {
	Block   Block
	TxHash  string
	Index   int32
	From    string
	Address string

	PairCreated *PairCreated
	Sync        *Sync
	Swap        *Swap
	PoolCreated *PoolCreated
	Initialize  *Initialize
	SwapV3      *SwapV3
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
	announced map[string]int64 // tokens and pools whose creation events were emitted, at which block
	reserves  map[string][2]decimal.Decimal
	v3        map[string]V3State
	nativeUSD decimal.Decimal
}

// NewMapper starts a mapper that knows nothing yet.
func NewMapper(cfg Config) *Mapper {
	cfg.Native = norm(cfg.Native)
	cfg.StablePool = norm(cfg.StablePool)
	m := &Mapper{cfg: cfg, stables: map[string]bool{}, pairs: map[string]Pair{}, tokens: map[string]Token{},
		announced: map[string]int64{}, reserves: map[string][2]decimal.Decimal{}, v3: map[string]V3State{}}
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
	p = Pair{Address: norm(p.Address), Factory: norm(p.Factory), Token0: norm(p.Token0), Token1: norm(p.Token1), Version: p.Version}
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

// SetV3Price teaches the mapper a V3 pool's sqrtPriceX96 before the logs it maps (read from the
// chain at the block before them), as SetReserves does for a V2 pair.
func (m *Mapper) SetV3Price(pool string, sqrtPriceX96 decimal.Decimal) {
	m.applyV3(norm(pool), V3State{SqrtPriceX96: sqrtPriceX96})
}

// Pair returns a known pair.
func (m *Mapper) Pair(addr string) (Pair, bool) { p, ok := m.pairs[norm(addr)]; return p, ok }

// ForgetNativePrice drops the native token's USD price: trades are valued in USD again only
// after the stable pool's next Sync (or SetReserves).
func (m *Mapper) ForgetNativePrice() { m.nativeUSD = decimal.Zero }

// Rewind forgets the creation events emitted for blocks from block on: a caller that maps
// those blocks again (their events were not written) gets them again.
func (m *Mapper) Rewind(block int64) {
	for k, at := range m.announced {
		if at >= block {
			delete(m.announced, k)
		}
	}
}

// Map turns logs, in chain order, into ingest events: token.created and pool.created the first
// time a token or pair shows up, a trade per Swap (V2 or V3) and a pool.snapshot per pair and
// block (after its last Sync, Initialize or V3 Swap in the block). Logs of pairs or tokens the
// mapper does not know are skipped; the caller teaches it every pair and token first (AddPair,
// AddToken).
func (m *Mapper) Map(logs []Log) []chainevent.Event {
	var out []chainevent.Event
	snaps := map[pool.Key]int{} // the snapshot of a pair and block, by its index in out
	snapshot := func(addr string, b Block) {
		s := m.snapshot(addr, b)
		if i, ok := snaps[s.Key()]; ok {
			out[i] = chainevent.PoolSnapshot{Snapshot: s}
			return
		}
		snaps[s.Key()] = len(out)
		out = append(out, chainevent.PoolSnapshot{Snapshot: s})
	}
	for _, l := range logs {
		addr := norm(l.Address)
		switch {
		case l.PairCreated != nil:
			m.AddPair(l.PairCreated.Pair)
			out = m.announce(out, norm(l.PairCreated.Pair.Address), l.Block)
		case l.PoolCreated != nil:
			p := l.PoolCreated.Pair
			p.Version = V3
			m.AddPair(p)
			out = m.announce(out, norm(p.Address), l.Block)
		case l.Sync != nil:
			if !m.ready(addr) {
				continue
			}
			out = m.announce(out, addr, l.Block)
			m.applySync(addr, *l.Sync)
			snapshot(addr, l.Block)
		case l.Initialize != nil, l.SwapV3 != nil:
			if !m.ready(addr) {
				continue
			}
			out = m.announce(out, addr, l.Block)
			// As a V2 pair's Sync comes before its Swap, the swap is priced after its state.
			if l.Initialize != nil {
				m.applyV3(addr, l.Initialize.State)
			} else {
				m.applyV3(addr, l.SwapV3.State)
				if t, ok := m.trade(l.Block, l.TxHash, l.Index, l.From, addr, v2Flows(*l.SwapV3)); ok {
					out = append(out, chainevent.Trade{Trade: t})
				}
			}
			snapshot(addr, l.Block)
		case l.Swap != nil:
			if !m.ready(addr) {
				continue
			}
			out = m.announce(out, addr, l.Block)
			if t, ok := m.trade(l.Block, l.TxHash, l.Index, l.From, addr, *l.Swap); ok {
				out = append(out, chainevent.Trade{Trade: t})
			}
		}
	}
	return out
}

// v2Flows writes a V3 swap's signed pool deltas as V2's in and out amounts.
func v2Flows(s SwapV3) Swap {
	z := decimal.Zero
	in0, out0 := decimal.Max(s.Amount0, z), decimal.Max(s.Amount0.Neg(), z)
	in1, out1 := decimal.Max(s.Amount1, z), decimal.Max(s.Amount1.Neg(), z)
	return Swap{Amount0In: in0, Amount1In: in1, Amount0Out: out0, Amount1Out: out1}
}

// ready reports whether a pair and both its tokens are known.
func (m *Mapper) ready(addr string) bool {
	p, ok := m.pairs[addr]
	return ok && m.KnowsToken(p.Token0) && m.KnowsToken(p.Token1)
}

// announce appends the token.created and pool.created events of a pair not announced yet.
func (m *Mapper) announce(out []chainevent.Event, addr string, b Block) []chainevent.Event {
	p, ok := m.pairs[addr]
	if _, done := m.announced[addr]; !ok || done || !m.ready(addr) {
		return out
	}
	for _, ta := range []string{p.Token0, p.Token1} {
		if _, done := m.announced[ta]; done {
			continue
		}
		m.announced[ta] = b.Number
		t := m.tokens[ta]
		supply := t.TotalSupply.Shift(-t.Decimals)
		at, height := b.Time, b.Number
		out = append(out, chainevent.TokenCreated{
			Token: token.Token{Address: t.Address, Chain: m.cfg.Chain, Decimals: t.Decimals, Name: t.Name, Symbol: t.Symbol,
				CreatedAt: &at, CreatedBlockHeight: &height, Extra: token.Extra{TokenStandard: "ERC20"}},
			TotalSupply: supply, CirculatingSupply: supply,
		})
	}
	m.announced[addr] = b.Number
	base, quote := m.orient(p)
	family, name := p.family()
	out = append(out, chainevent.PoolCreated{Pool: pool.Pool{Chain: m.cfg.Chain, Address: p.Address, ProgramAddress: p.Factory,
		ProtocolFamily: family, ProtocolName: name, TokenAAddress: base, TokenADecimals: m.tokens[base].Decimals,
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
	m.priceNative(addr)
}

func (m *Mapper) applyV3(addr string, s V3State) {
	m.v3[addr] = s
	m.priceNative(addr)
}

// priceNative sets the native token's USD price from a native/stable pool's new state, when
// that pool prices it (the configured stable pool, or any when none is).
func (m *Mapper) priceNative(addr string) {
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
	if price := m.spot(p, base); price.IsPositive() {
		m.nativeUSD = price
	}
}

// spot is the price of a pool's base token in its quote token, in whole tokens to PriceScale
// places (zero: unknown): the V2 reserves' ratio, or V3's sqrtPriceX96² / 2^192 (token0 in
// token1, smallest units) scaled by the decimals.
func (m *Mapper) spot(p Pair, base string) decimal.Decimal {
	if p.Version != V3 {
		rb, rq := m.scaled(p, base, m.reserves[p.Address])
		if !rb.IsPositive() {
			return decimal.Zero
		}
		return rq.DivRound(rb, PriceScale)
	}
	sp := m.v3[p.Address].SqrtPriceX96
	if !sp.IsPositive() {
		return decimal.Zero
	}
	// price0 = sqrtP² · 10^(d0−d1) / 2^192: exact as a fraction, rounded once.
	num := sp.Mul(sp).Shift(m.tokens[p.Token0].Decimals - m.tokens[p.Token1].Decimals)
	den := decimal.NewFromBigInt(new(big.Int).Lsh(big.NewInt(1), 192), 0)
	if base == p.Token0 {
		return num.DivRound(den, PriceScale)
	}
	return den.DivRound(num, PriceScale)
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

// trade maps a swap (a V3 one as its V2 flows): the base token's net flow out of the pool is a
// BUY, into it a SELL.
func (m *Mapper) trade(b Block, tx string, index int32, from, addr string, s Swap) (trade.Trade, bool) {
	p := m.pairs[addr]
	base, quote := m.orient(p)
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
	family, _ := p.family()
	t := trade.Trade{Chain: m.cfg.Chain, TransactionSignature: norm(tx), InstructionIndex: index,
		BlockHeight: b.Number, BlockSlot: b.Number, BlockTimestamp: b.Time, Wallet: norm(from),
		PoolAddress: addr, Side: side, Status: trade.Succeeded,
		TokenAddress: base, TokenName: bt.Name, TokenSymbol: bt.Symbol, TokenAmount: baseAmt,
		TokenAmountInNative: amtNative, TokenAmountInUSD: amtUSD,
		TokenPriceInNative: amtNative.DivRound(baseAmt, PriceScale), TokenPriceInUSD: amtUSD.DivRound(baseAmt, PriceScale),
		SideTokenAddress: quote, SideTokenName: qt.Name, SideTokenSymbol: qt.Symbol, SideTokenAmount: quoteAmt,
		SideTokenAmountInNative: amtNative, SideTokenAmountInUSD: amtUSD, SideTokenPriceInNative: qNative,
		SideTokenPriceInUSD: qUSD, DexProgramAddress: p.Factory, DexProtocolFamily: family}
	return t, true
}

// snapshot is a pair's state after its latest Sync: the base priced at the reserves' ratio.
func (m *Mapper) snapshot(addr string, b Block) pool.Snapshot {
	p := m.pairs[addr]
	if p.Version == V3 {
		return m.snapshotV3(p, b)
	}
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

// snapshotV3 is a V3 pool's state after its latest Initialize or Swap: the base priced at the
// pool's sqrtPriceX96, each side worth its balance at that price (a concentrated pool does not
// hold equal values), TVL their sum, each to PriceScale places; vault amounts are the balances. Unknown balances leave the
// values and vault amounts zero.
func (m *Mapper) snapshotV3(p Pair, b Block) pool.Snapshot {
	base, quote := m.orient(p)
	st := m.v3[p.Address]
	qNative, qUSD := m.quotePrice(quote)
	inQuote := m.spot(p, base)
	bNative, bUSD := inQuote.Mul(qNative).Round(PriceScale), inQuote.Mul(qUSD).Round(PriceScale)
	bal := [2]decimal.Decimal{decimal.Zero, decimal.Zero}
	if st.Balances != nil {
		bal = *st.Balances
	}
	bb, bq := m.scaled(p, base, bal)
	rawBase, rawQuote := bal[0], bal[1]
	if base != p.Token0 {
		rawBase, rawQuote = bal[1], bal[0]
	}
	// Prices and values are rounded to PriceScale places: a balance of up to 36 decimals times
	// a price of 18 would pass what ingest stores.
	aNative, aUSD := bb.Mul(bNative).Round(PriceScale), bb.Mul(bUSD).Round(PriceScale)
	qValNative, qValUSD := bq.Mul(qNative).Round(PriceScale), bq.Mul(qUSD).Round(PriceScale)
	return pool.Snapshot{Chain: m.cfg.Chain, PoolAddress: p.Address, BlockHeight: b.Number, BlockTimestamp: b.Time, SnapshotTime: b.Time,
		TokenA: pool.Side{TokenAddress: base, Decimals: m.tokens[base].Decimals, AmountInNative: aNative, AmountInUSD: aUSD,
			PriceNative: bNative, PriceUSD: bUSD, VaultAmount: pool.VaultAmount(rawBase.String())},
		TokenB: pool.Side{TokenAddress: quote, Decimals: m.tokens[quote].Decimals, AmountInNative: qValNative, AmountInUSD: qValUSD,
			PriceNative: qNative, PriceUSD: qUSD, VaultAmount: pool.VaultAmount(rawQuote.String())},
		TVLInNative: aNative.Add(qValNative), TVLInUSD: aUSD.Add(qValUSD)}
}
