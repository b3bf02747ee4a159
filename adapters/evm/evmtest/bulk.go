package evmtest

import (
	"context"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"
)

// Gas limits of the bulk deployments: a block (60M) takes about 24 token deployments (about
// 1.2M gas used each) or 15 createPair (about 2.5M).
const (
	tokenDeployGas = 2_500_000
	createPairGas  = 4_000_000
	bulkPerBlock   = 15
)

// Tokens deploys n ERC20PresetFixedSupply tokens (18 decimals; "Token i", symbol "Ti"), each of
// supply whole tokens minted to the deployer, many to a block (committed).
func (m *Market) Tokens(n int, supply int64) []common.Address {
	m.t.Helper()
	var out []common.Address
	for start := 0; start < n; start += bulkPerBlock {
		var hashes []common.Hash
		for i := start; i < min(start+bulkPerBlock, n); i++ {
			in, err := m.erc20.ABI.Pack("", fmt.Sprintf("Token %d", i), fmt.Sprintf("T%d", i), Units(supply), Addr(m.Deployer))
			require.NoError(m.t, err)
			tx := m.sendGas(m.Deployer, nil, append(append([]byte{}, m.erc20.Bytecode...), in...), tokenDeployGas)
			hashes = append(hashes, tx.Hash())
		}
		m.Commit()
		for _, h := range hashes {
			r, err := m.C.TransactionReceipt(context.Background(), h)
			require.NoError(m.t, err)
			out = append(out, r.ContractAddress)
		}
	}
	return out
}

// Pairs creates the pair of base with each token, many to a block (committed), and returns them
// in the tokens' order.
func (m *Market) Pairs(base common.Address, tokens []common.Address) []common.Address {
	m.t.Helper()
	for start := 0; start < len(tokens); start += bulkPerBlock {
		for _, tok := range tokens[start:min(start+bulkPerBlock, len(tokens))] {
			data, err := m.factory.Pack("createPair", base, tok)
			require.NoError(m.t, err)
			m.sendGas(m.Deployer, &m.Factory, data, createPairGas)
		}
		m.Commit()
	}
	out := make([]common.Address, len(tokens))
	for i, tok := range tokens {
		out[i] = m.call(m.factory, m.Factory, "getPair", base, tok)[0].(common.Address)
		m.Reserves[out[i]] = map[common.Address]*big.Int{base: new(big.Int), tok: new(big.Int)}
	}
	return out
}

// LiquidityEach adds amtBase of base and amtTok of the pair's other token to each pair (as
// Liquidity does), many pairs to a block (committed); tokens[i] is pairs[i]'s other token.
func (m *Market) LiquidityEach(pairs []common.Address, base common.Address, amtBase *big.Int, tokens []common.Address, amtTok *big.Int) {
	m.t.Helper()
	const perBlock = 60 // three transactions each
	for start := 0; start < len(pairs); start += perBlock {
		for i := start; i < min(start+perBlock, len(pairs)); i++ {
			p := pairs[i]
			m.Transfer(m.Deployer, base, p, amtBase)
			m.Transfer(m.Deployer, tokens[i], p, amtTok)
			m.tx(m.Deployer, m.pair, p, "mint", Addr(m.Deployer))
			m.Reserves[p][base].Add(m.Reserves[p][base], amtBase)
			m.Reserves[p][tokens[i]].Add(m.Reserves[p][tokens[i]], amtTok)
		}
		m.Commit()
	}
}
