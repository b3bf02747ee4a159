package httpapi

import (
	"time"

	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/domain/token"
)

// The token records' reference DTOs: what encoding/json wrote for search, multi-detail and the
// ranking before their hand-written writers (dto_json.go). Only tests use them, as the oracle
// the writers are compared with byte for byte (json_test.go).

// --- tokens (v2 shape: search and ranking) ---

type oldCreatorDTO struct {
	Address    string `json:"address"`
	IsVerified bool   `json:"isVerified"`
	Share      int64  `json:"share"`
}

func oldCreators(cs []token.Creator) []oldCreatorDTO {
	out := make([]oldCreatorDTO, len(cs))
	for i, c := range cs {
		out[i] = oldCreatorDTO(c)
	}
	return out
}

type oldExtraDTO struct {
	CollectionAddress        *string `json:"collectionAddress"`
	EditionNonce             *int64  `json:"editionNonce"`
	FreezeAuthority          *string `json:"freezeAuthority"`
	Fungible                 *bool   `json:"fungible"`
	IsMutable                *bool   `json:"isMutable"`
	IsNative                 *bool   `json:"isNative"`
	IsVerifiedCollection     *bool   `json:"isVerifiedCollection"`
	IsWrapped                *bool   `json:"isWrapped"`
	Key                      *string `json:"key"`
	LaunchFromProgramAddress *string `json:"launchFromProgramAddress"`
	LaunchFromProtocolFamily *string `json:"launchFromProtocolFamily"`
	MigratedAt               *int64  `json:"migratedAt"`
	MigratedToPoolAddress    *string `json:"migratedToPoolAddress"`
	MigratedToProgramAddress *string `json:"migratedToProgramAddress"`
	MigratedToProtocolFamily *string `json:"migratedToProtocolFamily"`
	MintAuthority            *string `json:"mintAuthority"`
	PrimarySaleHappened      *bool   `json:"primarySaleHappened"`
	ProgramAddress           *string `json:"programAddress"`
	SellerFeeBasisPoints     *int64  `json:"sellerFeeBasisPoints"`
	TokenStandard            *string `json:"tokenStandard"`
	UpdateAuthority          *string `json:"updateAuthority"`
}

// oldExtra renders the extension/oldExtra object; migratedAt is divided by unit (1 for the v2
// shape's milliseconds, 1000 for the multi-detail shape's seconds).
func oldExtra(e token.Extra, unit int64) oldExtraDTO {
	var migrated *int64
	if e.MigratedAt != nil {
		v := *e.MigratedAt / unit
		migrated = &v
	}
	return oldExtraDTO{
		CollectionAddress: nullable(e.CollectionAddress), EditionNonce: e.EditionNonce, FreezeAuthority: nullable(e.FreezeAuthority),
		Fungible: e.Fungible, IsMutable: e.IsMutable, IsNative: e.IsNative, IsVerifiedCollection: e.IsVerifiedCollection,
		IsWrapped: e.IsWrapped, Key: nullable(e.Key), LaunchFromProgramAddress: nullable(e.LaunchFromProgramAddress),
		LaunchFromProtocolFamily: nullable(e.LaunchFromProtocolFamily), MigratedAt: migrated,
		MigratedToPoolAddress: nullable(e.MigratedToPoolAddress), MigratedToProgramAddress: nullable(e.MigratedToProgramAddress),
		MigratedToProtocolFamily: nullable(e.MigratedToProtocolFamily), MintAuthority: nullable(e.MintAuthority),
		PrimarySaleHappened: e.PrimarySaleHappened, ProgramAddress: nullable(e.ProgramAddress),
		SellerFeeBasisPoints: e.SellerFeeBasisPoints, TokenStandard: nullable(e.TokenStandard),
		UpdateAuthority: nullable(e.UpdateAuthority),
	}
}

// oldSocials renders every socialMedias key of the spec, null when the token has no such link.
func oldSocials(s token.Socials) map[string]*string {
	out := make(map[string]*string, len(token.SocialKeys))
	for _, k := range token.SocialKeys {
		out[k] = nullable(s.Get(k))
	}
	return out
}

// oldMarketDataV2 renders the v2 marketData object: every value a decimal string.
func oldMarketDataV2(m token.MarketData) map[string]decimal.Decimal {
	out := map[string]decimal.Decimal{
		"top10HoldingsRatio": m.Top10.HoldingsRatio, "top10TotalHoldings": m.Top10.TotalHoldings,
		"top50HoldingsRatio": m.Top50.HoldingsRatio, "top50TotalHoldings": m.Top50.TotalHoldings,
		"top100HoldingsRatio": m.Top100.HoldingsRatio, "top100TotalHoldings": m.Top100.TotalHoldings,
		"circulatingSupply": m.CirculatingSupply, "completionRatio": m.CompletionRatio, "fdvInSol": m.FDVInSol,
		"fdvInUsd": m.FDVInUSD, "holders": m.Holders, "marketCapInSol": m.MarketCapInSol, "marketCapInUsd": m.MarketCapInUSD,
		"maxPoolTvlInSol": m.MaxPoolTVLInSol, "maxPoolTvlInUsd": m.MaxPoolTVLInUSD, "priceInSol": m.PriceInSol,
		"priceInUsd": m.PriceInUSD, "totalSupply": m.TotalSupply, "totalTvlInSol": m.TotalTVLInSol,
		"totalTvlInUsd": m.TotalTVLInUSD,
	}
	for _, g := range token.AllHolderGroups {
		h := m.Group(g)
		out[string(g)+"HoldingsRatio"] = h.HoldingsRatio
		out[string(g)+"TotalHolders"] = h.TotalHolders
		out[string(g)+"TotalHoldings"] = h.TotalHoldings
	}
	return out
}

type oldStatsV2DTO struct {
	Address string                                `json:"address"`
	Periods map[string]map[string]decimal.Decimal `json:"periods"`
}

// oldPeriod renders one stats.periods entry; counts are decimal strings in the v2 shape.
func oldPeriod(s token.PeriodStats) map[string]decimal.Decimal {
	n := decimal.NewFromInt
	return map[string]decimal.Decimal{
		"buyVolumeInUsd": s.BuyVolumeInUSD, "buyers": n(s.Buyers), "buys": n(s.Buys), "closeInUsd": s.CloseInUSD,
		"currentLiquidityInUsd": s.CurrentLiquidityInUSD, "highInUsd": s.HighInUSD, "lowInUsd": s.LowInUSD,
		"openInUsd": s.OpenInUSD, "priceChangeRatioInUsd": s.PriceChangeRatioInUSD, "sellVolumeInUsd": s.SellVolumeInUSD,
		"sellers": n(s.Sellers), "sells": n(s.Sells), "totalVolumeInUsd": s.TotalVolumeInUSD, "traders": n(s.Traders),
		"trades": n(s.Trades),
	}
}

type oldTokenV2DTO struct {
	Address                 string                     `json:"address"`
	Chain                   string                     `json:"chain"`
	Decimals                int32                      `json:"decimals"`
	Name                    string                     `json:"name"`
	Symbol                  string                     `json:"symbol"`
	VendorCoinID            *string                    `json:"vendorCoinId"`
	Description             *string                    `json:"description"`
	DevLastTokenCreatedAt   *string                    `json:"devLastTokenCreatedAt"`
	DevTotalTokens          *string                    `json:"devTotalTokens"`
	Extension               oldExtraDTO                `json:"extension"`
	Extra                   oldExtraDTO                `json:"extra"`
	ImageURL                *string                    `json:"imageUrl"`
	Market                  *string                    `json:"market"`
	MarketData              map[string]decimal.Decimal `json:"marketData"`
	MetadataAddress         *string                    `json:"metadataAddress"`
	SocialMedias            map[string]*string         `json:"socialMedias"`
	Stats                   oldStatsV2DTO              `json:"stats"`
	TokenCreatedAt          *int64                     `json:"tokenCreatedAt"`
	TokenCreatedBlockHeight *string                    `json:"tokenCreatedBlockHeight"`
	TokenCreatedSlot        *string                    `json:"tokenCreatedSlot"`
	TokenCreatedTxSignature *string                    `json:"tokenCreatedTxSignature"`
	TokenCreators           []oldCreatorDTO            `json:"tokenCreators"`
	URI                     *string                    `json:"uri"`
}

func oldTokenV2(d token.Detail) oldTokenV2DTO {
	var devLast *string
	if d.DevLastTokenCreatedAt != nil {
		s := d.DevLastTokenCreatedAt.UTC().Format(time.RFC3339Nano)
		devLast = &s
	}
	periods := make(map[string]map[string]decimal.Decimal, len(token.AllWindows))
	for _, w := range token.AllWindows {
		periods[string(w)] = oldPeriod(d.Period(w))
	}
	return oldTokenV2DTO{
		Address: d.Address, Chain: string(d.Chain), Decimals: d.Decimals, Name: d.Name, Symbol: d.Symbol,
		VendorCoinID: nullable(d.VendorCoinID), Description: nullable(d.Description), DevLastTokenCreatedAt: devLast,
		DevTotalTokens: countPtr(d.DevTotalTokens), Extension: oldExtra(d.Extra, 1), Extra: oldExtra(d.Extra, 1),
		ImageURL: nullable(d.ImageURL), Market: nullable(d.Market), MarketData: oldMarketDataV2(d.MarketData),
		MetadataAddress: nullable(d.MetadataAddress), SocialMedias: oldSocials(d.Socials),
		Stats: oldStatsV2DTO{Address: d.Address, Periods: periods}, TokenCreatedAt: d.CreatedAt,
		TokenCreatedBlockHeight: countPtr(d.CreatedBlockHeight), TokenCreatedSlot: countPtr(d.CreatedSlot),
		TokenCreatedTxSignature: nullable(d.CreatedTxSignature), TokenCreators: oldCreators(d.Creators), URI: nullable(d.URI),
	}
}

// oldTokenFastDTO is search's fast mode: the identity fields plus the numbers search sorts on, in
// the places the v2 record keeps them (liquidity is marketData.totalTvlInUsd, the 24h volume
// and trade count are stats.periods["24h"]).
type oldTokenFastDTO struct {
	Address        string                     `json:"address"`
	Chain          string                     `json:"chain"`
	Decimals       int32                      `json:"decimals"`
	Name           string                     `json:"name"`
	Symbol         string                     `json:"symbol"`
	ImageURL       *string                    `json:"imageUrl"`
	TokenCreatedAt *int64                     `json:"tokenCreatedAt"`
	MarketData     map[string]decimal.Decimal `json:"marketData"`
	Stats          oldStatsV2DTO              `json:"stats"`
}

func oldTokenFast(d token.Detail) oldTokenFastDTO {
	day := d.Period(token.Window24h)
	return oldTokenFastDTO{
		Address: d.Address, Chain: string(d.Chain), Decimals: d.Decimals, Name: d.Name, Symbol: d.Symbol,
		ImageURL: nullable(d.ImageURL), TokenCreatedAt: d.CreatedAt,
		MarketData: map[string]decimal.Decimal{"priceInUsd": d.MarketData.PriceInUSD, "marketCapInUsd": d.MarketData.MarketCapInUSD,
			"totalTvlInUsd": d.MarketData.TotalTVLInUSD, "holders": d.MarketData.Holders},
		Stats: oldStatsV2DTO{Address: d.Address, Periods: map[string]map[string]decimal.Decimal{
			string(token.Window24h): {"totalVolumeInUsd": day.TotalVolumeInUSD, "trades": decimal.NewFromInt(day.Trades)}}},
	}
}

// --- tokens (multi-detail shape) ---

type oldExtensionDTO struct {
	Website *string `json:"website"`
	Twitter *string `json:"twitter"`
}

type oldLiquidityDTO struct {
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

type oldMultiTokenDTO struct {
	Chain           string             `json:"chain"`
	Decimals        int32              `json:"decimals"`
	Name            string             `json:"name"`
	Symbol          string             `json:"symbol"`
	Address         string             `json:"address"`
	Stats           map[string]any     `json:"stats"`
	MarketData      map[string]any     `json:"marketData"`
	MetadataAddress *string            `json:"metadataAddress"`
	TokenCreators   []oldCreatorDTO    `json:"tokenCreators"`
	ImageURL        *string            `json:"imageUrl"`
	URI             *string            `json:"uri"`
	Extra           oldExtraDTO        `json:"extra"`
	SocialMedias    map[string]*string `json:"socialMedias"`
	TokenCreatedAt  *int64             `json:"tokenCreatedAt"`
	Description     *string            `json:"description"`
	Market          *string            `json:"market"`
	Extension       oldExtensionDTO    `json:"extension"`
	Liquidity       []oldLiquidityDTO  `json:"liquidity"`
}

// oldMultiToken renders the multi-detail record; chainName is the chain as the request named it
// (ethereum is stored as eth).
func oldMultiToken(d token.Detail, chainName string) oldMultiTokenDTO {
	stats := map[string]any{"address": d.Address}
	for _, w := range token.AllWindows {
		s, p := d.Period(w), string(w)
		stats["price"+p] = s.CloseInUSD
		stats["buyVolumes"+p] = s.BuyVolume
		stats["sellsVolumes"+p] = s.SellVolume
		stats["volumes"+p] = s.TotalVolume
		stats["buyVolumesInUsd"+p] = s.BuyVolumeInUSD
		stats["sellVolumesInUsd"+p] = s.SellVolumeInUSD
		stats["volumesInUsd"+p] = s.TotalVolumeInUSD
		stats["openPriceInUsd"+p] = s.OpenInUSD
		stats["closePriceInUsd"+p] = s.CloseInUSD
		stats["priceChangeRatioInUsd"+p] = s.PriceChangeRatioInUSD
		stats["highInUsd"+p] = s.HighInUSD
		stats["lowInUsd"+p] = s.LowInUSD
		stats["buys"+p] = s.Buys
		stats["sells"+p] = s.Sells
		stats["buyers"+p] = s.Buyers
		stats["sellers"+p] = s.Sellers
		stats["trades"+p] = s.Trades
		stats["traders"+p] = s.Traders
	}
	m := d.MarketData
	dev := m.Group(token.Dev)
	md := map[string]any{
		"totalSupply": m.TotalSupply, "marketCapInSol": m.MarketCapInSol, "marketCapInUsd": m.MarketCapInUSD,
		"top10TotalHoldings": m.Top10.TotalHoldings, "top10HoldingsRatio": m.Top10.HoldingsRatio,
		"top100TotalHoldings": m.Top100.TotalHoldings, "top100HoldingsRatio": m.Top100.HoldingsRatio,
		"priceInSol": m.PriceInSol, "priceInUsd": m.PriceInUSD, "tvlInSol": m.TotalTVLInSol, "tvlInUsd": m.TotalTVLInUSD,
		"completionRatio": m.CompletionRatio, "devTeamAmount": m.CreatorHoldings(), "devTeamRatio": m.CreatorHoldingsRatio(),
		"holders": m.Holders.IntPart(), "devTeamCount": dev.TotalHolders.IntPart(),
	}
	liq := make([]oldLiquidityDTO, len(d.Pools))
	for i, p := range d.Pools {
		liq[i] = oldLiquidityDTO{ProgramAddress: p.ProgramAddress, ProtocolFamily: p.ProtocolFamily, Image: p.Image, Chain: chainName,
			PoolAddress: p.PoolAddress, ProtocolName: p.ProtocolName, TokenAAddress: p.TokenAAddress, TokenBAddress: p.TokenBAddress,
			TvlInUsd: p.TVLInUSD, TvlInSol: p.TVLInSol}
	}
	return oldMultiTokenDTO{
		Chain: chainName, Decimals: d.Decimals, Name: d.Name, Symbol: d.Symbol, Address: d.Address, Stats: stats, MarketData: md,
		MetadataAddress: nullable(d.MetadataAddress), TokenCreators: oldCreators(d.Creators), ImageURL: nullable(d.ImageURL),
		URI: nullable(d.URI), Extra: oldExtra(d.Extra, 1000), SocialMedias: oldSocials(d.Socials), TokenCreatedAt: d.CreatedAt,
		Description: nullable(d.Description), Market: nullable(d.Market),
		Extension: oldExtensionDTO{Website: nullable(d.Socials.Get(token.SocialWebsite)), Twitter: nullable(d.Socials.Get(token.SocialTwitter))},
		Liquidity: liq,
	}
}
