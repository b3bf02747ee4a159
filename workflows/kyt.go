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

// KYTInput is the registration as the API accepted it.
type KYTInput struct {
	Registration kyt.Registration
	// CommitBy is when the request that started the workflow stops trying to insert the row
	// (its deadline, KYT_REGISTER_DEADLINE). The API starts the workflow first and inserts the
	// row after, so a row still missing KYTCommitMargin after it never comes. Zero (a start by
	// an earlier version) counts as the registration's creation time plus a minute.
	CommitBy time.Time
}

// kytConfirmChange marks the change that starts a registration's workflow before its row is
// inserted and has the workflow confirm the row first (workflow.GetVersion). Runs started
// before it keep the old path: they screen at once, their row committed before they started.
const (
	kytConfirmChange  = "kyt-confirm-row"
	kytConfirmVersion = 1
)

// KYTCommitMargin is how long after CommitBy a missing row is still waited for: clock skew
// between the API's host and the worker's, and a commit sent just before the deadline.
const KYTCommitMargin = 10 * time.Second

// commitBy is the time after which (plus KYTCommitMargin) a missing row is abandoned.
func (in KYTInput) commitBy() time.Time {
	if !in.CommitBy.IsZero() {
		return in.CommitBy
	}
	return in.Registration.CreatedAt.Add(time.Minute)
}

// KYTActivities holds the ports of the registration workflow.
type KYTActivities struct {
	Store    ports.KYTStore
	Provider ports.KYTProvider
	Clock    ports.Clock
}

// ConfirmRegistration reads the registration's row. A row not there yet is a retryable error
// until KYTCommitMargin after the request's deadline, then a non-retryable ErrTypeAbandoned: the
// request that started the workflow failed after the start (it answered 503), and there is
// nothing to register. The stored registration is what the workflow screens.
func (a *KYTActivities) ConfirmRegistration(ctx context.Context, in KYTInput) (kyt.Registration, error) {
	r := in.Registration
	stored, err := a.Store.Get(ctx, r.AccountID, r.Kind, r.ExternalID)
	if err == nil {
		return stored, nil
	}
	if !fault.Is(err, fault.KindNotFound) {
		return kyt.Registration{}, activityError(err)
	}
	if a.Clock.Now().Before(in.commitBy().Add(KYTCommitMargin)) {
		return kyt.Registration{}, err // retried: the row's insert may not have committed yet
	}
	return kyt.Registration{}, temporal.NewNonRetryableApplicationError(
		"registration abandoned: its row was never committed (the request that started it failed)", ErrTypeAbandoned, err)
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

// kytConfirmOptions poll for the row briefly: it normally commits milliseconds after the start.
// ConfirmRegistration itself decides when to stop (a non-retryable error).
func kytConfirmOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout:    10 * time.Second,
		ScheduleToCloseTimeout: 24 * time.Hour,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    100 * time.Millisecond,
			BackoffCoefficient: 1.5,
			MaximumInterval:    2 * time.Second,
		},
	}
}

// KYTRegistrationWorkflow confirms the registration's row, screens it with the provider and
// records the outcome. A row that was never committed ends the workflow as abandoned
// (ErrTypeAbandoned, non-retryable) before the provider is asked anything.
func KYTRegistrationWorkflow(ctx workflow.Context, in KYTInput) (kyt.Status, error) {
	status := kyt.StatusPending
	if err := workflow.SetQueryHandler(ctx, KYTStatusQuery, func() (kyt.Status, error) { return status, nil }); err != nil {
		return status, err
	}
	var a *KYTActivities
	if workflow.GetVersion(ctx, kytConfirmChange, workflow.DefaultVersion, kytConfirmVersion) == kytConfirmVersion {
		var stored kyt.Registration
		err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, kytConfirmOptions()), a.ConfirmRegistration, in).Get(ctx, &stored)
		var app *temporal.ApplicationError
		if errors.As(err, &app) && app.Type() == ErrTypeAbandoned {
			return status, temporal.NewNonRetryableApplicationError(app.Error(), ErrTypeAbandoned, nil)
		}
		if err != nil {
			return status, err
		}
		in.Registration = stored
	}
	ctx = workflow.WithActivityOptions(ctx, kytActivityOptions())
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
	// ErrTypeAbandoned ends a registration workflow whose row was never committed: the request
	// that started it failed (503) after the start, so there is nothing to register.
	ErrTypeAbandoned = "RegistrationAbandoned"
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
