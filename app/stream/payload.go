package stream

import (
	"bytes"
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

// The channel payloads are typed structs with the reference's abbreviated keys, declared in
// key order (the order of the maps they were built from before, so the bytes are the same),
// encoded by encoding/json as every JSON body of the service is. Decimals are JSON strings (dec
// keys accept them and keep the exact text), counts and timestamps JSON numbers (int64), text
// JSON strings: the STR!/NUM! keys the client asserts unchecked are never null and never of the
// other type, and are left out (omitempty) rather than sent empty when unknown.

func dec(d decimal.Decimal) string { return d.String() }

func encode(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only strings, integers, maps of them and nested payloads: cannot fail
	}
	return b
}

// tags flattens an encoded payload object into the publication tags a filter matches: nested
// objects as `sm.tw`, every value as its text (decimals are already text, numbers in base 10).
func tags(payload []byte) map[string]string {
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(payload))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		panic(err) // encode's output: a JSON object
	}
	out := make(map[string]string, len(m))
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			switch x := v.(type) {
			case string:
				out[prefix+k] = x
			case json.Number:
				out[prefix+k] = x.String()
			case bool:
				out[prefix+k] = strconv.FormatBool(x)
			case map[string]any:
				walk(prefix+k+".", x)
			}
		}
	}
	walk("", m)
	return out
}

// tradeMsg is a dex-trade / dex-wallet-trade message (reference 2.12): the buy side is what the
// wallet received, the sell side what it paid.
type tradeMsg struct {
	A    string `json:"a"`
	BA   string `json:"ba"`
	BAIU string `json:"baiu"`
	BTMA string `json:"btma"`
	BTN  string `json:"btn"`
	BTS  string `json:"bts"`
	BWA  string `json:"bwa"`
	H    string `json:"h"`
	K    string `json:"k"`
	SA   string `json:"sa"`
	SAIU string `json:"saiu"`
	STMA string `json:"stma"`
	STN  string `json:"stn"`
	STS  string `json:"sts"`
	SWA  string `json:"swa"`
	T    int64  `json:"t"`
}

func tradeMsgOf(t trade.Trade) tradeMsg {
	buyAddr, buyName, buySym, buyAmt, buyUSD := t.TokenAddress, t.TokenName, t.TokenSymbol, t.TokenAmount, t.TokenAmountInUSD
	sellAddr, sellName, sellSym, sellAmt, sellUSD := t.SideTokenAddress, t.SideTokenName, t.SideTokenSymbol, t.SideTokenAmount, t.SideTokenAmountInUSD
	if t.Side == trade.Sell {
		buyAddr, sellAddr = sellAddr, buyAddr
		buyName, sellName = sellName, buyName
		buySym, sellSym = sellSym, buySym
		buyAmt, sellAmt = sellAmt, buyAmt
		buyUSD, sellUSD = sellUSD, buyUSD
	}
	return tradeMsg{
		A: t.TokenAddress, T: t.BlockTimestamp, K: strings.ToLower(string(t.Side)), H: t.TransactionSignature,
		BA: dec(buyAmt), BAIU: dec(buyUSD), BTMA: buyAddr, BTN: buyName, BTS: buySym, BWA: t.Wallet,
		SA: dec(sellAmt), SAIU: dec(sellUSD), STMA: sellAddr, STN: sellName, STS: sellSym, SWA: t.Wallet,
	}
}

// newTokenMsg is a dex-new-token message and an element of the new-tokens lists (2.5, 2.6).
type newTokenMsg struct {
	A   string            `json:"a"`
	CGI string            `json:"cgi,omitempty"`
	CTS int64             `json:"cts"`
	DE  string            `json:"de,omitempty"`
	Dec int64             `json:"dec"`
	IU  string            `json:"iu,omitempty"`
	LF  *protocolMsg      `json:"lf,omitempty"`
	MT  *protocolMsg      `json:"mt,omitempty"`
	N   string            `json:"n"`
	S   string            `json:"s"`
	SM  map[string]string `json:"sm,omitempty"`
}

func newTokenMsgOf(tk token.Token, now int64) newTokenMsg {
	m := newTokenMsg{A: tk.Address, N: tk.Name, S: tk.Symbol, Dec: int64(tk.Decimals), CTS: now, IU: tk.ImageURL,
		DE: tk.Description, CGI: tk.VendorCoinID, SM: socialsMsg(tk.Socials),
		LF: protocolMsgOf(tk.Extra.LaunchFromProgramAddress, tk.Extra.LaunchFromProtocolFamily, string(tk.LaunchpadTag)),
		MT: protocolMsgOf(tk.Extra.MigratedToProgramAddress, tk.Extra.MigratedToProtocolFamily, "")}
	if tk.CreatedAt != nil {
		m.CTS = *tk.CreatedAt
	}
	return m
}

// protocolMsg is an `lf` / `mt` object (2.5): the program address and protocol family as the
// token's extra serves them over REST (launchFrom…, migratedTo…), and the launchpad id as the
// protocol name; a key without a value is left out (the client asserts them unchecked).
type protocolMsg struct {
	PA string `json:"pa,omitempty"`
	PF string `json:"pf,omitempty"`
	PN string `json:"pn,omitempty"`
}

// protocolMsgOf is the object, nil (left out) when it would be empty.
func protocolMsgOf(program, family, name string) *protocolMsg {
	if program == "" && family == "" && name == "" {
		return nil
	}
	return &protocolMsg{PA: program, PF: family, PN: name}
}

// socialKeys maps the API's social keys to the stream's (2.5).
var socialKeys = map[string]string{
	token.SocialTwitter: "tw", token.SocialTelegram: "tg", token.SocialWebsite: "w", token.SocialTiktok: "tt",
	token.SocialDiscord: "dc", token.SocialFacebook: "fb", token.SocialGithub: "gh", token.SocialInstagram: "ig",
	token.SocialLinkedin: "li", token.SocialMedium: "md", token.SocialTheService: "rd", token.SocialYoutube: "yt",
	token.SocialBitbucket: "bb",
}

// socialsMsg is the `sm` object: each link under its stream key (nil, left out, when none).
func socialsMsg(s token.Socials) map[string]string {
	var out map[string]string
	for k, v := range s.Map() {
		if short, ok := socialKeys[k]; ok && v != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[short] = v
		}
	}
	return out
}

// poolBalanceMsg is a dex-pool-balance message (2.13).
type poolBalanceMsg struct {
	A     string `json:"a"`
	TAA   string `json:"taa"`
	TALIU string `json:"taliu"`
	TBA   string `json:"tba"`
	TBLIU string `json:"tbliu"`
}

func poolBalanceMsgOf(s pool.Snapshot) poolBalanceMsg {
	return poolBalanceMsg{A: s.PoolAddress, TAA: s.TokenA.TokenAddress, TALIU: dec(s.TokenA.AmountInUSD),
		TBA: s.TokenB.TokenAddress, TBLIU: dec(s.TokenB.AmountInUSD)}
}

// statsMsg is a dex-token-stats message (2.3): a, p and t, and for each window the token has
// stats of, that window's members, named by the field and the window (`b1m`, `bviu24h`, …). Each
// window is an embedded pointer, left out when nil (a window the token has no stats of); its
// members are those of windowMsg, under the tags of its own type. The one payload not in key
// order: its members come window by window (they were sorted when it was built as a map; a
// JSON object's member order carries no meaning, and the client decodes by name).
type statsMsg struct {
	A string `json:"a"`
	P string `json:"p"`
	T int64  `json:"t"`
	*stats1m
	*stats5m
	*stats15m
	*stats30m
	*stats1h
	*stats4h
	*stats24h
}

// windowMsg is one window's members of a statsMsg. The stats… types below are the same struct
// with each window's tags: a conversion turns one into another, so a member is added here and
// in each of them, and the compiler refuses a window type that differs from windowMsg.
type windowMsg struct {
	B    int64
	S    int64
	BE   int64
	SE   int64
	TR   int64
	BVIU string
	SVIU string
	P    string
	OIU  string
	CIU  string
	LIQ  string
	PC   int64
}

type stats1m struct {
	B    int64  `json:"b1m"`
	S    int64  `json:"s1m"`
	BE   int64  `json:"be1m"`
	SE   int64  `json:"se1m"`
	TR   int64  `json:"tr1m"`
	BVIU string `json:"bviu1m"`
	SVIU string `json:"sviu1m"`
	P    string `json:"p1m"`
	OIU  string `json:"oiu1m"`
	CIU  string `json:"ciu1m"`
	LIQ  string `json:"liq1m"`
	PC   int64  `json:"pc1m"`
}

type stats5m struct {
	B    int64  `json:"b5m"`
	S    int64  `json:"s5m"`
	BE   int64  `json:"be5m"`
	SE   int64  `json:"se5m"`
	TR   int64  `json:"tr5m"`
	BVIU string `json:"bviu5m"`
	SVIU string `json:"sviu5m"`
	P    string `json:"p5m"`
	OIU  string `json:"oiu5m"`
	CIU  string `json:"ciu5m"`
	LIQ  string `json:"liq5m"`
	PC   int64  `json:"pc5m"`
}

type stats15m struct {
	B    int64  `json:"b15m"`
	S    int64  `json:"s15m"`
	BE   int64  `json:"be15m"`
	SE   int64  `json:"se15m"`
	TR   int64  `json:"tr15m"`
	BVIU string `json:"bviu15m"`
	SVIU string `json:"sviu15m"`
	P    string `json:"p15m"`
	OIU  string `json:"oiu15m"`
	CIU  string `json:"ciu15m"`
	LIQ  string `json:"liq15m"`
	PC   int64  `json:"pc15m"`
}

type stats30m struct {
	B    int64  `json:"b30m"`
	S    int64  `json:"s30m"`
	BE   int64  `json:"be30m"`
	SE   int64  `json:"se30m"`
	TR   int64  `json:"tr30m"`
	BVIU string `json:"bviu30m"`
	SVIU string `json:"sviu30m"`
	P    string `json:"p30m"`
	OIU  string `json:"oiu30m"`
	CIU  string `json:"ciu30m"`
	LIQ  string `json:"liq30m"`
	PC   int64  `json:"pc30m"`
}

type stats1h struct {
	B    int64  `json:"b1h"`
	S    int64  `json:"s1h"`
	BE   int64  `json:"be1h"`
	SE   int64  `json:"se1h"`
	TR   int64  `json:"tr1h"`
	BVIU string `json:"bviu1h"`
	SVIU string `json:"sviu1h"`
	P    string `json:"p1h"`
	OIU  string `json:"oiu1h"`
	CIU  string `json:"ciu1h"`
	LIQ  string `json:"liq1h"`
	PC   int64  `json:"pc1h"`
}

type stats4h struct {
	B    int64  `json:"b4h"`
	S    int64  `json:"s4h"`
	BE   int64  `json:"be4h"`
	SE   int64  `json:"se4h"`
	TR   int64  `json:"tr4h"`
	BVIU string `json:"bviu4h"`
	SVIU string `json:"sviu4h"`
	P    string `json:"p4h"`
	OIU  string `json:"oiu4h"`
	CIU  string `json:"ciu4h"`
	LIQ  string `json:"liq4h"`
	PC   int64  `json:"pc4h"`
}

type stats24h struct {
	B    int64  `json:"b24h"`
	S    int64  `json:"s24h"`
	BE   int64  `json:"be24h"`
	SE   int64  `json:"se24h"`
	TR   int64  `json:"tr24h"`
	BVIU string `json:"bviu24h"`
	SVIU string `json:"sviu24h"`
	P    string `json:"p24h"`
	OIU  string `json:"oiu24h"`
	CIU  string `json:"ciu24h"`
	LIQ  string `json:"liq24h"`
	PC   int64  `json:"pc24h"`
}

func statsMsgOf(d token.Detail, now int64) statsMsg {
	m := statsMsg{A: d.Address, T: now, P: dec(d.MarketData.PriceInUSD)}
	for w, s := range d.Stats {
		v := &windowMsg{B: s.Buys, S: s.Sells, BE: s.Buyers, SE: s.Sellers, TR: s.Trades,
			BVIU: dec(s.BuyVolumeInUSD), SVIU: dec(s.SellVolumeInUSD), P: dec(s.CloseInUSD),
			OIU: dec(s.OpenInUSD), CIU: dec(s.CloseInUSD), LIQ: dec(s.CurrentLiquidityInUSD), PC: int64(len(d.Pools))}
		switch w {
		case token.Window1m:
			m.stats1m = (*stats1m)(v)
		case token.Window5m:
			m.stats5m = (*stats5m)(v)
		case token.Window15m:
			m.stats15m = (*stats15m)(v)
		case token.Window30m:
			m.stats30m = (*stats30m)(v)
		case token.Window1h:
			m.stats1h = (*stats1h)(v)
		case token.Window4h:
			m.stats4h = (*stats4h)(v)
		case token.Window24h:
			m.stats24h = (*stats24h)(v)
		}
	}
	return m
}

// holdingMsg is a dex-token-holding message (2.4).
type holdingMsg struct {
	A     string `json:"a"`
	CA    string `json:"ca"`
	CH    int64  `json:"ch"`
	CR    string `json:"cr"`
	H     int64  `json:"h"`
	T100A string `json:"t100a"`
	T100H int64  `json:"t100h"`
	T100R string `json:"t100r"`
	T10A  string `json:"t10a"`
	T10H  int64  `json:"t10h"`
	T10R  string `json:"t10r"`
	TS    int64  `json:"ts"`
}

func holdingMsgOf(d token.Detail, now int64) holdingMsg {
	md := d.MarketData
	dev := md.Group(token.Dev)
	return holdingMsg{A: d.Address, TS: now, H: md.Holders.IntPart(),
		T100A: dec(md.Top100.TotalHoldings), T10A: dec(md.Top10.TotalHoldings),
		T100R: dec(md.Top100.HoldingsRatio), T10R: dec(md.Top10.HoldingsRatio),
		T100H: min(md.Holders.IntPart(), 100), T10H: min(md.Holders.IntPart(), 10),
		CH: dev.TotalHolders.IntPart(), CA: dec(dev.TotalHoldings), CR: dec(dev.HoldingsRatio)}
}

// supplyMsg is a dex-token-supply message (2.7).
type supplyMsg struct {
	A  string `json:"a"`
	MC string `json:"mc"`
	S  string `json:"s"`
	TS int64  `json:"ts"`
}

func supplyMsgOf(d token.Detail, now int64) supplyMsg {
	return supplyMsg{A: d.Address, TS: now, S: dec(d.MarketData.TotalSupply), MC: dec(d.MarketData.MarketCapInUSD)}
}

// statNumMsg is a dex-token-general-stat-num message (2.8): the liquidity metric.
type statNumMsg struct {
	A  string `json:"a"`
	T  string `json:"t"`
	TS int64  `json:"ts"`
	V  string `json:"v"`
}

func statNumMsgOf(d token.Detail, now int64) statNumMsg {
	return statNumMsg{A: d.Address, T: "liquidity_in_usd", V: dec(d.MarketData.TotalTVLInUSD), TS: now}
}

// maxLiquidityMsg is a dex-token-liquidity message (2.8): the largest pool. p is the largest
// pool's address, left out only when the token has no pool (an empty address is sent as "").
type maxLiquidityMsg struct {
	A   string  `json:"a"`
	LIN string  `json:"lin"`
	LIU string  `json:"liu"`
	P   *string `json:"p,omitempty"`
	TS  int64   `json:"ts"`
}

func maxLiquidityMsgOf(d token.Detail, now int64) maxLiquidityMsg {
	m := maxLiquidityMsg{A: d.Address, LIU: dec(d.MarketData.MaxPoolTVLInUSD), LIN: dec(d.MarketData.MaxPoolTVLInSol), TS: now}
	var best *token.PoolLiquidity
	for i := range d.Pools {
		if best == nil || d.Pools[i].TVLInUSD.GreaterThan(best.TVLInUSD) {
			best = &d.Pools[i]
		}
	}
	if best != nil {
		p := best.PoolAddress
		m.P = &p
	}
	return m
}

// totalLiquidityMsg is a dex-token-total-liquidity message (2.8).
type totalLiquidityMsg struct {
	A   string `json:"a"`
	LIN string `json:"lin"`
	LIU string `json:"liu"`
	PC  int64  `json:"pc"`
	TS  int64  `json:"ts"`
}

func totalLiquidityMsgOf(d token.Detail, now int64) totalLiquidityMsg {
	return totalLiquidityMsg{A: d.Address, LIU: dec(d.MarketData.TotalTVLInUSD), LIN: dec(d.MarketData.TotalTVLInSol),
		PC: int64(len(d.Pools)), TS: now}
}

// walletBalanceMsg is a dex-wallet-balance message (2.9).
type walletBalanceMsg struct {
	A    string `json:"a"`
	B    string `json:"b"`
	T    int64  `json:"t"`
	TA   string `json:"ta"`
	TPIU string `json:"tpiu"`
}

func walletBalanceMsgOf(e pnl.Entry, now int64) walletBalanceMsg {
	return walletBalanceMsg{A: e.WalletAddress, TA: e.TokenAddress, TPIU: dec(e.PriceInUSD), B: dec(e.Balance), T: now}
}

// walletTokenPnLMsg is a dex-wallet-token-pnl message (2.10): e is the whole-history entry;
// the 7d/30d counts are those of the token's entries in w7 and w30 (none: no trade in the period).
// ot is the first buy, lt the newest trade of either side, ct the last sell of a closed position;
// hdts is how long the position has been held, in ms: from the first buy to its close, or to t
// while it is open.
type walletTokenPnLMsg struct {
	A     string `json:"a"`
	ABPIU string `json:"abpiu"`
	ASPIU string `json:"aspiu"`
	BA    string `json:"ba"`
	BAIU  string `json:"baiu"`
	BS    int64  `json:"bs"`
	BS30D int64  `json:"bs30d"`
	BS7D  int64  `json:"bs7d"`
	CT    *int64 `json:"ct,omitempty"`
	HDTS  *int64 `json:"hdts,omitempty"`
	LT    *int64 `json:"lt,omitempty"`
	OT    *int64 `json:"ot,omitempty"`
	RPIU  string `json:"rpiu"`
	RPR   string `json:"rpr"`
	SA    string `json:"sa"`
	SAIU  string `json:"saiu"`
	SS    int64  `json:"ss"`
	SS30D int64  `json:"ss30d"`
	SS7D  int64  `json:"ss7d"`
	T     int64  `json:"t"`
	TA    string `json:"ta"`
	TPIU  string `json:"tpiu"`
	TRPIU string `json:"trpiu"`
	TRR   string `json:"trr"`
	UPIU  string `json:"upiu"`
	UPR   string `json:"upr"`
}

func walletTokenPnLMsgOf(e pnl.Entry, w7, w30 market.PnLPeriod, now int64) walletTokenPnLMsg {
	m := walletTokenPnLMsg{A: e.WalletAddress, TA: e.TokenAddress, T: now, BS: e.Buys, SS: e.Sells,
		TPIU: dec(e.PriceInUSD), BA: dec(e.BuyAmount), BAIU: dec(e.BuyAmountInUSD),
		SA: dec(e.SellAmount), SAIU: dec(e.SellAmountInUSD), ABPIU: dec(e.AvgBuyPriceInUSD),
		ASPIU: dec(e.AvgSellPriceInUSD), UPIU: dec(e.UnrealizedProfitInUSD), UPR: dec(e.UnrealizedProfitRatio),
		RPIU: dec(e.RealizedProfitInUSD), RPR: dec(e.RealizedProfitRatio), TRPIU: dec(e.TotalProfitInUSD),
		TRR: dec(e.TotalProfitRatio), LT: e.LastTradeAt}
	m.BS7D, m.SS7D = periodCounts(w7, e.TokenAddress)
	m.BS30D, m.SS30D = periodCounts(w30, e.TokenAddress)
	closedAt := int64(-1)
	if e.IsClosed && e.LastSellAt != nil {
		closedAt = *e.LastSellAt
		m.CT = &closedAt
	}
	if e.FirstBuyAt != nil {
		m.OT = e.FirstBuyAt
		end := now
		if closedAt >= 0 {
			end = closedAt
		}
		held := max(end-*e.FirstBuyAt, 0)
		m.HDTS = &held
	}
	return m
}

// periodCounts is the buys and sells of token in p (0 and 0 without a trade in the period).
func periodCounts(p market.PnLPeriod, token string) (buys, sells int64) {
	for _, pe := range p.Entries {
		if pe.TokenAddress == token {
			buys, sells = pe.Buys, pe.Sells
		}
	}
	return buys, sells
}

// walletPnLMsg is an element of the dex-wallet-pnl-list array (2.11): one summary per
// resolution, each over its period (market.PnLPeriods). ba and sa add up token amounts, abpiu is
// baiu / ba: across several tokens these mix units, as the client's wallet-level fields do.
// pd/ld count the period's UTC days with a positive / negative realized profit (market.PnLPeriod).
type walletPnLMsg struct {
	A     string `json:"a"`
	ABPIU string `json:"abpiu"`
	APIU  string `json:"apiu"`
	BA    string `json:"ba"`
	BAIU  string `json:"baiu"`
	BS    int64  `json:"bs"`
	LD    int64  `json:"ld"`
	PD    int64  `json:"pd"`
	PIU   string `json:"piu"`
	PR    string `json:"pr"`
	R     string `json:"r"`
	SA    string `json:"sa"`
	SAIU  string `json:"saiu"`
	SS    int64  `json:"ss"`
	TS    int64  `json:"ts"`
	WR    string `json:"wr"`
	WS    int64  `json:"ws"`
}

func walletPnLListMsg(wallet string, periods []market.PnLPeriod) []walletPnLMsg {
	out := make([]walletPnLMsg, 0, len(periods))
	for _, p := range periods {
		s := p.Summary
		out = append(out, walletPnLMsg{A: wallet, BS: s.Buys, SS: s.Sells, BA: dec(s.BuyAmount), BAIU: dec(s.BuyAmountInUSD),
			ABPIU: dec(s.AvgBuyPriceInUSD), SA: dec(s.SellAmount), SAIU: dec(s.SellAmountInUSD), WS: s.Wins,
			WR: dec(s.WinRate), PIU: dec(s.TotalProfitInUSD), APIU: dec(s.AvgProfitPerTradeInUSD),
			PR: dec(s.RealizedProfitRatio), TS: s.Tokens, PD: p.ProfitableDays, LD: p.LosingDays, R: string(p.Resolution)})
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

// The elements of the ranking kinds' arrays (2.14); supply and stat-num are supplyMsg and
// statNumMsg.
type (
	rankStatsMsg struct {
		A      string `json:"a"`
		B1M    int64  `json:"b1m"`
		BVIU1M string `json:"bviu1m"`
		P      string `json:"p"`
		S1M    int64  `json:"s1m"`
		SVIU1M string `json:"sviu1m"`
		T      int64  `json:"t"`
	}
	rankHoldingMsg struct {
		A     string `json:"a"`
		H     int64  `json:"h"`
		T100A string `json:"t100a"`
		T10A  string `json:"t10a"`
		TS    int64  `json:"ts"`
	}
	rankBondingCurveMsg struct {
		A  string `json:"a,omitempty"`
		PR string `json:"pr"`
	}
	rankListMsg struct {
		BC rankBondingCurveMsg `json:"bc"`
		H  rankHoldersMsg      `json:"h"`
		S  supplyMsg           `json:"s"`
		T  rankTokenMsg        `json:"t"`
		TS rankPriceMsg        `json:"ts"`
	}
	rankHoldersMsg struct {
		A  string `json:"a"`
		H  int64  `json:"h"`
		TS int64  `json:"ts"`
	}
	rankTokenMsg struct {
		A   string `json:"a"`
		CTS *int64 `json:"cts,omitempty"`
		IU  string `json:"iu,omitempty"`
		N   string `json:"n"`
		S   string `json:"s"`
	}
	rankPriceMsg struct {
		A string `json:"a"`
		P string `json:"p"`
	}
)

// rankingMsgs builds the array of a ranking kind from the board's tokens (2.14).
func rankingMsgs(prefix string, ds []token.Detail, now int64) []any {
	out := make([]any, 0, len(ds))
	for _, d := range ds {
		md := d.MarketData
		switch prefix {
		case KindRankStats:
			s := d.Stats[token.Window1m]
			out = append(out, rankStatsMsg{A: d.Address, T: now, B1M: s.Buys, S1M: s.Sells,
				BVIU1M: dec(s.BuyVolumeInUSD), SVIU1M: dec(s.SellVolumeInUSD), P: dec(md.PriceInUSD)})
		case KindRankHolding:
			out = append(out, rankHoldingMsg{A: d.Address, TS: now, H: md.Holders.IntPart(),
				T100A: dec(md.Top100.TotalHoldings), T10A: dec(md.Top10.TotalHoldings)})
		case KindRankSupply:
			out = append(out, supplyMsgOf(d, now))
		case KindRankStatNum:
			out = append(out, statNumMsgOf(d, now))
		case KindRankBondingCurve:
			out = append(out, rankBondingCurveMsg{A: d.Address, PR: dec(md.CompletionRatio)})
		case KindRankList:
			out = append(out, rankListMsg{
				T:  rankTokenMsg{A: d.Address, N: d.Name, S: d.Symbol, IU: d.ImageURL, CTS: d.CreatedAt},
				BC: rankBondingCurveMsg{PR: dec(md.CompletionRatio)},
				S:  supplyMsg{A: d.Address, S: dec(md.TotalSupply), MC: dec(md.MarketCapInUSD), TS: now},
				TS: rankPriceMsg{A: d.Address, P: dec(md.PriceInUSD)},
				H:  rankHoldersMsg{A: d.Address, H: md.Holders.IntPart(), TS: now}})
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
