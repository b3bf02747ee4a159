package chainevent_test

import (
	"strings"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/pool"
	"github.com/tokenscope/tokenscope/domain/redpacket"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/domain/trade"
)

func sampleToken() chainevent.TokenCreated {
	return chainevent.TokenCreated{Token: token.Token{Address: "t1", Chain: chain.Sol, Decimals: 6, Name: "One", Symbol: "ONE"},
		TotalSupply: d("1000"), CirculatingSupply: d("800")}
}

func sampleSnapshot() pool.Snapshot {
	return pool.Snapshot{Chain: chain.Sol, PoolAddress: "p1", BlockHeight: 7, BlockTimestamp: 8, SnapshotTime: 9,
		TokenA: pool.Side{TokenAddress: "t1", VaultAmount: "123"}, TokenB: pool.Side{TokenAddress: "So11", VaultAmount: "0"}}
}

// Every value of an event is stored and served by the read API, so Validate refuses what
// Postgres cannot hold (a numeric of 131,072 integer digits, an index entry over 2.7 kB) and
// what the API's records should not carry, naming the field and repeating at most a short
// prefix of the value.
func TestValidateBoundsEveryValue(t *testing.T) {
	long := func(n int) string { return strings.Repeat("x", n) }
	withTrade := func(edit func(*trade.Trade)) chainevent.Event {
		tr := sampleTrade()
		edit(&tr)
		return chainevent.Trade{Trade: tr}
	}
	withToken := func(edit func(*chainevent.TokenCreated)) chainevent.Event {
		e := sampleToken()
		edit(&e)
		return e
	}
	withSnapshot := func(edit func(*pool.Snapshot)) chainevent.Event {
		s := sampleSnapshot()
		edit(&s)
		return chainevent.PoolSnapshot{Snapshot: s}
	}
	huge := decimal.New(1, 500_000) // 1e500000: Validate must not write it out
	tests := []struct {
		name  string
		e     chainevent.Event
		field string // "" when valid
	}{
		{"valid trade", withTrade(func(*trade.Trade) {}), ""},
		{"39 integer digits", withTrade(func(tr *trade.Trade) { tr.TokenAmount = d(strings.Repeat("9", 40)) }), ""},
		{"36 places", withTrade(func(tr *trade.Trade) { tr.TokenPriceInUSD = d("0." + strings.Repeat("0", 35) + "1") }), ""},
		{"trailing zeros past 36 places", withTrade(func(tr *trade.Trade) { tr.TokenPriceInUSD = d("1.5" + strings.Repeat("0", 60)) }), ""},
		{"1e40", withTrade(func(tr *trade.Trade) { tr.TokenPriceInUSD = decimal.New(1, 40) }), "tokenPriceInUsd"},
		{"1e10000", withTrade(func(tr *trade.Trade) { tr.SideTokenAmountInUSD = decimal.New(1, 10000) }), "sideTokenAmountInUsd"},
		{"1e500000", withTrade(func(tr *trade.Trade) { tr.TokenAmount = huge }), "tokenAmount"},
		{"37 places", withTrade(func(tr *trade.Trade) { tr.TokenPriceInNative = decimal.New(1, -37) }), "tokenPriceInNative"},
		{"1e-99999999", withTrade(func(tr *trade.Trade) { tr.TokenPriceInNative = decimal.New(1, -99999999) }), "tokenPriceInNative"},
		{"status outside the enum", withTrade(func(tr *trade.Trade) { tr.Status = "PENDING" }), "status"},
		{"FAILED", withTrade(func(tr *trade.Trade) { tr.Status = trade.Failed }), ""},
		{"trade token name", withTrade(func(tr *trade.Trade) { tr.TokenName = long(257) }), "tokenName"},
		{"trade image", withTrade(func(tr *trade.Trade) { tr.TokenImageURL = long(2049) }), "tokenImageUrl"},
		{"valid token", withToken(func(*chainevent.TokenCreated) {}), ""},
		{"name of 256 bytes", withToken(func(e *chainevent.TokenCreated) { e.Token.Name = long(256) }), ""},
		{"name of 2,700 bytes", withToken(func(e *chainevent.TokenCreated) { e.Token.Name = long(2700) }), "name"},
		{"symbol of 2,700 bytes", withToken(func(e *chainevent.TokenCreated) { e.Token.Symbol = long(2700) }), "symbol"},
		{"imageUrl of 100,000 bytes", withToken(func(e *chainevent.TokenCreated) { e.Token.ImageURL = long(100_000) }), "imageUrl"},
		{"description", withToken(func(e *chainevent.TokenCreated) { e.Token.Description = long(8193) }), "description"},
		{"extra", withToken(func(e *chainevent.TokenCreated) { e.Token.Extra.TokenStandard = long(2049) }), "extra.tokenStandard"},
		{"creator address", withToken(func(e *chainevent.TokenCreated) { e.Token.Creators = []token.Creator{{Address: long(129)}} }), "tokenCreators[0].address"},
		{"huge supply", withToken(func(e *chainevent.TokenCreated) { e.TotalSupply, e.CirculatingSupply = huge, huge }), "totalSupply"},
		{"social link", withToken(func(e *chainevent.TokenCreated) {
			s, err := token.NewSocials(map[string]string{"website": long(2049)})
			require.NoError(t, err)
			e.Token.Socials = s
		}), "socialMedias.website"},
		{"valid snapshot", withSnapshot(func(*pool.Snapshot) {}), ""},
		{"snapshot TVL", withSnapshot(func(s *pool.Snapshot) { s.TVLInUSD = huge }), "tvlInUsd"},
		{"snapshot side price", withSnapshot(func(s *pool.Snapshot) { s.TokenB.PriceUSD = decimal.New(1, 41) }), "tokenB.priceUsd"},
		{"vault amount of 79 digits", withSnapshot(func(s *pool.Snapshot) { s.TokenA.VaultAmount = pool.VaultAmount(strings.Repeat("1", 79)) }), "tokenA.vaultAmount"},
		{"pool protocol name", chainevent.PoolCreated{Pool: pool.Pool{Chain: chain.Sol, Address: "p", TokenAAddress: "a", TokenBAddress: "b",
			ProtocolName: long(257)}}, "protocolName"},
		{"red packet amount of 79 digits", chainevent.RedPacketCreated{Packet: redpacket.RedPacket{ID: "rp", Chain: chain.Sol, Creator: "c",
			Mint: "m", MaxClaims: 1, TotalAmount: d(strings.Repeat("1", 79)), CreatedAt: 1, ExpiredAt: 2}}, "totalAmount"},
		{"red packet memo", chainevent.RedPacketCreated{Packet: redpacket.RedPacket{ID: "rp", Chain: chain.Sol, Creator: "c",
			Mint: "m", MaxClaims: 1, TotalAmount: d("5"), CreatedAt: 1, ExpiredAt: 2, Memo: long(2049)}}, "memo"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.e.Validate()
			if tc.field == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			fe, ok := fault.As(err)
			require.True(t, ok)
			assert.Equal(t, fault.KindInvalid, fe.Kind)
			assert.Equal(t, tc.field, fe.Param)
			assert.LessOrEqual(t, len(fe.Value), 80, "the value is repeated cut")
			assert.LessOrEqual(t, len(fe.Message), 300, "the message repeats the value cut: %.300s", fe.Message)
		})
	}
}
