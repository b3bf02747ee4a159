// Package stream is the use case behind the realtime WebSocket streams: the channel kinds the
// public client subscribes to (one table, kinds), what each publishes and when, built from what
// ingest committed (ports.CommitListener) and the current state the market use case reads. It
// knows nothing of the Centrifuge server: the hub it publishes through is a port
// (ports.StreamHub). It imports domain, ports and app/market only.
package stream

import (
	"strings"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/fault"
)

// Mode says when a kind publishes.
type Mode int

const (
	// PerTrade publishes one message per committed trade (token and wallet trades).
	PerTrade Mode = iota
	// PerBatch publishes from the committed batch itself (new tokens, pool balances).
	PerBatch
	// Coalesced publishes the current state of a subject at most once per coalescing tick,
	// after a flush touched it, and only where the channel has subscribers.
	Coalesced
	// CandleBars channels are accepted; their publications come from the candle hook (CandleSource).
	CandleBars
)

// Subject is what a channel's suffix names.
type Subject int

const (
	// SubjectToken, SubjectWallet and SubjectPool are `{chain}_{address}`.
	SubjectToken Subject = iota
	SubjectWallet
	SubjectPool
	// SubjectChain is `{chain}`.
	SubjectChain
	// SubjectBoard is `{chain}_{channelType}` (ranking lists; the ranking list may add `_{dex}`).
	SubjectBoard
	// SubjectCandle is `{chain}_{address}_{resolution}`.
	SubjectCandle
)

// Kind is one channel family: its prefix, what its suffix names, when it publishes and whether
// the subscribe command's filter applies to it. A new kind is one entry of kinds plus its
// builder.
type Kind struct {
	Prefix  string
	Subject Subject
	Mode    Mode
	// Filter: the client's filter expression is honoured (reference section 3).
	Filter bool
	// Native: a candle channel priced in the chain's native token (the -in-native prefixes).
	Native bool
}

// Channel prefixes (reference section 2.1).
const (
	KindTokenTrade       = "dex-trade"
	KindWalletTrade      = "dex-wallet-trade"
	KindNewToken         = "dex-new-token"
	KindNewTokensMeta    = "dex-new-tokens-metadata"
	KindNewTokens        = "dex-new-tokens"
	KindPoolBalance      = "dex-pool-balance"
	KindTokenStats       = "dex-token-stats"
	KindTokenHolding     = "dex-token-holding"
	KindTokenSupply      = "dex-token-supply"
	KindTokenStatNum     = "dex-token-general-stat-num"
	KindTokenLiquidity   = "dex-token-liquidity"
	KindTokenTotalLiq    = "dex-token-total-liquidity"
	KindWalletBalance    = "dex-wallet-balance"
	KindWalletTokenPnL   = "dex-wallet-token-pnl"
	KindWalletPnLList    = "dex-wallet-pnl-list"
	KindRankStats        = "dex-ranking-token-stats-list"
	KindRankHolding      = "dex-ranking-token-holding-list"
	KindRankSupply       = "dex-ranking-token-supply-list"
	KindRankStatNum      = "dex-ranking-token-general_stat_num-list"
	KindRankBondingCurve = "dex-ranking-token-bounding-curve-list"
	KindRankList         = "dex-ranking-list"
	KindCandle           = "dex-candle"
	KindPoolCandle       = "dex-pool-candle"
	KindPairCandle       = "dex-pair-candle"
)

// kinds is every channel family served (the reference's section 2 without the prediction
// markets), by prefix.
var kinds = map[string]Kind{}

func init() {
	for _, k := range []Kind{
		{Prefix: KindTokenTrade, Subject: SubjectToken, Mode: PerTrade, Filter: true},
		{Prefix: KindWalletTrade, Subject: SubjectWallet, Mode: PerTrade, Filter: true},
		{Prefix: KindNewToken, Subject: SubjectChain, Mode: PerBatch, Filter: true},
		{Prefix: KindNewTokensMeta, Subject: SubjectChain, Mode: PerBatch},
		{Prefix: KindNewTokens, Subject: SubjectChain, Mode: PerBatch},
		{Prefix: KindPoolBalance, Subject: SubjectPool, Mode: PerBatch},
		{Prefix: KindTokenStats, Subject: SubjectToken, Mode: Coalesced, Filter: true},
		{Prefix: KindTokenHolding, Subject: SubjectToken, Mode: Coalesced, Filter: true},
		{Prefix: KindTokenSupply, Subject: SubjectToken, Mode: Coalesced, Filter: true},
		{Prefix: KindTokenStatNum, Subject: SubjectToken, Mode: Coalesced, Filter: true},
		{Prefix: KindTokenLiquidity, Subject: SubjectToken, Mode: Coalesced, Filter: true},
		{Prefix: KindTokenTotalLiq, Subject: SubjectToken, Mode: Coalesced, Filter: true},
		{Prefix: KindWalletBalance, Subject: SubjectWallet, Mode: Coalesced, Filter: true},
		{Prefix: KindWalletTokenPnL, Subject: SubjectWallet, Mode: Coalesced, Filter: true},
		{Prefix: KindWalletPnLList, Subject: SubjectWallet, Mode: Coalesced},
		{Prefix: KindRankStats, Subject: SubjectBoard, Mode: Coalesced},
		{Prefix: KindRankHolding, Subject: SubjectBoard, Mode: Coalesced},
		{Prefix: KindRankSupply, Subject: SubjectBoard, Mode: Coalesced},
		{Prefix: KindRankStatNum, Subject: SubjectBoard, Mode: Coalesced},
		{Prefix: KindRankBondingCurve, Subject: SubjectBoard, Mode: Coalesced},
		{Prefix: KindRankList, Subject: SubjectBoard, Mode: Coalesced},
		{Prefix: KindCandle, Subject: SubjectCandle, Mode: CandleBars, Filter: true},
		{Prefix: KindCandle + "-in-native", Subject: SubjectCandle, Mode: CandleBars, Filter: true, Native: true},
		{Prefix: KindPoolCandle, Subject: SubjectCandle, Mode: CandleBars, Filter: true},
		{Prefix: KindPoolCandle + "-in-native", Subject: SubjectCandle, Mode: CandleBars, Filter: true, Native: true},
		{Prefix: KindPairCandle, Subject: SubjectCandle, Mode: CandleBars, Filter: true},
		{Prefix: KindPairCandle + "-in-native", Subject: SubjectCandle, Mode: CandleBars, Filter: true, Native: true},
	} {
		kinds[k.Prefix] = k
	}
}

// Channel is a parsed channel name.
type Channel struct {
	Name  string
	Kind  Kind
	Chain chain.Chain
	// Address is the token, wallet or pool (a pair is `{tokenA}-{tokenB}`); empty for chain and
	// board channels.
	Address string
	// Board is the ranking channelType / rankingType; Dex the ranking list's optional launchpad.
	Board, Dex string
	// Resolution is a candle channel's bar size.
	Resolution string
}

// Boards are the channelType / rankingType values (reference section 2.1).
var Boards = []string{"new", "trending", "us_stocks", "stocks", "graduated", "completed"}

// candleResolutions are the bar sizes of the candle channels (the REST Resolution enum).
var candleResolutions = []string{"1s", "15s", "30s", "1m", "3m", "5m", "15m", "30m", "1h", "2h", "4h", "6h", "8h", "12h", "1d", "3d", "1w", "1M"}

// Parse reads a channel name; an unknown prefix, chain or board, or a suffix of the wrong
// shape, is Invalid naming the channel.
func Parse(name string) (Channel, error) {
	prefix, rest, ok := strings.Cut(name, ":")
	k, known := kinds[prefix]
	if !ok || !known {
		return Channel{}, fault.Invalid("channel", name, "unknown channel")
	}
	ch := Channel{Name: name, Kind: k}
	chainPart, tail, _ := strings.Cut(rest, "_")
	c, err := chain.Parse("channel", chainPart)
	if err != nil {
		return Channel{}, fault.Invalid("channel", name, "unknown chain (allowed: "+strings.Join(chain.Strings(chain.V2), ", ")+")")
	}
	ch.Chain = c
	bad := func() (Channel, error) {
		return Channel{}, fault.Invalid("channel", name, "not the shape of a "+k.Prefix+" channel")
	}
	switch k.Subject {
	case SubjectChain:
		if tail != "" || strings.Contains(rest, "_") {
			return bad()
		}
	case SubjectToken, SubjectWallet, SubjectPool:
		if tail == "" {
			return bad()
		}
		ch.Address = tail
	case SubjectCandle:
		i := strings.LastIndexByte(tail, '_')
		if i <= 0 {
			return bad()
		}
		ch.Address, ch.Resolution = tail[:i], tail[i+1:]
		if !contains(candleResolutions, ch.Resolution) {
			return Channel{}, fault.Invalid("channel", name, "unknown resolution (allowed: "+strings.Join(candleResolutions, ", ")+")")
		}
	case SubjectBoard:
		board := tail
		if k.Prefix == KindRankList {
			board, ch.Dex, _ = strings.Cut(tail, "_")
		}
		if !contains(Boards, board) || k.Prefix == KindRankBondingCurve && board != "new" {
			return Channel{}, fault.Invalid("channel", name, "unknown ranking type (allowed: "+strings.Join(Boards, ", ")+")")
		}
		ch.Board = board
	}
	return ch, nil
}

func contains(set []string, s string) bool {
	for _, v := range set {
		if v == s {
			return true
		}
	}
	return false
}

// Name builds the channel of kind prefix for (chain, suffix).
func Name(prefix string, c chain.Chain, suffix string) string {
	if suffix == "" {
		return prefix + ":" + string(c)
	}
	return prefix + ":" + string(c) + "_" + suffix
}
