package stats

// Functions only the tests use: nothing reachable from the binaries calls them (make deadcode).

// IsFresh reports whether a wallet first seen on chain at firstSeenAt (Unix ms) was fresh when
// it first bought the token at firstBuyAt (Unix ms): it appeared at most FreshPeriod before.
func IsFresh(firstSeenAt, firstBuyAt int64) bool {
	d := firstBuyAt - firstSeenAt
	return d >= 0 && d <= FreshPeriod.Milliseconds()
}
