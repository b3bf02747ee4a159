// Package chain holds the chain identifiers the API accepts. Standard library only.
package chain

import (
	"strings"

	"github.com/tokenscope/tokenscope/domain/fault"
)

// Chain is a chain symbol as used in v2 paths (sol, eth, bsc) or in the v1 multi-detail path.
type Chain string

const (
	Sol       Chain = "sol"
	Eth       Chain = "eth"
	Bsc       Chain = "bsc"
	Base      Chain = "base"
	Polygon   Chain = "polygon"
	Arbitrum  Chain = "arbitrum"
	Optimism  Chain = "optimism"
	Avalanche Chain = "avalanche"
	Ethereum  Chain = "ethereum"
	ZkSync    Chain = "zksync"
	Sui       Chain = "sui"
)

// V2 lists the chains of the v2 operations, in the spec's order.
var V2 = []Chain{Sol, Eth, Bsc}

// Multi lists the chains of the v1 multi-detail operation, in the spec's order.
var Multi = []Chain{Sol, Base, Bsc, Polygon, Arbitrum, Optimism, Avalanche, Ethereum, ZkSync, Sui}

// Parse accepts one of the v2 chains (case-insensitive) or returns an Invalid error naming param.
func Parse(param, s string) (Chain, error) { return parseIn(param, s, V2) }

// ParseMulti accepts one of the multi-detail chains.
func ParseMulti(param, s string) (Chain, error) { return parseIn(param, s, Multi) }

func parseIn(param, s string, set []Chain) (Chain, error) {
	c := Chain(strings.ToLower(strings.TrimSpace(s)))
	for _, v := range set {
		if v == c {
			// The constant, never c: s may alias a request buffer the server reuses, and callers
			// keep chains as map keys.
			return v, nil
		}
	}
	return "", fault.InvalidParam(param, s, Strings(set)...)
}

// Canonical maps a multi-detail chain name onto the chain the data is stored under
// (ethereum is stored as eth); other names map to themselves.
func (c Chain) Canonical() Chain {
	if c == Ethereum {
		return Eth
	}
	return c
}

// Native returns the symbol of the chain's native asset.
func (c Chain) Native() string {
	switch c.Canonical() {
	case Sol:
		return "SOL"
	case Bsc:
		return "BNB"
	default:
		return "ETH"
	}
}

// Strings renders a chain list for error messages.
func Strings(cs []Chain) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = string(c)
	}
	return out
}
