// Package apikey is the use case behind `tokenscope apikey` and request authentication: it
// creates keys from crypto-random bytes, lists and revokes them, and turns a presented key into
// a Principal. It imports domain and ports only.
package apikey

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync"
	"time"

	"github.com/tokenscope/tokenscope/domain/account"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/ratelimit"
	"github.com/tokenscope/tokenscope/ports"
)

// CacheTTL is how long an authenticated key is trusted without asking the store again. It bounds
// how late a revocation made by another process (the CLI, another replica) takes effect;
// revocations through this Service apply at once.
const CacheTTL = 10 * time.Second

// cacheLimit bounds the cache; past it the cache is emptied (keys in use are few).
const cacheLimit = 10_000

// NegativeTTL is how long a well-formed key the store does not know is refused without asking
// it again: a client repeating an unknown key costs one lookup per period, not one per request.
// A key created by another process is thus refused for at most this long if its prefix was
// presented before it existed (keys created through this Service are known at once).
const NegativeTTL = 10 * time.Second

// Service manages API keys.
type Service struct {
	store ports.AccountStore
	clock ports.Clock
	// random is crypto/rand.Read unless a test replaces it.
	random func([]byte) (int, error)

	mu    sync.Mutex
	cache map[string]cachedKey // by prefix
	// unknown holds prefixes the store did not know, until when they are refused unasked;
	// bounded like cache.
	unknown map[string]time.Time
}

type cachedKey struct {
	key  account.Key
	read time.Time // when the record was read from the store
}

// New builds the service.
func New(store ports.AccountStore, clock ports.Clock) *Service {
	return &Service{store: store, clock: clock, random: rand.Read, cache: map[string]cachedKey{}, unknown: map[string]time.Time{}}
}

// Create makes an account (if missing) and a key for it with the default rate limit; the full
// key is returned once.
func (s *Service) Create(ctx context.Context, accountID, name string, scopes []account.Scope) (string, account.Key, error) {
	return s.CreateLimited(ctx, accountID, name, scopes, ratelimit.Limit{}, nil)
}

// CreateLimited is Create with the key's own rate limit (the zero Limit: the default) and its
// end (nil: never; after it the key is refused and its streams close).
func (s *Service) CreateLimited(ctx context.Context, accountID, name string, scopes []account.Scope, limit ratelimit.Limit, expires *time.Time) (string, account.Key, error) {
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
	key.Limit = limit
	key.ExpiresAt = expires
	if err := s.store.EnsureAccount(ctx, accountID, accountID); err != nil {
		return "", account.Key{}, fmt.Errorf("create api key: %w", err)
	}
	if err := s.store.CreateKey(ctx, key); err != nil {
		return "", account.Key{}, fmt.Errorf("create api key: %w", err)
	}
	s.mu.Lock()
	delete(s.unknown, key.Prefix)
	s.mu.Unlock()
	return full, key, nil
}

// List returns the keys of one account, or of every account when accountID is empty.
func (s *Service) List(ctx context.Context, accountID string) ([]account.Key, error) {
	return s.store.ListKeys(ctx, accountID)
}

// Revoke disables a key by id or prefix.
func (s *Service) Revoke(ctx context.Context, idOrPrefix string) error {
	if err := s.store.RevokeKey(ctx, idOrPrefix); err != nil {
		return err
	}
	s.mu.Lock()
	for prefix, c := range s.cache {
		if prefix == idOrPrefix || c.key.ID == idOrPrefix {
			delete(s.cache, prefix)
		}
	}
	s.mu.Unlock()
	return nil
}

// lookup returns the key with that prefix, from the cache when it was read less than maxAge
// ago. Every request carries a key, so without the cache each one would cost a database round
// trip.
func (s *Service) lookup(ctx context.Context, prefix string, maxAge time.Duration) (account.Key, bool, error) {
	now := s.clock.Now()
	s.mu.Lock()
	c, ok := s.cache[prefix]
	until, unknown := s.unknown[prefix]
	s.mu.Unlock()
	if ok && now.Before(c.read.Add(maxAge)) {
		return c.key, true, nil
	}
	if unknown && now.Before(until) {
		return account.Key{}, false, fault.NotFound("api key", prefix)
	}
	key, err := s.store.KeyByPrefix(ctx, prefix)
	if fault.Is(err, fault.KindNotFound) {
		s.mu.Lock()
		if len(s.unknown) >= cacheLimit {
			clear(s.unknown)
		}
		s.unknown[prefix] = now.Add(NegativeTTL)
		s.mu.Unlock()
	}
	if err != nil {
		return account.Key{}, false, err
	}
	s.mu.Lock()
	if len(s.cache) >= cacheLimit {
		clear(s.cache)
	}
	s.cache[prefix] = cachedKey{key: key, read: now}
	s.mu.Unlock()
	return key, false, nil
}

// errDenied is the one error of a refused key, made when needed: an accepted key, which every
// request presents, costs no allocation for it.
func errDenied() error { return fault.Unauthorized("invalid API key") }

// Authenticate resolves a presented key. Every failure is the same Unauthorized error, so a
// caller cannot tell a malformed key from an unknown or revoked one.
func (s *Service) Authenticate(ctx context.Context, presented string) (account.Principal, error) {
	return s.authenticate(ctx, presented, CacheTTL)
}

// Recheck is Authenticate trusting a cached record only when it was read less than maxAge ago.
// An open stream rechecks its key every maxAge with maxAge half of CacheTTL, so a revocation
// made by another process closes it within CacheTTL, the bound requests have.
func (s *Service) Recheck(ctx context.Context, presented string, maxAge time.Duration) (account.Principal, error) {
	return s.authenticate(ctx, presented, maxAge)
}

func (s *Service) authenticate(ctx context.Context, presented string, maxAge time.Duration) (account.Principal, error) {
	prefix := account.PrefixOf(presented)
	if prefix == "" {
		return account.Principal{}, errDenied()
	}
	key, cached, err := s.lookup(ctx, prefix, maxAge)
	if fault.Is(err, fault.KindNotFound) {
		return account.Principal{}, errDenied()
	}
	if err != nil {
		return account.Principal{}, fmt.Errorf("authenticate: %w", err)
	}
	// The hash comparison runs on every request, cached or not: the cache holds the stored
	// record, never a verdict about a presented string.
	p, err := key.Authenticate(presented, s.clock.Now())
	if err != nil {
		return account.Principal{}, errDenied()
	}
	if !cached {
		// Best effort, once per cache period: a failed touch must not fail the request.
		_ = s.store.TouchKey(ctx, key.ID)
	}
	return p, nil
}
