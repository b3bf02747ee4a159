package ports

import (
	"context"

	"github.com/tokenscope/tokenscope/domain/ratelimit"
)

// RateLimiter spends one request of a key's allowance under limit l. An error means the
// limiter could not decide (its store is down); the caller chooses what that means.
type RateLimiter interface {
	Allow(ctx context.Context, key string, l ratelimit.Limit) (ratelimit.Decision, error)
}
