package evm_test

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"math/big"
	"os"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient/simulated"
	"github.com/stretchr/testify/require"
)

// testChain is go-ethereum's simulated chain (a real EVM, in process) with the compiled
// Uniswap V2 factory and OpenZeppelin ERC-20s the npm packages ship (testdata, abi/NOTICE.md).
type testChain struct {
	t        *testing.T
	b        *simulated.Backend
	c        simulated.Client
	signer   types.Signer
	deployer *ecdsa.PrivateKey
	factory  common.Address
	pending  []*types.Transaction
}

type artifact struct {
	ABI      abi.ABI
	Bytecode []byte
}

func loadArtifact(t *testing.T, path string) artifact {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var j struct {
		ABI      json.RawMessage `json:"abi"`
		Bytecode string          `json:"bytecode"`
	}
	require.NoError(t, json.Unmarshal(raw, &j))
	a, err := abi.JSON(strings.NewReader(string(j.ABI)))
	require.NoError(t, err)
	return artifact{ABI: a, Bytecode: common.FromHex(j.Bytecode)}
}

func loadABI(t *testing.T, path string) abi.ABI {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	a, err := abi.JSON(f)
	require.NoError(t, err)
	return a
}

var (
	ether = new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil)
)

func units(n int64) *big.Int { return new(big.Int).Mul(big.NewInt(n), ether) }

func newKey(t *testing.T) *ecdsa.PrivateKey {
	k, err := crypto.GenerateKey()
	require.NoError(t, err)
	return k
}

func addr(k *ecdsa.PrivateKey) common.Address { return crypto.PubkeyToAddress(k.PublicKey) }

// newTestChain starts a chain whose genesis funds deployer and wallets with 1000 ETH each.
func newTestChain(t *testing.T, wallets ...*ecdsa.PrivateKey) *testChain {
	deployer := newKey(t)
	alloc := types.GenesisAlloc{addr(deployer): {Balance: units(1000)}}
	for _, w := range wallets {
		alloc[addr(w)] = types.Account{Balance: units(1000)}
	}
	b := simulated.NewBackend(alloc)
	t.Cleanup(func() { _ = b.Close() })
	c := b.Client()
	id, err := c.ChainID(context.Background())
	require.NoError(t, err)
	tc := &testChain{t: t, b: b, c: c, signer: types.LatestSignerForChainID(id), deployer: deployer}
	return tc
}

// send signs and submits a transaction from key (to nil: a deployment); it is mined by the next
// commit, which checks that it succeeded. tipBoost raises the fee (a replacement).
func (c *testChain) send(key *ecdsa.PrivateKey, to *common.Address, data []byte, tipBoost int64) *types.Transaction {
	c.t.Helper()
	ctx := context.Background()
	nonce, err := c.c.PendingNonceAt(ctx, addr(key))
	require.NoError(c.t, err)
	return c.sendNonce(key, nonce, to, data, tipBoost)
}

func (c *testChain) sendNonce(key *ecdsa.PrivateKey, nonce uint64, to *common.Address, data []byte, tipBoost int64) *types.Transaction {
	c.t.Helper()
	ctx := context.Background()
	head, err := c.c.HeaderByNumber(ctx, nil)
	require.NoError(c.t, err)
	tip := new(big.Int).Mul(big.NewInt(1_000_000_000), big.NewInt(1+tipBoost))
	feeCap := new(big.Int).Add(new(big.Int).Mul(head.BaseFee, big.NewInt(2)), tip)
	tx, err := types.SignNewTx(key, c.signer, &types.DynamicFeeTx{ChainID: c.signer.ChainID(), Nonce: nonce, GasTipCap: tip,
		GasFeeCap: feeCap, Gas: 6_000_000, To: to, Data: data})
	require.NoError(c.t, err)
	require.NoError(c.t, c.c.SendTransaction(ctx, tx))
	c.pending = append(c.pending, tx)
	return tx
}

// commit mines a block and requires every transaction sent since to have succeeded in it.
func (c *testChain) commit() *types.Header {
	c.t.Helper()
	c.b.Commit()
	ctx := context.Background()
	for _, tx := range c.pending {
		r, err := c.c.TransactionReceipt(ctx, tx.Hash())
		require.NoError(c.t, err)
		require.Equal(c.t, types.ReceiptStatusSuccessful, r.Status, "transaction %s failed", tx.Hash().Hex())
	}
	c.pending = nil
	h, err := c.c.HeaderByNumber(ctx, nil)
	require.NoError(c.t, err)
	return h
}

func (c *testChain) deploy(a artifact, args ...any) common.Address {
	c.t.Helper()
	in, err := a.ABI.Pack("", args...)
	require.NoError(c.t, err)
	tx := c.send(c.deployer, nil, append(append([]byte{}, a.Bytecode...), in...), 0)
	c.commit()
	r, err := c.c.TransactionReceipt(context.Background(), tx.Hash())
	require.NoError(c.t, err)
	return r.ContractAddress
}

func (c *testChain) call(a abi.ABI, to common.Address, method string, args ...any) []any {
	c.t.Helper()
	data, err := a.Pack(method, args...)
	require.NoError(c.t, err)
	out, err := c.c.CallContract(context.Background(), ethereumCall(to, data), nil)
	require.NoError(c.t, err)
	v, err := a.Unpack(method, out)
	require.NoError(c.t, err)
	return v
}

func (c *testChain) tx(key *ecdsa.PrivateKey, a abi.ABI, to common.Address, method string, args ...any) *types.Transaction {
	c.t.Helper()
	data, err := a.Pack(method, args...)
	require.NoError(c.t, err)
	return c.send(key, &to, data, 0)
}

type ecdsaKey = ecdsa.PrivateKey
