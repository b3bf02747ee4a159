package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenscope/tokenscope/adapters/postgres"
	"github.com/tokenscope/tokenscope/adapters/postgres/pgtest"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/webhook"
)

// webhookT0 is the creation time of the suite's endpoints (whole microseconds: what
// timestamptz keeps).
var webhookT0 = time.Date(2026, 3, 1, 9, 0, 0, 123456000, time.UTC)

func testSecret(seed byte) webhook.Secret {
	b := make([]byte, webhook.MinSecretBytes)
	for i := range b {
		b[i] = seed + byte(i)
	}
	return webhook.NewSecret(b)
}

// newTestEndpoint builds a valid endpoint of accountID with the fields of p.
func newTestEndpoint(t *testing.T, accountID, id string, p webhook.Patch) *webhook.Endpoint {
	t.Helper()
	e, err := webhook.NewEndpoint(id, accountID, "https://hooks.example.com/"+id, webhook.WithPatch(p),
		webhook.WithSecret(testSecret(1)), webhook.CreatedAt(webhookT0))
	require.NoError(t, err)
	return e
}

// storedEndpoint reads the row back through the store, with any account.
func storedEndpoint(t *testing.T, s *postgres.WebhookStore, id string) webhook.EndpointState {
	t.Helper()
	e, err := s.Get(context.Background(), "", id)
	require.NoError(t, err)
	return e.State()
}

func countEndpoints(t *testing.T, accountID string) int {
	t.Helper()
	var n int
	require.NoError(t, pgtest.Pool(t).QueryRow(context.Background(),
		`SELECT count(*) FROM webhook_endpoints WHERE account_id = $1`, accountID).Scan(&n))
	return n
}

func TestWebhookStoreCreateGetRoundTrip(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	ctx := context.Background()
	s := postgres.NewWebhookStore(pgtest.Pool(t))
	freshAccounts(t, "wh-rt", "wh-rt-other")

	full := newTestEndpoint(t, "wh-rt", "ep_rt_full", webhook.Patch{
		Channels:    webhook.Value([]webhook.Channel{webhook.TokenCreated}),
		Description: webhook.Value("all fields"),
		Filter:      webhook.Value(`data.symbol == "X"`),
		FilterTypes: webhook.Value([]string{"sol.token.created"}),
		Metadata:    webhook.Value(map[string]string{"team": "risk", "env": "prod"}),
		RateLimit:   webhook.Value[int64](0),
	})
	bare := newTestEndpoint(t, "wh-rt", "ep_rt_bare", webhook.Patch{})
	require.NoError(t, s.Create(ctx, full))
	require.NoError(t, s.Create(ctx, bare))

	for _, want := range []*webhook.Endpoint{full, bare} {
		t.Run(want.ID(), func(t *testing.T) {
			got, err := s.Get(ctx, "wh-rt", want.ID())
			require.NoError(t, err)
			assert.Equal(t, want.State(), got.State())
			assert.True(t, want.Secret().Equal(got.Secret()))
		})
	}
	t.Run("another account's endpoint is not found", func(t *testing.T) {
		_, err := s.Get(ctx, "wh-rt-other", full.ID())
		assert.Equal(t, fault.KindNotFound, fault.KindOf(err))
	})
	t.Run("listed in creation order", func(t *testing.T) {
		page, err := s.List(ctx, "wh-rt", "", 10, false)
		require.NoError(t, err)
		require.Len(t, page.Endpoints, 2)
		assert.Equal(t, []string{full.ID(), bare.ID()}, []string{page.Endpoints[0].ID(), page.Endpoints[1].ID()})
		assert.False(t, page.More)
	})
}

func TestWebhookStoreCreateConflict(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	ctx := context.Background()
	s := postgres.NewWebhookStore(pgtest.Pool(t))
	freshAccounts(t, "wh-dup")

	first := newTestEndpoint(t, "wh-dup", "ep_dup", webhook.Patch{Description: webhook.Value("first")})
	require.NoError(t, s.Create(ctx, first))
	second := newTestEndpoint(t, "wh-dup", "ep_dup", webhook.Patch{Description: webhook.Value("second")})
	err := s.Create(ctx, second)
	assert.Equal(t, fault.KindConflict, fault.KindOf(err), "%v", err)

	assert.Equal(t, first.State(), storedEndpoint(t, s, "ep_dup"), "the first endpoint is untouched")
	assert.Equal(t, 1, countEndpoints(t, "wh-dup"))
}

func TestWebhookStoreEndpointLimit(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	ctx := context.Background()
	s := postgres.NewWebhookStore(pgtest.Pool(t))
	freshAccounts(t, "wh-limit", "wh-limit-other")

	for i := range webhook.MaxEndpointsPerAccount {
		require.NoError(t, s.Create(ctx, newTestEndpoint(t, "wh-limit", fmt.Sprintf("ep_limit_%02d", i), webhook.Patch{})))
	}
	err := s.Create(ctx, newTestEndpoint(t, "wh-limit", "ep_limit_over", webhook.Patch{}))
	fe, ok := fault.As(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, fault.KindConflict, fe.Kind)
	assert.Equal(t, fault.CodeEndpointLimit, fe.Code)
	assert.Equal(t, webhook.MaxEndpointsPerAccount, fe.Details["current_count"])
	assert.Equal(t, webhook.MaxEndpointsPerAccount, countEndpoints(t, "wh-limit"))

	// The limit is per account.
	require.NoError(t, s.Create(ctx, newTestEndpoint(t, "wh-limit-other", "ep_limit_other", webhook.Patch{})))

	// Deleting one frees its slot.
	require.NoError(t, s.Delete(ctx, "wh-limit", "ep_limit_00"))
	require.NoError(t, s.Create(ctx, newTestEndpoint(t, "wh-limit", "ep_limit_over", webhook.Patch{})))
	assert.Equal(t, webhook.MaxEndpointsPerAccount, countEndpoints(t, "wh-limit"))
}

// TestWebhookStoreConcurrentCreatesRespectTheLimit: creates racing for the last slots of one
// account each count the endpoints, so without the account lock every one of them would see
// room. All are queued behind the test's lock on the account row before any of them counts.
func TestWebhookStoreConcurrentCreatesRespectTheLimit(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	ctx := context.Background()
	s := postgres.NewWebhookStore(pgtest.Pool(t))
	freshAccounts(t, "wh-race")
	const existing, callers = 3, 12 // 7 free slots, 12 callers
	for i := range existing {
		require.NoError(t, s.Create(ctx, newTestEndpoint(t, "wh-race", fmt.Sprintf("ep_race_old_%d", i), webhook.Patch{})))
	}

	release := holdRowLock(t, `SELECT id FROM accounts WHERE id = $1 FOR UPDATE`, "wh-race")
	errs := make([]error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.Create(ctx, newTestEndpoint(t, "wh-race", fmt.Sprintf("ep_race_%02d", i), webhook.Patch{}))
		}()
	}
	awaitLockWaiters(t, callers)
	release()
	wg.Wait()

	created, refused := 0, 0
	for i, err := range errs {
		switch {
		case err == nil:
			created++
		case fault.KindOf(err) == fault.KindConflict:
			fe, _ := fault.As(err)
			assert.Equal(t, fault.CodeEndpointLimit, fe.Code, "caller %d: %v", i, err)
			refused++
		default:
			t.Errorf("caller %d: unexpected error %v", i, err)
		}
	}
	assert.Equal(t, webhook.MaxEndpointsPerAccount-existing, created)
	assert.Equal(t, callers-(webhook.MaxEndpointsPerAccount-existing), refused)
	assert.Equal(t, webhook.MaxEndpointsPerAccount, countEndpoints(t, "wh-race"))
}

func TestWebhookStoreUpdate(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	ctx := context.Background()
	s := postgres.NewWebhookStore(pgtest.Pool(t))
	freshAccounts(t, "wh-upd", "wh-upd-other")
	orig := newTestEndpoint(t, "wh-upd", "ep_upd", webhook.Patch{
		Description: webhook.Value("before"),
		Metadata:    webhook.Value(map[string]string{"k": "v"}),
		RateLimit:   webhook.Value[int64](5),
	})
	require.NoError(t, s.Create(ctx, orig))
	later := webhookT0.Add(time.Minute)

	t.Run("the closure's changes are stored and returned", func(t *testing.T) {
		got, err := s.Update(ctx, "wh-upd", "ep_upd", func(e *webhook.Endpoint) error {
			assert.Equal(t, orig.State(), e.State(), "the closure sees the stored endpoint")
			return e.Apply(webhook.Patch{Description: webhook.Null[string](), RateLimit: webhook.Value[int64](9)}, later)
		})
		require.NoError(t, err)
		want := orig.State()
		want.Description, want.RateLimit, want.UpdatedAt = nil, ptrTo[int32](9), later
		assert.Equal(t, want, got.State())
		assert.Equal(t, want, storedEndpoint(t, s, "ep_upd"))
	})

	t.Run("the delivery worker's unscoped access reaches any account", func(t *testing.T) {
		at := later.Add(time.Minute)
		_, err := s.Update(ctx, "", "ep_upd", func(e *webhook.Endpoint) error {
			_ = e.RecordFailure(at, webhook.AutoDisable{After: 5 * 24 * time.Hour})
			return nil
		})
		require.NoError(t, err)
		assert.Equal(t, at, storedEndpoint(t, s, "ep_upd").FirstFailureAt)
	})

	for _, tc := range []struct{ name, account, id string }{
		{"unknown endpoint", "wh-upd", "ep_nothere"},
		{"another account's endpoint", "wh-upd-other", "ep_upd"},
		{"an id no row can have", "wh-upd", "ep_\x00"},
	} {
		t.Run(tc.name+" is not found and the closure never runs", func(t *testing.T) {
			before := storedEndpoint(t, s, "ep_upd")
			_, err := s.Update(ctx, tc.account, tc.id, func(*webhook.Endpoint) error {
				t.Error("closure called")
				return nil
			})
			assert.Equal(t, fault.KindNotFound, fault.KindOf(err), "%v", err)
			assert.Equal(t, before, storedEndpoint(t, s, "ep_upd"))
		})
	}
}

// TestWebhookStoreUpdateRollsBack: whatever stops an update half-way leaves the row as it was,
// even when the closure had already changed the endpoint it was given.
func TestWebhookStoreUpdateRollsBack(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	s := postgres.NewWebhookStore(pgtest.Pool(t))
	freshAccounts(t, "wh-rb")
	orig := newTestEndpoint(t, "wh-rb", "ep_rb", webhook.Patch{Description: webhook.Value("kept")})
	require.NoError(t, s.Create(context.Background(), orig))
	change := func(e *webhook.Endpoint) {
		require.NoError(t, e.Apply(webhook.Patch{Description: webhook.Value("lost"), Disabled: webhook.Value(true)}, webhookT0.Add(time.Hour)))
	}
	errPlain := errors.New("closure refused")

	for _, tc := range []struct {
		name  string
		ctx   func() (context.Context, context.CancelFunc)
		fn    func(cancel context.CancelFunc) func(*webhook.Endpoint) error
		check func(t *testing.T, err error)
	}{
		{
			name: "closure returns a fault: the same fault",
			fn: func(context.CancelFunc) func(*webhook.Endpoint) error {
				return func(e *webhook.Endpoint) error {
					change(e)
					return fault.Invalid("rateLimit", "-1", "must be an integer between 0 and 2147483647")
				}
			},
			check: func(t *testing.T, err error) {
				fe, ok := fault.As(err)
				require.True(t, ok, "%v", err)
				assert.Equal(t, "rateLimit", fe.Param)
			},
		},
		{
			name: "closure returns a plain error: wrapped, still matchable",
			fn: func(context.CancelFunc) func(*webhook.Endpoint) error {
				return func(e *webhook.Endpoint) error { change(e); return errPlain }
			},
			check: func(t *testing.T, err error) { assert.ErrorIs(t, err, errPlain) },
		},
		{
			name: "context cancelled inside the closure: unavailable",
			fn: func(cancel context.CancelFunc) func(*webhook.Endpoint) error {
				return func(e *webhook.Endpoint) error { change(e); cancel(); return nil }
			},
			check: func(t *testing.T, err error) { assert.Equal(t, fault.KindUnavailable, fault.KindOf(err), "%v", err) },
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			_, err := s.Update(ctx, "wh-rb", "ep_rb", tc.fn(cancel))
			require.Error(t, err)
			tc.check(t, err)
			assert.Equal(t, orig.State(), storedEndpoint(t, s, "ep_rb"))
		})
	}

	t.Run("context cancelled before: unavailable, the closure never runs", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := s.Update(ctx, "wh-rb", "ep_rb", func(*webhook.Endpoint) error {
			t.Error("closure called")
			return nil
		})
		assert.Equal(t, fault.KindUnavailable, fault.KindOf(err), "%v", err)
		assert.Equal(t, orig.State(), storedEndpoint(t, s, "ep_rb"))
	})
}

// TestWebhookStoreConcurrentUpdatesSerialise: each caller adds its own metadata key to what it
// read. Queued behind the test's row lock, all of them read only after it is released; the
// row lock must then run their closures one at a time on the latest row, so no key is lost.
// One caller fails after changing its copy: only its key is missing.
func TestWebhookStoreConcurrentUpdatesSerialise(t *testing.T) {
	t.Parallel()
	pgtest.Fresh(t)
	ctx := context.Background()
	s := postgres.NewWebhookStore(pgtest.Pool(t))
	freshAccounts(t, "wh-ser")
	require.NoError(t, s.Create(ctx, newTestEndpoint(t, "wh-ser", "ep_ser", webhook.Patch{
		Metadata: webhook.Value(map[string]string{"seed": "x"})})))

	const callers, failing = 12, 5
	errFail := errors.New("caller gave up")
	var inside, overlaps atomic.Int32
	release := holdRowLock(t, `SELECT id FROM webhook_endpoints WHERE id = $1 FOR UPDATE`, "ep_ser")
	errs := make([]error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = s.Update(ctx, "wh-ser", "ep_ser", func(e *webhook.Endpoint) error {
				if inside.Add(1) > 1 {
					overlaps.Add(1)
				}
				defer inside.Add(-1)
				m := e.Metadata()
				m[fmt.Sprintf("k%02d", i)] = "v"
				if err := e.Apply(webhook.Patch{Metadata: webhook.Value(m)}, webhookT0.Add(time.Duration(i+1)*time.Second)); err != nil {
					return err
				}
				if i == failing {
					return errFail
				}
				return nil
			})
		}()
	}
	awaitLockWaiters(t, callers)
	release()
	wg.Wait()

	want := map[string]string{"seed": "x"}
	for i, err := range errs {
		if i == failing {
			assert.ErrorIs(t, err, errFail)
			continue
		}
		assert.NoError(t, err, "caller %d", i)
		want[fmt.Sprintf("k%02d", i)] = "v"
	}
	assert.Zero(t, overlaps.Load(), "closures of one endpoint ran at the same time")
	assert.Equal(t, want, storedEndpoint(t, s, "ep_ser").Metadata)
}

func ptrTo[T any](v T) *T { return &v }
