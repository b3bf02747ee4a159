package postgres

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tokenscope/tokenscope/adapters/postgres/internal/dbsqlc"
	"github.com/tokenscope/tokenscope/domain/account"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/ratelimit"
	"github.com/tokenscope/tokenscope/ports"
)

// AccountStore implements ports.AccountStore.
type AccountStore struct {
	pool *pgxpool.Pool
	q    *dbsqlc.Queries
}

var _ ports.AccountStore = (*AccountStore)(nil)

// NewAccountStore builds the store over pool.
func NewAccountStore(pool *pgxpool.Pool) *AccountStore {
	return &AccountStore{pool: pool, q: dbsqlc.New()}
}

func (s *AccountStore) EnsureAccount(ctx context.Context, id, name string) error {
	return interpretError(s.q.CreateAccount(ctx, s.pool, dbsqlc.CreateAccountParams{ID: id, Name: name}), "account", id)
}

func (s *AccountStore) CreateKey(ctx context.Context, k account.Key) error {
	scopes := make([]string, len(k.Scopes))
	for i, sc := range k.Scopes {
		scopes[i] = string(sc)
	}
	return interpretError(s.q.CreateAPIKey(ctx, s.pool, dbsqlc.CreateAPIKeyParams{
		ID: k.ID, AccountID: k.AccountID, Name: k.Name, Prefix: k.Prefix, KeyHash: k.Hash,
		Scopes: scopes, CreatedAt: k.CreatedAt, RatePerMinute: limitColumn(k.Limit, k.Limit.PerMinute),
		RateBurst: limitColumn(k.Limit, k.Limit.Burst), ExpiresAt: k.ExpiresAt,
	}), "api key", k.ID)
}

func (s *AccountStore) KeyByPrefix(ctx context.Context, prefix string) (account.Key, error) {
	row, err := s.q.GetAPIKeyByPrefix(ctx, s.pool, prefix)
	if err != nil {
		return account.Key{}, interpretError(err, "api key", prefix)
	}
	return keyFromRow(dbsqlc.ApiKey(row)), nil
}

func (s *AccountStore) ListKeys(ctx context.Context, accountID string) ([]account.Key, error) {
	var acc *string
	if accountID != "" {
		acc = &accountID
	}
	rows, err := s.q.ListAPIKeys(ctx, s.pool, acc)
	if err != nil {
		return nil, interpretError(err, "api keys", accountID)
	}
	out := make([]account.Key, len(rows))
	for i, r := range rows {
		out[i] = keyFromRow(dbsqlc.ApiKey(r))
	}
	return out, nil
}

func (s *AccountStore) RevokeKey(ctx context.Context, idOrPrefix string) error {
	n, err := s.q.RevokeAPIKey(ctx, s.pool, idOrPrefix)
	if err != nil {
		return interpretError(err, "api key", idOrPrefix)
	}
	if n == 0 {
		return fault.NotFound("active api key", idOrPrefix)
	}
	return nil
}

func (s *AccountStore) TouchKey(ctx context.Context, id string) error {
	return interpretError(s.q.TouchAPIKey(ctx, s.pool, id), "api key", id)
}

func keyFromRow(r dbsqlc.ApiKey) account.Key {
	scopes := make([]account.Scope, len(r.Scopes))
	for i, sc := range r.Scopes {
		scopes[i] = account.Scope(sc)
	}
	k := account.Key{ID: r.ID, AccountID: r.AccountID, Name: r.Name, Prefix: r.Prefix, Hash: r.KeyHash,
		Scopes: scopes, CreatedAt: r.CreatedAt, RevokedAt: r.RevokedAt, LastUsedAt: r.LastUsedAt, ExpiresAt: r.ExpiresAt}
	if r.RatePerMinute != nil {
		k.Limit = ratelimit.Limit{PerMinute: int(*r.RatePerMinute)}
		if r.RateBurst != nil {
			k.Limit.Burst = int(*r.RateBurst)
		}
	}
	return k
}

// limitColumn is a rate limit column: NULL for a key that follows the default.
func limitColumn(l ratelimit.Limit, v int) *int32 {
	if l.IsZero() {
		return nil
	}
	n := int32(v)
	return &n
}
