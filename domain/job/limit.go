package job

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strconv"
	"time"

	"github.com/tokenscope/tokenscope/domain/chain"
	"github.com/tokenscope/tokenscope/domain/fault"
)

// PnLKey names the work of a calculate-pnl job: requests with the same chain, wallet and token
// set ask for the same work, whatever the order and repeats of the tokens; no token list and an
// empty one (every token the wallet traded) are the same. While such a job is unfinished, an
// identical request is answered with it instead of a new one. The key is a hash, so it fits an
// index whatever the length of the list.
func PnLKey(c chain.Chain, wallet string, tokens []string) string {
	set := slices.Clone(tokens)
	slices.Sort(set)
	set = slices.Compact(set)
	if set == nil {
		set = []string{}
	}
	b, _ := json.Marshal([]any{KindCalculatePnL, c.Canonical(), wallet, set}) // strings only: cannot fail
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// BusyRetryAfter is what a client refused by TooManyRunning is told to wait: jobs take seconds to
// hours, so retrying sooner only repeats the refusal.
const BusyRetryAfter = 10 * time.Second

// TooManyRunning is the refusal of a job start when the account already has limit unfinished
// jobs.
func TooManyRunning(limit int) *fault.Error {
	e := fault.RateLimited("too many running jobs: an account may have at most "+strconv.Itoa(limit)+
		" unfinished jobs at once; retry when one has finished", BusyRetryAfter)
	e.Details = map[string]any{"maxRunningJobs": limit}
	return e
}
