package ports

import (
	"context"

	"github.com/tokenscope/tokenscope/domain/account"
)

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
