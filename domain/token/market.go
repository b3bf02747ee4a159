package token

import (
	"strings"

	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/domain/fault"
)

// HolderGroup is a wallet label under which marketData reports holdings.
type HolderGroup string

const (
	Bluechip HolderGroup = "bluechip"
	Bundle   HolderGroup = "bundle"
	Dev      HolderGroup = "dev"
	Fresh    HolderGroup = "fresh"
	Insider  HolderGroup = "insider"
	Kol      HolderGroup = "kol"
	Pro      HolderGroup = "pro"
	// Sandwish is spelled as the API spells it.
	Sandwish HolderGroup = "sandwish"
	Sniper   HolderGroup = "sniper"
)

// AllHolderGroups lists the groups in the spec's order.
var AllHolderGroups = []HolderGroup{Bluechip, Bundle, Dev, Fresh, Insider, Kol, Pro, Sandwish, Sniper}

// ParseHolderGroup accepts a group name case-insensitively.
func ParseHolderGroup(param, s string) (HolderGroup, error) {
	g := HolderGroup(strings.ToLower(strings.TrimSpace(s)))
	for _, v := range AllHolderGroups {
		if v == g {
			return g, nil
		}
	}
	allowed := make([]string, len(AllHolderGroups))
	for i, v := range AllHolderGroups {
		allowed[i] = string(v)
	}
	return "", fault.InvalidParam(param, s, allowed...)
}

// GroupHolding is <G>TotalHolders, <G>TotalHoldings and <G>HoldingsRatio of one group.
type GroupHolding struct {
	TotalHolders  decimal.Decimal
	TotalHoldings decimal.Decimal
	HoldingsRatio decimal.Decimal
}

// TopHolding is top<N>TotalHoldings and top<N>HoldingsRatio.
type TopHolding struct {
	TotalHoldings decimal.Decimal
	HoldingsRatio decimal.Decimal
}

// MarketData is the v2 marketData object. Ratios are fractions in 0..1. A group missing from
// Groups reads as zeros (see Group).
type MarketData struct {
	Groups            map[HolderGroup]GroupHolding
	Top10             TopHolding
	Top50             TopHolding
	Top100            TopHolding
	CirculatingSupply decimal.Decimal
	CompletionRatio   decimal.Decimal
	FDVInSol          decimal.Decimal
	FDVInUSD          decimal.Decimal
	Holders           decimal.Decimal
	MarketCapInSol    decimal.Decimal
	MarketCapInUSD    decimal.Decimal
	MaxPoolTVLInSol   decimal.Decimal
	MaxPoolTVLInUSD   decimal.Decimal
	PriceInSol        decimal.Decimal
	PriceInUSD        decimal.Decimal
	TotalSupply       decimal.Decimal
	TotalTVLInSol     decimal.Decimal
	TotalTVLInUSD     decimal.Decimal
}

// Group returns the holdings of g, zeros when absent.
func (m MarketData) Group(g HolderGroup) GroupHolding {
	if h, ok := m.Groups[g]; ok {
		return h
	}
	return GroupHolding{}
}

// CreatorHoldings is the multi-detail shape's creatorHoldings / devTeamAmount: the dev group.
func (m MarketData) CreatorHoldings() decimal.Decimal { return m.Group(Dev).TotalHoldings }

// CreatorHoldingsRatio is creatorHoldingsRatio / devTeamRatio: the dev group's ratio.
func (m MarketData) CreatorHoldingsRatio() decimal.Decimal { return m.Group(Dev).HoldingsRatio }
