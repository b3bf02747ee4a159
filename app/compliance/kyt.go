// Package compliance is the KYT registration use case (operations 10 and 11): validate, price, store
// and start the registration's workflow as one durable step, and read registrations back.
// It may import domain and ports.
package compliance

import (
	"context"
	"time"

	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/kyt"
	"github.com/tokenscope/tokenscope/ports"
)

// Service registers withdrawals and transfers.
type Service struct {
	store   ports.KYTStore
	starter ports.KYTStarter
	pricer  ports.AssetPricer
	clock   ports.Clock
	// deadline bounds the request path (store + workflow start); past it the caller gets a
	// 503 with Retry-After and nothing is stored. 0 leaves the caller's context as is.
	deadline time.Duration
}

// New builds the service over its ports. pricer may be nil (a withdrawal then keeps the USD
// amount it was sent with, if any); deadline bounds each registration's request path
// (KYT_REGISTER_DEADLINE), 0 for none.
func New(store ports.KYTStore, starter ports.KYTStarter, pricer ports.AssetPricer, clock ports.Clock, deadline time.Duration) *Service {
	return &Service{store: store, starter: starter, pricer: pricer, clock: clock, deadline: deadline}
}

// RegisterWithdrawal validates r and registers it under the account. idempotencyKey may be
// empty (the request's fingerprint is the key then). The same key and request always return the
// same registration; the same key with another request is a Conflict.
func (s *Service) RegisterWithdrawal(ctx context.Context, accountID, idempotencyKey string, r kyt.WithdrawalRequest) (kyt.Registration, error) {
	reg, err := kyt.NewWithdrawal(accountID, idempotencyKey, r, s.clock.Now())
	if err != nil {
		return kyt.Registration{}, err
	}
	return s.register(ctx, reg)
}

// RegisterTransfer is RegisterWithdrawal for a transfer.
func (s *Service) RegisterTransfer(ctx context.Context, accountID, idempotencyKey string, r kyt.TransferRequest) (kyt.Registration, error) {
	reg, err := kyt.NewTransfer(accountID, idempotencyKey, r, s.clock.Now())
	if err != nil {
		return kyt.Registration{}, err
	}
	return s.register(ctx, reg)
}

// MaxIdempotencyKeyLen bounds the Idempotency-Key header.
const MaxIdempotencyKeyLen = 255

func (s *Service) register(ctx context.Context, reg kyt.Registration) (kyt.Registration, error) {
	if s.deadline > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.deadline)
		defer cancel()
	}
	if reg.Withdrawal != nil && reg.USDAmount == nil && s.pricer != nil {
		price, ok, err := s.pricer.PriceUSD(ctx, reg.Withdrawal.Network, reg.Withdrawal.Normalize().Asset)
		if err != nil {
			return kyt.Registration{}, deadline(ctx, err)
		}
		if ok {
			usd := kyt.USDAmount(reg.Withdrawal.Amount(), price)
			reg.USDAmount = &usd
		}
	}
	stored, _, err := s.store.Insert(ctx, reg, func(ctx context.Context) error {
		return s.starter.StartRegistration(ctx, reg)
	})
	if err != nil {
		return kyt.Registration{}, deadline(ctx, err)
	}
	if err := stored.CheckReplay(reg.Fingerprint); err != nil {
		return kyt.Registration{}, err
	}
	return stored, nil
}

// deadline turns a request that ran out of time into the retryable 503 the caller expects.
func deadline(ctx context.Context, err error) error {
	if ctx.Err() != nil && !fault.Is(err, fault.KindUnavailable) {
		return fault.Unavailable("registration could not be made durable in time, retry later", 2*time.Second, err)
	}
	return err
}

// Summary reads one of the account's registrations. An id that is not a UUID names none: it
// is NotFound without asking the store (which keeps ids as UUIDs and would refuse the cast).
func (s *Service) Summary(ctx context.Context, accountID string, kind kyt.Kind, externalID string) (kyt.Registration, error) {
	id, ok := kyt.ParseExternalID(externalID)
	if !ok {
		return kyt.Registration{}, fault.NotFound("kyt "+string(kind), externalID)
	}
	return s.store.Get(ctx, accountID, kind, id)
}
