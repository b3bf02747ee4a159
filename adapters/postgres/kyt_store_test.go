package postgres_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/adapters/postgres/pgtest"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/kyt"
)

const (
	kytSolAddr = "D1Mc6j9xQWgR1o1Z7yU5nVVXFQiAYx7FG9AW1aVfwrUM"
	kytSolSig  = "5rKfmXQyMhz7F2zRE6SpWWx3YkSxtA4gFqZD8CwGRYMx5YLTB8NhbiM9xEHG9jruiWdUyUz7Fpz8jmB8SKcjsLqe"
)

var kytT0 = time.Date(2026, 3, 2, 10, 0, 0, 250000000, time.UTC)

// withdrawal is a valid priced withdrawal of accountID under idempotency key key; amount
// tells requests apart.
func withdrawal(t *testing.T, accountID, key, amount string) kyt.Registration {
	t.Helper()
	price := "2"
	reg, err := kyt.NewWithdrawal(accountID, key, kyt.WithdrawalRequest{Address: kytSolAddr, Asset: "SOL", AssetAmount: amount,
		AttemptTimestamp: "2024-01-15T10:30:00.000Z", Network: kyt.Solana, AssetPrice: &price}, kytT0)
	require.NoError(t, err)
	require.NotNil(t, reg.USDAmount, "priced in USD")
	return reg
}

// sameRegistration compares two registrations, the USD amount by value (NUMERIC keeps the
// value, not the exponent) and no alerts as nil or empty alike (a stored row reads back []).
func sameRegistration(t *testing.T, want, got kyt.Registration) {
	t.Helper()
	wantUSD, gotUSD := want.USDAmount, got.USDAmount
	want.USDAmount, got.USDAmount = nil, nil
	if len(want.Alerts) == 0 && len(got.Alerts) == 0 {
		want.Alerts, got.Alerts = nil, nil
	}
	assert.Equal(t, want, got)
	require.Equal(t, wantUSD == nil, gotUSD == nil, "usdAmount presence")
	if wantUSD != nil {
		assert.True(t, wantUSD.Equal(*gotUSD), "usdAmount %s, want %s", gotUSD, wantUSD)
	}
}

func kytRows(t *testing.T, externalID string) int {
	t.Helper()
	var n int
	require.NoError(t, pgtest.Pool(t).QueryRow(context.Background(),
		`SELECT count(*) FROM kyt_registrations WHERE external_id = $1`, externalID).Scan(&n))
	return n
}

// startCounter is a start callback that counts its calls and answers with result(call number).
type startCounter struct {
	calls  atomic.Int32
	result func(call int32, ctx context.Context) error
}

func (s *startCounter) start(ctx context.Context) error {
	n := s.calls.Add(1)
	if s.result == nil {
		return nil
	}
	return s.result(n, ctx)
}

func TestKYTStoreInsert(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	ctx := context.Background()
	s := postgres.NewKYTStore(pgtest.Pool(t))
	freshAccounts(t, "kyt-ins", "kyt-ins-other")

	type ctxKey struct{}
	w := withdrawal(t, "kyt-ins", "w-1", "5")
	tr, err := kyt.NewTransfer("kyt-ins", "t-1", kyt.TransferRequest{Asset: "SOL", Direction: kyt.Direction("sent"),
		Network: kyt.Solana, TransferReference: kytSolSig + ":" + kytSolAddr}, kytT0)
	require.NoError(t, err)

	for _, reg := range []kyt.Registration{w, tr} {
		t.Run(string(reg.Kind)+": created once, the start callback runs in the caller's context", func(t *testing.T) {
			var sc startCounter
			sc.result = func(_ int32, ctx context.Context) error {
				assert.Equal(t, "caller", ctx.Value(ctxKey{}))
				return nil
			}
			got, created, err := s.Insert(context.WithValue(ctx, ctxKey{}, "caller"), reg, sc.start)
			require.NoError(t, err)
			assert.True(t, created)
			assert.Equal(t, int32(1), sc.calls.Load())
			sameRegistration(t, reg, got)

			stored, err := s.Get(ctx, "kyt-ins", reg.Kind, reg.ExternalID)
			require.NoError(t, err)
			sameRegistration(t, reg, stored)
		})
	}

	t.Run("a replay returns the stored row without starting anything", func(t *testing.T) {
		var sc startCounter
		got, created, err := s.Insert(ctx, w, sc.start)
		require.NoError(t, err)
		assert.False(t, created)
		assert.Zero(t, sc.calls.Load())
		sameRegistration(t, w, got)
	})

	t.Run("the same key with another request returns the first request for the caller to refuse", func(t *testing.T) {
		other := withdrawal(t, "kyt-ins", "w-1", "6")
		require.Equal(t, w.ExternalID, other.ExternalID)
		var sc startCounter
		got, created, err := s.Insert(ctx, other, sc.start)
		require.NoError(t, err)
		assert.False(t, created)
		assert.Zero(t, sc.calls.Load())
		assert.Equal(t, w.Fingerprint, got.Fingerprint)
		assert.Equal(t, "5", got.Withdrawal.AssetAmount)
		assert.Equal(t, fault.KindConflict, fault.KindOf(got.CheckReplay(other.Fingerprint)))
		assert.Equal(t, 1, kytRows(t, w.ExternalID))
	})

	t.Run("another account or kind does not see it", func(t *testing.T) {
		_, err := s.Get(ctx, "kyt-ins-other", kyt.KindWithdrawal, w.ExternalID)
		assert.Equal(t, fault.KindNotFound, fault.KindOf(err))
		_, err = s.Get(ctx, "kyt-ins", kyt.KindTransfer, w.ExternalID)
		assert.Equal(t, fault.KindNotFound, fault.KindOf(err))
	})
}

// TestKYTStoreInsertRollsBack: a registration is written only after its start succeeded, so
// no row is ever left without its workflow; a later insert of the same key starts afresh.
func TestKYTStoreInsertRollsBack(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	s := postgres.NewKYTStore(pgtest.Pool(t))
	freshAccounts(t, "kyt-rb")
	errPlain := errors.New("temporal unreachable")

	for _, tc := range []struct {
		name      string
		key       string
		cancelled bool // the context is cancelled before the call
		start     func(cancel context.CancelFunc) func(context.Context) error
		startRuns bool
		check     func(t *testing.T, err error)
	}{
		{
			name: "start returns a fault: the same fault",
			key:  "rb-fault",
			start: func(context.CancelFunc) func(context.Context) error {
				return func(context.Context) error { return fault.Unavailable("no worker", time.Second, nil) }
			},
			startRuns: true,
			check: func(t *testing.T, err error) {
				fe, ok := fault.As(err)
				require.True(t, ok, "%v", err)
				assert.Equal(t, "no worker", fe.Message)
			},
		},
		{
			name: "start returns a plain error: wrapped, still matchable",
			key:  "rb-plain",
			start: func(context.CancelFunc) func(context.Context) error {
				return func(context.Context) error { return errPlain }
			},
			startRuns: true,
			check:     func(t *testing.T, err error) { assert.ErrorIs(t, err, errPlain) },
		},
		{
			name:      "context cancelled before: unavailable, nothing started",
			key:       "rb-cancel-before",
			cancelled: true,
			start: func(context.CancelFunc) func(context.Context) error {
				return func(context.Context) error { return nil }
			},
			check: func(t *testing.T, err error) { assert.Equal(t, fault.KindUnavailable, fault.KindOf(err), "%v", err) },
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := withdrawal(t, "kyt-rb", tc.key, "5")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancelled {
				cancel()
			}
			started := false
			start := tc.start(cancel)
			_, created, err := s.Insert(ctx, reg, func(ctx context.Context) error { started = true; return start(ctx) })
			require.Error(t, err)
			tc.check(t, err)
			assert.False(t, created)
			assert.Equal(t, tc.startRuns, started, "start called")
			assert.Zero(t, kytRows(t, reg.ExternalID), "no row without its workflow")

			// The key is free: the next insert creates the row and starts again.
			var sc startCounter
			got, created, err := s.Insert(context.Background(), reg, sc.start)
			require.NoError(t, err)
			assert.True(t, created)
			assert.Equal(t, int32(1), sc.calls.Load())
			sameRegistration(t, reg, got)
		})
	}
}

// Once its workflow started, a registration's row is written even when the caller's context
// ends meanwhile: the workflow exists, and the caller learns the insert's real outcome (a commit
// cut off by the deadline could land while the caller answered 503).
func TestKYTStoreInsertOutlivesTheCallersDeadline(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	s := postgres.NewKYTStore(pgtest.Pool(t))
	freshAccounts(t, "kyt-late")
	reg := withdrawal(t, "kyt-late", "late", "5")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got, created, err := s.Insert(ctx, reg, func(context.Context) error { cancel(); return nil })
	require.NoError(t, err)
	assert.True(t, created)
	sameRegistration(t, reg, got)
	assert.Equal(t, 1, kytRows(t, reg.ExternalID))
}

// raceInserts runs callers concurrent inserts of reg. Every start waits until all callers have
// called it (no row is written before a start returns, so every caller finds none and starts),
// then the first one answers with first and the others succeed.
func raceInserts(t *testing.T, s *postgres.KYTStore, reg kyt.Registration, callers int, first error) (sc *startCounter, results []kyt.Registration, created []bool, errs []error) {
	t.Helper()
	all := make(chan struct{})
	sc = &startCounter{result: func(call int32, ctx context.Context) error {
		if call == int32(callers) {
			close(all)
		}
		select {
		case <-all:
		case <-ctx.Done():
			return ctx.Err()
		}
		if call == 1 {
			return first
		}
		return nil
	}}
	results, created, errs = make([]kyt.Registration, callers), make([]bool, callers), make([]error, callers)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], created[i], errs[i] = s.Insert(ctx, reg, sc.start)
		}()
	}
	wg.Wait()
	return sc, results, created, errs
}

// TestKYTStoreConcurrentIdenticalInserts: callers registering one request at once all start
// its workflow (the start is idempotent: one workflow ID, one workflow); exactly one creates the
// row, the others return the stored row.
func TestKYTStoreConcurrentIdenticalInserts(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	s := postgres.NewKYTStore(pgtest.Pool(t))
	freshAccounts(t, "kyt-race")
	reg := withdrawal(t, "kyt-race", "race", "5")
	const callers = 8

	sc, results, created, errs := raceInserts(t, s, reg, callers, nil)
	creators := 0
	for i := range callers {
		require.NoError(t, errs[i], "caller %d", i)
		sameRegistration(t, reg, results[i])
		if created[i] {
			creators++
		}
	}
	assert.Equal(t, 1, creators)
	assert.Equal(t, int32(callers), sc.calls.Load(), "every caller started the one workflow")
	assert.Equal(t, 1, kytRows(t, reg.ExternalID))
}

// TestKYTStoreConcurrentInsertsAfterAFailedStart: when one caller's start fails, that caller
// writes nothing and fails; another creates the row: one failure, still one row.
func TestKYTStoreConcurrentInsertsAfterAFailedStart(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	s := postgres.NewKYTStore(pgtest.Pool(t))
	freshAccounts(t, "kyt-race-fail")
	reg := withdrawal(t, "kyt-race-fail", "race", "5")
	const callers = 8
	errStart := errors.New("start refused")

	sc, results, created, errs := raceInserts(t, s, reg, callers, errStart)
	failed, creators := 0, 0
	for i := range callers {
		if errs[i] != nil {
			assert.ErrorIs(t, errs[i], errStart, "caller %d", i)
			failed++
			continue
		}
		sameRegistration(t, reg, results[i])
		if created[i] {
			creators++
		}
	}
	assert.Equal(t, 1, failed)
	assert.Equal(t, 1, creators)
	assert.Equal(t, int32(callers), sc.calls.Load())
	assert.Equal(t, 1, kytRows(t, reg.ExternalID))
}

func TestKYTStoreUpdate(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	ctx := context.Background()
	s := postgres.NewKYTStore(pgtest.Pool(t))
	freshAccounts(t, "kyt-upd")
	reg := withdrawal(t, "kyt-upd", "upd", "5")
	_, _, err := s.Insert(ctx, reg, func(context.Context) error { return nil })
	require.NoError(t, err)
	at := kytT0.Add(time.Minute)

	t.Run("a closure error leaves the row unchanged", func(t *testing.T) {
		errStop := errors.New("stop")
		_, err := s.Update(ctx, reg.ExternalID, func(r *kyt.Registration) error {
			require.NoError(t, r.MarkFailed("nope", at))
			return errStop
		})
		assert.ErrorIs(t, err, errStop)
		stored, err := s.Get(ctx, "kyt-upd", kyt.KindWithdrawal, reg.ExternalID)
		require.NoError(t, err)
		sameRegistration(t, reg, stored)
	})

	t.Run("the screening is stored", func(t *testing.T) {
		alerts := []kyt.Alert{{Level: kyt.RiskHigh, Category: "sanctions", AlertAmount: dec("10")}}
		got, err := s.Update(ctx, reg.ExternalID, func(r *kyt.Registration) error {
			return r.MarkRegistered(kyt.RatingOf(alerts), alerts, at)
		})
		require.NoError(t, err)
		want := reg
		want.Status, want.Rating, want.Alerts, want.UpdatedAt = kyt.StatusRegistered, kyt.HighRisk, alerts, at
		sameRegistration(t, want, got)
		stored, err := s.Get(ctx, "kyt-upd", kyt.KindWithdrawal, reg.ExternalID)
		require.NoError(t, err)
		require.Len(t, stored.Alerts, 1)
		assert.True(t, alerts[0].AlertAmount.Equal(stored.Alerts[0].AlertAmount))
		stored.Alerts[0].AlertAmount = alerts[0].AlertAmount
		sameRegistration(t, want, stored)
	})

	t.Run("an unknown registration is not found", func(t *testing.T) {
		_, err := s.Update(ctx, kyt.ExternalID("kyt-upd", "nothing"), func(*kyt.Registration) error {
			t.Error("closure called")
			return nil
		})
		assert.Equal(t, fault.KindNotFound, fault.KindOf(err), "%v", err)
	})
}

// The request column keeps the API's member names: rows written before the domain types lost
// their JSON tags read back, and the column stays readable by hand.
func TestKYTStoreRequestColumnKeepsTheAPIsMemberNames(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	ctx := context.Background()
	s := postgres.NewKYTStore(pgtest.Pool(t))
	freshAccounts(t, "kyt-col")
	w := withdrawal(t, "kyt-col", "w-1", "5")
	memo := "m"
	w.Withdrawal.Memo = &memo
	tr, err := kyt.NewTransfer("kyt-col", "t-1", kyt.TransferRequest{Asset: "SOL", Direction: kyt.Sent,
		Network: kyt.Solana, TransferReference: kytSolSig}, kytT0)
	require.NoError(t, err)
	for _, tc := range []struct {
		reg  kyt.Registration
		want string
	}{
		{w, `{"attemptIdentifier":"` + w.AttemptIdentifier + `","withdrawal":{"address":"` + kytSolAddr + `","asset":"SOL",
			"assetAmount":"5","attemptTimestamp":"2024-01-15T10:30:00.000Z","network":"Solana","assetDenomination":null,
			"assetId":null,"assetPrice":"2","memo":"m"}}`},
		{tr, `{"transfer":{"asset":"SOL","direction":"sent","network":"Solana","transferReference":"` + kytSolSig + `"}}`},
	} {
		_, _, err := s.Insert(ctx, tc.reg, func(context.Context) error { return nil })
		require.NoError(t, err)
		var got string
		require.NoError(t, pgtest.Pool(t).QueryRow(ctx, `SELECT request::text FROM kyt_registrations WHERE external_id = $1`,
			tc.reg.ExternalID).Scan(&got))
		assert.JSONEq(t, tc.want, got)
	}
}
