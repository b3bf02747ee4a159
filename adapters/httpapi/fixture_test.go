package httpapi_test

import (
	"context"
	"io"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/adapters/httpapi"
	"github.com/tokenscope/tokenscope/app"
	"github.com/tokenscope/tokenscope/app/apikey"
	"github.com/tokenscope/tokenscope/app/market"
	"github.com/tokenscope/tokenscope/app/webhookendpoint"
	"github.com/tokenscope/tokenscope/domain/account"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/page"
	"github.com/tokenscope/tokenscope/domain/pnl"
	"github.com/tokenscope/tokenscope/domain/pool"
	"github.com/tokenscope/tokenscope/domain/ranking"
	"github.com/tokenscope/tokenscope/domain/redpacket"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/domain/trade"
	"github.com/tokenscope/tokenscope/domain/webhook"
	"github.com/tokenscope/tokenscope/internal/fakeversions"
	"github.com/tokenscope/tokenscope/ports"
)

// The fixtures below stand in for Postgres: in-memory ports returning realistic pages, so a
// request through httpapi.New exercises only HTTP, middleware, auth and JSON.

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

// fixtureRand is deterministic so every run (and the golden comparisons) sees the same data.
func fixtureRand() *rand.Rand { return rand.New(rand.NewPCG(7, 11)) }

const base58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

func address(r *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		b.WriteByte(base58[r.IntN(len(base58))])
	}
	return b.String()
}

// amount is a decimal with 0 to 12 fractional digits and up to 9 integer digits, sometimes 0.
func amount(r *rand.Rand) decimal.Decimal {
	if r.IntN(10) == 0 {
		return decimal.Zero
	}
	return decimal.New(r.Int64N(1_000_000_000_000), -int32(r.IntN(13)))
}

func signedAmount(r *rand.Rand) decimal.Decimal {
	d := amount(r)
	if r.IntN(3) == 0 {
		return d.Neg()
	}
	return d
}

func tradesFixture(n int) []trade.Trade {
	r := fixtureRand()
	ts := int64(1_717_000_000_000)
	out := make([]trade.Trade, n)
	for i := range out {
		side := trade.Buy
		if i%3 == 0 {
			side = trade.Sell
		}
		out[i] = trade.Trade{
			Chain: chain.Sol, TransactionSignature: address(r, 88), BlockHeight: 270_000_000 - int64(i), BlockSlot: 290_000_000 - int64(i),
			BlockTimestamp: ts - int64(i)*400, Wallet: address(r, 44), PoolAddress: address(r, 44), Side: side, Status: trade.Succeeded,
			TokenAddress: "EKpQGSJtjMFqKZ9KQanSqYXRcF8fBopzLHYxdM65zcjm", TokenName: "dogwifhat", TokenSymbol: "$WIF",
			TokenImageURL: "https://bafkreibk3covs5ltyqxa272uodhculbr6kea6betidfwy3ajsav2vjzyum.ipfs.nftstorage.link",
			TokenAmount:   amount(r), TokenAmountInNative: amount(r), TokenAmountInUSD: amount(r),
			TokenPriceInNative: amount(r), TokenPriceInUSD: amount(r),
			SideTokenAddress: "So11111111111111111111111111111111111111112", SideTokenName: "Wrapped SOL", SideTokenSymbol: "SOL",
			SideTokenImageURL: "https://raw.githubusercontent.com/solana-labs/token-list/main/assets/mainnet/So11111111111111111111111111111111111111112/logo.png",
			SideTokenAmount:   amount(r), SideTokenAmountInNative: amount(r), SideTokenAmountInUSD: amount(r),
			SideTokenPriceInNative: amount(r), SideTokenPriceInUSD: amount(r),
			DexImage:          "https://dd.dexscreener.com/ds-data/dexes/raydium.png",
			DexProgramAddress: "675kPX9MHTjS2zt1qfr1NYHuzeLXfQM9H24wFSUt1Mp8", DexProtocolFamily: "Raydium",
		}
	}
	return out
}

func snapshotsFixture(n int) []pool.Snapshot {
	r := fixtureRand()
	out := make([]pool.Snapshot, n)
	side := func(addr string, dec int32) pool.Side {
		return pool.Side{TokenAddress: addr, Decimals: dec, AmountInNative: amount(r), AmountInUSD: amount(r),
			PriceNative: amount(r), PriceUSD: amount(r), VaultAmount: pool.VaultAmount(strconv.FormatInt(r.Int64N(1<<62), 10))}
	}
	for i := range out {
		var slot *int64
		if i%2 == 0 {
			s := int64(290_000_000 - i)
			slot = &s
		}
		out[i] = pool.Snapshot{Chain: chain.Sol, PoolAddress: "58oQChx4yWmvKdwLLZzBi4ChoCc2fqCUWBkwMihLYQo2",
			BlockHeight: 270_000_000 - int64(i)*150, BlockSlot: slot, BlockTimestamp: 1_717_000_000_000 - int64(i)*60_000,
			SnapshotTime: 1_717_000_000_000 - int64(i)*60_000,
			TokenA:       side("EKpQGSJtjMFqKZ9KQanSqYXRcF8fBopzLHYxdM65zcjm", 6),
			TokenB:       side("So11111111111111111111111111111111111111112", 9),
			TVLInNative:  amount(r), TVLInUSD: amount(r)}
	}
	return out
}

func positionsFixture(n int) []ports.PricedPosition {
	r := fixtureRand()
	out := make([]ports.PricedPosition, n)
	for i := range out {
		tok := address(r, 44)
		ms := int64(1_716_000_000_000 + i)
		out[i] = ports.PricedPosition{
			Position: pnl.Position{Chain: chain.Sol, Wallet: "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU", Token: tok,
				Buys: r.Int64N(40), Sells: r.Int64N(40), BuyAmount: amount(r), BuyAmountInUSD: amount(r), SellAmount: amount(r),
				SellAmountInUSD: amount(r), Balance: amount(r), CostInUSD: amount(r), SoldCostInUSD: amount(r),
				RealizedProfitInUSD: signedAmount(r), FirstBuyAt: &ms},
			PriceInUSD: amount(r), Name: "Token " + strconv.Itoa(i), Symbol: "TK" + strconv.Itoa(i),
			LogoURI: "https://arweave.net/" + address(r, 43), Decimals: int32(6 + i%4),
		}
	}
	return out
}

// redPacketsFixture returns n red packets as a page of the red packet lists reads them.
func redPacketsFixture(n int) []redpacket.RedPacket {
	r := fixtureRand()
	out := make([]redpacket.RedPacket, n)
	for i := range out {
		created := int64(1_717_000_000_000 - i*60_000)
		out[i] = redpacket.RedPacket{ID: address(r, 44), Creator: fixtureWallet, ClaimAuthority: address(r, 44),
			Mint: "So11111111111111111111111111111111111111112", Chain: chain.Sol, MaxClaims: 10, ClaimedCount: int32(i % 11),
			TotalAmount: decimal.New(r.Int64N(1e12), 0), ClaimedAmount: decimal.New(r.Int64N(1e11), 0), RefundedAmount: decimal.Zero,
			CreatedAt: created, ExpiredAt: created + 86_400_000, Expiration: 86_400, Expired: i%5 == 0,
			Memo: "Happy new year " + strconv.Itoa(i), ShareID: address(r, 12), TxHash: address(r, 88)}
	}
	return out
}

// claimsFixture returns n claims of one red packet.
func claimsFixture(n int) []redpacket.Claim {
	r := fixtureRand()
	packet := address(r, 44)
	out := make([]redpacket.Claim, n)
	for i := range out {
		out[i] = redpacket.Claim{PacketID: packet, Claimer: address(r, 44), Mint: "So11111111111111111111111111111111111111112",
			Chain: chain.Sol, Amount: decimal.New(r.Int64N(1e10), 0), ClaimedAt: int64(1_717_000_000_000 - i*1_000),
			Creator: fixtureWallet, TxHash: address(r, 88)}
	}
	return out
}

// tokenDetailsFixture returns n token details as the ranking, search and multi-detail read them:
// every window's stats, every holder group, a few social links, creators and pools.
func tokenDetailsFixture(n int) []token.Detail {
	r := fixtureRand()
	ptr := func(v int64) *int64 { return &v }
	yes, no := true, false
	out := make([]token.Detail, n)
	for i := range out {
		name, symbol := "Token "+strconv.Itoa(i), "TK"+strconv.Itoa(i)
		created := int64(1_716_000_000_000 + i*60_000)
		devLast := time.UnixMilli(created - 3_600_000).In(time.FixedZone("UTC+8", 8*3600))
		socials, err := token.NewSocials(map[string]string{
			token.SocialTwitter: "https://x.com/" + strings.ToLower(symbol), token.SocialWebsite: "https://" + strings.ToLower(symbol) + ".fun",
			token.SocialTelegram: "https://t.me/" + strings.ToLower(symbol)})
		if err != nil {
			panic(err)
		}
		groups := make(map[token.HolderGroup]token.GroupHolding, len(token.AllHolderGroups))
		for _, g := range token.AllHolderGroups {
			groups[g] = token.GroupHolding{TotalHolders: decimal.NewFromInt(r.Int64N(500)), TotalHoldings: amount(r), HoldingsRatio: amount(r).Shift(-12)}
		}
		stats := make(map[token.Window]token.PeriodStats, len(token.AllWindows))
		for _, w := range token.AllWindows {
			buys, sells := r.Int64N(5000), r.Int64N(5000)
			stats[w] = token.PeriodStats{Buys: buys, Sells: sells, Trades: buys + sells, Buyers: buys / 2, Sellers: sells / 2,
				Traders: (buys + sells) / 3, BuyVolume: amount(r), SellVolume: amount(r), TotalVolume: amount(r),
				BuyVolumeInUSD: amount(r), SellVolumeInUSD: amount(r), TotalVolumeInUSD: amount(r), OpenInUSD: amount(r),
				CloseInUSD: amount(r), HighInUSD: amount(r), LowInUSD: amount(r), PriceChangeRatioInUSD: signedAmount(r).Shift(-9),
				CurrentLiquidityInUSD: amount(r)}
		}
		addr := address(r, 44)
		d := token.Detail{
			Token: token.Token{Address: addr, Chain: chain.Sol, Decimals: 6, Name: name, Symbol: symbol,
				Description: name + " is a community token on Solana.", DevLastTokenCreatedAt: &devLast, DevTotalTokens: ptr(r.Int64N(40)),
				ImageURL: "https://ipfs.io/ipfs/" + address(r, 46), Market: "pumpfun", MetadataAddress: address(r, 44),
				URI: "https://ipfs.io/ipfs/" + address(r, 46), CreatedAt: &created, CreatedBlockHeight: ptr(270_000_000 + int64(i)),
				CreatedSlot: ptr(290_000_000 + int64(i)), CreatedTxSignature: address(r, 88),
				Creators: []token.Creator{{Address: address(r, 44), IsVerified: true, Share: 100}},
				Extra: token.Extra{FreezeAuthority: "", Fungible: &yes, IsMutable: &no, Key: "MetadataV1", LaunchFromProgramAddress: "6EF8rrecthR5Dkzon8Nwu78hRvfCKubJ14M5uBEwF6P",
					LaunchFromProtocolFamily: "pumpfun", MigratedAt: ptr(created + 600_000), MigratedToPoolAddress: address(r, 44),
					MigratedToProgramAddress: "675kPX9MHTjS2zt1qfr1NYHuzeLXfQM9H24wFSUt1Mp8", MigratedToProtocolFamily: "Raydium",
					PrimarySaleHappened: &no, ProgramAddress: "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA", SellerFeeBasisPoints: ptr(0),
					TokenStandard: "Fungible", UpdateAuthority: address(r, 44)},
				Socials: socials, LaunchpadTag: "pumpfun"},
			MarketData: token.MarketData{Groups: groups, Top10: token.TopHolding{TotalHoldings: amount(r), HoldingsRatio: amount(r).Shift(-12)},
				Top50:  token.TopHolding{TotalHoldings: amount(r), HoldingsRatio: amount(r).Shift(-12)},
				Top100: token.TopHolding{TotalHoldings: amount(r), HoldingsRatio: amount(r).Shift(-12)}, CirculatingSupply: amount(r),
				CompletionRatio: amount(r).Shift(-12), FDVInSol: amount(r), FDVInUSD: amount(r), Holders: decimal.NewFromInt(r.Int64N(100_000)),
				MarketCapInSol: amount(r), MarketCapInUSD: amount(r), MaxPoolTVLInSol: amount(r), MaxPoolTVLInUSD: amount(r),
				PriceInSol: amount(r), PriceInUSD: amount(r), TotalSupply: decimal.New(1_000_000_000, 0), TotalTVLInSol: amount(r),
				TotalTVLInUSD: amount(r)},
			Stats: stats,
			Pools: []token.PoolLiquidity{{ProgramAddress: "675kPX9MHTjS2zt1qfr1NYHuzeLXfQM9H24wFSUt1Mp8", ProtocolFamily: "Raydium",
				Image: "https://dd.dexscreener.com/ds-data/dexes/raydium.png", Chain: "sol", PoolAddress: address(r, 44),
				ProtocolName: "Raydium AMM", TokenAAddress: addr, TokenBAddress: "So11111111111111111111111111111111111111112",
				TVLInUSD: amount(r), TVLInSol: amount(r)}},
		}
		if i%4 == 0 { // some tokens have not migrated and have no links
			d.Extra.MigratedAt, d.Extra.MigratedToPoolAddress, d.Extra.MigratedToProgramAddress, d.Extra.MigratedToProtocolFamily = nil, "", "", ""
			d.Socials = token.Socials{}
		}
		out[i] = d
	}
	return out
}

// tokenAddresses is the comma-separated list of the fixture tokens' addresses.
func tokenAddresses(ds []token.Detail) string {
	addrs := make([]string, len(ds))
	for i, d := range ds {
		addrs[i] = d.Address
	}
	return strings.Join(addrs, ",")
}

func cursor(s string) *string { return &s }

// readers implements market.Readers over fixed data.
type readers struct {
	trades    []trade.Trade
	snapshots []pool.Snapshot
	positions []ports.PricedPosition
	tokens    []token.Detail
	packets   []redpacket.RedPacket
	claims    []redpacket.Claim
}

// fixtureTokens is how many token details the fixtures hold: a full ranking, search page or
// multi-detail request.
const fixtureTokens = 100

var fixtureTokenDetails = tokenDetailsFixture(fixtureTokens)

func newReaders() *readers {
	return &readers{trades: tradesFixture(20), snapshots: snapshotsFixture(20), positions: positionsFixture(10),
		tokens: fixtureTokenDetails, packets: redPacketsFixture(20), claims: claimsFixture(20)}
}

// SearchTokens answers every query with the first tokens of the fixture, in its order.
func (r *readers) SearchTokens(_ context.Context, s ports.TokenSearch) (page.Page[token.Detail], error) {
	items := r.tokens[:min(s.Page.Limit, len(r.tokens))]
	return page.Page[token.Detail]{Items: items, StartCursor: cursor("c2VhcmNoOjA"), EndCursor: cursor("c2VhcmNoOjk5"), HasNext: true}, nil
}

func (r *readers) TokenDetails(_ context.Context, _ chain.Chain, addrs []string) ([]token.Detail, error) {
	want := make(map[string]bool, len(addrs))
	for _, a := range addrs {
		want[a] = true
	}
	var out []token.Detail
	for _, d := range r.tokens {
		if want[d.Address] {
			out = append(out, d)
		}
	}
	return out, nil
}

// HotTokens ranks the fixture's tokens in its order.
func (r *readers) HotTokens(_ context.Context, _ chain.Chain, _ ranking.Duration, limit int) ([]ports.HotEntry, error) {
	out := make([]ports.HotEntry, min(limit, len(r.tokens)))
	for i := range out {
		out[i] = ports.HotEntry{Address: r.tokens[i].Address, Rank: int32(i + 1), Score: decimal.NewFromInt(int64(len(out) - i))}
	}
	return out, nil
}

func (r *readers) ListTrades(_ context.Context, _ ports.TradeFilter, p ports.PageRequest) (page.Page[trade.Trade], error) {
	items := r.trades[:min(p.Limit, len(r.trades))]
	return page.Page[trade.Trade]{Items: items, StartCursor: cursor("dHJhZGU6MTcxNzAwMDAwMDAwMDpzaWc6MA"),
		EndCursor: cursor("dHJhZGU6MTcxNjk5OTk5MjQwMDpzaWc6MTk"), HasNext: true}, nil
}

func (r *readers) ListSnapshots(_ context.Context, _ chain.Chain, _ string, _ *int64, p ports.PageRequest) (page.Page[pool.Snapshot], error) {
	items := r.snapshots[:min(p.Limit, len(r.snapshots))]
	return page.Page[pool.Snapshot]{Items: items, StartCursor: cursor("c25hcDoyNzAwMDAwMDA"), EndCursor: cursor("c25hcDoyNjk5OTcxNTA"),
		HasNext: true}, nil
}

func (r *readers) ListRedPackets(_ context.Context, _ ports.RedPacketFilter, p ports.PageRequest) (ports.Counted[redpacket.RedPacket], error) {
	items := r.packets[:min(p.Limit, len(r.packets))]
	return ports.Counted[redpacket.RedPacket]{Page: page.Page[redpacket.RedPacket]{Items: items, EndCursor: cursor("cnA6MTk"), HasNext: true},
		Total: 137}, nil
}

func (r *readers) ListClaims(_ context.Context, _ string, p ports.PageRequest) (ports.Counted[redpacket.Claim], error) {
	items := r.claims[:min(p.Limit, len(r.claims))]
	return ports.Counted[redpacket.Claim]{Page: page.Page[redpacket.Claim]{Items: items, EndCursor: cursor("Y2w6MTk"), HasNext: true},
		Total: 42}, nil
}

func (r *readers) PricedPositions(context.Context, chain.Chain, string, []string, []int64) ([]ports.PricedPosition, error) {
	return r.positions, nil
}

// keyStore is an AccountStore holding keys in memory.
type keyStore struct {
	keys    map[string]account.Key // by prefix
	lookups atomic.Int64           // KeyByPrefix calls: the database round trips a real store would make
}

func (s *keyStore) EnsureAccount(context.Context, string, string) error { return nil }

func (s *keyStore) CreateKey(_ context.Context, k account.Key) error {
	s.keys[k.Prefix] = k
	return nil
}

func (s *keyStore) KeyByPrefix(_ context.Context, prefix string) (account.Key, error) {
	s.lookups.Add(1)
	if k, ok := s.keys[prefix]; ok {
		return k, nil
	}
	return account.Key{}, fault.NotFound("key", prefix)
}

func (s *keyStore) ListKeys(context.Context, string) ([]account.Key, error) { return nil, nil }
func (s *keyStore) RevokeKey(context.Context, string) error                 { return nil }
func (s *keyStore) TouchKey(context.Context, string) error                  { return nil }

// endpointStore serves one webhook endpoint of one account.
type endpointStore struct {
	ports.EndpointStore // unused methods panic
	ep                  *webhook.Endpoint
}

func (s *endpointStore) Get(_ context.Context, accountID, id string) (*webhook.Endpoint, error) {
	if s.ep.AccountID() != accountID || s.ep.ID() != id {
		return nil, fault.NotFound("endpoint", id)
	}
	return s.ep, nil
}

const (
	fixtureAccount  = "acct_bench"
	fixtureEndpoint = "ep_01HZX3K6Q9V7M2C8T4N5P0R1SB"
	fixtureWallet   = "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU"
)

func fixtureEndpointRecord(t testing.TB) *webhook.Endpoint {
	p := webhook.Patch{Channels: webhook.Value([]webhook.Channel{"sol.token.migrated", "sol.token.created"}),
		Description: webhook.Value("Migrations for the trading desk"), FilterTypes: webhook.Value([]string{"sol.token.migrated"}),
		Metadata: webhook.Value(map[string]string{"team": "desk", "env": "prod"}), RateLimit: webhook.Value[int64](50)}
	created := time.Date(2024, 5, 29, 16, 26, 40, 123_000_000, time.UTC)
	ep, err := webhook.NewEndpoint(fixtureEndpoint, fixtureAccount, "https://hooks.example.com/tokenscope",
		webhook.WithPatch(p), webhook.CreatedAt(created))
	if err != nil {
		t.Fatal(err)
	}
	return ep
}

// server is the real API over the fixtures, built the way cmd/tokenscope's httpDeps does.
type server struct {
	app      *fiber.App
	admin    *fiber.App // the admin address (/metrics) over the same registry
	dex      *fiber.App // the dex address over the same Deps
	key      string
	keys     *apikey.Service
	store    *keyStore
	registry *prometheus.Registry
}

// newServer builds the server; opts adjust its Deps first (ratelimit_test.go sets a limiter).
func newServer(t testing.TB, logTo io.Writer, opts ...func(*httpapi.Deps)) *server {
	t.Helper()
	store := &keyStore{keys: map[string]account.Key{}}
	keys := apikey.New(store, wallClock{})
	full, _, err := keys.Create(context.Background(), fixtureAccount, "bench", account.AllScopes)
	if err != nil {
		t.Fatal(err)
	}
	a := &app.Application{
		Keys:     keys,
		Market:   market.New(newReaders(), market.WithCache(fakeversions.Following())), // as served, no write announced,
		Webhooks: webhookendpoint.New(&endpointStore{ep: fixtureEndpointRecord(t)}, nil, nil, nil, wallClock{}),
	}
	reg := prometheus.NewRegistry()
	d := httpapi.Deps{
		App: a, Auth: a.Keys, Log: slog.New(slog.NewJSONHandler(logTo, &slog.HandlerOptions{Level: slog.LevelInfo})),
		Registry: reg, Metrics: httpapi.NewMetrics(reg), RequestTimeout: 15 * time.Second,
	}
	for _, o := range opts {
		o(&d)
	}
	return &server{app: httpapi.New(d), admin: httpapi.NewAdmin(d), dex: httpapi.NewDex(d), key: full, keys: keys, store: store, registry: reg}
}

// endpoint is one benchmarked request.
type endpoint struct {
	name, path string
}

var endpoints = []endpoint{
	{"trades", "/v2/trade/sol?tokenAddress=EKpQGSJtjMFqKZ9KQanSqYXRcF8fBopzLHYxdM65zcjm&limit=20"},
	{"snapshots", "/v2/dexpools/sol/58oQChx4yWmvKdwLLZzBi4ChoCc2fqCUWBkwMihLYQo2/snapshots?limit=20"},
	{"pnl", "/v2/wallet/sol/" + fixtureWallet + "/pnl-by-token?tokenAddresses=" + strings.Repeat("EKpQGSJtjMFqKZ9KQanSqYXRcF8fBopzLHYxdM65zcjm,", 9) + "So11111111111111111111111111111111111111112"},
	{"webhook", "/v2/webhook/endpoint/" + fixtureEndpoint},
	{"whoami", "/v2/whoami"},
	{"redpackets", "/v2/redpacket?chain=sol&limit=20"},
	{"claims", "/v2/redpacket/9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin/claims?limit=20"},
}

// tokenEndpoints are the token record lists, each of fixtureTokens records but multi-10
// (BenchmarkTokenHandler).
var tokenEndpoints = []endpoint{
	{"hotTokens", "/v2/ranking/sol/hotTokens/1h"},
	{"search-normal", "/v2/token/search?q=token&mode=normal&limit=100"},
	{"search-fast", "/v2/token/search?q=token&limit=100"},
	{"multi", "/v1/token/sol/multi?tokenAddresses=" + tokenAddresses(fixtureTokenDetails)},
	{"multi-v2", "/v2/token/sol/multi?tokenAddresses=" + tokenAddresses(fixtureTokenDetails)},
	// The size of the tokenbench multi request (ten addresses, a body of about 50 KB at the
	// bench's data), where the fixed cost of a request weighs more than encoding.
	{"multi-10", "/v1/token/sol/multi?tokenAddresses=" + tokenAddresses(fixtureTokenDetails[:10])},
}

func mustStatus(t testing.TB, got int, body []byte, want int) {
	t.Helper()
	if got != want {
		t.Fatalf("status %d, want %d: %s", got, want, body)
	}
}
