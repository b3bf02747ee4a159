package compliance_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/mock/gomock"

	"github.com/tokenscope/tokenscope/app/compliance"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/kyt"
	"github.com/tokenscope/tokenscope/internal/fakeclock"
	"github.com/tokenscope/tokenscope/ports/portsmock"
)

var withdrawal = kyt.WithdrawalRequest{Address: "0x52908400098527886E0F7030069857D2E4169EE7", Asset: "ETH", AssetAmount: "2.5",
	AttemptTimestamp: "2026-11-22T08:00:00Z", Network: kyt.Ethereum}

func newService(t *testing.T) (*compliance.Service, *portsmock.MockKYTStore, *portsmock.MockKYTStarter, *portsmock.MockAssetPricer) {
	ctrl := gomock.NewController(t)
	store := portsmock.NewMockKYTStore(ctrl)
	starter := portsmock.NewMockKYTStarter(ctrl)
	pricer := portsmock.NewMockAssetPricer(ctrl)
	return compliance.New(store, starter, pricer, fakeclock.At(time.Date(2026, 11, 22, 8, 0, 1, 0, time.UTC)), time.Second), store, starter, pricer
}

// storeThatStarts behaves like the real store: it calls started inside the write and returns
// what it stored.
func storeThatStarts(ctx context.Context, reg kyt.Registration, started func(context.Context) error) (kyt.Registration, bool, error) {
	if err := started(ctx); err != nil {
		return kyt.Registration{}, false, err
	}
	return reg, true, nil
}

func TestWithdrawalIsPricedFromMarketDataAndStartedInsideTheWrite(t *testing.T) {
	svc, store, starter, pricer := newService(t)
	ctx := context.Background()
	pricer.EXPECT().PriceUSD(gomock.Any(), kyt.Network("ethereum"), "ETH").Return(decimal.RequireFromString("3000.10"), true, nil)
	store.EXPECT().Insert(gomock.Any(), gomock.Any(), gomock.Any()).DoAndReturn(storeThatStarts)
	starter.EXPECT().StartRegistration(gomock.Any(), gomock.Any()).Return(nil)

	reg, err := svc.RegisterWithdrawal(ctx, "acc", "key-1", withdrawal)
	require.NoError(t, err)
	require.NotNil(t, reg.USDAmount)
	// 2.5 × 3000.10 = 7500.25
	assert.Equal(t, "7500.25", reg.USDAmount.String())
	assert.Equal(t, kyt.ExternalID("acc", "withdrawal:key-1"), reg.ExternalID)
}

func TestWorkflowStartFailureIsUnavailableAndNothingIsReturned(t *testing.T) {
	svc, store, starter, pricer := newService(t)
	pricer.EXPECT().PriceUSD(gomock.Any(), gomock.Any(), gomock.Any()).Return(decimal.Zero, false, nil)
	store.EXPECT().Insert(gomock.Any(), gomock.Any(), gomock.Any()).DoAndReturn(storeThatStarts)
	starter.EXPECT().StartRegistration(gomock.Any(), gomock.Any()).
		Return(fault.Unavailable("temporal is unreachable", 2*time.Second, errors.New("dial")))

	_, err := svc.RegisterWithdrawal(context.Background(), "acc", "", withdrawal)
	require.Error(t, err)
	assert.Equal(t, fault.KindUnavailable, fault.KindOf(err))
}

func TestSameKeyWithAnotherBodyIsAConflict(t *testing.T) {
	svc, store, _, pricer := newService(t)
	pricer.EXPECT().PriceUSD(gomock.Any(), gomock.Any(), gomock.Any()).Return(decimal.Zero, false, nil)
	// The store already holds key-1 with a different request (another fingerprint).
	store.EXPECT().Insert(gomock.Any(), gomock.Any(), gomock.Any()).DoAndReturn(
		func(_ context.Context, reg kyt.Registration, _ func(context.Context) error) (kyt.Registration, bool, error) {
			other := reg
			other.Fingerprint = "something-else"
			return other, false, nil
		})
	_, err := svc.RegisterWithdrawal(context.Background(), "acc", "key-1", withdrawal)
	assert.Equal(t, fault.KindConflict, fault.KindOf(err))
}

func TestInvalidRequestsNeverReachThePorts(t *testing.T) {
	svc, _, _, _ := newService(t) // no expectations: any call fails the test
	for name, edit := range map[string]func(r *kyt.WithdrawalRequest){
		"bad network":   func(r *kyt.WithdrawalRequest) { r.Network = "Ethereum" },
		"negative":      func(r *kyt.WithdrawalRequest) { r.AssetAmount = "-1" },
		"missing asset": func(r *kyt.WithdrawalRequest) { r.Asset = "" },
	} {
		t.Run(name, func(t *testing.T) {
			r := withdrawal
			edit(&r)
			_, err := svc.RegisterWithdrawal(context.Background(), "acc", "", r)
			assert.Equal(t, fault.KindInvalid, fault.KindOf(err))
		})
	}
	t.Run("bad transfer", func(t *testing.T) {
		_, err := svc.RegisterTransfer(context.Background(), "acc", "", kyt.TransferRequest{Asset: "ETH", Direction: "out",
			Network: kyt.Ethereum, TransferReference: "x"})
		assert.Equal(t, fault.KindInvalid, fault.KindOf(err))
	})
}

// An externalId that is not a UUID names no registration: NotFound, and the store (whose ids
// are UUIDs) is never asked. A UUID in capitals is looked up in the lowercase form handed out.
func TestSummaryOfAMalformedIDIsNotFound(t *testing.T) {
	svc, store, _, _ := newService(t)
	ctx := context.Background()
	for _, id := range []string{"notauuid", "", "00000000-0000-0000-0000-00000000000g", "{00000000-0000-0000-0000-000000000000}",
		"00000000000000000000000000000000", "00000000-0000-0000-0000-0000000000000"} {
		_, err := svc.Summary(ctx, "acc", kyt.KindWithdrawal, id)
		assert.True(t, fault.Is(err, fault.KindNotFound), "%q: %v", id, err)
	}
	id := kyt.ExternalID("acc", "k")
	store.EXPECT().Get(gomock.Any(), "acc", kyt.KindTransfer, id).Return(kyt.Registration{ExternalID: id}, nil)
	reg, err := svc.Summary(ctx, "acc", kyt.KindTransfer, strings.ToUpper(id))
	require.NoError(t, err)
	assert.Equal(t, id, reg.ExternalID)
}
