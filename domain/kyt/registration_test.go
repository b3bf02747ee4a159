package kyt_test

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/kyt"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func TestNewWithdrawal(t *testing.T) {
	r := validWithdrawal()
	r.AssetAmount, r.AssetPrice = "0.1", ptr("3")
	reg, err := kyt.NewWithdrawal("acct-1", "key-1", r, t0)
	require.NoError(t, err)
	// uuid5(namespace, "6:acct-1withdrawal:key-1"), computed with Python's uuid module
	assert.Equal(t, "88e74dd0-e28d-508d-ae7e-e9417012175e", reg.ExternalID)
	assert.Equal(t, "attempt_88e74dd0e28d508dae7ee9417012175e", reg.AttemptIdentifier)
	assert.Equal(t, kyt.StatusPending, reg.Status)
	assert.True(t, reg.UpdatedAt.IsZero(), "updatedAt stays null until processed")
	require.NotNil(t, reg.USDAmount)
	assert.Equal(t, "0.3", reg.USDAmount.String()) // 0.1 × 3
	assert.Equal(t, r.Fingerprint(), reg.Fingerprint)

	t.Run("no key: the fingerprint is the key, so a replay gets the same id", func(t *testing.T) {
		a, err := kyt.NewWithdrawal("acct-1", "", r, t0)
		require.NoError(t, err)
		r2 := r
		r2.AssetAmount = "0.10"
		b, err := kyt.NewWithdrawal("acct-1", "", r2, t0.Add(time.Hour))
		require.NoError(t, err)
		assert.Equal(t, a.ExternalID, b.ExternalID)
		assert.Equal(t, kyt.ExternalID("acct-1", "withdrawal:"+r.Fingerprint()), a.ExternalID)
	})
	t.Run("other account, other id", func(t *testing.T) {
		b, err := kyt.NewWithdrawal("acct-2", "key-1", r, t0)
		require.NoError(t, err)
		assert.NotEqual(t, reg.ExternalID, b.ExternalID)
	})
	t.Run("invalid request", func(t *testing.T) {
		bad := r
		bad.Network = "tron"
		_, err := kyt.NewWithdrawal("acct-1", "k", bad, t0)
		assert.Equal(t, "network", faultOf(t, err).Param)
	})
	t.Run("replay with another body conflicts", func(t *testing.T) {
		other := r
		other.AssetAmount = "2"
		assert.NoError(t, reg.CheckReplay(r.Fingerprint()))
		assert.Equal(t, fault.KindConflict, fault.KindOf(reg.CheckReplay(other.Fingerprint())))
	})
}

func TestNewTransferKindSeparatesIDs(t *testing.T) {
	tr := kyt.TransferRequest{"SOL", kyt.Received, kyt.Solana, solSig + ":" + solAddr}
	reg, err := kyt.NewTransfer("acct-1", "key-1", tr, t0)
	require.NoError(t, err)
	assert.Equal(t, kyt.ExternalID("acct-1", "transfer:key-1"), reg.ExternalID)
	assert.NotEqual(t, "88e74dd0-e28d-508d-ae7e-e9417012175e", reg.ExternalID, "same key as the withdrawal test, other kind")
	assert.Empty(t, reg.AttemptIdentifier)
	assert.Nil(t, reg.USDAmount)
	assert.Equal(t, solAddr, reg.ScreenedAddress())
}

func TestTransitions(t *testing.T) {
	alerts := []kyt.Alert{{Level: kyt.RiskHigh, AlertAmount: decimal.RequireFromString("10")}}
	for _, tc := range []struct {
		name    string
		steps   []func(r *kyt.Registration) error
		wantErr bool
		status  kyt.Status
	}{
		{"pending → registered", []func(*kyt.Registration) error{
			func(r *kyt.Registration) error { return r.MarkRegistered(kyt.HighRisk, alerts, t0) },
		}, false, kyt.StatusRegistered},
		{"registered → registered (re-screen)", []func(*kyt.Registration) error{
			func(r *kyt.Registration) error { return r.MarkRegistered(kyt.LowRisk, nil, t0) },
			func(r *kyt.Registration) error { return r.MarkRegistered(kyt.HighRisk, alerts, t0) },
		}, false, kyt.StatusRegistered},
		{"pending → failed", []func(*kyt.Registration) error{
			func(r *kyt.Registration) error { return r.MarkFailed("403 AccessDenied", t0) },
		}, false, kyt.StatusFailed},
		{"failed → failed refreshes", []func(*kyt.Registration) error{
			func(r *kyt.Registration) error { return r.MarkFailed("a", t0) },
			func(r *kyt.Registration) error { return r.MarkFailed("b", t0) },
		}, false, kyt.StatusFailed},
		{"failed → registered refused", []func(*kyt.Registration) error{
			func(r *kyt.Registration) error { return r.MarkFailed("a", t0) },
			func(r *kyt.Registration) error { return r.MarkRegistered(kyt.LowRisk, nil, t0) },
		}, true, kyt.StatusFailed},
		{"registered → failed refused", []func(*kyt.Registration) error{
			func(r *kyt.Registration) error { return r.MarkRegistered(kyt.LowRisk, nil, t0) },
			func(r *kyt.Registration) error { return r.MarkFailed("late", t0) },
		}, true, kyt.StatusRegistered},
		{"unknown rating refused", []func(*kyt.Registration) error{
			func(r *kyt.Registration) error { return r.MarkRegistered("HIGH", nil, t0) },
		}, true, kyt.StatusPending},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg, err := kyt.NewWithdrawal("acct", "k", validWithdrawal(), t0.Add(-time.Minute))
			require.NoError(t, err)
			var last error
			for _, step := range tc.steps {
				last = step(&reg)
			}
			assert.Equal(t, tc.wantErr, last != nil, "error: %v", last)
			assert.Equal(t, tc.status, reg.Status)
			if !tc.wantErr {
				assert.True(t, reg.UpdatedAt.Equal(t0))
			}
		})
	}
	t.Run("registered keeps rating, alerts and clears reason", func(t *testing.T) {
		reg, err := kyt.NewWithdrawal("acct", "k", validWithdrawal(), t0)
		require.NoError(t, err)
		require.NoError(t, reg.MarkRegistered(kyt.HighRisk, alerts, t0))
		assert.Equal(t, kyt.HighRisk, reg.Rating)
		assert.Equal(t, alerts, reg.Alerts)
		alerts[0].Level = kyt.RiskLow
		assert.Equal(t, kyt.RiskHigh, reg.Alerts[0].Level, "alerts are copied")
		alerts[0].Level = kyt.RiskHigh
	})
}

func TestRatingOf(t *testing.T) {
	for _, tc := range []struct {
		name   string
		levels []kyt.Risk
		want   kyt.Rating
	}{
		{"no alerts", nil, kyt.LowRisk},
		{"one medium", []kyt.Risk{kyt.RiskMedium}, kyt.MediumRisk},
		{"worst wins", []kyt.Risk{kyt.RiskLow, kyt.RiskSevere, kyt.RiskHigh}, kyt.SevereRisk},
		{"unknown level ignored", []kyt.Risk{"CRITICAL", kyt.RiskLow}, kyt.LowRisk},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var alerts []kyt.Alert
			for _, l := range tc.levels {
				alerts = append(alerts, kyt.Alert{Level: l})
			}
			assert.Equal(t, tc.want, kyt.RatingOf(alerts))
		})
	}
}

func TestScreen(t *testing.T) {
	flagged := map[string]kyt.Risk{
		solAddr: kyt.RiskSevere,
		"0x742d35cc6634c0532925a3b844bc454e4438f44e": kyt.RiskMedium,
		"0x742D35CC6634C0532925A3B844BC454E4438F44E": kyt.RiskHigh,
		btcAddr: "WEIRD",
	}
	for _, tc := range []struct {
		name, addr string
		want       kyt.Rating
	}{
		{"flagged solana", solAddr, kyt.SevereRisk},
		{"base58 is case-sensitive", "d1mc6j9xqwgr1o1z7yu5nvvxfqiayx7fg9aw1avfwrum", kyt.LowRisk},
		{"evm any case, worst spelling wins", ethAddr, kyt.HighRisk},
		{"not flagged", "So11111111111111111111111111111111111111112", kyt.LowRisk},
		{"nothing to screen", "", kyt.UnknownRisk},
		{"unrecognised level", btcAddr, kyt.UnknownRisk},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, kyt.Screen(tc.addr, flagged))
		})
	}
}
