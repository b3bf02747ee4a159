package httpapi

import (
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
// socialMedias) have dozens of keys made of a name and a window or holder group. They are not
// structs of their own but views of the detail (marketDataV2, periodsV2, multiStats,
// multiMarketData, socialsView) over one key table each (tokenKeys, dto_json.go), which writes
// them in encoding/json's sorted map order.

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
	Address               string       `json:"address"`
	Chain                 string       `json:"chain"`
	Decimals              int32        `json:"decimals"`
	Name                  string       `json:"name"`
	Symbol                string       `json:"symbol"`
	VendorCoinID          nullString   `json:"vendorCoinId"`
	Description           nullString   `json:"description"`
	DevLastTokenCreatedAt utcTime      `json:"devLastTokenCreatedAt"`
	DevTotalTokens        *int64       `json:"devTotalTokens,string"`
	Extension             extraDTO     `json:"extension"`
	Extra                 extraDTO     `json:"extra"`
	ImageURL              nullString   `json:"imageUrl"`
	Market                nullString   `json:"market"`
	MarketData            marketDataV2 `json:"marketData"`
	MetadataAddress       nullString   `json:"metadataAddress"`
	SocialMedias          socialsView  `json:"socialMedias"`
	Stats                 struct {
		Address string    `json:"address"`
		Periods periodsV2 `json:"periods"`
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
		MarketData: marketDataV2{&d.MarketData}, MetadataAddress: nullString(d.MetadataAddress), SocialMedias: socialsView{d.Socials},
		TokenCreatedAt: d.CreatedAt, TokenCreatedBlockHeight: d.CreatedBlockHeight, TokenCreatedSlot: d.CreatedSlot,
		TokenCreatedTxSignature: nullString(d.CreatedTxSignature), TokenCreators: creatorList(d.Creators), URI: nullString(d.URI),
	}
	t.Stats.Address, t.Stats.Periods = d.Address, periodsV2{d.Stats}
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
	Chain           string          `json:"chain"`
	Decimals        int32           `json:"decimals"`
	Name            string          `json:"name"`
	Symbol          string          `json:"symbol"`
	Address         string          `json:"address"`
	Stats           multiStats      `json:"stats"`
	MarketData      multiMarketData `json:"marketData"`
	MetadataAddress nullString      `json:"metadataAddress"`
	TokenCreators   creatorList     `json:"tokenCreators"`
	ImageURL        nullString      `json:"imageUrl"`
	URI             nullString      `json:"uri"`
	Extra           extraDTO        `json:"extra"`
	SocialMedias    socialsView     `json:"socialMedias"`
	TokenCreatedAt  *int64          `json:"tokenCreatedAt"`
	Description     nullString      `json:"description"`
	Market          nullString      `json:"market"`
	Extension       extensionDTO    `json:"extension"`
	Liquidity       liquidityList   `json:"liquidity"`
}

// multiTokenOut renders the multi-detail record; chainName is the chain as the request named
// it (ethereum is stored as eth).
func multiTokenOut(d *token.Detail, chainName string) multiTokenDTO {
	return multiTokenDTO{
		Chain: chainName, Decimals: d.Decimals, Name: d.Name, Symbol: d.Symbol, Address: d.Address, Stats: multiStats{d},
		MarketData: multiMarketData{&d.MarketData}, MetadataAddress: nullString(d.MetadataAddress), TokenCreators: creatorList(d.Creators),
		ImageURL: nullString(d.ImageURL), URI: nullString(d.URI), Extra: extraOut(&d.Extra, 1000), SocialMedias: socialsView{d.Socials},
		TokenCreatedAt: d.CreatedAt, Description: nullString(d.Description), Market: nullString(d.Market),
		Extension: extensionDTO{Website: nullString(d.Socials.Get(token.SocialWebsite)), Twitter: nullString(d.Socials.Get(token.SocialTwitter))},
		Liquidity: liquidityList{d.Pools, chainName},
	}
}

// --- the keyed objects: views of the detail over their key tables (dto_json.go) ---

// socialsView is socialMedias: every spec key, null where the token has no link.
type socialsView struct{ s token.Socials }

// marketDataV2 is the v2 record's marketData: the decimals of tokenKeys.marketDataV2.
type marketDataV2 struct{ m *token.MarketData }

// periodsV2 is the v2 record's stats.periods: every window, each the keys of
// tokenKeys.periodV2, counts as decimal strings.
type periodsV2 struct {
	stats map[token.Window]token.PeriodStats
}

// multiStats is the multi-detail record's stats: the address and the keys of
// tokenKeys.multiStats (a field and a window each), counts as JSON numbers.
type multiStats struct{ d *token.Detail }

// multiMarketData is the multi-detail record's marketData: the keys of
// tokenKeys.multiMarketData, decimals and two int64 counts.
type multiMarketData struct{ m *token.MarketData }

// --- the lists and pages ---

// encodeTokenV2List appends the bare array of v2 records of ranking and v2 multi-detail ([] when
// empty), each record built on the stack: the encoder of the bodies rankcache.go keeps.
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
