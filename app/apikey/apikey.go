// Package apikey is the use case behind `tokenscope apikey` and request authentication: it
// creates keys from crypto-random bytes, lists and revokes them, and turns a presented key into
// a Principal. It imports domain and ports only.
package apikey

import (
	"context"
	"crypto/rand"
	"fmt"

	"github.com/tokenscope/tokenscope/domain/account"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/ports"
)

// Service manages API keys.
type Service struct {
	store ports.AccountStore
	clock ports.Clock
	// random is crypto/rand.Read unless a test replaces it.
	random func([]byte) (int, error)
}

// New builds the service.
func New(store ports.AccountStore, clock ports.Clock) *Service {
	return &Service{store: store, clock: clock, random: rand.Read}
}

// Create makes an account (if missing) and a key for it; the full key is returned once.
func (s *Service) Create(ctx context.Context, accountID, name string, scopes []account.Scope) (string, account.Key, error) {
	if accountID == "" {
		return "", account.Key{}, fault.Missing("account")
	}
	idBytes := make([]byte, 6)
	secret := make([]byte, 24) // 192 bits
	if _, err := s.random(idBytes); err != nil {
		return "", account.Key{}, fmt.Errorf("create api key: %w", err)
	}
	if _, err := s.random(secret); err != nil {
		return "", account.Key{}, fmt.Errorf("create api key: %w", err)
	}
	full, key, err := account.NewKey(idBytes, secret, accountID, name, scopes, s.clock.Now().UTC())
	if err != nil {
		return "", account.Key{}, err
	}
	if err := s.store.EnsureAccount(ctx, accountID, accountID); err != nil {
		return "", account.Key{}, fmt.Errorf("create api key: %w", err)
	}
	if err := s.store.CreateKey(ctx, key); err != nil {
		return "", account.Key{}, fmt.Errorf("create api key: %w", err)
	}
	return full, key, nil
}

// List returns the keys of one account, or of every account when accountID is empty.
func (s *Service) List(ctx context.Context, accountID string) ([]account.Key, error) {
	return s.store.ListKeys(ctx, accountID)
}

// Revoke disables a key by id or prefix.
func (s *Service) Revoke(ctx context.Context, idOrPrefix string) error {
	return s.store.RevokeKey(ctx, idOrPrefix)
}

// Authenticate resolves a presented key. Every failure is the same Unauthorized error, so a
// caller cannot tell a malformed key from an unknown or revoked one.
func (s *Service) Authenticate(ctx context.Context, presented string) (account.Principal, error) {
	denied := fault.Unauthorized("invalid API key")
	prefix := account.PrefixOf(presented)
	if prefix == "" {
		return account.Principal{}, denied
	}
	key, err := s.store.KeyByPrefix(ctx, prefix)
	if fault.Is(err, fault.KindNotFound) {
		return account.Principal{}, denied
	}
	if err != nil {
		return account.Principal{}, fmt.Errorf("authenticate: %w", err)
	}
	p, err := key.Authenticate(presented)
	if err != nil {
		return account.Principal{}, denied
	}
	// Best effort: a failed touch must not fail the request.
	_ = s.store.TouchKey(ctx, key.ID)
	return p, nil
}
