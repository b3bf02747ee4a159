package httpapi

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/domain/token"
)

// The encoders of what the generated ones (dto_json_gen.go, encode.go) do not cover: the token
// records' value types (nullString, nullInt, utcTime), their lists of views (creatorList,
// liquidityList) and their keyed objects. The keyed objects (socialMedias, marketData, stats
// periods, the multi-detail stats and marketData) have dozens of keys made of a name and a
// window or holder group; they are views of the detail over one key table each (tokenKeys),
// the table OpenAPI's schemas are built from too (openapi.go), and each writes its table in
// encoding/json's sorted map order. A window or holder group added to the domain adds its keys
// here by itself; testdata/golden holds the bytes.

// appendArray writes items as a JSON array, item writing each one: [] when empty or nil.
func appendArray[T any](b []byte, items []T, item func(*T, []byte) []byte) []byte {
	b = append(b, '[')
	for i := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = item(&items[i], b)
	}
	return append(b, ']')
}

// --- token records (dto_token.go) ---

func (l creatorList) appendJSON(b []byte) []byte {
	return appendArray(b, l, func(c *token.Creator, b []byte) []byte {
		dto := creatorDTO(*c)
		return dto.appendJSON(b)
	})
}

func (l liquidityList) appendJSON(b []byte) []byte {
	return appendArray(b, l.pools, func(p *token.PoolLiquidity, b []byte) []byte {
		dto := liquidityOut(p, l.chainName)
		return dto.appendJSON(b)
	})
}

// --- the keyed objects of the token records: each writes its key table (tokenKeys) in order ---

func (v socialsView) appendJSON(b []byte) []byte {
	if !v.s.Any() {
		return append(b, tokenKeys.noSocials...)
	}
	for i, k := range tokenKeys.socials {
		b = append(b, tokenKeys.socialKeys[i]...)
		if link := v.s.Get(k); link != "" {
			b = appendString(b, link)
		} else {
			b = append(b, "null"...)
		}
	}
	return append(b, '}')
}

func (v marketDataV2) appendJSON(b []byte) []byte {
	// A group's three keys are next to each other: one lookup serves them.
	var group token.HolderGroup
	var holding token.GroupHolding
	read := false
	for i := range tokenKeys.marketDataV2 {
		f := &tokenKeys.marketDataV2[i]
		b = append(b, f.key...)
		if f.get != nil {
			b = appendDecimal(b, f.get(v.m))
			continue
		}
		if !read || f.group != group {
			group, holding, read = f.group, v.m.Group(f.group), true
		}
		b = appendDecimal(b, groupPart(holding, f.part))
	}
	return append(b, '}')
}

func (v periodsV2) appendJSON(b []byte) []byte {
	if len(tokenKeys.windows) == 0 {
		return append(b, "{}"...)
	}
	for i, w := range tokenKeys.windows {
		b = append(b, tokenKeys.windowKeys[i]...)
		s := v.stats[w]
		for j := range tokenKeys.periodV2 {
			f := &tokenKeys.periodV2[j]
			b = append(b, f.key...)
			if f.field.isCount() {
				b = appendQuotedInt(b, f.field.count(&s)) // decimal.NewFromInt(n)
			} else {
				b = appendDecimal(b, f.field.decimal(&s))
			}
		}
		b = append(b, '}')
	}
	return append(b, '}')
}

// maxWindows is how many windows multiStats.appendJSON reads into an array on the stack.
const maxWindows = 8

func (v multiStats) appendJSON(b []byte) []byte {
	var buf [maxWindows]token.PeriodStats
	stats := buf[:0]
	if len(token.AllWindows) > maxWindows {
		stats = make([]token.PeriodStats, 0, len(token.AllWindows))
	}
	for _, w := range token.AllWindows {
		stats = append(stats, v.d.Stats[w])
	}
	for i := range tokenKeys.multiStats {
		f := &tokenKeys.multiStats[i]
		b = append(b, f.key...)
		switch {
		case f.window < 0:
			b = appendString(b, v.d.Address)
		case f.field.isCount():
			b = strconv.AppendInt(b, f.field.count(&stats[f.window]), 10)
		default:
			b = appendDecimal(b, f.field.decimal(&stats[f.window]))
		}
	}
	return append(b, '}')
}

func (v multiMarketData) appendJSON(b []byte) []byte {
	for i := range tokenKeys.multiMarketData {
		f := &tokenKeys.multiMarketData[i]
		b = append(b, f.key...)
		if f.count != nil {
			b = strconv.AppendInt(b, f.count(v.m), 10)
		} else {
			b = appendDecimal(b, f.get(v.m))
		}
	}
	return append(b, '}')
}

func (s nullString) appendJSON(b []byte) []byte {
	if s == "" {
		return append(b, "null"...)
	}
	return appendString(b, string(s))
}

func (n nullInt) appendJSON(b []byte) []byte {
	if !n.ok {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, n.v, 10)
}

func (u utcTime) appendJSON(b []byte) []byte {
	if u.t == nil {
		return append(b, "null"...)
	}
	// RFC 3339 text is digits, '-', ':', '.', 'T' and 'Z': nothing to escape.
	b = append(b, '"')
	b = u.t.UTC().AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

// appendQuotedInt writes n as a JSON string, as the ,string option and decimal.NewFromInt(n) do.
func appendQuotedInt(b []byte, n int64) []byte {
	b = append(b, '"')
	b = strconv.AppendInt(b, n, 10)
	return append(b, '"')
}

// statField is one field of token.PeriodStats.
type statField uint8

const (
	// counts (int64)
	statBuys statField = iota
	statSells
	statTrades
	statBuyers
	statSellers
	statTraders
	// decimals
	statBuyVolume
	statSellVolume
	statTotalVolume
	statBuyVolumeInUSD
	statSellVolumeInUSD
	statTotalVolumeInUSD
	statOpenInUSD
	statCloseInUSD
	statHighInUSD
	statLowInUSD
	statPriceChangeRatioInUSD
	statCurrentLiquidityInUSD
)

func (f statField) isCount() bool { return f <= statTraders }

func (f statField) count(s *token.PeriodStats) int64 {
	switch f {
	case statBuys:
		return s.Buys
	case statSells:
		return s.Sells
	case statTrades:
		return s.Trades
	case statBuyers:
		return s.Buyers
	case statSellers:
		return s.Sellers
	case statTraders:
		return s.Traders
	}
	panic("statField.count: not a count")
}

func (f statField) decimal(s *token.PeriodStats) decimal.Decimal {
	switch f {
	case statBuyVolume:
		return s.BuyVolume
	case statSellVolume:
		return s.SellVolume
	case statTotalVolume:
		return s.TotalVolume
	case statBuyVolumeInUSD:
		return s.BuyVolumeInUSD
	case statSellVolumeInUSD:
		return s.SellVolumeInUSD
	case statTotalVolumeInUSD:
		return s.TotalVolumeInUSD
	case statOpenInUSD:
		return s.OpenInUSD
	case statCloseInUSD:
		return s.CloseInUSD
	case statHighInUSD:
		return s.HighInUSD
	case statLowInUSD:
		return s.LowInUSD
	case statPriceChangeRatioInUSD:
		return s.PriceChangeRatioInUSD
	case statCurrentLiquidityInUSD:
		return s.CurrentLiquidityInUSD
	}
	panic("statField.decimal: not a decimal")
}

// The three values of a holder group in marketDataV2.
const (
	groupRatio uint8 = iota
	groupHolders
	groupHoldings
)

func groupPart(h token.GroupHolding, part uint8) decimal.Decimal {
	switch part {
	case groupRatio:
		return h.HoldingsRatio
	case groupHolders:
		return h.TotalHolders
	default:
		return h.TotalHoldings
	}
}

// mdField is one key of a marketData object, in the order written: name, and key, the name
// encoded as `{"name":` for the first key and `,"name":` for the others. get reads a decimal;
// count, when set, an int64 instead; with neither, the value is part of group's holdings.
type mdField struct {
	name, key string
	get       func(*token.MarketData) decimal.Decimal
	count     func(*token.MarketData) int64
	group     token.HolderGroup
	part      uint8
}

// statKey is one key of a stats object, in the order written (name and key as in mdField):
// field of the window at index window of token.AllWindows, or the token's address when window
// is -1.
type statKey struct {
	name, key string
	window    int
	field     statField
}

// tokenKeys holds the key tables of the token records' keyed objects, each sorted as
// encoding/json sorts a map's keys, each key already encoded.
var tokenKeys = newTokenKeys()

type tokenKeyOrders struct {
	socials         []string // token.SocialKeys sorted
	socialKeys      []string // their `{"key":` / `,"key":`
	noSocials       string   // the socials object of a token without links
	marketDataV2    []mdField
	windows         []token.Window // token.AllWindows sorted
	windowKeys      []string       // their `{"w":` / `,"w":`
	periodV2        []statKey      // the keys of one period; window unused
	multiStats      []statKey
	multiMarketData []mdField
}

// objectKey is the encoded key of the i-th member of an object: `{"k":` or `,"k":`.
func objectKey(i int, k string) string {
	sep := byte(',')
	if i == 0 {
		sep = '{'
	}
	return string(appendString([]byte{sep}, k)) + ":"
}

func newTokenKeys() tokenKeyOrders {
	var o tokenKeyOrders

	o.socials = slices.Clone(token.SocialKeys)
	slices.Sort(o.socials)
	noSocials := []byte{}
	for i, k := range o.socials {
		o.socialKeys = append(o.socialKeys, objectKey(i, k))
		noSocials = append(append(noSocials, o.socialKeys[i]...), "null"...)
	}
	if len(o.socials) == 0 {
		noSocials = append(noSocials, '{')
	}
	o.noSocials = string(append(noSocials, '}'))

	// marketDataV2's keys.
	md := func(name string, get func(*token.MarketData) decimal.Decimal) mdField {
		return mdField{name: name, get: get}
	}
	v2 := []mdField{
		md("top10HoldingsRatio", func(m *token.MarketData) decimal.Decimal { return m.Top10.HoldingsRatio }),
		md("top10TotalHoldings", func(m *token.MarketData) decimal.Decimal { return m.Top10.TotalHoldings }),
		md("top50HoldingsRatio", func(m *token.MarketData) decimal.Decimal { return m.Top50.HoldingsRatio }),
		md("top50TotalHoldings", func(m *token.MarketData) decimal.Decimal { return m.Top50.TotalHoldings }),
		md("top100HoldingsRatio", func(m *token.MarketData) decimal.Decimal { return m.Top100.HoldingsRatio }),
		md("top100TotalHoldings", func(m *token.MarketData) decimal.Decimal { return m.Top100.TotalHoldings }),
		md("circulatingSupply", func(m *token.MarketData) decimal.Decimal { return m.CirculatingSupply }),
		md("completionRatio", func(m *token.MarketData) decimal.Decimal { return m.CompletionRatio }),
		md("fdvInSol", func(m *token.MarketData) decimal.Decimal { return m.FDVInSol }),
		md("fdvInUsd", func(m *token.MarketData) decimal.Decimal { return m.FDVInUSD }),
		md("holders", func(m *token.MarketData) decimal.Decimal { return m.Holders }),
		md("marketCapInSol", func(m *token.MarketData) decimal.Decimal { return m.MarketCapInSol }),
		md("marketCapInUsd", func(m *token.MarketData) decimal.Decimal { return m.MarketCapInUSD }),
		md("maxPoolTvlInSol", func(m *token.MarketData) decimal.Decimal { return m.MaxPoolTVLInSol }),
		md("maxPoolTvlInUsd", func(m *token.MarketData) decimal.Decimal { return m.MaxPoolTVLInUSD }),
		md("priceInSol", func(m *token.MarketData) decimal.Decimal { return m.PriceInSol }),
		md("priceInUsd", func(m *token.MarketData) decimal.Decimal { return m.PriceInUSD }),
		md("totalSupply", func(m *token.MarketData) decimal.Decimal { return m.TotalSupply }),
		md("totalTvlInSol", func(m *token.MarketData) decimal.Decimal { return m.TotalTVLInSol }),
		md("totalTvlInUsd", func(m *token.MarketData) decimal.Decimal { return m.TotalTVLInUSD }),
	}
	for _, g := range token.AllHolderGroups {
		v2 = append(v2, mdField{name: string(g) + "HoldingsRatio", group: g, part: groupRatio},
			mdField{name: string(g) + "TotalHolders", group: g, part: groupHolders},
			mdField{name: string(g) + "TotalHoldings", group: g, part: groupHoldings})
	}
	o.marketDataV2 = sortedFields(v2)

	o.windows = slices.Clone(token.AllWindows)
	slices.Sort(o.windows)
	for i, w := range o.windows {
		o.windowKeys = append(o.windowKeys, objectKey(i, string(w)))
	}

	// period's keys.
	o.periodV2 = sortedStatKeys([]statKey{
		{name: "buyVolumeInUsd", field: statBuyVolumeInUSD}, {name: "buyers", field: statBuyers},
		{name: "buys", field: statBuys}, {name: "closeInUsd", field: statCloseInUSD},
		{name: "currentLiquidityInUsd", field: statCurrentLiquidityInUSD}, {name: "highInUsd", field: statHighInUSD},
		{name: "lowInUsd", field: statLowInUSD}, {name: "openInUsd", field: statOpenInUSD},
		{name: "priceChangeRatioInUsd", field: statPriceChangeRatioInUSD}, {name: "sellVolumeInUsd", field: statSellVolumeInUSD},
		{name: "sellers", field: statSellers}, {name: "sells", field: statSells},
		{name: "totalVolumeInUsd", field: statTotalVolumeInUSD}, {name: "traders", field: statTraders},
		{name: "trades", field: statTrades},
	})

	// multiToken's stats keys: the address, then each field under its name and the window.
	multi := []statKey{{name: "address", window: -1}}
	for i, w := range token.AllWindows {
		for _, f := range []struct {
			name  string
			field statField
		}{
			{"price", statCloseInUSD}, {"buyVolumes", statBuyVolume}, {"sellsVolumes", statSellVolume},
			{"volumes", statTotalVolume}, {"buyVolumesInUsd", statBuyVolumeInUSD}, {"sellVolumesInUsd", statSellVolumeInUSD},
			{"volumesInUsd", statTotalVolumeInUSD}, {"openPriceInUsd", statOpenInUSD}, {"closePriceInUsd", statCloseInUSD},
			{"priceChangeRatioInUsd", statPriceChangeRatioInUSD}, {"highInUsd", statHighInUSD}, {"lowInUsd", statLowInUSD},
			{"buys", statBuys}, {"sells", statSells}, {"buyers", statBuyers}, {"sellers", statSellers},
			{"trades", statTrades}, {"traders", statTraders},
		} {
			multi = append(multi, statKey{name: f.name + string(w), window: i, field: f.field})
		}
	}
	o.multiStats = sortedStatKeys(multi)

	// multiToken's marketData keys.
	dev := func(m *token.MarketData) token.GroupHolding { return m.Group(token.Dev) }
	o.multiMarketData = sortedFields([]mdField{
		md("totalSupply", func(m *token.MarketData) decimal.Decimal { return m.TotalSupply }),
		md("marketCapInSol", func(m *token.MarketData) decimal.Decimal { return m.MarketCapInSol }),
		md("marketCapInUsd", func(m *token.MarketData) decimal.Decimal { return m.MarketCapInUSD }),
		md("top10TotalHoldings", func(m *token.MarketData) decimal.Decimal { return m.Top10.TotalHoldings }),
		md("top10HoldingsRatio", func(m *token.MarketData) decimal.Decimal { return m.Top10.HoldingsRatio }),
		md("top100TotalHoldings", func(m *token.MarketData) decimal.Decimal { return m.Top100.TotalHoldings }),
		md("top100HoldingsRatio", func(m *token.MarketData) decimal.Decimal { return m.Top100.HoldingsRatio }),
		md("priceInSol", func(m *token.MarketData) decimal.Decimal { return m.PriceInSol }),
		md("priceInUsd", func(m *token.MarketData) decimal.Decimal { return m.PriceInUSD }),
		md("tvlInSol", func(m *token.MarketData) decimal.Decimal { return m.TotalTVLInSol }),
		md("tvlInUsd", func(m *token.MarketData) decimal.Decimal { return m.TotalTVLInUSD }),
		md("completionRatio", func(m *token.MarketData) decimal.Decimal { return m.CompletionRatio }),
		md("devTeamAmount", func(m *token.MarketData) decimal.Decimal { return m.CreatorHoldings() }),
		md("devTeamRatio", func(m *token.MarketData) decimal.Decimal { return m.CreatorHoldingsRatio() }),
		{name: "holders", count: func(m *token.MarketData) int64 { return m.Holders.IntPart() }},
		{name: "devTeamCount", count: func(m *token.MarketData) int64 { return dev(m).TotalHolders.IntPart() }},
	})
	return o
}

// sortedFields sorts fs by name, as encoding/json orders a map's keys, and encodes the names.
func sortedFields(fs []mdField) []mdField {
	slices.SortFunc(fs, func(a, b mdField) int { return strings.Compare(a.name, b.name) })
	for i := range fs {
		fs[i].key = objectKey(i, fs[i].name)
	}
	return fs
}

// sortedStatKeys sorts ks by name, as encoding/json orders a map's keys, and encodes the names.
func sortedStatKeys(ks []statKey) []statKey {
	slices.SortFunc(ks, func(a, b statKey) int { return strings.Compare(a.name, b.name) })
	for i := range ks {
		ks[i].key = objectKey(i, ks[i].name)
	}
	return ks
}
