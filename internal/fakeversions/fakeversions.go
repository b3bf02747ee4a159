// Package fakeversions is the ports.MarketVersions of the tests: versions that move only when
// a test announces a write. One sequence numbers the writes; every ranking shares one version,
// every token's details share one, and a token announced by name has its own. It is safe for
// concurrent use.
package fakeversions

import (
	"sync"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/ranking"
	"github.com/tokenscope/tokenscope/ports"
)

// Versions are market versions a test moves. The zero value is "not following": every
// version is 0 until a write is announced.
type Versions struct {
	mu                    sync.Mutex
	seq, details, ranking uint64
	tokens                map[string]uint64
}

var _ ports.MarketVersions = (*Versions)(nil)

// Following returns versions that are known: every version is 1.
func Following() *Versions { return &Versions{seq: 1, details: 1, ranking: 1} }

// Current implements ports.MarketVersions: the last write announced.
func (v *Versions) Current() uint64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.seq
}

// TokensVersion implements ports.MarketVersions: the latest write of every token's details or
// of one of addrs by name.
func (v *Versions) TokensVersion(_ chain.Chain, addrs []string) uint64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := v.details
	for _, a := range addrs {
		out = max(out, v.tokens[a])
	}
	return out
}

// RankingVersion implements ports.MarketVersions: the latest write of the rankings.
func (v *Versions) RankingVersion(chain.Chain, ranking.Duration) uint64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.ranking
}

// WriteRankings announces a committed write of the rankings.
func (v *Versions) WriteRankings() { v.announce(true, false) }

// WriteDetails announces a committed write of every token's details.
func (v *Versions) WriteDetails() { v.announce(false, true) }

// WriteAll announces a committed write of the rankings and every token's details.
func (v *Versions) WriteAll() { v.announce(true, true) }

// WriteTokens announces a committed write of these tokens' details only.
func (v *Versions) WriteTokens(addrs ...string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.seq++
	if v.tokens == nil {
		v.tokens = map[string]uint64{}
	}
	for _, a := range addrs {
		v.tokens[a] = v.seq
	}
}

func (v *Versions) announce(rankings, details bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.seq++
	if rankings {
		v.ranking = v.seq
	}
	if details {
		v.details = v.seq
	}
}
