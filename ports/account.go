package ports

import (
	"context"
	"time"

	"github.com/tokenscope/tokenscope/domain/account"
)

// Clock is read instead of time.Now so tests can pin time.
type Clock interface {
	Now() time.Time
}

// AccountStore keeps accounts and API keys.
type AccountStore interface {
	EnsureAccount(ctx context.Context, id, name string) error
	CreateKey(ctx context.Context, k account.Key) error
	// KeyByPrefix returns the key with that lookup prefix, or a fault.NotFound error.
	KeyByPrefix(ctx context.Context, prefix string) (account.Key, error)
	ListKeys(ctx context.Context, accountID string) ([]account.Key, error)
	// RevokeKey revokes by id or prefix; a fault.NotFound error when nothing was active.
	RevokeKey(ctx context.Context, idOrPrefix string) error
	TouchKey(ctx context.Context, id string) error
}

// Pinger reports whether a dependency is reachable (for /readyz).
type Pinger interface {
	Ping(ctx context.Context) error
}
