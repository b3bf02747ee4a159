package stream

import (
	"encoding/json"
	"maps"
	"sort"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/app/market"
	"github.com/tokenscope/tokenscope/domain/pnl"
	"github.com/tokenscope/tokenscope/domain/pool"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/domain/trade"
)

// msg is one publication's payload with the reference's abbreviated keys. Decimals are JSON
// strings (dec keys accept them and keep the exact text), counts and timestamps JSON numbers
// (int64), text JSON strings: the STR!/NUM! keys the client asserts unchecked are never null and
// never of the other type, and are left out rather than sent empty when unknown.
type msg map[string]any

func dec(d decimal.Decimal) string { return d.String() }

// tags flattens m into the publication tags a filter matches: nested objects as `sm.tw`, every
// value as its text (decimals are already text, numbers in base 10).
func tags(m msg) map[string]string {
	out := make(map[string]string, len(m))
	var walk func(prefix string, m msg)
	walk = func(prefix string, m msg) {
		for k, v := range m {
			switch x := v.(type) {
			case string:
				out[prefix+k] = x
			case int64:
				out[prefix+k] = strconv.FormatInt(x, 10)
			case int:
				out[prefix+k] = strconv.Itoa(x)
			case bool:
				out[prefix+k] = strconv.FormatBool(x)
			case msg:
				walk(prefix+k+".", x)
			}
		}
	}
	walk("", m)
	return out
}

func encode(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only maps of strings, numbers and nested maps: cannot fail
	}
	return b
}

// tradeMsg is a dex-trade / dex-wallet-trade message (reference 2.12): the buy side is what the
// wallet received, the sell side what it paid.
func tradeMsg(t trade.Trade) msg {
	buyAddr, buyName, buySym, buyAmt, buyUSD := t.TokenAddress, t.TokenName, t.TokenSymbol, t.TokenAmount, t.TokenAmountInUSD
	sellAddr, sellName, sellSym, sellAmt, sellUSD := t.SideTokenAddress, t.SideTokenName, t.SideTokenSymbol, t.SideTokenAmount, t.SideTokenAmountInUSD
	if t.Side == trade.Sell {
		buyAddr, sellAddr = sellAddr, buyAddr
		buyName, sellName = sellName, buyName
		buySym, sellSym = sellSym, buySym
		buyAmt, sellAmt = sellAmt, buyAmt
		buyUSD, sellUSD = sellUSD, buyUSD
	}
	return msg{
		"a": t.TokenAddress, "t": t.BlockTimestamp, "k": strings.ToLower(string(t.Side)), "h": t.TransactionSignature,
		"ba": dec(buyAmt), "baiu": dec(buyUSD), "btma": buyAddr, "btn": buyName, "bts": buySym, "bwa": t.Wallet,
		"sa": dec(sellAmt), "saiu": dec(sellUSD), "stma": sellAddr, "stn": sellName, "sts": sellSym, "swa": t.Wallet,
	}
}

// newTokenMsg is a dex-new-token message and an element of the new-tokens lists (2.5, 2.6).
func newTokenMsg(tk token.Token, now int64) msg {
	m := msg{"a": tk.Address, "n": tk.Name, "s": tk.Symbol, "dec": int64(tk.Decimals), "cts": now}
	if tk.CreatedAt != nil {
		m["cts"] = *tk.CreatedAt
	}
	if tk.ImageURL != "" {
		m["iu"] = tk.ImageURL
	}
	if tk.Description != "" {
		m["de"] = tk.Description
	}
	if tk.VendorCoinID != "" {
		m["cgi"] = tk.VendorCoinID
	}
	if sm := socialsMsg(tk.Socials); len(sm) > 0 {
		m["sm"] = sm
	}
	if lf := protocolMsg(tk.Extra.LaunchFromProgramAddress, tk.Extra.LaunchFromProtocolFamily, string(tk.LaunchpadTag)); len(lf) > 0 {
		m["lf"] = lf
	}
	if mt := protocolMsg(tk.Extra.MigratedToProgramAddress, tk.Extra.MigratedToProtocolFamily, ""); len(mt) > 0 {
		m["mt"] = mt
	}
	return m
}

// protocolMsg is an `lf` / `mt` object (2.5): the program address and protocol family as the
// token's extra serves them over REST (launchFrom…, migratedTo…), and the launchpad id as the
// protocol name; a key without a value is left out (the client asserts them unchecked).
func protocolMsg(program, family, name string) msg {
	out := msg{}
	for k, v := range map[string]string{"pa": program, "pf": family, "pn": name} {
		if v != "" {
			out[k] = v
		}
	}
	return out
}

// socialKeys maps the API's social keys to the stream's (2.5).
var socialKeys = map[string]string{
	token.SocialTwitter: "tw", token.SocialTelegram: "tg", token.SocialWebsite: "w", token.SocialTiktok: "tt",
	token.SocialDiscord: "dc", token.SocialFacebook: "fb", token.SocialGithub: "gh", token.SocialInstagram: "ig",
	token.SocialLinkedin: "li", token.SocialMedium: "md", token.SocialTheService: "rd", token.SocialYoutube: "yt",
	token.SocialBitbucket: "bb",
}

func socialsMsg(s token.Socials) msg {
	out := msg{}
	for k, v := range s.Map() {
		if short, ok := socialKeys[k]; ok && v != "" {
			out[short] = v
		}
	}
	return out
}

// poolBalanceMsg is a dex-pool-balance message (2.13).
func poolBalanceMsg(s pool.Snapshot) msg {
	return msg{"a": s.PoolAddress, "taa": s.TokenA.TokenAddress, "taliu": dec(s.TokenA.AmountInUSD),
		"tba": s.TokenB.TokenAddress, "tbliu": dec(s.TokenB.AmountInUSD)}
}

// statsMsg is a dex-token-stats message (2.3): every window tokenscope keeps.
func statsMsg(d token.Detail, now int64) msg {
	m := msg{"a": d.Address, "t": now, "p": dec(d.MarketData.PriceInUSD)}
	for _, w := range token.AllWindows {
		s, ok := d.Stats[w]
		if !ok {
			continue
		}
		sfx := string(w)
		m["b"+sfx], m["s"+sfx], m["be"+sfx], m["se"+sfx], m["tr"+sfx] = s.Buys, s.Sells, s.Buyers, s.Sellers, s.Trades
		m["bviu"+sfx], m["sviu"+sfx] = dec(s.BuyVolumeInUSD), dec(s.SellVolumeInUSD)
		m["p"+sfx], m["oiu"+sfx], m["ciu"+sfx] = dec(s.CloseInUSD), dec(s.OpenInUSD), dec(s.CloseInUSD)
		m["liq"+sfx], m["pc"+sfx] = dec(s.CurrentLiquidityInUSD), int64(len(d.Pools))
	}
	return m
}

// holdingMsg is a dex-token-holding message (2.4).
func holdingMsg(d token.Detail, now int64) msg {
	md := d.MarketData
	dev := md.Group(token.Dev)
	return msg{"a": d.Address, "ts": now, "h": md.Holders.IntPart(),
		"t100a": dec(md.Top100.TotalHoldings), "t10a": dec(md.Top10.TotalHoldings),
		"t100r": dec(md.Top100.HoldingsRatio), "t10r": dec(md.Top10.HoldingsRatio),
		"t100h": min(md.Holders.IntPart(), 100), "t10h": min(md.Holders.IntPart(), 10),
		"ch": dev.TotalHolders.IntPart(), "ca": dec(dev.TotalHoldings), "cr": dec(dev.HoldingsRatio)}
}

// supplyMsg is a dex-token-supply message (2.7).
func supplyMsg(d token.Detail, now int64) msg {
	return msg{"a": d.Address, "ts": now, "s": dec(d.MarketData.TotalSupply), "mc": dec(d.MarketData.MarketCapInUSD)}
}

// statNumMsg is a dex-token-general-stat-num message (2.8): the liquidity metric.
func statNumMsg(d token.Detail, now int64) msg {
	return msg{"a": d.Address, "t": "liquidity_in_usd", "v": dec(d.MarketData.TotalTVLInUSD), "ts": now}
}

// maxLiquidityMsg is a dex-token-liquidity message (2.8): the largest pool.
func maxLiquidityMsg(d token.Detail, now int64) msg {
	m := msg{"a": d.Address, "liu": dec(d.MarketData.MaxPoolTVLInUSD), "lin": dec(d.MarketData.MaxPoolTVLInSol), "ts": now}
	var best *token.PoolLiquidity
	for i := range d.Pools {
		if best == nil || d.Pools[i].TVLInUSD.GreaterThan(best.TVLInUSD) {
			best = &d.Pools[i]
		}
	}
	if best != nil {
		m["p"] = best.PoolAddress
	}
	return m
}

// totalLiquidityMsg is a dex-token-total-liquidity message (2.8).
func totalLiquidityMsg(d token.Detail, now int64) msg {
	return msg{"a": d.Address, "liu": dec(d.MarketData.TotalTVLInUSD), "lin": dec(d.MarketData.TotalTVLInSol),
		"pc": int64(len(d.Pools)), "ts": now}
}

// walletBalanceMsg is a dex-wallet-balance message (2.9).
func walletBalanceMsg(e pnl.Entry, now int64) msg {
	return msg{"a": e.WalletAddress, "ta": e.TokenAddress, "tpiu": dec(e.PriceInUSD), "b": dec(e.Balance), "t": now}
}

// walletTokenPnLMsg is a dex-wallet-token-pnl message (2.10): e is the whole-history entry;
// the 7d/30d counts are those of the token's entries in w7 and w30 (none: no trade in the period).
// ot is the first buy, lt the newest trade of either side, ct the last sell of a closed position;
// hdts is how long the position has been held, in ms: from the first buy to its close, or to t
// while it is open.
func walletTokenPnLMsg(e pnl.Entry, w7, w30 market.PnLPeriod, now int64) msg {
	m := msg{"a": e.WalletAddress, "ta": e.TokenAddress, "t": now, "bs": e.Buys, "ss": e.Sells,
		"tpiu": dec(e.PriceInUSD), "ba": dec(e.BuyAmount), "baiu": dec(e.BuyAmountInUSD),
		"sa": dec(e.SellAmount), "saiu": dec(e.SellAmountInUSD), "abpiu": dec(e.AvgBuyPriceInUSD),
		"aspiu": dec(e.AvgSellPriceInUSD), "upiu": dec(e.UnrealizedProfitInUSD), "upr": dec(e.UnrealizedProfitRatio),
		"rpiu": dec(e.RealizedProfitInUSD), "rpr": dec(e.RealizedProfitRatio), "trpiu": dec(e.TotalProfitInUSD),
		"trr": dec(e.TotalProfitRatio)}
	for _, w := range []struct {
		suffix string
		p      market.PnLPeriod
	}{{"7d", w7}, {"30d", w30}} {
		var buys, sells int64
		for _, pe := range w.p.Entries {
			if pe.TokenAddress == e.TokenAddress {
				buys, sells = pe.Buys, pe.Sells
			}
		}
		m["bs"+w.suffix], m["ss"+w.suffix] = buys, sells
	}
	if e.LastTradeAt != nil {
		m["lt"] = *e.LastTradeAt
	}
	closedAt := int64(-1)
	if e.IsClosed && e.LastSellAt != nil {
		closedAt = *e.LastSellAt
		m["ct"] = closedAt
	}
	if e.FirstBuyAt != nil {
		m["ot"] = *e.FirstBuyAt
		end := now
		if closedAt >= 0 {
			end = closedAt
		}
		m["hdts"] = max(end-*e.FirstBuyAt, 0)
	}
	return m
}

// walletPnLListMsg is the dex-wallet-pnl-list array (2.11): one summary per resolution, each
// over its period (market.PnLPeriods). ba and sa add up token amounts, abpiu is baiu / ba: across
// several tokens these mix units, as the client's wallet-level fields do. pd/ld count the
// period's UTC days with a positive / negative realized profit (market.PnLPeriod).
func walletPnLListMsg(wallet string, periods []market.PnLPeriod) []msg {
	out := make([]msg, 0, len(periods))
	for _, p := range periods {
		s := p.Summary
		out = append(out, msg{"a": wallet, "bs": s.Buys, "ss": s.Sells, "ba": dec(s.BuyAmount), "baiu": dec(s.BuyAmountInUSD),
			"abpiu": dec(s.AvgBuyPriceInUSD), "sa": dec(s.SellAmount), "saiu": dec(s.SellAmountInUSD), "ws": s.Wins,
			"wr": dec(s.WinRate), "piu": dec(s.TotalProfitInUSD), "apiu": dec(s.AvgProfitPerTradeInUSD),
			"pr": dec(s.RealizedProfitRatio), "ts": s.Tokens, "pd": p.ProfitableDays, "ld": p.LosingDays, "r": string(p.Resolution)})
	}
	return out
}

// periodOf is the period of r among periods (market.PnLPeriods gives every resolution).
func periodOf(periods []market.PnLPeriod, r pnl.Resolution) market.PnLPeriod {
	for _, p := range periods {
		if p.Resolution == r {
			return p
		}
	}
	return market.PnLPeriod{Resolution: r}
}

// rankingMsgs builds the array of a ranking kind from the board's tokens (2.14).
func rankingMsgs(prefix string, ds []token.Detail, now int64) []msg {
	out := make([]msg, 0, len(ds))
	for _, d := range ds {
		md := d.MarketData
		switch prefix {
		case KindRankStats:
			s := d.Stats[token.Window1m]
			out = append(out, msg{"a": d.Address, "t": now, "b1m": s.Buys, "s1m": s.Sells,
				"bviu1m": dec(s.BuyVolumeInUSD), "sviu1m": dec(s.SellVolumeInUSD), "p": dec(md.PriceInUSD)})
		case KindRankHolding:
			out = append(out, msg{"a": d.Address, "ts": now, "h": md.Holders.IntPart(),
				"t100a": dec(md.Top100.TotalHoldings), "t10a": dec(md.Top10.TotalHoldings)})
		case KindRankSupply:
			out = append(out, supplyMsg(d, now))
		case KindRankStatNum:
			out = append(out, statNumMsg(d, now))
		case KindRankBondingCurve:
			out = append(out, msg{"a": d.Address, "pr": dec(md.CompletionRatio)})
		case KindRankList:
			meta := msg{"a": d.Address, "n": d.Name, "s": d.Symbol}
			if d.ImageURL != "" {
				meta["iu"] = d.ImageURL
			}
			if d.CreatedAt != nil {
				meta["cts"] = *d.CreatedAt
			}
			out = append(out, msg{"t": meta, "bc": msg{"pr": dec(md.CompletionRatio)},
				"s":  msg{"a": d.Address, "s": dec(md.TotalSupply), "mc": dec(md.MarketCapInUSD), "ts": now},
				"ts": msg{"a": d.Address, "p": dec(md.PriceInUSD)},
				"h":  msg{"a": d.Address, "h": md.Holders.IntPart(), "ts": now}})
		}
	}
	return out
}

// sortedKeys is m's keys in order (tests and deterministic iteration).
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range maps.Keys(m) {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
