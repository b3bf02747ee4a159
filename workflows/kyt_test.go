package workflows_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"
	"go.uber.org/mock/gomock"

	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/kyt"
	"github.com/tokenscope/tokenscope/ports"
	"github.com/tokenscope/tokenscope/ports/portsmock"
	"github.com/tokenscope/tokenscope/workflows"
)

type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }

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
			store.EXPECT().Update(gomock.Any(), reg.ExternalID, gomock.Any()).Times(1).
				DoAndReturn(func(_ context.Context, _ string, fn func(*kyt.Registration) error) (kyt.Registration, error) {
					return stored, fn(&stored)
				})

			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			env.RegisterActivity(&workflows.KYTActivities{Store: store, Provider: provider, Clock: fixedClock{kytNow.Add(time.Minute)}})
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
