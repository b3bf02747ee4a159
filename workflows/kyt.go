package workflows

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/kyt"
	"github.com/tokenscope/tokenscope/ports"
)

// KYTInput is the registration as the API accepted it; it travels in the workflow input so
// the provider call never waits for the row's transaction to commit.
type KYTInput struct {
	Registration kyt.Registration
}

// KYTActivities holds the ports of the registration workflow.
type KYTActivities struct {
	Store    ports.KYTStore
	Provider ports.KYTProvider
	Clock    ports.Clock
}

// ScreenRegistration asks the provider. The provider is idempotent per externalId, so an
// attempt repeated after a worker crash registers nothing twice.
func (a *KYTActivities) ScreenRegistration(ctx context.Context, in KYTInput) (ports.KYTScreening, error) {
	s, err := a.Provider.Screen(ctx, in.Registration)
	return s, activityError(err)
}

// RecordScreening stores the outcome on the registration row.
func (a *KYTActivities) RecordScreening(ctx context.Context, externalID string, s ports.KYTScreening) error {
	_, err := a.Store.Update(ctx, externalID, func(r *kyt.Registration) error {
		if s.USDAmount != nil && r.USDAmount == nil {
			r.SetUSDAmount(*s.USDAmount)
		}
		return r.MarkRegistered(s.Rating, s.Alerts, a.Clock.Now())
	})
	return err // NotFound too is retried: the row's transaction may not have committed yet
}

// RecordFailure stores a permanent refusal.
func (a *KYTActivities) RecordFailure(ctx context.Context, externalID, reason string) error {
	_, err := a.Store.Update(ctx, externalID, func(r *kyt.Registration) error {
		return r.MarkFailed(reason, a.Clock.Now())
	})
	return err
}

// kytActivityOptions retry the provider with exponential backoff for as long as a day: a
// provider outage delays registrations, it does not lose them.
func kytActivityOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout:    30 * time.Second,
		ScheduleToCloseTimeout: 24 * time.Hour,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    time.Minute,
		},
	}
}

// KYTRegistrationWorkflow screens one registration with the provider and records the outcome.
func KYTRegistrationWorkflow(ctx workflow.Context, in KYTInput) (kyt.Status, error) {
	status := kyt.StatusPending
	if err := workflow.SetQueryHandler(ctx, KYTStatusQuery, func() (kyt.Status, error) { return status, nil }); err != nil {
		return status, err
	}
	ctx = workflow.WithActivityOptions(ctx, kytActivityOptions())
	var a *KYTActivities
	id := in.Registration.ExternalID
	var s ports.KYTScreening
	err := workflow.ExecuteActivity(ctx, a.ScreenRegistration, in).Get(ctx, &s)
	if reason, ok := permanent(err); ok {
		if err := workflow.ExecuteActivity(ctx, a.RecordFailure, id, reason).Get(ctx, nil); err != nil {
			return status, err
		}
		status = kyt.StatusFailed
		return status, nil
	}
	if err != nil {
		return status, err
	}
	if err := workflow.ExecuteActivity(ctx, a.RecordScreening, id, s).Get(ctx, nil); err != nil {
		return status, err
	}
	status = kyt.StatusRegistered
	return status, nil
}

// Error types of the application errors activities return.
const (
	ErrTypeInvalid     = "InvalidInput"
	ErrTypeUnavailable = "Unavailable"
)

// activityError turns a port's error into what Temporal should do with it: a fault that
// names the caller's mistake (invalid, unauthorized, forbidden) can never succeed on retry,
// so it is non-retryable; an Unavailable fault with a Retry-After hint is retried no sooner
// than the hint; everything else is a plain error, retried with the activity's backoff.
func activityError(err error) error {
	if err == nil {
		return nil
	}
	fe, ok := fault.As(err)
	if !ok {
		return err
	}
	switch fe.Kind {
	case fault.KindInvalid, fault.KindUnauthorized, fault.KindForbidden, fault.KindTooLarge:
		return temporal.NewNonRetryableApplicationError(fe.Error(), ErrTypeInvalid, err)
	case fault.KindUnavailable, fault.KindRateLimited:
		if fe.RetryAfter > 0 {
			return temporal.NewApplicationErrorWithOptions(fe.Error(), ErrTypeUnavailable,
				temporal.ApplicationErrorOptions{NextRetryDelay: fe.RetryAfter, Cause: err})
		}
	}
	return err
}

// permanent reports whether an activity failed for good (its error was non-retryable), as
// opposed to the workflow being cancelled or timing out.
func permanent(err error) (string, bool) {
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.NonRetryable() {
		return app.Error(), true
	}
	return "", false
}
