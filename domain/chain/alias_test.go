package chain_test

import (
	"testing"
	"unsafe"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/ranking"
)

// A parsed value must not share memory with its input: the HTTP server hands handlers strings
// that alias a buffer it reuses for the next request, and parsed chains and durations are kept as
// cache keys. Overwriting the input after parsing must leave the parsed value intact.
func TestParsedValuesDoNotAliasTheirInput(t *testing.T) {
	buf := []byte("sol")
	c, err := chain.Parse("chain", unsafe.String(&buf[0], len(buf)))
	if err != nil {
		t.Fatal(err)
	}
	copy(buf, "eth")
	if c != chain.Sol {
		t.Fatalf("chain changed with its input buffer: %q", c)
	}

	buf = []byte("ethereum")
	m, err := chain.ParseMulti("chain", unsafe.String(&buf[0], len(buf)))
	if err != nil {
		t.Fatal(err)
	}
	copy(buf, "xxxxxxxx")
	if m != chain.Ethereum {
		t.Fatalf("multi chain changed with its input buffer: %q", m)
	}

	buf = []byte("24h")
	d, err := ranking.ParseDuration("duration", unsafe.String(&buf[0], len(buf)))
	if err != nil {
		t.Fatal(err)
	}
	copy(buf, "xxx")
	if d != ranking.Duration("24h") {
		t.Fatalf("duration changed with its input buffer: %q", d)
	}
}
