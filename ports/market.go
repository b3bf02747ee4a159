package ports

import (
	"context"
	"time"

	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/page"
	"github.com/tokenscope/tokenscope/domain/pnl"
	"github.com/tokenscope/tokenscope/domain/pool"
	"github.com/tokenscope/tokenscope/domain/ranking"
	"github.com/tokenscope/tokenscope/domain/redpacket"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/domain/trade"
)

// PageRequest positions one keyset page. The reader owns the cursor format (the keyset of its
// rows) and decodes Cursor itself; a cursor it did not issue is a fault.Invalid on "cursor".
type PageRequest struct {
	Cursor    string
	Limit     int
	Direction page.Direction
}

// SearchSort is a sortBy key of token search; the empty value means relevance (or, without a
// query, newest token first).
type SearchSort string

const (
	SearchByRelevance      SearchSort = ""
	SearchByMarketCapInUSD SearchSort = "marketCapInUsd"
	SearchByLiquidityInUSD SearchSort = "liquidityInUsd"
	SearchByPriceInUSD     SearchSort = "priceInUsd"
	SearchByHolderCount    SearchSort = "holderCount"
	SearchByH24VolumeInUSD SearchSort = "h24VolumeInUsd"
	SearchByH24Trades      SearchSort = "h24Transactions"
	SearchByTokenCreatedAt SearchSort = "tokenCreatedAt"
)

// TokenSearch is one token search request, already validated.
type TokenSearch struct {
	// Query is the trimmed search text ("" lists every token in the sort order).
	Query string
	// Variants are spellings one edit away from Query (lower case) that count as a typo match.
	Variants  []string
	Chains    []chain.Chain
	Protocols []string // lower case protocol family names
	SortBy    SearchSort
	Desc      bool
	Page      PageRequest
}

// TokenReader reads tokens with their market data and statistics.
type TokenReader interface {
	// SearchTokens returns one page of matches. Items carry the identity and metadata, the
	// market data and the 24h window's volume and trade count (what search sorts on); the other
	// windows and the pools are left empty.
	SearchTokens(ctx context.Context, s TokenSearch) (page.Page[token.Detail], error)
	// TokenDetails returns every known token of addresses on c with all windows and its pools,
	// in no particular order; unknown addresses are left out.
	TokenDetails(ctx context.Context, c chain.Chain, addresses []string) ([]token.Detail, error)
	// HotTokens returns the precomputed ranking of (c, d), best rank first, at most max entries.
	HotTokens(ctx context.Context, c chain.Chain, d ranking.Duration, max int) ([]HotEntry, error)
}

// TradeFilter selects trades of one chain; every set field narrows the list (AND).
type TradeFilter struct {
	Chain        chain.Chain
	TokenAddress string
	Wallet       string
	PoolAddress  string
	Signatures   []string
	// FromMs and ToMs bound blockTimestamp (Unix ms, both inclusive).
	FromMs, ToMs *int64
	// MinHeight and MaxHeight bound blockHeight (both inclusive).
	MinHeight, MaxHeight *int64
	Side                 trade.Side
}

// TradeReader lists trades newest first.
type TradeReader interface {
	// ListTrades fills the token and side token names, symbols and logos from the tokens table
	// ("" for a token it does not know).
	ListTrades(ctx context.Context, f TradeFilter, p PageRequest) (page.Page[trade.Trade], error)
}

// PoolReader lists the liquidity snapshots of one pool, newest first.
type PoolReader interface {
	// ListSnapshots returns the snapshots of the pool taken at or before atMs (all when nil).
	ListSnapshots(ctx context.Context, c chain.Chain, poolAddress string, atMs *int64, p PageRequest) (page.Page[pool.Snapshot], error)
}

// Counted is a page plus the exact number of items in the whole list.
type Counted[T any] struct {
	page.Page[T]
	Total int64
}

// RedPacketFilter selects red packets; empty fields do not narrow.
type RedPacketFilter struct {
	Creator string
	Chain   chain.Chain
}

// RedPacketReader lists red packets and claims, newest first.
type RedPacketReader interface {
	ListRedPackets(ctx context.Context, f RedPacketFilter, p PageRequest) (Counted[redpacket.RedPacket], error)
	// ListClaims returns the claims of one packet; an unknown packet is a fault.NotFound.
	ListClaims(ctx context.Context, packetID string, p PageRequest) (Counted[redpacket.Claim], error)
}

// PricedPosition is a wallet's position in one token with the token's current USD price and
// the metadata pnl-by-token shows next to it.
type PricedPosition struct {
	Position pnl.Position
	// At holds, for each start asked for (a UTC midnight), the position as of the pair's trades
	// before it: the zero Position for a pair first traded since, Position itself for a pair
	// that has not traded since. A reader that keeps no such history gives none, and the pair
	// then counts whole.
	At []pnl.Position
	// Days holds, when starts are asked for, the pair's realized profit on each UTC day in which
	// it traded, oldest first, as far as the reader keeps day history (none otherwise).
	Days       []pnl.DayProfit
	PriceInUSD decimal.Decimal
	Name       string
	Symbol     string
	LogoURI    string
	Decimals   int32
}

// PositionReader reads the positions the ingest engine keeps current.
type PositionReader interface {
	// PricedPositions returns the positions of wallet in each of tokens that it traded at least
	// once, ordered by token address, each with its positions at starts (UTC midnights, Unix ms).
	PricedPositions(ctx context.Context, c chain.Chain, wallet string, tokens []string, starts []int64) ([]PricedPosition, error)
}

// HotCandidate is a token's activity in the current window of a ranking duration and in the
// window of the same length before it.
type HotCandidate struct {
	Address string
	Current ranking.Activity
	Prev    ranking.Activity
}

// HotEntry is one row of the precomputed ranking.
type HotEntry struct {
	Address string
	Rank    int32
	Score   decimal.Decimal
}

// WindowRefresh reports one round of MarketRefresher.RefreshWindows.
type WindowRefresh struct {
	// Full is set when there was no completed round to start from: every token traded in the
	// last 24 hours (or still showing 24h activity) was recomputed.
	Full bool
	// Since is the time of the completed round this one continued from (zero when Full).
	Since time.Time
	// Resumed is set when the round continued one an earlier attempt left unfinished (it had
	// outlived its activity timeout, say); Tokens then counts only this attempt's tokens.
	Resumed bool
	// Tokens is the number of tokens whose windows were recomputed.
	Tokens int
}

// HotRankingTime is when the ranking of (Chain, Duration) was last computed.
type HotRankingTime struct {
	Chain      chain.Chain
	Duration   ranking.Duration
	ComputedAt time.Time
	// Entries is how many tokens the stored ranking holds.
	Entries int
}

// MarketRefresher keeps the derived state that changes with time alone: rolling window
// statistics decay even when no trade arrives, and the hot-token ranking is recomputed from
// the trades. The refresh workflow's activity drives it.
type MarketRefresher interface {
	// RefreshWindows brings every token's rolling windows up to date as of now. New trades are
	// applied by the ingest transaction itself, so between two rounds a token's window w only
	// changes when one of its successful trades leaves it (its block time passes now − w; a window
	// holds trades stamped after its writer's now, so none enters later): a round recomputes
	// exactly those windows of those tokens since the last completed round, and once all of them committed records the
	// round's time (durable and shared between workers). A failed round does not count as
	// completed: the next one continues it after the last token it committed and, when done,
	// records the failed round's time, so the round after covers its span again. Without a
	// completed round it recomputes every token traded in the last 24 hours. Rounds are serialised.
	RefreshWindows(ctx context.Context, now time.Time) (WindowRefresh, error)
	// HotRankingTimes lists when each (chain, duration) ranking was last computed and how many
	// tokens it holds; a ranking never computed is absent.
	HotRankingTimes(ctx context.Context) ([]HotRankingTime, error)
	// HotCandidates reads, for every token of c traded within 2 × d before now, its activity in
	// (now − d, now] and in (now − 2d, now − d].
	HotCandidates(ctx context.Context, c chain.Chain, d ranking.Duration, now time.Time) ([]HotCandidate, error)
	// ReplaceHotTokens swaps the ranking of (c, d) for entries atomically and records now as its
	// computation time.
	ReplaceHotTokens(ctx context.Context, c chain.Chain, d ranking.Duration, entries []HotEntry, now time.Time) error
}

// MarketVersions says when the derived market state behind the token reads last changed, as
// counters from one sequence that grows with every change a process learns of. A read that
// started when Current was s reflects every change announced up to s, so it may be reused while
// the versions of what it depends on are at most s. Zero means unknown (the process is not
// following the writers): reuse nothing.
type MarketVersions interface {
	// Current is the latest version handed out.
	Current() uint64
	// TokensVersion is the latest version of the details of any of addrs on c (tokens,
	// token_market, token_stats and pools).
	TokensVersion(c chain.Chain, addrs []string) uint64
	// RankingVersion is the latest version of the stored ranking of (c, d) (its entries, not
	// their details).
	RankingVersion(c chain.Chain, d ranking.Duration) uint64
}
