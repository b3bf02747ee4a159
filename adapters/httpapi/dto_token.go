package httpapi

import (
	"reflect"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/domain/page"
	"github.com/tokenscope/tokenscope/domain/token"
)

// JSON shapes of the token records: the v2 record (search normal mode, ranking, v2
// multi-detail), the fast search record and the multi-detail record. Each record is built from
// a token.Detail by one constructor (tokenV2Out, tokenFastOut, multiTokenOut), one at a time on
// the stack, and written by its generated appendJSON (dto_json_gen.go). Building a record
// allocates nothing: optional values are held by value (nullString, nullInt, utcTime) and lists
// as views of the detail's own slices (creatorList, liquidityList), so the ranking and
// multi-detail encoders stay allocation-free.
//
// The objects the public API keys by name (marketData, stats periods, the multi-detail stats,
// socialMedias) were maps once: their generated encoders write the keys sorted, as
// encoding/json writes a map's (keyedTypes, encoders_gen_test.go). Their keys made of a name and
// a window, holder group or social key are one field each, an array over the domain's list
// (byWindow, byGroup, bySocial) whose tag names the key with "*" for the list's item; a window,
// group or social key added to the domain adds its keys once the encoders are regenerated.

// nullString is an optional text of a record: null when empty.
type nullString string

// nullInt is an integer that may be absent (null), held by value.
type nullInt struct {
	v  int64
	ok bool
}

// nullIntOf is *p / unit, null when p is nil.
func nullIntOf(p *int64, unit int64) nullInt {
	if p == nil {
		return nullInt{}
	}
	return nullInt{v: *p / unit, ok: true}
}

// utcTime is an optional time shown in UTC as RFC 3339 with nanoseconds (null when absent).
type utcTime struct{ t *time.Time }

type creatorDTO struct {
	Address    string `json:"address"`
	IsVerified bool   `json:"isVerified"`
	Share      int64  `json:"share"`
}

// creatorList is tokenCreators: each creator as a creatorDTO, [] when there is none.
type creatorList []token.Creator

type extraDTO struct {
	CollectionAddress        nullString `json:"collectionAddress"`
	EditionNonce             *int64     `json:"editionNonce"`
	FreezeAuthority          nullString `json:"freezeAuthority"`
	Fungible                 *bool      `json:"fungible"`
	IsMutable                *bool      `json:"isMutable"`
	IsNative                 *bool      `json:"isNative"`
	IsVerifiedCollection     *bool      `json:"isVerifiedCollection"`
	IsWrapped                *bool      `json:"isWrapped"`
	Key                      nullString `json:"key"`
	LaunchFromProgramAddress nullString `json:"launchFromProgramAddress"`
	LaunchFromProtocolFamily nullString `json:"launchFromProtocolFamily"`
	MigratedAt               nullInt    `json:"migratedAt"`
	MigratedToPoolAddress    nullString `json:"migratedToPoolAddress"`
	MigratedToProgramAddress nullString `json:"migratedToProgramAddress"`
	MigratedToProtocolFamily nullString `json:"migratedToProtocolFamily"`
	MintAuthority            nullString `json:"mintAuthority"`
	PrimarySaleHappened      *bool      `json:"primarySaleHappened"`
	ProgramAddress           nullString `json:"programAddress"`
	SellerFeeBasisPoints     *int64     `json:"sellerFeeBasisPoints"`
	TokenStandard            nullString `json:"tokenStandard"`
	UpdateAuthority          nullString `json:"updateAuthority"`
}

// extraOut renders the extension/extra object; migratedAt (Unix ms) is divided by unit: 1 for
// the v2 record's milliseconds, 1000 for the multi-detail record's seconds.
func extraOut(e *token.Extra, unit int64) extraDTO {
	return extraDTO{
		CollectionAddress: nullString(e.CollectionAddress), EditionNonce: e.EditionNonce, FreezeAuthority: nullString(e.FreezeAuthority),
		Fungible: e.Fungible, IsMutable: e.IsMutable, IsNative: e.IsNative, IsVerifiedCollection: e.IsVerifiedCollection,
		IsWrapped: e.IsWrapped, Key: nullString(e.Key), LaunchFromProgramAddress: nullString(e.LaunchFromProgramAddress),
		LaunchFromProtocolFamily: nullString(e.LaunchFromProtocolFamily), MigratedAt: nullIntOf(e.MigratedAt, unit),
		MigratedToPoolAddress: nullString(e.MigratedToPoolAddress), MigratedToProgramAddress: nullString(e.MigratedToProgramAddress),
		MigratedToProtocolFamily: nullString(e.MigratedToProtocolFamily), MintAuthority: nullString(e.MintAuthority),
		PrimarySaleHappened: e.PrimarySaleHappened, ProgramAddress: nullString(e.ProgramAddress),
		SellerFeeBasisPoints: e.SellerFeeBasisPoints, TokenStandard: nullString(e.TokenStandard),
		UpdateAuthority: nullString(e.UpdateAuthority),
	}
}

// --- the v2 record ---

type tokenV2DTO struct {
	Address               string        `json:"address"`
	Chain                 string        `json:"chain"`
	Decimals              int32         `json:"decimals"`
	Name                  string        `json:"name"`
	Symbol                string        `json:"symbol"`
	VendorCoinID          nullString    `json:"vendorCoinId"`
	Description           nullString    `json:"description"`
	DevLastTokenCreatedAt utcTime       `json:"devLastTokenCreatedAt"`
	DevTotalTokens        *int64        `json:"devTotalTokens,string"`
	Extension             extraDTO      `json:"extension"`
	Extra                 extraDTO      `json:"extra"`
	ImageURL              nullString    `json:"imageUrl"`
	Market                nullString    `json:"market"`
	MarketData            marketDataDTO `json:"marketData"`
	MetadataAddress       nullString    `json:"metadataAddress"`
	SocialMedias          socialsDTO    `json:"socialMedias"`
	Stats                 struct {
		Address string     `json:"address"`
		Periods periodsDTO `json:"periods"`
	} `json:"stats"`
	TokenCreatedAt          *int64      `json:"tokenCreatedAt"`
	TokenCreatedBlockHeight *int64      `json:"tokenCreatedBlockHeight,string"`
	TokenCreatedSlot        *int64      `json:"tokenCreatedSlot,string"`
	TokenCreatedTxSignature nullString  `json:"tokenCreatedTxSignature"`
	TokenCreators           creatorList `json:"tokenCreators"`
	URI                     nullString  `json:"uri"`
}

func tokenV2Out(d *token.Detail) tokenV2DTO {
	extra := extraOut(&d.Extra, 1)
	t := tokenV2DTO{
		Address: d.Address, Chain: string(d.Chain), Decimals: d.Decimals, Name: d.Name, Symbol: d.Symbol,
		VendorCoinID: nullString(d.VendorCoinID), Description: nullString(d.Description), DevLastTokenCreatedAt: utcTime{d.DevLastTokenCreatedAt},
		DevTotalTokens: d.DevTotalTokens, Extension: extra, Extra: extra, ImageURL: nullString(d.ImageURL), Market: nullString(d.Market),
		MarketData: marketDataOut(&d.MarketData), MetadataAddress: nullString(d.MetadataAddress), SocialMedias: socialsOut(d.Socials),
		TokenCreatedAt: d.CreatedAt, TokenCreatedBlockHeight: d.CreatedBlockHeight, TokenCreatedSlot: d.CreatedSlot,
		TokenCreatedTxSignature: nullString(d.CreatedTxSignature), TokenCreators: creatorList(d.Creators), URI: nullString(d.URI),
	}
	t.Stats.Address, t.Stats.Periods = d.Address, periodsOut(d.Stats)
	return t
}

// --- the fast search record ---

// tokenFastDTO is search's fast mode: the identity fields plus the numbers search sorts on, in
// the places the v2 record keeps them (liquidity is marketData.totalTvlInUsd, the 24h volume
// and trade count are stats.periods["24h"]). Its objects' keys are declared in sorted order, as
// the maps they were rendered from wrote them.
type tokenFastDTO struct {
	Address        string     `json:"address"`
	Chain          string     `json:"chain"`
	Decimals       int32      `json:"decimals"`
	Name           string     `json:"name"`
	Symbol         string     `json:"symbol"`
	ImageURL       nullString `json:"imageUrl"`
	TokenCreatedAt *int64     `json:"tokenCreatedAt"`
	MarketData     struct {
		Holders        decimal.Decimal `json:"holders"`
		MarketCapInUsd decimal.Decimal `json:"marketCapInUsd"`
		PriceInUsd     decimal.Decimal `json:"priceInUsd"`
		TotalTvlInUsd  decimal.Decimal `json:"totalTvlInUsd"`
	} `json:"marketData"`
	Stats struct {
		Address string `json:"address"`
		Periods struct {
			Day struct {
				TotalVolumeInUsd decimal.Decimal `json:"totalVolumeInUsd"`
				Trades           int64           `json:"trades,string"`
			} `json:"24h"`
		} `json:"periods"`
	} `json:"stats"`
}

func tokenFastOut(d *token.Detail) tokenFastDTO {
	t := tokenFastDTO{Address: d.Address, Chain: string(d.Chain), Decimals: d.Decimals, Name: d.Name, Symbol: d.Symbol,
		ImageURL: nullString(d.ImageURL), TokenCreatedAt: d.CreatedAt}
	m := &t.MarketData
	m.Holders, m.MarketCapInUsd, m.PriceInUsd, m.TotalTvlInUsd = d.MarketData.Holders, d.MarketData.MarketCapInUSD,
		d.MarketData.PriceInUSD, d.MarketData.TotalTVLInUSD
	day := d.Period(token.Window24h)
	t.Stats.Address = d.Address
	t.Stats.Periods.Day.TotalVolumeInUsd, t.Stats.Periods.Day.Trades = day.TotalVolumeInUSD, day.Trades
	return t
}

// --- the multi-detail record ---

type extensionDTO struct {
	Website nullString `json:"website"`
	Twitter nullString `json:"twitter"`
}

type liquidityDTO struct {
	ProgramAddress string          `json:"programAddress"`
	ProtocolFamily string          `json:"protocolFamily"`
	Image          string          `json:"image"`
	Chain          string          `json:"chain"`
	PoolAddress    string          `json:"poolAddress"`
	ProtocolName   string          `json:"protocolName"`
	TokenAAddress  string          `json:"tokenAAddress"`
	TokenBAddress  string          `json:"tokenBAddress"`
	TvlInUsd       decimal.Decimal `json:"tvlInUsd"`
	TvlInSol       decimal.Decimal `json:"tvlInSol"`
}

// liquidityList is the multi-detail record's liquidity: each pool as a liquidityDTO under the
// chain name of the request, [] when there is none.
type liquidityList struct {
	pools     []token.PoolLiquidity
	chainName string
}

func liquidityOut(p *token.PoolLiquidity, chainName string) liquidityDTO {
	return liquidityDTO{ProgramAddress: p.ProgramAddress, ProtocolFamily: p.ProtocolFamily, Image: p.Image, Chain: chainName,
		PoolAddress: p.PoolAddress, ProtocolName: p.ProtocolName, TokenAAddress: p.TokenAAddress, TokenBAddress: p.TokenBAddress,
		TvlInUsd: p.TVLInUSD, TvlInSol: p.TVLInSol}
}

type multiTokenDTO struct {
	Chain           string         `json:"chain"`
	Decimals        int32          `json:"decimals"`
	Name            string         `json:"name"`
	Symbol          string         `json:"symbol"`
	Address         string         `json:"address"`
	Stats           multiStatsDTO  `json:"stats"`
	MarketData      multiMarketDTO `json:"marketData"`
	MetadataAddress nullString     `json:"metadataAddress"`
	TokenCreators   creatorList    `json:"tokenCreators"`
	ImageURL        nullString     `json:"imageUrl"`
	URI             nullString     `json:"uri"`
	Extra           extraDTO       `json:"extra"`
	SocialMedias    socialsDTO     `json:"socialMedias"`
	TokenCreatedAt  *int64         `json:"tokenCreatedAt"`
	Description     nullString     `json:"description"`
	Market          nullString     `json:"market"`
	Extension       extensionDTO   `json:"extension"`
	Liquidity       liquidityList  `json:"liquidity"`
}

// multiTokenOut renders the multi-detail record; chainName is the chain as the request named
// it (ethereum is stored as eth).
func multiTokenOut(d *token.Detail, chainName string) multiTokenDTO {
	return multiTokenDTO{
		Chain: chainName, Decimals: d.Decimals, Name: d.Name, Symbol: d.Symbol, Address: d.Address, Stats: multiStatsOut(d),
		MarketData: multiMarketOut(&d.MarketData), MetadataAddress: nullString(d.MetadataAddress), TokenCreators: creatorList(d.Creators),
		ImageURL: nullString(d.ImageURL), URI: nullString(d.URI), Extra: extraOut(&d.Extra, 1000), SocialMedias: socialsOut(d.Socials),
		TokenCreatedAt: d.CreatedAt, Description: nullString(d.Description), Market: nullString(d.Market),
		Extension: extensionDTO{Website: nullString(d.Socials.Get(token.SocialWebsite)), Twitter: nullString(d.Socials.Get(token.SocialTwitter))},
		Liquidity: liquidityList{d.Pools, chainName},
	}
}

// --- the keyed objects ---

// byWindow, byGroup and bySocial hold one value per item of token.AllWindows,
// token.AllHolderGroups and token.SocialKeys, in that order (their lengths are generated).
type (
	byWindow[T any] [windowCount]T
	byGroup[T any]  [groupCount]T
	bySocial[T any] [socialCount]T
)

// keyListOf returns, for a byWindow, byGroup or bySocial type, the items whose keys its
// elements are written under; ok is false for any other type.
func keyListOf(t reflect.Type) (items []string, ok bool) {
	if t.Kind() != reflect.Array || t.PkgPath() != reflect.TypeFor[socialsDTO]().PkgPath() {
		return nil, false
	}
	name, _, _ := strings.Cut(t.Name(), "[")
	switch name {
	case "byWindow":
		return stringsOf(token.AllWindows), true
	case "byGroup":
		return stringsOf(token.AllHolderGroups), true
	case "bySocial":
		return token.SocialKeys, true
	}
	return nil, false
}

func stringsOf[S ~string](list []S) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = string(s)
	}
	return out
}

// socialsDTO is socialMedias: every spec key, null where the token has no link.
type socialsDTO struct {
	Links bySocial[nullString] `json:"*"`
}

func socialsOut(s token.Socials) socialsDTO {
	var o socialsDTO
	if s.Any() {
		for i, k := range token.SocialKeys {
			o.Links[i] = nullString(s.Get(k))
		}
	}
	return o
}

// marketDataDTO is the v2 record's marketData.
type marketDataDTO struct {
	Top10HoldingsRatio  decimal.Decimal          `json:"top10HoldingsRatio"`
	Top10TotalHoldings  decimal.Decimal          `json:"top10TotalHoldings"`
	Top50HoldingsRatio  decimal.Decimal          `json:"top50HoldingsRatio"`
	Top50TotalHoldings  decimal.Decimal          `json:"top50TotalHoldings"`
	Top100HoldingsRatio decimal.Decimal          `json:"top100HoldingsRatio"`
	Top100TotalHoldings decimal.Decimal          `json:"top100TotalHoldings"`
	CirculatingSupply   decimal.Decimal          `json:"circulatingSupply"`
	CompletionRatio     decimal.Decimal          `json:"completionRatio"`
	FDVInSol            decimal.Decimal          `json:"fdvInSol"`
	FDVInUSD            decimal.Decimal          `json:"fdvInUsd"`
	Holders             decimal.Decimal          `json:"holders"`
	MarketCapInSol      decimal.Decimal          `json:"marketCapInSol"`
	MarketCapInUSD      decimal.Decimal          `json:"marketCapInUsd"`
	MaxPoolTVLInSol     decimal.Decimal          `json:"maxPoolTvlInSol"`
	MaxPoolTVLInUSD     decimal.Decimal          `json:"maxPoolTvlInUsd"`
	PriceInSol          decimal.Decimal          `json:"priceInSol"`
	PriceInUSD          decimal.Decimal          `json:"priceInUsd"`
	TotalSupply         decimal.Decimal          `json:"totalSupply"`
	TotalTVLInSol       decimal.Decimal          `json:"totalTvlInSol"`
	TotalTVLInUSD       decimal.Decimal          `json:"totalTvlInUsd"`
	GroupHoldingsRatio  byGroup[decimal.Decimal] `json:"*HoldingsRatio"`
	GroupTotalHolders   byGroup[decimal.Decimal] `json:"*TotalHolders"`
	GroupTotalHoldings  byGroup[decimal.Decimal] `json:"*TotalHoldings"`
}

func marketDataOut(m *token.MarketData) marketDataDTO {
	o := marketDataDTO{
		Top10HoldingsRatio: m.Top10.HoldingsRatio, Top10TotalHoldings: m.Top10.TotalHoldings,
		Top50HoldingsRatio: m.Top50.HoldingsRatio, Top50TotalHoldings: m.Top50.TotalHoldings,
		Top100HoldingsRatio: m.Top100.HoldingsRatio, Top100TotalHoldings: m.Top100.TotalHoldings,
		CirculatingSupply: m.CirculatingSupply, CompletionRatio: m.CompletionRatio, FDVInSol: m.FDVInSol, FDVInUSD: m.FDVInUSD,
		Holders: m.Holders, MarketCapInSol: m.MarketCapInSol, MarketCapInUSD: m.MarketCapInUSD,
		MaxPoolTVLInSol: m.MaxPoolTVLInSol, MaxPoolTVLInUSD: m.MaxPoolTVLInUSD, PriceInSol: m.PriceInSol, PriceInUSD: m.PriceInUSD,
		TotalSupply: m.TotalSupply, TotalTVLInSol: m.TotalTVLInSol, TotalTVLInUSD: m.TotalTVLInUSD,
	}
	for i, g := range token.AllHolderGroups {
		h := m.Group(g)
		o.GroupHoldingsRatio[i], o.GroupTotalHolders[i], o.GroupTotalHoldings[i] = h.HoldingsRatio, h.TotalHolders, h.TotalHoldings
	}
	return o
}

// periodDTO is one window of the v2 record's stats.periods: token.PeriodStats field for field
// (periodDTO(s) converts one), counts as decimal strings (as decimal.NewFromInt wrote them).
type periodDTO struct {
	Buys                  int64           `json:"buys,string"`
	Sells                 int64           `json:"sells,string"`
	Trades                int64           `json:"trades,string"`
	Buyers                int64           `json:"buyers,string"`
	Sellers               int64           `json:"sellers,string"`
	Traders               int64           `json:"traders,string"`
	BuyVolume             decimal.Decimal `json:"-"`
	SellVolume            decimal.Decimal `json:"-"`
	TotalVolume           decimal.Decimal `json:"-"`
	BuyVolumeInUSD        decimal.Decimal `json:"buyVolumeInUsd"`
	SellVolumeInUSD       decimal.Decimal `json:"sellVolumeInUsd"`
	TotalVolumeInUSD      decimal.Decimal `json:"totalVolumeInUsd"`
	OpenInUSD             decimal.Decimal `json:"openInUsd"`
	CloseInUSD            decimal.Decimal `json:"closeInUsd"`
	HighInUSD             decimal.Decimal `json:"highInUsd"`
	LowInUSD              decimal.Decimal `json:"lowInUsd"`
	PriceChangeRatioInUSD decimal.Decimal `json:"priceChangeRatioInUsd"`
	CurrentLiquidityInUSD decimal.Decimal `json:"currentLiquidityInUsd"`
}

// periodsDTO is the v2 record's stats.periods: every window, zeros where the token has none.
type periodsDTO struct {
	Windows byWindow[periodDTO] `json:"*"`
}

func periodsOut(stats map[token.Window]token.PeriodStats) periodsDTO {
	var o periodsDTO
	for i, w := range token.AllWindows {
		o.Windows[i] = periodDTO(stats[w])
	}
	return o
}

// multiStatsDTO is the multi-detail record's stats: the address and each figure per window,
// counts as JSON numbers.
type multiStatsDTO struct {
	Address               string                    `json:"address"`
	Price                 byWindow[decimal.Decimal] `json:"price*"`
	BuyVolumes            byWindow[decimal.Decimal] `json:"buyVolumes*"`
	SellsVolumes          byWindow[decimal.Decimal] `json:"sellsVolumes*"`
	Volumes               byWindow[decimal.Decimal] `json:"volumes*"`
	BuyVolumesInUsd       byWindow[decimal.Decimal] `json:"buyVolumesInUsd*"`
	SellVolumesInUsd      byWindow[decimal.Decimal] `json:"sellVolumesInUsd*"`
	VolumesInUsd          byWindow[decimal.Decimal] `json:"volumesInUsd*"`
	OpenPriceInUsd        byWindow[decimal.Decimal] `json:"openPriceInUsd*"`
	ClosePriceInUsd       byWindow[decimal.Decimal] `json:"closePriceInUsd*"`
	PriceChangeRatioInUsd byWindow[decimal.Decimal] `json:"priceChangeRatioInUsd*"`
	HighInUsd             byWindow[decimal.Decimal] `json:"highInUsd*"`
	LowInUsd              byWindow[decimal.Decimal] `json:"lowInUsd*"`
	Buys                  byWindow[int64]           `json:"buys*"`
	Sells                 byWindow[int64]           `json:"sells*"`
	Buyers                byWindow[int64]           `json:"buyers*"`
	Sellers               byWindow[int64]           `json:"sellers*"`
	Trades                byWindow[int64]           `json:"trades*"`
	Traders               byWindow[int64]           `json:"traders*"`
}

func multiStatsOut(d *token.Detail) multiStatsDTO {
	o := multiStatsDTO{Address: d.Address}
	for i, w := range token.AllWindows {
		s := d.Stats[w]
		o.Price[i], o.BuyVolumes[i], o.SellsVolumes[i], o.Volumes[i] = s.CloseInUSD, s.BuyVolume, s.SellVolume, s.TotalVolume
		o.BuyVolumesInUsd[i], o.SellVolumesInUsd[i], o.VolumesInUsd[i] = s.BuyVolumeInUSD, s.SellVolumeInUSD, s.TotalVolumeInUSD
		o.OpenPriceInUsd[i], o.ClosePriceInUsd[i], o.PriceChangeRatioInUsd[i] = s.OpenInUSD, s.CloseInUSD, s.PriceChangeRatioInUSD
		o.HighInUsd[i], o.LowInUsd[i] = s.HighInUSD, s.LowInUSD
		o.Buys[i], o.Sells[i], o.Buyers[i], o.Sellers[i], o.Trades[i], o.Traders[i] = s.Buys, s.Sells, s.Buyers, s.Sellers, s.Trades, s.Traders
	}
	return o
}

// multiMarketDTO is the multi-detail record's marketData.
type multiMarketDTO struct {
	TotalSupply         decimal.Decimal `json:"totalSupply"`
	MarketCapInSol      decimal.Decimal `json:"marketCapInSol"`
	MarketCapInUsd      decimal.Decimal `json:"marketCapInUsd"`
	Top10TotalHoldings  decimal.Decimal `json:"top10TotalHoldings"`
	Top10HoldingsRatio  decimal.Decimal `json:"top10HoldingsRatio"`
	Top100TotalHoldings decimal.Decimal `json:"top100TotalHoldings"`
	Top100HoldingsRatio decimal.Decimal `json:"top100HoldingsRatio"`
	PriceInSol          decimal.Decimal `json:"priceInSol"`
	PriceInUsd          decimal.Decimal `json:"priceInUsd"`
	TvlInSol            decimal.Decimal `json:"tvlInSol"`
	TvlInUsd            decimal.Decimal `json:"tvlInUsd"`
	CompletionRatio     decimal.Decimal `json:"completionRatio"`
	DevTeamAmount       decimal.Decimal `json:"devTeamAmount"`
	DevTeamRatio        decimal.Decimal `json:"devTeamRatio"`
	Holders             int64           `json:"holders"`
	DevTeamCount        int64           `json:"devTeamCount"`
}

func multiMarketOut(m *token.MarketData) multiMarketDTO {
	dev := m.Group(token.Dev)
	return multiMarketDTO{
		TotalSupply: m.TotalSupply, MarketCapInSol: m.MarketCapInSol, MarketCapInUsd: m.MarketCapInUSD,
		Top10TotalHoldings: m.Top10.TotalHoldings, Top10HoldingsRatio: m.Top10.HoldingsRatio,
		Top100TotalHoldings: m.Top100.TotalHoldings, Top100HoldingsRatio: m.Top100.HoldingsRatio,
		PriceInSol: m.PriceInSol, PriceInUsd: m.PriceInUSD, TvlInSol: m.TotalTVLInSol, TvlInUsd: m.TotalTVLInUSD,
		CompletionRatio: m.CompletionRatio, DevTeamAmount: dev.TotalHoldings, DevTeamRatio: dev.HoldingsRatio,
		Holders: m.Holders.IntPart(), DevTeamCount: dev.TotalHolders.IntPart(),
	}
}

// --- the lists and pages ---

// encodeTokenV2List appends the bare array of v2 records of ranking and v2 multi-detail ([] when
// empty), each record built on the stack: the encoder of the bodies the read cache keeps.
func encodeTokenV2List(b []byte, ds []token.Detail) []byte {
	return appendArray(b, ds, func(d *token.Detail, b []byte) []byte {
		t := tokenV2Out(d)
		return t.appendJSON(b)
	})
}

// encodeMultiTokenList appends the bare array of multi-detail records ([] when empty).
func encodeMultiTokenList(b []byte, ds []token.Detail, chainName string) []byte {
	return appendArray(b, ds, func(d *token.Detail, b []byte) []byte {
		t := multiTokenOut(d, chainName)
		return t.appendJSON(b)
	})
}

// tokenV2Page and tokenFastPage are search's pages in its two modes.
func tokenV2Page(p page.Page[token.Detail]) *pageDTO[tokenV2DTO] {
	return toPage(p, func(d token.Detail) tokenV2DTO { return tokenV2Out(&d) })
}

func tokenFastPage(p page.Page[token.Detail]) *pageDTO[tokenFastDTO] {
	return toPage(p, func(d token.Detail) tokenFastDTO { return tokenFastOut(&d) })
}
