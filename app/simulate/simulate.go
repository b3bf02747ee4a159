// Package simulate is a deterministic market generator: token launches on bonding curves under
// the launchpad tags, developers and snipers buying first, constant-product pools whose price
// follows the trades, migrations when a curve completes, heavy-tailed activity across tokens and
// wallets, red packets created, claimed and expiring, periodic pool snapshots and wallet labels,
// on sol, eth and bsc. It only produces ingest events and hands them to a Sink (the ingest port
// or an NDJSON file); it never writes tables. It imports domain and ports only.
//
// Everything random comes from one seeded PCG source and every amount is a decimal built from
// integers, so the same seed and start time give byte-identical output.
package simulate

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/domain/pool"
	"github.com/tokenscope/tokenscope/domain/redpacket"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/domain/trade"
	"github.com/tokenscope/tokenscope/ports"
)

// Config sizes a backfill.
type Config struct {
	Seed    uint64
	Tokens  int
	Wallets int
	Trades  int
	// Start and End bound the backfill's timestamps; trades are spread evenly between them.
	Start, End time.Time
}

// Sink receives events in order.
type Sink interface {
	Emit(ctx context.Context, e chainevent.Event) error
	Flush(ctx context.Context) error
}

type chainInfo struct {
	c        chain.Chain
	native   string
	priceUSD decimal.Decimal
	blockMs  int64
	// curve: virtual reserves at launch and the native reserve that completes the curve.
	curveNative, target decimal.Decimal
}

var chains = []chainInfo{
	{chain.Sol, "So11111111111111111111111111111111111111112", decimal.NewFromInt(150), 400, decimal.NewFromInt(30), decimal.NewFromInt(85)},
	{chain.Eth, "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2", decimal.NewFromInt(3000), 12_000, decimal.NewFromInt(2), decimal.NewFromInt(5)},
	{chain.Bsc, "0xbb4cdb9cbd36b01bd1cbaed60bd16a21e8acf7c7", decimal.NewFromInt(600), 3_000, decimal.NewFromInt(8), decimal.NewFromInt(22)},
}

// launchpad is one launch platform: its public launchpad id, the protocol family and name of
// its bonding curves, and the DEX family a completed curve migrates to. The families are
// values of the public API's DexProtocolFamily, so its protocols filter finds them.
type launchpad struct {
	tag                        token.Tag
	family, name               string
	migrateFamily, migrateName string
}

var launchpads = []launchpad{
	{token.PumpFun, "Pumpfun", "Pump.fun", "Pumpswap", "PumpSwap"},
	{token.RaydiumLaunchpad, "Raydium", "Raydium LaunchLab", "Raydium", "Raydium CPMM"},
	{token.MeteoraDynamicBondingCurve, "Meteora", "Meteora Dynamic Bonding Curve", "Meteora", "Meteora DAMM"},
	{token.BonkFun, "BonkFun", "Bonk.fun", "Raydium", "Raydium CPMM"},
	{token.MoonitFun, "Moonshot", "Moonit", "Meteora", "Meteora DAMM"},
	{token.BoopFun, "BoopFun", "Boop.fun", "Raydium", "Raydium CPMM"},
}

// program is the address of a simulated program (a contract on the EVM chains), derived from
// its name: well-formed for the chain and stable across runs, but not the real program's.
func program(c chain.Chain, name string) string {
	h := sha256.Sum256([]byte("tokenscope simulated program " + string(c) + " " + name))
	if c == chain.Sol {
		return base58(h[:])
	}
	return "0x" + hex.EncodeToString(h[:20])
}

const (
	// supply is every token's total supply; the curve starts holding all of it.
	supply        = 1_000_000_000
	feeBps        = 100
	snapshotEvery = 25
)

var genesis = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()

type simToken struct {
	info     chainInfo
	lp       launchpad
	address  string
	name     string
	pool     string
	amm      pool.ConstantProduct // A = token, B = native
	migrated bool
	weight   int64
	trades   int
	// snapped says whether the token's pool has had a snapshot in this run (Backfill, or Live,
	// which resets it): its first trade of a run takes one, so every pool a run trades has one.
	snapped   bool
	dev       string
	createdAt int64
	decimals  int32
	balances  map[string]decimal.Decimal
	// program and family are those of the pool the token trades in now (curve, then DEX).
	program, family string
}

type simPacket struct {
	p       redpacket.RedPacket
	claimed map[string]bool
	each    decimal.Decimal
}

// Simulator holds the market state between steps. It is not safe for concurrent use.
type Simulator struct {
	cfg      Config
	rng      *rand.Rand
	tokens   []*simToken
	wallets  map[chain.Chain][]string
	wweights weights
	tweights weights // of tokens, in s.tokens order
	packets  []*simPacket
	seq      uint64
	lastTime int64
}

// New builds a simulator; Tokens, Wallets default to 200 and 2000.
func New(cfg Config) *Simulator {
	if cfg.Tokens <= 0 {
		cfg.Tokens = 200
	}
	if cfg.Wallets <= 0 {
		cfg.Wallets = 2000
	}
	s := &Simulator{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)), wallets: map[chain.Chain][]string{}}
	for i := 0; i < cfg.Wallets; i++ {
		// Heavy tail: wallet i trades with weight ∝ 1/(i+1).
		s.wweights.add(1_000_000 / int64(i+1))
	}
	return s
}

// random draws n bytes from the seeded source.
func (s *Simulator) random(n int) []byte {
	b := make([]byte, (n+7)/8*8)
	for i := 0; i < len(b); i += 8 {
		binary.BigEndian.PutUint64(b[i:], s.rng.Uint64())
	}
	return b[:n]
}

func (s *Simulator) hex(n int) string { return hex.EncodeToString(s.random((n + 1) / 2))[:n] }

// base58 encodes b in the Bitcoin/Solana alphabet; leading zero bytes become '1's, so the text
// decodes back to exactly len(b) bytes.
func base58(b []byte) string {
	const alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
	zeros := 0
	for zeros < len(b) && b[zeros] == 0 {
		zeros++
	}
	var digits []byte // base 58, least significant first
	for _, x := range b[zeros:] {
		carry := int(x)
		for i := range digits {
			carry += int(digits[i]) << 8
			digits[i] = byte(carry % 58)
			carry /= 58
		}
		for carry > 0 {
			digits = append(digits, byte(carry%58))
			carry /= 58
		}
	}
	out := make([]byte, zeros+len(digits))
	for i := range zeros {
		out[i] = '1'
	}
	for i, d := range digits {
		out[len(out)-1-i] = alphabet[d]
	}
	return string(out)
}

// address is a fresh account: on sol the base58 of 32 bytes, on the EVM chains 0x + 40 hex.
func (s *Simulator) address(c chain.Chain) string {
	if c == chain.Sol {
		return base58(s.random(32))
	}
	return "0x" + hex.EncodeToString(s.random(20))
}

// txid is a fresh transaction signature: on sol the base58 of 64 bytes, on the EVM chains
// 0x + 64 hex. The last 8 bytes count the signatures made, so none repeats.
func (s *Simulator) txid(c chain.Chain) string {
	s.seq++
	n := 64
	if c != chain.Sol {
		n = 32
	}
	b := s.random(n)
	binary.BigEndian.PutUint64(b[n-8:], s.seq)
	if c == chain.Sol {
		return base58(b)
	}
	return "0x" + hex.EncodeToString(b)
}

func height(c chainInfo, at int64) int64 { return (at - genesis) / c.blockMs }

// wallets are created lazily per chain so each chain has its own address format; index i is the
// same trader (same heavy-tail weight and labels) on every chain.
func (s *Simulator) wallet(ctx context.Context, sink Sink, c chain.Chain, i int) (string, error) {
	ws := s.wallets[c]
	for len(ws) <= i {
		w := s.address(c)
		ws = append(ws, w)
		// About one wallet in eight carries a label.
		if s.rng.IntN(8) == 0 {
			labels := []token.HolderGroup{token.Bluechip, token.Bundle, token.Fresh, token.Insider, token.Kol, token.Pro, token.Sandwish}
			if err := sink.Emit(ctx, chainevent.WalletLabel{Chain: c, Wallet: w, Label: labels[s.rng.IntN(len(labels))]}); err != nil {
				return "", err
			}
		}
	}
	s.wallets[c] = ws
	return ws[i], nil
}

// weights picks indexes at random in proportion to fixed weights, added one at a time. It keeps
// the running sums, so a pick is a binary search: the first index whose running sum exceeds a
// uniform draw below the total (the same index a linear walk over the weights finds, from the same
// single draw, so a seed's output does not depend on this).
type weights struct{ cum []int64 }

func (w *weights) add(x int64) {
	var last int64
	if n := len(w.cum); n > 0 {
		last = w.cum[n-1]
	}
	w.cum = append(w.cum, last+max(x, 0))
}

func (w *weights) pick(rng *rand.Rand) int {
	n := len(w.cum)
	if n == 0 || w.cum[n-1] <= 0 {
		return 0
	}
	r := rng.Int64N(w.cum[n-1])
	return sort.Search(n, func(i int) bool { return w.cum[i] > r })
}

func (s *Simulator) pickWallet() int { return s.wweights.pick(s.rng) }

func (s *Simulator) pickToken() *simToken { return s.tokens[s.tweights.pick(s.rng)] }

// launch creates a token with its curve pool, then the developer's and snipers' first buys.
func (s *Simulator) launch(ctx context.Context, sink Sink, at int64) error {
	n := len(s.tokens)
	// sol gets most launches, as on the real launchpads.
	info := chains[[]int{0, 0, 0, 1, 2}[s.rng.IntN(5)]]
	lp := launchpads[s.rng.IntN(len(launchpads))]
	curve := program(info.c, string(lp.tag))
	t := &simToken{info: info, lp: lp, address: s.address(info.c), pool: s.address(info.c), createdAt: at, decimals: 6,
		program: curve, family: lp.family,
		amm:      pool.ConstantProduct{ReserveA: decimal.NewFromInt(supply), ReserveB: info.curveNative},
		weight:   1_000_000 / int64(n%97+1), // heavy tail that does not depend on launch order alone
		balances: map[string]decimal.Decimal{}}
	if info.c != chain.Sol {
		t.decimals = 18
	}
	devIdx := s.pickWallet()
	dev, err := s.wallet(ctx, sink, info.c, devIdx)
	if err != nil {
		return err
	}
	t.dev = dev
	t.name = fmt.Sprintf("%s %d", []string{"Moon", "Frog", "Cat", "Pepe", "Rocket", "Based", "Doge", "Ape"}[s.rng.IntN(8)], n)
	h := height(info, at)
	links := map[string]string{}
	if s.rng.IntN(5) < 2 {
		links["twitter"] = "https://x.com/" + t.address[:8]
		if s.rng.IntN(2) == 0 {
			links["telegram"] = "https://t.me/" + t.address[:8]
			links["website"] = "https://" + t.address[:8] + ".example"
		}
	}
	socials, err := token.NewSocials(links)
	if err != nil {
		return err
	}
	created := at
	tokenEvent := chainevent.TokenCreated{
		Token: token.Token{Address: t.address, Chain: info.c, Decimals: t.decimals, Name: t.name,
			Symbol: fmt.Sprintf("T%d", n), CreatedAt: &created, CreatedBlockHeight: &h, CreatedSlot: &h,
			CreatedTxSignature: s.txid(info.c), Creators: []token.Creator{{Address: dev, Share: 100}},
			ImageURL: "https://img.example/" + t.address[:8] + ".png", URI: "https://meta.example/" + t.address[:8],
			Extra:   token.Extra{LaunchFromProgramAddress: curve, LaunchFromProtocolFamily: lp.family, TokenStandard: "Fungible"},
			Socials: socials, LaunchpadTag: lp.tag},
		TotalSupply: decimal.NewFromInt(supply), CirculatingSupply: decimal.NewFromInt(supply), Creator: dev,
		CurvePool: t.pool, CurveTargetInNative: info.target,
	}
	if err := sink.Emit(ctx, tokenEvent); err != nil {
		return err
	}
	if err := sink.Emit(ctx, chainevent.PoolCreated{Pool: pool.Pool{Chain: info.c, Address: t.pool, ProgramAddress: curve,
		ProtocolFamily: lp.family, ProtocolName: lp.name, TokenAAddress: t.address, TokenADecimals: t.decimals,
		TokenBAddress: info.native, TokenBDecimals: 9}, IsBondingCurve: true, At: at}); err != nil {
		return err
	}
	s.tokens = append(s.tokens, t)
	s.tweights.add(t.weight)
	// The developer buys in the creation block, snipers within the next blocks.
	if err := s.swap(ctx, sink, t, devIdx, trade.Buy, at, h); err != nil {
		return err
	}
	for i := 0; i < s.rng.IntN(4); i++ {
		if err := s.swap(ctx, sink, t, s.pickWallet(), trade.Buy, at+int64(i+1)*info.blockMs, h+int64(i+1)); err != nil {
			return err
		}
	}
	return nil
}

// nativeIn draws a heavy-tailed order size in native units: 1–100 thousandths times 1, 10 or 100.
func (s *Simulator) nativeIn(info chainInfo) decimal.Decimal {
	units := decimal.NewFromInt(int64(1 + s.rng.IntN(100)))
	scale := []int64{1, 1, 1, 10, 10, 100}[s.rng.IntN(6)]
	d := units.Mul(decimal.NewFromInt(scale)).Shift(-3)
	// Cheaper chains see bigger native sizes; keep USD sizes comparable.
	return d.Mul(decimal.NewFromInt(150)).Div(info.priceUSD).Round(9)
}

// swap trades against t's pool and emits the trade, and a snapshot at the pool's first trade of
// the run and every snapshotEvery trades.
func (s *Simulator) swap(ctx context.Context, sink Sink, t *simToken, walletIdx int, side trade.Side, at, h int64) error {
	w, err := s.wallet(ctx, sink, t.info.c, walletIdx)
	if err != nil {
		return err
	}
	var tokenAmt, nativeAmt decimal.Decimal
	if side == trade.Buy {
		nativeAmt = s.nativeIn(t.info)
		out, next, err := t.amm.Swap(nativeAmt, false, feeBps)
		if err != nil {
			return err
		}
		tokenAmt = out.Truncate(t.decimals)
		if !tokenAmt.IsPositive() {
			return nil
		}
		t.amm = next
		t.balances[w] = t.balances[w].Add(tokenAmt)
	} else {
		bal := t.balances[w]
		if !bal.IsPositive() {
			return nil
		}
		// Sell a quarter, half or all of the balance; winners and losers follow from the timing.
		tokenAmt = bal.Mul(decimal.NewFromInt(int64(1 + s.rng.IntN(4)))).Div(decimal.NewFromInt(4)).Truncate(t.decimals)
		if !tokenAmt.IsPositive() {
			return nil
		}
		out, next, err := t.amm.Swap(tokenAmt, true, feeBps)
		if err != nil {
			return err
		}
		nativeAmt = out.Truncate(9)
		t.amm = next
		t.balances[w] = bal.Sub(tokenAmt)
	}
	if !nativeAmt.IsPositive() {
		return nil
	}
	priceNative := nativeAmt.DivRound(tokenAmt, 18)
	usd := nativeAmt.Mul(t.info.priceUSD)
	t.trades++
	tr := trade.Trade{Chain: t.info.c, TransactionSignature: s.txid(t.info.c), InstructionIndex: int32(s.rng.IntN(3)),
		BlockHeight: h, BlockSlot: h, BlockTimestamp: at, Wallet: w, PoolAddress: t.pool, Side: side, Status: trade.Succeeded,
		TokenAddress: t.address, TokenName: t.name, TokenAmount: tokenAmt, TokenAmountInNative: nativeAmt,
		TokenAmountInUSD: usd, TokenPriceInNative: priceNative, TokenPriceInUSD: priceNative.Mul(t.info.priceUSD),
		SideTokenAddress: t.info.native, SideTokenSymbol: t.info.c.Native(), SideTokenAmount: nativeAmt,
		SideTokenAmountInNative: nativeAmt, SideTokenAmountInUSD: usd, SideTokenPriceInNative: decimal.NewFromInt(1),
		SideTokenPriceInUSD: t.info.priceUSD, DexProgramAddress: t.program, DexProtocolFamily: t.family}
	if s.rng.IntN(200) == 0 {
		tr.Status = trade.Failed
	}
	if err := sink.Emit(ctx, chainevent.Trade{Trade: tr}); err != nil {
		return err
	}
	if !t.snapped || t.trades%snapshotEvery == 0 {
		if err := s.snapshot(ctx, sink, t, at, h); err != nil {
			return err
		}
	}
	if !t.migrated && t.amm.ReserveB.GreaterThanOrEqual(t.info.target) {
		return s.migrate(ctx, sink, t, at, h)
	}
	return nil
}

func (s *Simulator) snapshot(ctx context.Context, sink Sink, t *simToken, at, h int64) error {
	t.snapped = true
	priceNative := t.amm.PriceAInB()
	nativeUSD := t.info.priceUSD
	a := t.amm.ReserveA.Truncate(t.decimals)
	b := t.amm.ReserveB.Truncate(9)
	aNative := a.Mul(priceNative).Round(9)
	return sink.Emit(ctx, chainevent.PoolSnapshot{Snapshot: pool.Snapshot{Chain: t.info.c, PoolAddress: t.pool, BlockHeight: h,
		BlockTimestamp: at, SnapshotTime: at,
		TokenA: pool.Side{TokenAddress: t.address, Decimals: t.decimals, AmountInNative: aNative, AmountInUSD: aNative.Mul(nativeUSD),
			PriceNative: priceNative, PriceUSD: priceNative.Mul(nativeUSD), VaultAmount: pool.VaultAmount(a.Shift(t.decimals).String())},
		TokenB: pool.Side{TokenAddress: t.info.native, Decimals: 9, AmountInNative: b, AmountInUSD: b.Mul(nativeUSD),
			PriceNative: decimal.NewFromInt(1), PriceUSD: nativeUSD, VaultAmount: pool.VaultAmount(b.Shift(9).String())},
		TVLInNative: aNative.Add(b), TVLInUSD: aNative.Add(b).Mul(nativeUSD)}})
}

// migrate moves a completed curve's reserves into a new constant-product pool.
func (s *Simulator) migrate(ctx context.Context, sink Sink, t *simToken, at, h int64) error {
	t.migrated = true
	t.pool = s.address(t.info.c)
	t.program, t.family = program(t.info.c, t.lp.migrateFamily), t.lp.migrateFamily
	if err := sink.Emit(ctx, chainevent.PoolCreated{Pool: pool.Pool{Chain: t.info.c, Address: t.pool, ProgramAddress: t.program,
		ProtocolFamily: t.family, ProtocolName: t.lp.migrateName, TokenAAddress: t.address, TokenADecimals: t.decimals,
		TokenBAddress: t.info.native, TokenBDecimals: 9}, At: at}); err != nil {
		return err
	}
	if err := sink.Emit(ctx, chainevent.TokenMigrated{Chain: t.info.c, Address: t.address, PoolAddress: t.pool,
		ProgramAddress: t.program, ProtocolFamily: t.family, At: at}); err != nil {
		return err
	}
	if err := s.snapshot(ctx, sink, t, at, h); err != nil {
		return err
	}
	// The new pool's first trade takes a snapshot of its own.
	t.snapped = false
	return nil
}

// redPackets occasionally opens a packet from a holder, claims from open packets and expires old ones.
func (s *Simulator) redPackets(ctx context.Context, sink Sink, at int64) error {
	open := s.packets[:0]
	for _, p := range s.packets {
		switch {
		case at >= p.p.ExpiredAt:
			if err := sink.Emit(ctx, chainevent.RedPacketExpired{PacketID: p.p.ID, At: at}); err != nil {
				return err
			}
		case int(p.p.ClaimedCount) < int(p.p.MaxClaims) && s.rng.IntN(3) == 0:
			idx := s.pickWallet()
			w, err := s.wallet(ctx, sink, p.p.Chain, idx)
			if err != nil {
				return err
			}
			if !p.claimed[w] {
				p.claimed[w] = true
				p.p.ClaimedCount++
				if err := sink.Emit(ctx, chainevent.RedPacketClaimed{Claim: redpacket.Claim{PacketID: p.p.ID, Claimer: w, Mint: p.p.Mint,
					Chain: p.p.Chain, Amount: p.each, ClaimedAt: at, Creator: p.p.Creator, TxHash: s.txid(p.p.Chain)}}); err != nil {
					return err
				}
			}
			open = append(open, p)
		default:
			open = append(open, p)
		}
	}
	s.packets = open
	if len(s.tokens) == 0 || s.rng.IntN(40) != 0 {
		return nil
	}
	t := s.pickToken()
	maxClaims := int32(2 + s.rng.IntN(8))
	each := decimal.NewFromInt(int64(1+s.rng.IntN(1000)) * 1000)
	// Expirations of one to ten minutes, so a live market shows packets expiring.
	expiration := int64(60 * (1 + s.rng.IntN(10)))
	// A packet's id is its on-chain account.
	p := redpacket.RedPacket{ID: s.address(t.info.c), Creator: t.dev, ClaimAuthority: t.dev, Mint: t.address, Chain: t.info.c,
		MaxClaims: maxClaims, TotalAmount: each.Mul(decimal.NewFromInt(int64(maxClaims))), ClaimedAmount: decimal.Zero,
		RefundedAmount: decimal.Zero, CreatedAt: at, Expiration: expiration, ExpiredAt: redpacket.ExpiresAt(at, expiration),
		Memo: "gm", ShareID: s.hex(8), TxHash: s.txid(t.info.c)}
	s.packets = append(s.packets, &simPacket{p: p, claimed: map[string]bool{}, each: each})
	return sink.Emit(ctx, chainevent.RedPacketCreated{Packet: p})
}

// Step emits one market moment at time at: sometimes a launch, one trade, red packet activity.
func (s *Simulator) Step(ctx context.Context, sink Sink, at time.Time) error {
	ms := at.UnixMilli()
	if ms <= s.lastTime {
		ms = s.lastTime + 1
	}
	s.lastTime = ms
	if len(s.tokens) == 0 || (len(s.tokens) < s.cfg.Tokens*10 && s.rng.IntN(200) == 0) {
		if err := s.launch(ctx, sink, ms); err != nil {
			return err
		}
	}
	if err := s.trade(ctx, sink, ms); err != nil {
		return err
	}
	return s.redPackets(ctx, sink, ms)
}

func (s *Simulator) trade(ctx context.Context, sink Sink, ms int64) error {
	t := s.pickToken()
	idx := s.pickWallet()
	w, err := s.wallet(ctx, sink, t.info.c, idx)
	if err != nil {
		return err
	}
	side := trade.Buy
	if t.balances[w].IsPositive() && s.rng.IntN(5) < 2 {
		side = trade.Sell
	}
	return s.swap(ctx, sink, t, idx, side, ms, height(t.info, ms))
}

// Backfill emits cfg.Tokens launches and cfg.Trades trades spread evenly over [Start, End].
func (s *Simulator) Backfill(ctx context.Context, sink Sink) error {
	start, end := s.cfg.Start.UnixMilli(), s.cfg.End.UnixMilli()
	n := int64(max(s.cfg.Trades, 1))
	span := end - start
	for i := int64(0); i < n; i++ {
		at := start + span*i/n
		if at <= s.lastTime {
			at = s.lastTime + 1
		}
		s.lastTime = at
		for int64(len(s.tokens)) < int64(s.cfg.Tokens) && int64(len(s.tokens))*n <= i*int64(s.cfg.Tokens) {
			if err := s.launch(ctx, sink, at); err != nil {
				return err
			}
		}
		if err := s.trade(ctx, sink, at); err != nil {
			return err
		}
		if i%10 == 0 {
			if err := s.redPackets(ctx, sink, at); err != nil {
				return err
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return sink.Flush(ctx)
}

// Live emits rate steps per second at clock time until ctx ends, flushing after every step so
// each trade is ingested within the tick that made it. Each pool's first live trade is followed
// by a fresh snapshot of it, so the pool snapshots operation answers for every pool the live
// market trades, with its state since the live run began.
func (s *Simulator) Live(ctx context.Context, sink Sink, clock ports.Clock, rate int) error {
	if rate <= 0 {
		rate = 3
	}
	for _, t := range s.tokens {
		t.snapped = false
	}
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			if err := s.Step(ctx, sink, clock.Now()); err != nil {
				return err
			}
			if err := sink.Flush(ctx); err != nil {
				return err
			}
		}
	}
}

// IngestSink batches events into an ingest port.
type IngestSink struct {
	Ingester ports.Ingester
	// BatchSize is how many events go into one call; 0 means 2000.
	BatchSize int
	Total     chainevent.Result
	buf       []chainevent.Event
}

// Emit queues e, flushing a full batch.
func (k *IngestSink) Emit(ctx context.Context, e chainevent.Event) error {
	k.buf = append(k.buf, e)
	size := k.BatchSize
	if size <= 0 {
		size = 2000
	}
	if len(k.buf) >= size {
		return k.Flush(ctx)
	}
	return nil
}

// Flush ingests what is queued.
func (k *IngestSink) Flush(ctx context.Context) error {
	if len(k.buf) == 0 {
		return nil
	}
	res, err := k.Ingester.Ingest(ctx, k.buf)
	if err != nil {
		return fmt.Errorf("simulate: ingest: %w", err)
	}
	k.Total = k.Total.Add(res)
	k.buf = k.buf[:0]
	return nil
}

// Encoder writes one event to a file or stream; adapters/ndjson's Encoder is the one
// `tokenscope simulate` writes with.
type Encoder interface {
	Encode(e chainevent.Event) error
}

// EncoderSink writes events through an Encoder (NDJSON, for `tokenscope import` to read back).
type EncoderSink struct{ Enc Encoder }

// Emit writes e.
func (k EncoderSink) Emit(_ context.Context, e chainevent.Event) error { return k.Enc.Encode(e) }

// Flush does nothing; the caller owns the writer.
func (k EncoderSink) Flush(context.Context) error { return nil }
