// Package market holds the read use cases of the market-data API (operations 1–9): token
// search, multi-token detail, trades, pool snapshots, red packets, wallet PnL by token and the
// hot-token ranking. Requests arrive as validated domain values; the use cases combine the read
// ports with the pure rules of domain/token, domain/pnl and domain/ranking. It imports domain
// and ports only.
package market

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/tokenscope/tokenscope/app/market/readcache"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/page"
	"github.com/tokenscope/tokenscope/domain/pnl"
	"github.com/tokenscope/tokenscope/domain/pool"
	"github.com/tokenscope/tokenscope/domain/redpacket"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/domain/trade"
	"github.com/tokenscope/tokenscope/ports"
)

// Service is the read side of the API.
type Service struct {
	tokens    ports.TokenReader
	trades    ports.TradeReader
	pools     ports.PoolReader
	packets   ports.RedPacketReader
	positions ports.PositionReader
	// clock says when now is for pnl-by-token's periods (WithClock; the system clock by default).
	clock ports.Clock
	// cache is the read cache WithCache adds (nil without it: every request reads).
	cache *readcache.Cache
}

// Readers is every read port the service uses; one adapter usually implements them all.
type Readers interface {
	ports.TokenReader
	ports.TradeReader
	ports.PoolReader
	ports.RedPacketReader
	ports.PositionReader
}

// Option configures a Service built by New.
type Option func(*Service)

// New builds the service over its read ports. Without options every request reads the ports;
// cmd/tokenscope adds WithCache.
func New(r Readers, opts ...Option) *Service {
	s := &Service{tokens: r, trades: r, pools: r, packets: r, positions: r, clock: systemClock{}}
	for _, o := range opts {
		o(s)
	}
	return s
}

// WithClock makes the service read now (the start of pnl-by-token's periods) from c.
func WithClock(c ports.Clock) Option {
	return func(s *Service) { s.clock = c }
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// SearchSorts lists the sortBy keys of token search in the spec's order.
var SearchSorts = []ports.SearchSort{
	ports.SearchByMarketCapInUSD, ports.SearchByLiquidityInUSD, ports.SearchByPriceInUSD, ports.SearchByHolderCount,
	ports.SearchByH24VolumeInUSD, ports.SearchByH24Trades, ports.SearchByTokenCreatedAt,
}

// ParseSearchSort reads sortBy (case-insensitive); empty means relevance.
func ParseSearchSort(raw string) (ports.SearchSort, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return ports.SearchByRelevance, nil
	}
	allowed := make([]string, len(SearchSorts))
	for i, v := range SearchSorts {
		if strings.EqualFold(string(v), s) {
			return v, nil
		}
		allowed[i] = string(v)
	}
	return "", fault.InvalidParam("sortBy", raw, allowed...)
}

// SearchRequest is a validated token search.
type SearchRequest struct {
	Query     string
	Chains    []chain.Chain
	Protocols []string
	SortBy    ports.SearchSort
	Desc      bool
	// Normal asks for the full v2 record (every window and the pools), not the fast subset.
	Normal bool
	Page   ports.PageRequest
}

// MaxQueryLength bounds the search text; longer input is no name, symbol or address.
const MaxQueryLength = 128

// Search runs token search. In normal mode the page's tokens are reloaded in full, keeping
// the page's order.
func (s *Service) Search(ctx context.Context, r SearchRequest) (page.Page[token.Detail], error) {
	q := strings.TrimSpace(r.Query)
	if len([]rune(q)) > MaxQueryLength {
		return page.Page[token.Detail]{}, fault.Invalid("q", q[:32]+"…", "at most 128 characters")
	}
	protocols := make([]string, len(r.Protocols))
	for i, p := range r.Protocols {
		protocols[i] = strings.ToLower(p)
	}
	pg, err := s.tokens.SearchTokens(ctx, ports.TokenSearch{Query: q, Variants: Typos(strings.ToLower(q)), Chains: r.Chains,
		Protocols: protocols, SortBy: r.SortBy, Desc: r.Desc, Page: r.Page})
	if err != nil || !r.Normal || len(pg.Items) == 0 {
		return pg, err
	}
	byChain := map[chain.Chain][]string{}
	var order []chain.Chain
	for _, d := range pg.Items {
		if _, ok := byChain[d.Chain]; !ok {
			order = append(order, d.Chain)
		}
		byChain[d.Chain] = append(byChain[d.Chain], d.Address)
	}
	full := map[ports.TokenRef]token.Detail{}
	for _, c := range order {
		ds, err := s.cache.Details(ctx, c, byChain[c], s.tokens.TokenDetails)
		if err != nil {
			return page.Page[token.Detail]{}, err
		}
		for _, d := range ds {
			full[ports.TokenRef{Chain: c, Address: d.Address}] = d
		}
	}
	for i, d := range pg.Items {
		if f, ok := full[ports.TokenRef{Chain: d.Chain, Address: d.Address}]; ok {
			pg.Items[i] = f
		}
	}
	return pg, nil
}

// typoAlphabet is what a one-letter typo can insert or substitute: token symbols and names are
// overwhelmingly ASCII letters and digits.
const typoAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

// Typos returns the spellings one edit (deletion, adjacent transposition, substitution or
// insertion) away from q, without q itself, for queries of 3 to 12 characters. Shorter queries
// would match half the tokens; longer ones are caught by trigram similarity, which tolerates one
// wrong letter in a long word but not in a short one ("bnok" shares one trigram with "bonk").
func Typos(q string) []string {
	rs := []rune(q)
	if len(rs) < 3 || len(rs) > 12 {
		return []string{}
	}
	seen := map[string]bool{q: true}
	var out []string
	add := func(v []rune) {
		s := string(v)
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for i := range rs {
		add(slices.Concat(rs[:i], rs[i+1:]))
		if i+1 < len(rs) {
			t := slices.Clone(rs)
			t[i], t[i+1] = t[i+1], t[i]
			add(t)
		}
		for _, c := range typoAlphabet {
			t := slices.Clone(rs)
			t[i] = c
			add(t)
		}
	}
	for i := 0; i <= len(rs); i++ {
		for _, c := range typoAlphabet {
			add(slices.Concat(rs[:i], []rune{c}, rs[i:]))
		}
	}
	return out
}

// MaxAddresses bounds the address lists of multi-detail and PnL.
const MaxAddresses = 100

// dedupe drops repeated addresses, keeping the first occurrence's position.
func dedupe(addrs []string) []string {
	seen := make(map[string]bool, len(addrs))
	out := make([]string, 0, len(addrs))
	for _, a := range addrs {
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	return out
}

// MultiRequest is a validated multi-token detail request.
type MultiRequest struct {
	Chain     chain.Chain
	Addresses []string
	// SortBy is empty for input order.
	SortBy  token.Field
	Desc    bool
	Filters []token.Filter
}

// Tokens is the answer of the token-list use cases (HotTokens, Multi): the details, and the
// read cache's slot for the answer's encoding (readcache.Answer).
type Tokens = readcache.Answer

// Multi returns the known tokens of r.Addresses that pass every filter, in input order unless
// a sort field is given. A chain without data gives an empty list.
func (s *Service) Multi(ctx context.Context, r MultiRequest) (Tokens, error) {
	return s.cache.Multi(ctx, r.Chain.Canonical(), r.Addresses, s.distinctDetails, func(ds []token.Detail) []token.Detail {
		out := make([]token.Detail, 0, len(ds))
		for _, d := range ds {
			if token.MatchesAll(r.Filters, d) {
				out = append(out, d)
			}
		}
		if r.SortBy != "" {
			token.SortDetails(out, r.SortBy, r.Desc)
		}
		return out
	})
}

// distinctDetails is TokenReader.TokenDetails of addrs without repeats.
func (s *Service) distinctDetails(ctx context.Context, c chain.Chain, addrs []string) ([]token.Detail, error) {
	return s.tokens.TokenDetails(ctx, c, dedupe(addrs))
}

// Trades lists trades newest first.
func (s *Service) Trades(ctx context.Context, f ports.TradeFilter, p ports.PageRequest) (page.Page[trade.Trade], error) {
	return s.trades.ListTrades(ctx, f, p)
}

// Snapshots lists a pool's snapshots at or before atMs (all when nil), newest first.
func (s *Service) Snapshots(ctx context.Context, c chain.Chain, poolAddress string, atMs *int64, p ports.PageRequest) (page.Page[pool.Snapshot], error) {
	return s.pools.ListSnapshots(ctx, c, poolAddress, atMs, p)
}

// RedPackets lists red packets newest first; a wallet's red packets are those it created.
func (s *Service) RedPackets(ctx context.Context, f ports.RedPacketFilter, p ports.PageRequest) (ports.Counted[redpacket.RedPacket], error) {
	return s.packets.ListRedPackets(ctx, f, p)
}

// Claims lists the claims of one packet newest first; an unknown packet is NotFound.
func (s *Service) Claims(ctx context.Context, packetID string, p ports.PageRequest) (ports.Counted[redpacket.Claim], error) {
	return s.packets.ListClaims(ctx, packetID, p)
}

// PnLEntry is one item of pnl-by-token: the derived numbers and the token's metadata.
type PnLEntry struct {
	pnl.Entry
	Name     string
	Symbol   string
	LogoURI  string
	Decimals int32
}

// PnLResult is the page of entries and the summary over every requested token the wallet
// traded, whichever page is shown.
type PnLResult struct {
	Page    page.Page[PnLEntry]
	Summary pnl.Summary
}

const pnlCursorKind = "pnl"

// PnLByToken values the wallet's positions in tokens at the current prices, over r's period
// (pnl.Position.Since the position at the period's start; a position neither traded in the
// period nor held is left out). Entries are listed by token address; the list is at most 100
// entries long, so its keyset page is cut here from the one bounded read the summary needs anyway.
func (s *Service) PnLByToken(ctx context.Context, c chain.Chain, wallet string, tokens []string, r pnl.Resolution, p ports.PageRequest) (PnLResult, error) {
	tokens = dedupe(tokens)
	var after string
	if p.Cursor != "" {
		vals, err := page.Decode(pnlCursorKind, p.Cursor)
		if err != nil {
			return PnLResult{}, err
		}
		after = vals[0]
	}
	var starts []int64
	if start, ok := r.Start(s.clock.Now().UnixMilli()); ok {
		starts = []int64{start}
	}
	pps, err := s.positions.PricedPositions(ctx, c, wallet, tokens, starts)
	if err != nil {
		return PnLResult{}, err
	}
	entries := periodEntries(pps, len(starts)-1)
	var rows []PnLEntry
	if p.Direction == page.Prev {
		for i := len(entries) - 1; i >= 0; i-- {
			if p.Cursor == "" || entries[i].TokenAddress < after {
				rows = append(rows, entries[i])
			}
		}
	} else {
		for _, e := range entries {
			if p.Cursor == "" || e.TokenAddress > after {
				rows = append(rows, e)
			}
		}
	}
	limit := p.Limit
	if limit < 1 {
		limit = MaxAddresses
	}
	rows = rows[:min(len(rows), limit+1)]
	pg := page.Build(rows, limit, p.Direction, p.Cursor != "", func(e PnLEntry) string {
		return page.Encode(pnlCursorKind, e.TokenAddress)
	})
	return PnLResult{Page: pg, Summary: summarize(entries)}, nil
}

// PnLPeriod is a wallet's PnL over one resolution: every entry, listed by token address, their
// summary, and the counts of the period's UTC days on which the wallet's realized profit (over the
// same tokens) was above / below zero (pnl.DayCounts).
type PnLPeriod struct {
	Resolution     pnl.Resolution
	Entries        []PnLEntry
	Summary        pnl.Summary
	ProfitableDays int64
	LosingDays     int64
}

// PnLPeriods is PnLByToken's whole list (at most MaxAddresses tokens) over each of
// pnl.Resolutions, in that order, from one read of the positions and their starts.
func (s *Service) PnLPeriods(ctx context.Context, c chain.Chain, wallet string, tokens []string) ([]PnLPeriod, error) {
	tokens = dedupe(tokens)
	now := s.clock.Now().UnixMilli()
	var starts []int64
	for _, r := range pnl.Resolutions {
		if start, ok := r.Start(now); ok {
			starts = append(starts, start)
		}
	}
	pps, err := s.positions.PricedPositions(ctx, c, wallet, tokens, starts)
	if err != nil {
		return nil, err
	}
	days := make([][]pnl.DayProfit, len(pps))
	for i, pp := range pps {
		days[i] = pp.Days
	}
	out := make([]PnLPeriod, 0, len(pnl.Resolutions))
	at := 0
	for _, r := range pnl.Resolutions {
		i := -1
		start, ok := r.Start(now)
		if ok {
			i, at = at, at+1
		}
		es := periodEntries(pps, i)
		pd, ld := pnl.DayCounts(days, start, !ok)
		out = append(out, PnLPeriod{Resolution: r, Entries: es, Summary: summarize(es), ProfitableDays: pd, LosingDays: ld})
	}
	return out, nil
}

// periodEntries values each position over the period that starts at its At[at] (the whole
// history when at is −1), leaving out those not active in the period, ordered by token address.
// A reader that gave no At[at] counts the pair whole.
func periodEntries(pps []ports.PricedPosition, at int) []PnLEntry {
	entries := make([]PnLEntry, 0, len(pps))
	for _, pp := range pps {
		pos := pp.Position
		if at >= 0 {
			if at < len(pp.At) {
				pos = pos.Since(pp.At[at])
			}
			if !pos.Active() {
				continue
			}
		}
		entries = append(entries, PnLEntry{Entry: pos.Entry(pp.PriceInUSD), Name: pp.Name, Symbol: pp.Symbol,
			LogoURI: pp.LogoURI, Decimals: pp.Decimals})
	}
	slices.SortFunc(entries, func(a, b PnLEntry) int { return strings.Compare(a.TokenAddress, b.TokenAddress) })
	return entries
}

func summarize(entries []PnLEntry) pnl.Summary {
	plain := make([]pnl.Entry, len(entries))
	for i, e := range entries {
		plain[i] = e.Entry
	}
	return pnl.Summarize(plain)
}
