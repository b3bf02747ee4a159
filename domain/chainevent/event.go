// Package chainevent is the vocabulary of the market-data engine's input: one type per chain event
// (token created and migrated, pool created, trade, pool snapshot, red packet created, claimed
// and expired, wallet label), their validation, the batch they travel in and its in-batch
// deduplication. Their NDJSON wire format is adapters/ndjson. It may import only the standard
// library, github.com/shopspring/decimal and other domain packages.
package chainevent

import (
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/pool"
	"github.com/tokenscope/tokenscope/domain/redpacket"
	"github.com/tokenscope/tokenscope/domain/text"
	"github.com/tokenscope/tokenscope/domain/token"
	"github.com/tokenscope/tokenscope/domain/trade"
)

// Type is the "type" member of an NDJSON line.
type Type string

const (
	TypeTokenCreated     Type = "token.created"
	TypeTokenMigrated    Type = "token.migrated"
	TypePoolCreated      Type = "pool.created"
	TypeTrade            Type = "trade"
	TypePoolSnapshot     Type = "pool.snapshot"
	TypeRedPacketCreated Type = "redpacket.created"
	TypeRedPacketClaimed Type = "redpacket.claimed"
	TypeRedPacketExpired Type = "redpacket.expired"
	TypeWalletLabel      Type = "wallet.label"
)

// AllTypes lists the event types in the order a batch applies them, so an event may refer to
// anything an earlier type in the same batch introduced (a trade to a token created in it).
var AllTypes = []Type{
	TypeTokenCreated, TypePoolCreated, TypeWalletLabel, TypeTrade, TypePoolSnapshot,
	TypeTokenMigrated, TypeRedPacketCreated, TypeRedPacketClaimed, TypeRedPacketExpired,
}

// Event is one chain event. The set is closed: only this package's types implement it.
type Event interface {
	Type() Type
	// Validate reports what ingest must never store, naming the wire field.
	Validate() error
	sealed()
}

// TokenCreated is a token launch: the full v2 token record plus supply, the developer wallet and
// the bonding curve it launched on.
type TokenCreated struct {
	Token             token.Token
	TotalSupply       decimal.Decimal
	CirculatingSupply decimal.Decimal
	// Creator is the developer wallet (the dev holder group); it defaults to the first creator.
	Creator string
	// CurvePool is the bonding-curve pool the token trades on until it migrates ("" if none).
	CurvePool string
	// CurveTargetInNative is the native-token reserve at which the curve completes and migrates;
	// completionRatio = curve reserve / target.
	CurveTargetInNative decimal.Decimal
}

// TokenMigrated is a token leaving its bonding curve for a DEX pool.
type TokenMigrated struct {
	Chain          chain.Chain
	Address        string
	PoolAddress    string
	ProgramAddress string
	ProtocolFamily string
	// At is Unix ms.
	At int64
}

// PoolCreated introduces a pool (bonding curve or DEX pool).
type PoolCreated struct {
	Pool           pool.Pool
	IsBondingCurve bool
	// At is Unix ms.
	At int64
}

// Trade is one swap.
type Trade struct{ trade.Trade }

// PoolSnapshot is a pool's liquidity at one block; it also becomes the pool's current state
// when it is the newest snapshot of that pool.
type PoolSnapshot struct{ pool.Snapshot }

// RedPacketCreated opens a red packet; its claimed/refunded state starts at zero whatever the
// event says.
type RedPacketCreated struct{ Packet redpacket.RedPacket }

// RedPacketClaimed is one claim.
type RedPacketClaimed struct{ Claim redpacket.Claim }

// RedPacketExpired closes a packet and refunds its unclaimed rest.
type RedPacketExpired struct {
	PacketID string
	// At is Unix ms; it must not precede the packet's expiredAt.
	At int64
}

// WalletLabel puts a wallet into a holder group on one chain.
type WalletLabel struct {
	Chain  chain.Chain
	Wallet string
	Label  token.HolderGroup
}

func (TokenCreated) Type() Type     { return TypeTokenCreated }
func (TokenMigrated) Type() Type    { return TypeTokenMigrated }
func (PoolCreated) Type() Type      { return TypePoolCreated }
func (Trade) Type() Type            { return TypeTrade }
func (PoolSnapshot) Type() Type     { return TypePoolSnapshot }
func (RedPacketCreated) Type() Type { return TypeRedPacketCreated }
func (RedPacketClaimed) Type() Type { return TypeRedPacketClaimed }
func (RedPacketExpired) Type() Type { return TypeRedPacketExpired }
func (WalletLabel) Type() Type      { return TypeWalletLabel }

func (TokenCreated) sealed()     {}
func (TokenMigrated) sealed()    {}
func (PoolCreated) sealed()      {}
func (Trade) sealed()            {}
func (PoolSnapshot) sealed()     {}
func (RedPacketCreated) sealed() {}
func (RedPacketClaimed) sealed() {}
func (RedPacketExpired) sealed() {}
func (WalletLabel) sealed()      {}

func required(pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if strings.TrimSpace(pairs[i+1]) == "" {
			return fault.Missing(pairs[i])
		}
	}
	return nil
}

// MaxIdentifierLen bounds an event's identifiers (addresses, signatures, ids) in bytes. They
// are keys of Postgres indexes, whose entries may not exceed about 2.7 kB (a longer one fails
// the whole batch), and no chain's identifier comes near 128 bytes.
const MaxIdentifierLen = 128

// identifiers refuses an identifier longer than MaxIdentifierLen; pairs are wire name, value.
func identifiers(pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if len(pairs[i+1]) > MaxIdentifierLen {
			return fault.Invalid(pairs[i], text.Shown(pairs[i+1]), "must be at most 128 bytes")
		}
	}
	return nil
}

// Validate checks identity, text lengths, supply and the curve target.
func (e TokenCreated) Validate() error {
	t := e.Token
	if err := identifiers("address", t.Address, "creator", e.Creator, "curvePool", e.CurvePool,
		"metadataAddress", t.MetadataAddress, "tokenCreatedTxSignature", t.CreatedTxSignature); err != nil {
		return err
	}
	for i, c := range t.Creators {
		if err := identifiers("tokenCreators["+strconv.Itoa(i)+"].address", c.Address); err != nil {
			return err
		}
	}
	if err := texts(MaxNameLen, "name", t.Name, "symbol", t.Symbol); err != nil {
		return err
	}
	if err := texts(MaxDescriptionLen, "description", t.Description); err != nil {
		return err
	}
	if err := texts(MaxTextLen, "imageUrl", t.ImageURL, "uri", t.URI, "market", t.Market, "vendorCoinId", t.VendorCoinID); err != nil {
		return err
	}
	for _, k := range t.Socials.Keys() {
		if err := texts(MaxTextLen, "socialMedias."+k, t.Socials.Get(k)); err != nil {
			return err
		}
	}
	x := t.Extra
	if err := texts(MaxTextLen, "extra.collectionAddress", x.CollectionAddress, "extra.freezeAuthority", x.FreezeAuthority,
		"extra.key", x.Key, "extra.launchFromProgramAddress", x.LaunchFromProgramAddress,
		"extra.launchFromProtocolFamily", x.LaunchFromProtocolFamily, "extra.migratedToPoolAddress", x.MigratedToPoolAddress,
		"extra.migratedToProgramAddress", x.MigratedToProgramAddress, "extra.migratedToProtocolFamily", x.MigratedToProtocolFamily,
		"extra.mintAuthority", x.MintAuthority, "extra.programAddress", x.ProgramAddress, "extra.tokenStandard", x.TokenStandard,
		"extra.updateAuthority", x.UpdateAuthority); err != nil {
		return err
	}
	if _, err := chain.Parse("chain", string(e.Token.Chain)); err != nil {
		return err
	}
	if err := required("address", e.Token.Address, "name", e.Token.Name, "symbol", e.Token.Symbol); err != nil {
		return err
	}
	if e.Token.Decimals < 0 || e.Token.Decimals > 36 {
		return fault.Invalid("decimals", decimal.NewFromInt32(e.Token.Decimals).String(), "must be between 0 and 36")
	}
	if err := decimals(namedDecimal{"totalSupply", e.TotalSupply}, namedDecimal{"circulatingSupply", e.CirculatingSupply},
		namedDecimal{"curveTargetInNative", e.CurveTargetInNative}); err != nil {
		return err
	}
	if e.CirculatingSupply.GreaterThan(e.TotalSupply) {
		return fault.Invalid("circulatingSupply", e.CirculatingSupply.String(), "must not exceed totalSupply")
	}
	if e.Token.LaunchpadTag != "" {
		if _, err := token.ParseTag("launchpadTag", string(e.Token.LaunchpadTag)); err != nil {
			return err
		}
	}
	return nil
}

// Validate checks identity and time.
func (e TokenMigrated) Validate() error {
	if err := identifiers("address", e.Address, "migratedToPoolAddress", e.PoolAddress,
		"migratedToProgramAddress", e.ProgramAddress); err != nil {
		return err
	}
	if err := texts(MaxNameLen, "migratedToProtocolFamily", e.ProtocolFamily); err != nil {
		return err
	}
	if _, err := chain.Parse("chain", string(e.Chain)); err != nil {
		return err
	}
	if err := required("address", e.Address, "poolAddress", e.PoolAddress); err != nil {
		return err
	}
	if e.At <= 0 {
		return fault.Invalid("migratedAt", decimal.NewFromInt(e.At).String(), "must be a positive Unix millisecond time")
	}
	return nil
}

// Validate checks identity and the two sides.
func (e PoolCreated) Validate() error {
	if err := identifiers("poolAddress", e.Pool.Address, "tokenAAddress", e.Pool.TokenAAddress, "tokenBAddress", e.Pool.TokenBAddress,
		"programAddress", e.Pool.ProgramAddress); err != nil {
		return err
	}
	if err := texts(MaxNameLen, "protocolFamily", e.Pool.ProtocolFamily, "protocolName", e.Pool.ProtocolName); err != nil {
		return err
	}
	if err := texts(MaxTextLen, "image", e.Pool.Image); err != nil {
		return err
	}
	if _, err := chain.Parse("chain", string(e.Pool.Chain)); err != nil {
		return err
	}
	return required("address", e.Pool.Address, "tokenAAddress", e.Pool.TokenAAddress, "tokenBAddress", e.Pool.TokenBAddress)
}

// Validate bounds the identifiers, texts and decimals and delegates to trade.Trade.Validate.
func (e Trade) Validate() error {
	t := e.Trade
	if err := identifiers("transactionSignature", t.TransactionSignature, "accountOwnerAddress", t.Wallet,
		"poolAddress", t.PoolAddress, "tokenAddress", t.TokenAddress, "sideTokenAddress", t.SideTokenAddress,
		"dexProgramAddress", t.DexProgramAddress); err != nil {
		return err
	}
	if err := texts(MaxNameLen, "tokenName", t.TokenName, "tokenSymbol", t.TokenSymbol, "sideTokenName", t.SideTokenName,
		"sideTokenSymbol", t.SideTokenSymbol, "dexProtocolFamily", t.DexProtocolFamily); err != nil {
		return err
	}
	if err := texts(MaxTextLen, "tokenImageUrl", t.TokenImageURL, "sideTokenImageUrl", t.SideTokenImageURL, "dexImage", t.DexImage); err != nil {
		return err
	}
	if err := decimals(namedDecimal{"tokenAmount", t.TokenAmount}, namedDecimal{"tokenAmountInNative", t.TokenAmountInNative},
		namedDecimal{"tokenAmountInUsd", t.TokenAmountInUSD}, namedDecimal{"tokenPriceInNative", t.TokenPriceInNative},
		namedDecimal{"tokenPriceInUsd", t.TokenPriceInUSD}, namedDecimal{"sideTokenAmount", t.SideTokenAmount},
		namedDecimal{"sideTokenAmountInNative", t.SideTokenAmountInNative}, namedDecimal{"sideTokenAmountInUsd", t.SideTokenAmountInUSD},
		namedDecimal{"sideTokenPriceInNative", t.SideTokenPriceInNative}, namedDecimal{"sideTokenPriceInUsd", t.SideTokenPriceInUSD}); err != nil {
		return err
	}
	return t.Validate()
}

// Validate bounds the pool address, the sides' addresses and amounts and the TVL, and delegates
// to pool.Snapshot.Validate.
func (e PoolSnapshot) Validate() error {
	s := e.Snapshot
	if err := identifiers("poolAddress", s.PoolAddress, "tokenA.tokenAddress", s.TokenA.TokenAddress,
		"tokenB.tokenAddress", s.TokenB.TokenAddress); err != nil {
		return err
	}
	for _, side := range []struct {
		name string
		s    pool.Side
	}{{"tokenA", s.TokenA}, {"tokenB", s.TokenB}} {
		if err := texts(MaxSmallestUnitDigits, side.name+".vaultAmount", string(side.s.VaultAmount)); err != nil {
			return err
		}
		if err := decimals(namedDecimal{side.name + ".amountInNative", side.s.AmountInNative},
			namedDecimal{side.name + ".amountInUsd", side.s.AmountInUSD}, namedDecimal{side.name + ".priceNative", side.s.PriceNative},
			namedDecimal{side.name + ".priceUsd", side.s.PriceUSD}); err != nil {
			return err
		}
	}
	if err := decimals(namedDecimal{"tvlInNative", s.TVLInNative}, namedDecimal{"tvlInUsd", s.TVLInUSD}); err != nil {
		return err
	}
	return s.Validate()
}

// Validate checks the packet as created: nothing claimed or refunded yet.
func (e RedPacketCreated) Validate() error {
	if err := identifiers("id", e.Packet.ID, "creator", e.Packet.Creator, "mint", e.Packet.Mint,
		"claimAuthority", e.Packet.ClaimAuthority, "txHash", e.Packet.TxHash); err != nil {
		return err
	}
	if err := texts(MaxTextLen, "memo", e.Packet.Memo, "shareId", e.Packet.ShareID); err != nil {
		return err
	}
	if err := smallestUnits("totalAmount", e.Packet.TotalAmount); err != nil {
		return err
	}
	p := e.Packet
	p.ClaimedCount, p.ClaimedAmount, p.RefundedAmount, p.Expired, p.Claimers = 0, decimal.Zero, decimal.Zero, false, nil
	return p.Validate()
}

// Validate checks the claim's own fields; whether the packet can honour it is the store's
// business (redpacket.ApplyClaim).
func (e RedPacketClaimed) Validate() error {
	if err := identifiers("packetId", e.Claim.PacketID, "claimer", e.Claim.Claimer, "mint", e.Claim.Mint, "creator", e.Claim.Creator,
		"txHash", e.Claim.TxHash); err != nil {
		return err
	}
	if err := smallestUnits("amount", e.Claim.Amount); err != nil {
		return err
	}
	c := e.Claim
	if _, err := chain.Parse("chain", string(c.Chain)); err != nil {
		return err
	}
	if err := required("packetId", c.PacketID, "claimer", c.Claimer, "mint", c.Mint); err != nil {
		return err
	}
	if !c.Amount.IsPositive() || !c.Amount.IsInteger() {
		return fault.Invalid("amount", c.Amount.String(), "must be a positive integer amount in smallest units")
	}
	if c.ClaimedAt <= 0 {
		return fault.Invalid("claimedAt", decimal.NewFromInt(c.ClaimedAt).String(), "must be a positive Unix millisecond time")
	}
	return nil
}

// Validate checks the packet id and time.
func (e RedPacketExpired) Validate() error {
	if err := identifiers("packetId", e.PacketID); err != nil {
		return err
	}
	if err := required("packetId", e.PacketID); err != nil {
		return err
	}
	if e.At <= 0 {
		return fault.Invalid("expiredAt", decimal.NewFromInt(e.At).String(), "must be a positive Unix millisecond time")
	}
	return nil
}

// Validate checks the chain, wallet and label.
func (e WalletLabel) Validate() error {
	if err := identifiers("wallet", e.Wallet); err != nil {
		return err
	}
	if _, err := chain.Parse("chain", string(e.Chain)); err != nil {
		return err
	}
	if err := required("wallet", e.Wallet); err != nil {
		return err
	}
	_, err := token.ParseHolderGroup("label", string(e.Label))
	return err
}
