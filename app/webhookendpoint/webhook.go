// Package webhookendpoint is the webhook endpoint use case: create, read, list, patch (operation 13),
// delete, reveal and rotate the secret, list delivery attempts. URLs pass the SSRF guard and
// filters the CEL compiler before anything is stored. It may import domain and ports.
package webhookendpoint

import (
	"context"
	"crypto/rand"

	"github.com/tokenscope/tokenscope/domain/webhook"
	"github.com/tokenscope/tokenscope/ports"
)

// Service manages endpoints.
type Service struct {
	endpoints ports.EndpointStore
	attempts  ports.AttemptStore
	guard     ports.URLGuard
	filter    ports.FilterCompiler
	clock     ports.Clock
}

// New builds the service over its ports: the guard checks every URL before it is stored, the
// compiler every filter.
func New(endpoints ports.EndpointStore, attempts ports.AttemptStore, guard ports.URLGuard, filter ports.FilterCompiler, clock ports.Clock) *Service {
	return &Service{endpoints: endpoints, attempts: attempts, guard: guard, filter: filter, clock: clock}
}

// MaxPageSize bounds list pages.
const MaxPageSize = 100

func newSecret() webhook.Secret {
	b := make([]byte, webhook.MaxNewSecretBytes)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return webhook.NewSecret(b)
}

// check runs the checks the pure domain cannot: the URL's destination and the filter.
func (s *Service) check(ctx context.Context, p webhook.Patch) error {
	if u, ok := p.URL.Get(); ok {
		if err := s.guard.CheckURL(ctx, u); err != nil {
			return err
		}
	}
	if f, ok := p.Filter.Get(); ok && f != "" {
		if err := s.filter.Compile(f); err != nil {
			return err
		}
	}
	return nil
}

// Creation is a create request: the endpoint's URL, the secret it signs with (nil draws a fresh
// one) and the optional fields a PATCH may also set (their URL is ignored).
type Creation struct {
	URL    string
	Secret *string
	Fields webhook.Patch
}

// Create makes an endpoint for the account.
func (s *Service) Create(ctx context.Context, accountID string, c Creation) (*webhook.Endpoint, error) {
	p := c.Fields
	p.URL = webhook.Value(c.URL)
	if err := s.check(ctx, p); err != nil {
		return nil, err
	}
	secret := newSecret()
	if c.Secret != nil {
		var err error
		if secret, err = webhook.ParseSecret(*c.Secret); err != nil {
			return nil, err
		}
	}
	now := s.clock.Now()
	var rnd [10]byte
	_, _ = rand.Read(rnd[:])
	e, err := webhook.NewEndpoint(webhook.NewEndpointID(now, rnd), accountID, c.URL,
		webhook.WithPatch(p), webhook.WithSecret(secret), webhook.CreatedAt(now))
	if err != nil {
		return nil, err
	}
	if err := s.endpoints.Create(ctx, e); err != nil {
		return nil, err
	}
	return e, nil
}

// Get reads the account's endpoint.
func (s *Service) Get(ctx context.Context, accountID, id string) (*webhook.Endpoint, error) {
	return s.endpoints.Get(ctx, accountID, id)
}

// List pages the account's endpoints.
func (s *Service) List(ctx context.Context, accountID, cursor string, limit int, descending bool) (ports.EndpointPage, error) {
	return s.endpoints.List(ctx, accountID, cursor, limit, descending)
}

// Patch applies p to the account's endpoint id (operation 13).
func (s *Service) Patch(ctx context.Context, accountID, id string, p webhook.Patch) (*webhook.Endpoint, error) {
	if err := s.check(ctx, p); err != nil {
		return nil, err
	}
	return s.endpoints.Update(ctx, accountID, id, func(e *webhook.Endpoint) error { return e.Apply(p, s.clock.Now()) })
}

// Delete removes the account's endpoint.
func (s *Service) Delete(ctx context.Context, accountID, id string) error {
	return s.endpoints.Delete(ctx, accountID, id)
}

// Secret reveals the current signing secret.
func (s *Service) Secret(ctx context.Context, accountID, id string) (webhook.Secret, error) {
	e, err := s.endpoints.Get(ctx, accountID, id)
	if err != nil {
		return webhook.Secret{}, err
	}
	return e.Secret(), nil
}

// Rotate replaces the secret; the old one keeps signing for webhook.RotationOverlap.
func (s *Service) Rotate(ctx context.Context, accountID, id string) error {
	_, err := s.endpoints.Update(ctx, accountID, id, func(e *webhook.Endpoint) error {
		e.RotateSecret(newSecret(), s.clock.Now(), webhook.RotationOverlap)
		return nil
	})
	return err
}

// ListAttempts lists an owned endpoint's delivery attempts, newest first.
func (s *Service) ListAttempts(ctx context.Context, accountID, id string, cursor int64, limit int) ([]webhook.Attempt, int64, error) {
	if _, err := s.endpoints.Get(ctx, accountID, id); err != nil {
		return nil, 0, err
	}
	return s.attempts.ListAttempts(ctx, id, cursor, limit)
}
