package workflows_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.uber.org/mock/gomock"

	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/kyt"
	"github.com/tokenscope/tokenscope/internal/fakeclock"
	"github.com/tokenscope/tokenscope/ports"
	"github.com/tokenscope/tokenscope/ports/portsmock"
	"github.com/tokenscope/tokenscope/workflows"
)

var kytNow = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func pendingWithdrawal(t *testing.T) kyt.Registration {
	t.Helper()
	price := "3"
	reg, err := kyt.NewWithdrawal("acct", "", kyt.WithdrawalRequest{Address: "D1Mc6j9xQWgR1o1Z7yU5nVVXFQiAYx7FG9AW1aVfwrUM",
		Asset: "SOL", AssetAmount: "2", AttemptTimestamp: "2024-01-15T10:30:00Z", Network: kyt.Solana, AssetPrice: &price}, kytNow)
	require.NoError(t, err)
	return reg
}

func TestKYTRegistrationWorkflow(t *testing.T) {
	for _, tc := range []struct {
		name       string
		answers    []error // provider errors, in order; nil means success
		wantStatus kyt.Status
		wantCalls  int
		wantReason string
	}{
		{"screened at once", []error{nil}, kyt.StatusRegistered, 1, ""},
		{"provider down twice, then up", []error{errors.New("connection refused"),
			fault.Unavailable("busy", time.Second, nil), nil}, kyt.StatusRegistered, 3, ""},
		{"provider refuses for good", []error{fault.Forbidden("AccessDenied")}, kyt.StatusFailed, 1, "AccessDenied"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctrl := gomock.NewController(t)
			provider := portsmock.NewMockKYTProvider(ctrl)
			store := portsmock.NewMockKYTStore(ctrl)
			reg := pendingWithdrawal(t)
			calls := 0
			provider.EXPECT().Screen(gomock.Any(), gomock.Any()).Times(tc.wantCalls).
				DoAndReturn(func(_ context.Context, r kyt.Registration) (ports.KYTScreening, error) {
					assert.Equal(t, reg.ExternalID, r.ExternalID)
					err := tc.answers[calls]
					calls++
					return ports.KYTScreening{Rating: kyt.MediumRisk, Alerts: []kyt.Alert{{Level: kyt.RiskMedium,
						AlertAmount: decimal.RequireFromString("6")}}}, err
				})
			stored := reg
			store.EXPECT().Get(gomock.Any(), reg.AccountID, reg.Kind, reg.ExternalID).Return(reg, nil)
			store.EXPECT().Update(gomock.Any(), reg.ExternalID, gomock.Any()).Times(1).
				DoAndReturn(func(_ context.Context, _ string, fn func(*kyt.Registration) error) (kyt.Registration, error) {
					return stored, fn(&stored)
				})

			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			env.RegisterActivity(&workflows.KYTActivities{Store: store, Provider: provider, Clock: fakeclock.At(kytNow.Add(time.Minute))})
			env.ExecuteWorkflow(workflows.KYTRegistrationWorkflow, workflows.KYTInput{Registration: reg})
			require.True(t, env.IsWorkflowCompleted())
			require.NoError(t, env.GetWorkflowError())
			var status kyt.Status
			require.NoError(t, env.GetWorkflowResult(&status))
			assert.Equal(t, tc.wantStatus, status)
			assert.Equal(t, tc.wantStatus, stored.Status)
			assert.Equal(t, kytNow.Add(time.Minute), stored.UpdatedAt)
			if tc.wantStatus == kyt.StatusRegistered {
				assert.Equal(t, kyt.MediumRisk, stored.Rating)
				require.NotNil(t, stored.USDAmount)
				assert.Equal(t, "6", stored.USDAmount.String(), "the caller's 2 × 3 is kept")
			} else {
				assert.Contains(t, stored.FailureReason, tc.wantReason)
			}
			v, err := env.QueryWorkflow(workflows.KYTStatusQuery)
			require.NoError(t, err)
			var q kyt.Status
			require.NoError(t, v.Get(&q))
			assert.Equal(t, tc.wantStatus, q)
		})
	}
}

// The workflow first confirms that its registration's row was committed: the API starts the
// workflow and then inserts the row, so a request that fails after the start (503) leaves a
// workflow without a row. Until the request's deadline (plus a margin) has passed a missing row
// may still be on its way and is waited for; after it the workflow ends as abandoned, once,
// without screening or retrying.
func TestKYTRegistrationWorkflowWithoutItsRow(t *testing.T) {
	for _, tc := range []struct {
		name      string
		foundOn   int // the Get call that finds the row (1-based); 0: never
		wantCalls int
	}{
		{"row committed after the start", 3, 3},
		{"row never committed", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctrl := gomock.NewController(t)
			provider := portsmock.NewMockKYTProvider(ctrl)
			store := portsmock.NewMockKYTStore(ctrl)
			reg := pendingWithdrawal(t)
			commitBy := kytNow.Add(5 * time.Second)
			clock := fakeclock.Stepping(kytNow, 2*time.Second)
			gets := 0
			store.EXPECT().Get(gomock.Any(), reg.AccountID, reg.Kind, reg.ExternalID).MinTimes(1).
				DoAndReturn(func(context.Context, string, kyt.Kind, string) (kyt.Registration, error) {
					gets++
					if gets == tc.foundOn {
						return reg, nil
					}
					return kyt.Registration{}, fault.NotFound("kyt withdrawal", reg.ExternalID)
				})
			if tc.foundOn > 0 {
				provider.EXPECT().Screen(gomock.Any(), gomock.Any()).Return(ports.KYTScreening{Rating: kyt.LowRisk}, nil)
				store.EXPECT().Update(gomock.Any(), reg.ExternalID, gomock.Any()).
					DoAndReturn(func(_ context.Context, _ string, fn func(*kyt.Registration) error) (kyt.Registration, error) {
						r := reg
						return r, fn(&r)
					})
			}
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			env.RegisterActivity(&workflows.KYTActivities{Store: store, Provider: provider, Clock: clock})
			env.ExecuteWorkflow(workflows.KYTRegistrationWorkflow, workflows.KYTInput{Registration: reg, CommitBy: commitBy})
			require.True(t, env.IsWorkflowCompleted())
			if tc.foundOn > 0 {
				require.NoError(t, env.GetWorkflowError())
				assert.Equal(t, tc.foundOn, gets)
				return
			}
			err := env.GetWorkflowError()
			var app *temporal.ApplicationError
			require.ErrorAs(t, err, &app)
			assert.Equal(t, workflows.ErrTypeAbandoned, app.Type())
			assert.True(t, app.NonRetryable())
			assert.False(t, clock.Peek().Before(commitBy.Add(workflows.KYTCommitMargin)), "gave up only after the deadline and the margin")
		})
	}
}
