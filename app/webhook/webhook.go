// Package webhook is the webhook endpoint use case: create, read, list, patch (operation 13),
// delete, reveal and rotate the secret, list delivery attempts. URLs pass the SSRF guard and
// filters the CEL compiler before anything is stored. It may import domain and ports.
package webhook

import (
	"context"
	"crypto/rand"
	"encoding/json"

	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/webhook"
	"github.com/tokenscope/tokenscope/ports"
)

// Service manages endpoints.
type Service struct {
	Endpoints ports.EndpointStore
	Attempts  ports.AttemptStore
	Guard     ports.URLGuard
	Filter    ports.FilterCompiler
	Clock     ports.Clock
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
		if err := s.Guard.CheckURL(ctx, u); err != nil {
			return err
		}
	}
	if f, ok := p.Filter.Get(); ok && f != "" {
		if err := s.Filter.Compile(f); err != nil {
			return err
		}
	}
	return nil
}

// DecodeCreate reads a create body: url (required), an optional secret, and every PATCH field.
func DecodeCreate(body []byte) (url string, secret *string, p webhook.Patch, err error) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) != nil || obj == nil {
		return "", nil, webhook.Patch{}, &fault.Error{Kind: fault.KindInvalid, Code: fault.CodeValidation,
			Message: "request body must be a JSON object"}
	}
	raw, ok := obj["url"]
	if !ok || string(raw) == "null" {
		return "", nil, webhook.Patch{}, fault.Missing("url")
	}
	if json.Unmarshal(raw, &url) != nil {
		return "", nil, webhook.Patch{}, fault.Invalid("url", string(raw), "must be a string")
	}
	if raw, ok := obj["secret"]; ok && string(raw) != "null" {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", nil, webhook.Patch{}, fault.Invalid("secret", "…", "must be a string")
		}
		secret = &s
	}
	delete(obj, "url")
	delete(obj, "secret")
	if _, ok := obj["endpointId"]; ok {
		return "", nil, webhook.Patch{}, fault.Invalid("endpointId", "…", "is assigned by the server")
	}
	obj["endpointId"] = json.RawMessage(`"new"`)
	rest, _ := json.Marshal(obj) // re-encoding decoded raw JSON cannot fail
	_, p, err = webhook.DecodePatch(rest)
	return url, secret, p, err
}

// Create makes an endpoint for the account.
func (s *Service) Create(ctx context.Context, accountID string, body []byte) (*webhook.Endpoint, error) {
	url, secretText, p, err := DecodeCreate(body)
	if err != nil {
		return nil, err
	}
	p.URL = webhook.Value(url)
	if err := s.check(ctx, p); err != nil {
		return nil, err
	}
	secret := newSecret()
	if secretText != nil {
		if secret, err = webhook.ParseSecret(*secretText); err != nil {
			return nil, err
		}
	}
	now := s.Clock.Now()
	var rnd [10]byte
	_, _ = rand.Read(rnd[:])
	e, err := webhook.NewEndpoint(webhook.NewEndpointID(now, rnd), accountID, url,
		webhook.WithPatch(p), webhook.WithSecret(secret), webhook.CreatedAt(now))
	if err != nil {
		return nil, err
	}
	if err := s.Endpoints.Create(ctx, e); err != nil {
		return nil, err
	}
	return e, nil
}

// Get reads the account's endpoint.
func (s *Service) Get(ctx context.Context, accountID, id string) (*webhook.Endpoint, error) {
	return s.Endpoints.Get(ctx, accountID, id)
}

// List pages the account's endpoints.
func (s *Service) List(ctx context.Context, accountID, cursor string, limit int, descending bool) (ports.EndpointPage, error) {
	return s.Endpoints.List(ctx, accountID, cursor, limit, descending)
}

// Patch applies operation 13's body.
func (s *Service) Patch(ctx context.Context, accountID string, body []byte) (*webhook.Endpoint, error) {
	id, p, err := webhook.DecodePatch(body)
	if err != nil {
		return nil, err
	}
	if err := s.check(ctx, p); err != nil {
		return nil, err
	}
	return s.Endpoints.Update(ctx, accountID, id, func(e *webhook.Endpoint) error { return e.Apply(p, s.Clock.Now()) })
}

// Delete removes the account's endpoint.
func (s *Service) Delete(ctx context.Context, accountID, id string) error {
	return s.Endpoints.Delete(ctx, accountID, id)
}

// Secret reveals the current signing secret.
func (s *Service) Secret(ctx context.Context, accountID, id string) (webhook.Secret, error) {
	e, err := s.Endpoints.Get(ctx, accountID, id)
	if err != nil {
		return webhook.Secret{}, err
	}
	return e.Secret(), nil
}

// Rotate replaces the secret; the old one keeps signing for webhook.RotationOverlap.
func (s *Service) Rotate(ctx context.Context, accountID, id string) error {
	_, err := s.Endpoints.Update(ctx, accountID, id, func(e *webhook.Endpoint) error {
		e.RotateSecret(newSecret(), s.Clock.Now(), webhook.RotationOverlap)
		return nil
	})
	return err
}

// ListAttempts lists an owned endpoint's delivery attempts, newest first.
func (s *Service) ListAttempts(ctx context.Context, accountID, id string, cursor int64, limit int) ([]webhook.Attempt, int64, error) {
	if _, err := s.Endpoints.Get(ctx, accountID, id); err != nil {
		return nil, 0, err
	}
	return s.Attempts.ListAttempts(ctx, id, cursor, limit)
}
