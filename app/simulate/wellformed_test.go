package simulate_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/app/simulate"
	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/chainevent"
	"github.com/tokenscope/tokenscope/domain/kyt"
	"github.com/tokenscope/tokenscope/domain/token"
)

// collector keeps every emitted event.
type collector struct{ events []chainevent.Event }

func (c *collector) Emit(_ context.Context, e chainevent.Event) error {
	c.events = append(c.events, e)
	return nil
}
func (c *collector) Flush(context.Context) error { return nil }

// launchpadIDs is the public API's launchpad vocabulary (chainstream-compat.md §1.9 RankingTag,
// plus boop_fun of §4.4): the ids the client's tag and launchpadPlatform filters send.
var launchpadIDs = []string{"pump_fun", "raydium_launchpad", "meteora_dynamic_bounding_curve", "bonk_fun", "moonit_fun", "boop_fun"}

// protocolFamilies is the public SDK's DexProtocolFamily enumeration (chainstream-compat.md §3.1).
var protocolFamilies = []string{"Aldrin", "AldrinAmm", "BonkFun", "BoopFun", "CremaFinance", "Cropper", "Cykura",
	"Dradex", "Fluxbeam", "GooseFx", "Intro", "Invariant", "Jupiter", "Lifinity", "MagicEden", "Metaplex", "Meteora",
	"Moonshot", "OasisProgram", "Obric", "OpenBook", "Orca", "OrcaWhirpool", "PancakeClmm", "Penguin", "Phoenix",
	"Pumpfun", "Pumpswap", "Raydium", "Saber", "Saros", "Sencha", "Sentre", "Serum", "SolFi", "Solana", "Stabble",
	"StepFinance", "StepN", "Symmetry", "Tensor", "Unknown", "ZeroFi"}

// network is the KYT network whose address and hash shapes a chain uses: Solana for sol, the
// EVM shapes (ethereum) for eth and bsc.
func network(c chain.Chain) kyt.Network {
	if c == chain.Sol {
		return kyt.Solana
	}
	return kyt.Ethereum
}

// shapes lists every address and transaction signature an event carries, by field name.
func shapes(e chainevent.Event) (c chain.Chain, addrs, sigs map[string]string) {
	addrs, sigs = map[string]string{}, map[string]string{}
	switch v := e.(type) {
	case chainevent.TokenCreated:
		c = v.Token.Chain
		addrs["address"], addrs["creator"], addrs["curvePool"] = v.Token.Address, v.Creator, v.CurvePool
		addrs["extra.launchFromProgramAddress"] = v.Token.Extra.LaunchFromProgramAddress
		for i, cr := range v.Token.Creators {
			addrs[fmt.Sprintf("tokenCreators[%d].address", i)] = cr.Address
		}
		sigs["tokenCreatedTxSignature"] = v.Token.CreatedTxSignature
	case chainevent.PoolCreated:
		c = v.Pool.Chain
		addrs["address"], addrs["programAddress"] = v.Pool.Address, v.Pool.ProgramAddress
		addrs["tokenAAddress"], addrs["tokenBAddress"] = v.Pool.TokenAAddress, v.Pool.TokenBAddress
	case chainevent.Trade:
		c = v.Chain
		addrs["accountOwnerAddress"], addrs["poolAddress"] = v.Wallet, v.PoolAddress
		addrs["tokenAddress"], addrs["sideTokenAddress"] = v.TokenAddress, v.SideTokenAddress
		addrs["dexProgramAddress"] = v.DexProgramAddress
		sigs["transactionSignature"] = v.TransactionSignature
	case chainevent.PoolSnapshot:
		c = v.Chain
		addrs["poolAddress"] = v.PoolAddress
		addrs["tokenA.tokenAddress"], addrs["tokenB.tokenAddress"] = v.TokenA.TokenAddress, v.TokenB.TokenAddress
	case chainevent.TokenMigrated:
		c = v.Chain
		addrs["address"], addrs["poolAddress"], addrs["programAddress"] = v.Address, v.PoolAddress, v.ProgramAddress
	case chainevent.RedPacketCreated:
		c = v.Packet.Chain
		addrs["id"], addrs["creator"], addrs["claimAuthority"] = v.Packet.ID, v.Packet.Creator, v.Packet.ClaimAuthority
		addrs["mint"] = v.Packet.Mint
		sigs["txHash"] = v.Packet.TxHash
	case chainevent.RedPacketClaimed:
		c = v.Claim.Chain
		addrs["packetId"], addrs["claimer"], addrs["mint"], addrs["creator"] = v.Claim.PacketID, v.Claim.Claimer, v.Claim.Mint, v.Claim.Creator
		sigs["txHash"] = v.Claim.TxHash
	case chainevent.WalletLabel:
		c = v.Chain
		addrs["wallet"] = v.Wallet
	}
	return c, addrs, sigs
}

// TestOutputIsWellFormed is a property over many seeds: every address the simulator emits has
// its chain's address shape (Solana: base58 of 32 bytes; EVM: 0x + 40 hex), every signature
// its chain's transaction-hash shape (Solana: base58 of 64 bytes; EVM: 0x + 64 hex), as the
// KYT validators define them; every launchpad tag is one of the public API's launchpad ids,
// and every protocol family one of its DexProtocolFamily values. Backfill and live steps
// (what the dev seeding runs) are both covered.
func TestOutputIsWellFormed(t *testing.T) {
	end := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	tags := map[token.Tag]bool{}
	for seed := uint64(1); seed <= 40; seed++ {
		sim := simulate.New(simulate.Config{Seed: seed, Tokens: 12, Wallets: 60, Trades: 400, Start: end.Add(-2 * time.Hour), End: end})
		var got collector
		require.NoError(t, sim.Backfill(context.Background(), &got))
		for i := range 200 {
			require.NoError(t, sim.Step(context.Background(), &got, end.Add(time.Duration(i)*time.Second)))
		}
		for _, e := range got.events {
			require.NoError(t, e.Validate(), "seed %d: %T", seed, e)
			c, addrs, sigs := shapes(e)
			n := network(c)
			for f, a := range addrs {
				if !assert.True(t, kyt.ValidAddress(n, a), "seed %d: %T %s %q is no %s address", seed, e, f, a, c) {
					return
				}
			}
			for f, s := range sigs {
				if !assert.True(t, kyt.ValidHash(n, s), "seed %d: %T %s %q is no %s signature", seed, e, f, s, c) {
					return
				}
			}
			switch v := e.(type) {
			case chainevent.TokenCreated:
				tag := v.Token.LaunchpadTag
				tags[tag] = true
				assert.Contains(t, launchpadIDs, string(tag), "seed %d: launchpad tag", seed)
				parsed, err := token.ParseTag("tag", string(tag))
				assert.NoError(t, err)
				assert.Equal(t, tag, parsed, "the tag is stored under the name the filters parse it to")
				assertFamily(t, v.Token.Extra.LaunchFromProtocolFamily)
			case chainevent.PoolCreated:
				assertFamily(t, v.Pool.ProtocolFamily)
			case chainevent.TokenMigrated:
				assertFamily(t, v.ProtocolFamily)
			case chainevent.Trade:
				assertFamily(t, v.DexProtocolFamily)
			}
		}
	}
	for _, id := range launchpadIDs {
		assert.True(t, tags[token.Tag(id)], "no token launched on %s over 40 seeds", id)
	}
}

func assertFamily(t *testing.T, f string) {
	t.Helper()
	assert.True(t, slices.ContainsFunc(protocolFamilies, func(p string) bool { return strings.EqualFold(p, f) }),
		"protocol family %q is not one of the public API's", f)
}
