package job_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/job"
)

func TestPnLKey(t *testing.T) {
	key := job.PnLKey(chain.Sol, "W", []string{"B", "A"})
	assert.Regexp(t, `^[0-9a-f]{64}$`, key)
	for name, tc := range map[string]struct {
		c      chain.Chain
		wallet string
		tokens []string
		same   bool
	}{
		"same request":              {chain.Sol, "W", []string{"B", "A"}, true},
		"other order":               {chain.Sol, "W", []string{"A", "B"}, true},
		"repeats":                   {chain.Sol, "W", []string{"A", "B", "A"}, true},
		"other chain":               {chain.Eth, "W", []string{"A", "B"}, false},
		"other wallet":              {chain.Sol, "w", []string{"A", "B"}, false},
		"fewer tokens":              {chain.Sol, "W", []string{"A"}, false},
		"every token":               {chain.Sol, "W", nil, false},
		"one token holding a comma": {chain.Sol, "W", []string{"A,B"}, false},
		"wallet and token shifted":  {chain.Sol, "WA", []string{"B"}, false},
	} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.same, job.PnLKey(tc.c, tc.wallet, tc.tokens) == key)
		})
	}
	assert.Equal(t, job.PnLKey(chain.Sol, "W", nil), job.PnLKey(chain.Sol, "W", []string{}), "no list and an empty list are every token")
	assert.Equal(t, job.PnLKey(chain.Eth, "W", nil), job.PnLKey(chain.Ethereum, "W", nil), "chains compare canonically")
	tokens := []string{"B", "A"}
	job.PnLKey(chain.Sol, "W", tokens)
	assert.Equal(t, []string{"B", "A"}, tokens, "the caller's list is left as it was")
}

func TestTooManyRunning(t *testing.T) {
	e := job.TooManyRunning(4)
	assert.Equal(t, fault.KindRateLimited, e.Kind)
	assert.Equal(t, job.BusyRetryAfter, e.RetryAfter)
	assert.True(t, strings.Contains(e.Message, "4"), e.Message)
	assert.Equal(t, 4, e.Details["maxRunningJobs"])
}
