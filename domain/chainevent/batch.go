package chainevent

import (
	"github.com/tokenscope/tokenscope/domain/pool"
	"github.com/tokenscope/tokenscope/domain/trade"
)

// Batch is a set of events grouped by type, each list deduplicated on its idempotency key with the
// first occurrence kept (the same rule the store applies against rows already stored, so a
// duplicate inside a batch and a duplicate across batches behave alike).
type Batch struct {
	TokensCreated     []TokenCreated
	TokensMigrated    []TokenMigrated
	PoolsCreated      []PoolCreated
	Trades            []trade.Trade
	Snapshots         []pool.Snapshot
	RedPacketsCreated []RedPacketCreated
	Claims            []RedPacketClaimed
	Expiries          []RedPacketExpired
	Labels            []WalletLabel
	// Duplicates counts events dropped because an earlier event in the batch had the same key.
	Duplicates int
}

// Len is the number of distinct events in b.
func (b Batch) Len() int {
	return len(b.TokensCreated) + len(b.TokensMigrated) + len(b.PoolsCreated) + len(b.Trades) +
		len(b.Snapshots) + len(b.RedPacketsCreated) + len(b.Claims) + len(b.Expiries) + len(b.Labels)
}

// Idempotency keys, as strings so one map type serves every event type.
func key(e Event) string {
	switch v := e.(type) {
	case TokenCreated:
		return string(v.Token.Chain) + "|" + v.Token.Address
	case TokenMigrated:
		return string(v.Chain) + "|" + v.Address
	case PoolCreated:
		return string(v.Pool.Chain) + "|" + v.Pool.Address
	case PoolSnapshot:
		k := v.Key()
		return string(k.Chain) + "|" + k.PoolAddress + "|" + itoa(k.BlockHeight)
	case RedPacketCreated:
		return v.Packet.ID
	case RedPacketClaimed:
		return v.Claim.PacketID + "|" + v.Claim.Claimer
	case RedPacketExpired:
		return v.PacketID
	case WalletLabel:
		return string(v.Chain) + "|" + v.Wallet + "|" + string(v.Label)
	}
	return ""
}

func itoa(n int64) string {
	if n == 0 {
		return "0"
	}
	neg := n < 0
	if neg {
		n = -n
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// NewBatch groups events by type and drops in-batch duplicates. The events are not validated
// here; the decoder and the use case do that with line numbers at hand. Trades, most of a
// stream, are keyed by trade.Key itself and copied once into a list sized for them.
func NewBatch(events []Event) Batch {
	var b Batch
	trades := 0
	for _, e := range events {
		if _, ok := e.(Trade); ok {
			trades++
		}
	}
	seenTrades := make(map[trade.Key]struct{}, trades)
	if trades > 0 {
		b.Trades = make([]trade.Trade, 0, trades)
	}
	seen := make(map[Type]map[string]bool, len(AllTypes))
	for _, e := range events {
		if v, ok := e.(Trade); ok {
			k := v.Key()
			if _, dup := seenTrades[k]; dup {
				b.Duplicates++
				continue
			}
			seenTrades[k] = struct{}{}
			b.Trades = append(b.Trades, v.Trade)
			continue
		}
		t := e.Type()
		if seen[t] == nil {
			seen[t] = map[string]bool{}
		}
		k := key(e)
		if seen[t][k] {
			b.Duplicates++
			continue
		}
		seen[t][k] = true
		switch v := e.(type) {
		case TokenCreated:
			b.TokensCreated = append(b.TokensCreated, v)
		case TokenMigrated:
			b.TokensMigrated = append(b.TokensMigrated, v)
		case PoolCreated:
			b.PoolsCreated = append(b.PoolsCreated, v)
		case PoolSnapshot:
			b.Snapshots = append(b.Snapshots, v.Snapshot)
		case RedPacketCreated:
			b.RedPacketsCreated = append(b.RedPacketsCreated, v)
		case RedPacketClaimed:
			b.Claims = append(b.Claims, v)
		case RedPacketExpired:
			b.Expiries = append(b.Expiries, v)
		case WalletLabel:
			b.Labels = append(b.Labels, v)
		}
	}
	return b
}

// Result counts what a committed batch changed. Inserted counts rows new to the store; an event
// already stored (a replay) counts in Skipped.
type Result struct {
	Events   int
	Inserted int
	Skipped  int
	Trades   int
	// Rederived counts positions rebuilt from all their trades because a trade arrived out of order.
	Rederived int
}

// Add sums two results (batch totals of a stream).
func (r Result) Add(o Result) Result {
	return Result{
		Events: r.Events + o.Events, Inserted: r.Inserted + o.Inserted, Skipped: r.Skipped + o.Skipped,
		Trades: r.Trades + o.Trades, Rederived: r.Rederived + o.Rederived,
	}
}
