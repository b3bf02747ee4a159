package webhookendpoint_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/mock/gomock"

	"github.com/tokenscope/tokenscope/app/webhookendpoint"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/webhook"
	"github.com/tokenscope/tokenscope/internal/fakeclock"
	"github.com/tokenscope/tokenscope/ports"
	"github.com/tokenscope/tokenscope/ports/portsmock"
)

type doubles struct {
	endpoints *portsmock.MockEndpointStore
	attempts  *portsmock.MockAttemptStore
	guard     *portsmock.MockURLGuard
	filter    *portsmock.MockFilterCompiler
	clock     *fakeclock.Clock
}

var t0 = time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)

// newService has no expectations: any port call a test does not expect fails it.
func newService(t *testing.T) (*webhookendpoint.Service, doubles) {
	ctrl := gomock.NewController(t)
	d := doubles{
		endpoints: portsmock.NewMockEndpointStore(ctrl),
		attempts:  portsmock.NewMockAttemptStore(ctrl),
		guard:     portsmock.NewMockURLGuard(ctrl),
		filter:    portsmock.NewMockFilterCompiler(ctrl),
		clock:     fakeclock.At(t0),
	}
	return webhookendpoint.New(d.endpoints, d.attempts, d.guard, d.filter, d.clock), d
}

func requireInvalid(t *testing.T, err error, param string) {
	t.Helper()
	require.Error(t, err)
	fe, ok := fault.As(err)
	require.True(t, ok, "not a fault: %v", err)
	assert.Equal(t, fault.KindInvalid, fe.Kind, "%v", err)
	assert.Equal(t, param, fe.Param, "%v", err)
}

func existing(t *testing.T, opts ...webhook.Option) *webhook.Endpoint {
	t.Helper()
	e, err := webhook.NewEndpoint("ep_1", "acc", "https://old.example/hook", append([]webhook.Option{webhook.CreatedAt(t0.Add(-time.Hour))}, opts...)...)
	require.NoError(t, err)
	return e
}

func secretOf(t *testing.T, b byte) webhook.Secret {
	t.Helper()
	return webhook.NewSecret([]byte(strings.Repeat(string([]byte{b}), webhook.MaxNewSecretBytes)))
}

func TestCreateChecksURLAndFilterThenStoresTheAccountsEndpoint(t *testing.T) {
	svc, d := newService(t)
	ctx := context.Background()
	var stored *webhook.Endpoint
	gomock.InOrder(
		d.guard.EXPECT().CheckURL(ctx, "https://hooks.example/in").Return(nil),
		d.filter.EXPECT().Compile("data.amount > 10").Return(nil),
		d.endpoints.EXPECT().Create(ctx, gomock.Any()).DoAndReturn(func(_ context.Context, e *webhook.Endpoint) error {
			stored = e
			return nil
		}),
	)

	e, err := svc.Create(ctx, "acc", webhookendpoint.Creation{URL: "https://hooks.example/in", Fields: webhook.Patch{
		Description: webhook.Value("mine"), Channels: webhook.Value([]webhook.Channel{webhook.TokenCreated}),
		Filter: webhook.Value("data.amount > 10"), RateLimit: webhook.Value[int64](7), Metadata: webhook.Value(map[string]string{"k": "v"})}})
	require.NoError(t, err)
	require.NotNil(t, e)
	assert.Same(t, stored, e, "the endpoint returned is the one stored")
	assert.Equal(t, "acc", e.AccountID())
	assert.Equal(t, "https://hooks.example/in", e.URL())
	require.NotNil(t, e.Description())
	assert.Equal(t, "mine", *e.Description())
	assert.Equal(t, []webhook.Channel{webhook.TokenCreated}, e.Channels())
	require.NotNil(t, e.Filter())
	assert.Equal(t, "data.amount > 10", *e.Filter())
	require.NotNil(t, e.RateLimit())
	assert.Equal(t, int32(7), *e.RateLimit())
	assert.Equal(t, map[string]string{"k": "v"}, e.Metadata())
	assert.False(t, e.Disabled())
	assert.Equal(t, t0, e.CreatedAt())
	assert.Equal(t, t0, e.UpdatedAt())
	// The id is "ep_" + a ULID whose 10 leading characters are the clock's time.
	assert.Len(t, e.ID(), 3+26)
	assert.Equal(t, webhook.NewEndpointID(t0, [10]byte{})[:13], e.ID()[:13])
	// A fresh secret of 32 random bytes: whsec_ + 44 base64 characters.
	assert.False(t, e.Secret().IsZero())
	assert.Len(t, e.Secret().Reveal(), len(webhook.SecretPrefix)+44)
	assert.True(t, e.Rotation().Previous.IsZero())
}

func TestCreateDrawsAFreshIDAndSecretEachTime(t *testing.T) {
	svc, d := newService(t)
	d.guard.EXPECT().CheckURL(gomock.Any(), "https://hooks.example/in").Return(nil).Times(2)
	d.endpoints.EXPECT().Create(gomock.Any(), gomock.Any()).Return(nil).Times(2)

	a, err := svc.Create(context.Background(), "acc", webhookendpoint.Creation{URL: "https://hooks.example/in"})
	require.NoError(t, err)
	b, err := svc.Create(context.Background(), "acc", webhookendpoint.Creation{URL: "https://hooks.example/in"})
	require.NoError(t, err)
	assert.NotEqual(t, a.ID(), b.ID())
	assert.False(t, a.Secret().Equal(b.Secret()))
}

func TestCreateKeepsAGivenSecret(t *testing.T) {
	svc, d := newService(t)
	given := secretOf(t, 7).Reveal()
	d.guard.EXPECT().CheckURL(gomock.Any(), "https://hooks.example/in").Return(nil)
	d.endpoints.EXPECT().Create(gomock.Any(), gomock.Any()).Return(nil)

	e, err := svc.Create(context.Background(), "acc", webhookendpoint.Creation{URL: "https://hooks.example/in", Secret: &given})
	require.NoError(t, err)
	assert.Equal(t, given, e.Secret().Reveal())
}

func TestCreateDoesNotCompileAnEmptyOrNullFilter(t *testing.T) {
	for name, filter := range map[string]webhook.Field[string]{
		"empty":  webhook.Value(""),
		"null":   webhook.Null[string](),
		"absent": {},
	} {
		t.Run(name, func(t *testing.T) {
			svc, d := newService(t) // no Compile expectation
			d.guard.EXPECT().CheckURL(gomock.Any(), "https://hooks.example/in").Return(nil)
			d.endpoints.EXPECT().Create(gomock.Any(), gomock.Any()).Return(nil)
			e, err := svc.Create(context.Background(), "acc", webhookendpoint.Creation{URL: "https://hooks.example/in",
				Fields: webhook.Patch{Filter: filter}})
			require.NoError(t, err)
			assert.Nil(t, e.Filter())
		})
	}
}

// Values that break the endpoint's rules are refused after the guard (and filter) checks, but
// never stored.
func TestCreateRefusesInvalidValuesWithoutStoring(t *testing.T) {
	secret := func(s string) *string { return &s }
	const url = "https://hooks.example/in"
	for name, tc := range map[string]struct {
		in    webhookendpoint.Creation
		param string
	}{
		"unknown channel":  {webhookendpoint.Creation{URL: url, Fields: webhook.Patch{Channels: webhook.Value([]webhook.Channel{"eth.nope"})}}, "channels"},
		"negative rate":    {webhookendpoint.Creation{URL: url, Fields: webhook.Patch{RateLimit: webhook.Value[int64](-1)}}, "rateLimit"},
		"bad secret":       {webhookendpoint.Creation{URL: url, Secret: secret("sk_123")}, "secret"},
		"short secret":     {webhookendpoint.Creation{URL: url, Secret: secret("whsec_AAAA")}, "secret"},
		"url syntax":       {webhookendpoint.Creation{URL: "ftp://hooks.example/in"}, "url"},
		"url with userinf": {webhookendpoint.Creation{URL: "https://u:p@hooks.example/in"}, "url"},
	} {
		t.Run(name, func(t *testing.T) {
			svc, d := newService(t) // no Create expectation
			d.guard.EXPECT().CheckURL(gomock.Any(), gomock.Any()).Return(nil).MaxTimes(1)
			e, err := svc.Create(context.Background(), "acc", tc.in)
			assert.Nil(t, e)
			requireInvalid(t, err, tc.param)
		})
	}
}

func TestCreateStopsAtTheFirstFailedCheck(t *testing.T) {
	guardErr := fault.Invalid("url", "https://10.0.0.1/", "must not resolve to a private address")
	filterErr := fault.Invalid("filter", "data.", "does not compile")
	in := webhookendpoint.Creation{URL: "https://10.0.0.1/", Fields: webhook.Patch{Filter: webhook.Value("data.")}}

	t.Run("guard", func(t *testing.T) {
		svc, d := newService(t) // no Compile, no Create
		d.guard.EXPECT().CheckURL(gomock.Any(), "https://10.0.0.1/").Return(guardErr)
		e, err := svc.Create(context.Background(), "acc", in)
		assert.Nil(t, e)
		assert.Same(t, guardErr, err)
	})
	t.Run("filter", func(t *testing.T) {
		svc, d := newService(t) // no Create
		d.guard.EXPECT().CheckURL(gomock.Any(), "https://10.0.0.1/").Return(nil)
		d.filter.EXPECT().Compile("data.").Return(filterErr)
		e, err := svc.Create(context.Background(), "acc", in)
		assert.Nil(t, e)
		assert.Same(t, filterErr, err)
	})
}

func TestCreatePassesStoreErrorsThrough(t *testing.T) {
	for name, storeErr := range map[string]error{
		"limit":       webhook.CheckEndpointLimit(webhook.MaxEndpointsPerAccount),
		"unavailable": fault.Unavailable("db down", time.Second, errors.New("dial")),
	} {
		t.Run(name, func(t *testing.T) {
			svc, d := newService(t)
			d.guard.EXPECT().CheckURL(gomock.Any(), gomock.Any()).Return(nil)
			d.endpoints.EXPECT().Create(gomock.Any(), gomock.Any()).Return(storeErr)
			e, err := svc.Create(context.Background(), "acc", webhookendpoint.Creation{URL: "https://hooks.example/in"})
			assert.Nil(t, e)
			assert.Same(t, storeErr, err)
			assert.Equal(t, fault.KindOf(storeErr), fault.KindOf(err))
		})
	}
}

func TestGetReadsTheAccountsEndpoint(t *testing.T) {
	svc, d := newService(t)
	want := existing(t)
	d.endpoints.EXPECT().Get(gomock.Any(), "acc", "ep_1").Return(want, nil)
	got, err := svc.Get(context.Background(), "acc", "ep_1")
	require.NoError(t, err)
	assert.Same(t, want, got)
}

// storeErrors are what a store returns for another account's endpoint and when it is down.
func storeErrors() map[string]error {
	return map[string]error{
		"not found":   fault.NotFound("webhook endpoint", "ep_1"),
		"unavailable": fault.Unavailable("db down", time.Second, errors.New("dial")),
	}
}

func TestGetPassesStoreErrorsThrough(t *testing.T) {
	for name, storeErr := range storeErrors() {
		t.Run(name, func(t *testing.T) {
			svc, d := newService(t)
			d.endpoints.EXPECT().Get(gomock.Any(), "other", "ep_1").Return(nil, storeErr)
			got, err := svc.Get(context.Background(), "other", "ep_1")
			assert.Nil(t, got)
			assert.Same(t, storeErr, err)
		})
	}
}

func TestListPassesThePageRequestAndResult(t *testing.T) {
	svc, d := newService(t)
	page := ports.EndpointPage{Endpoints: []*webhook.Endpoint{existing(t)}, More: true}
	d.endpoints.EXPECT().List(gomock.Any(), "acc", "ep_0", 25, true).Return(page, nil)
	got, err := svc.List(context.Background(), "acc", "ep_0", 25, true)
	require.NoError(t, err)
	assert.Equal(t, page, got)

	svc, d = newService(t)
	down := fault.Unavailable("db down", time.Second, nil)
	d.endpoints.EXPECT().List(gomock.Any(), "acc", "", 10, false).Return(ports.EndpointPage{}, down)
	_, err = svc.List(context.Background(), "acc", "", 10, false)
	assert.Same(t, down, err)
}

// updateWith behaves like the store: it applies fn to e under its lock and returns e, or
// fn's error.
func updateWith(e *webhook.Endpoint) func(context.Context, string, string, func(*webhook.Endpoint) error) (*webhook.Endpoint, error) {
	return func(_ context.Context, _, _ string, fn func(*webhook.Endpoint) error) (*webhook.Endpoint, error) {
		if err := fn(e); err != nil {
			return nil, err
		}
		return e, nil
	}
}

func TestPatchChecksThenUpdatesTheAccountsEndpointAtTheClocksTime(t *testing.T) {
	svc, d := newService(t)
	ctx := context.Background()
	e := existing(t)
	d.clock.Advance(time.Minute) // the update is stamped with the clock's time at apply
	gomock.InOrder(
		d.guard.EXPECT().CheckURL(ctx, "https://new.example/hook").Return(nil),
		d.filter.EXPECT().Compile("data.x > 1").Return(nil),
		d.endpoints.EXPECT().Update(ctx, "acc", "ep_1", gomock.Any()).DoAndReturn(updateWith(e)),
	)

	got, err := svc.Patch(ctx, "acc", "ep_1", webhook.Patch{URL: webhook.Value("https://new.example/hook"),
		Filter: webhook.Value("data.x > 1"), RateLimit: webhook.Value[int64](5)})
	require.NoError(t, err)
	assert.Same(t, e, got)
	assert.Equal(t, "https://new.example/hook", got.URL())
	require.NotNil(t, got.Filter())
	assert.Equal(t, "data.x > 1", *got.Filter())
	require.NotNil(t, got.RateLimit())
	assert.Equal(t, int32(5), *got.RateLimit())
	assert.Equal(t, t0.Add(time.Minute), got.UpdatedAt())
	assert.Equal(t, t0.Add(-time.Hour), got.CreatedAt())
}

func TestPatchOnlyChecksWhatItChanges(t *testing.T) {
	for name, p := range map[string]webhook.Patch{
		"no url or filter": {Description: webhook.Value("x")},
		"empty filter":     {Filter: webhook.Value("")},
		"null filter":      {Filter: webhook.Null[string]()},
	} {
		t.Run(name, func(t *testing.T) {
			svc, d := newService(t) // no Guard or Compile expectation
			d.endpoints.EXPECT().Update(gomock.Any(), "acc", "ep_1", gomock.Any()).DoAndReturn(updateWith(existing(t)))
			_, err := svc.Patch(context.Background(), "acc", "ep_1", p)
			require.NoError(t, err)
		})
	}
}

func TestPatchFailedCheckUpdatesNothing(t *testing.T) {
	svc, d := newService(t) // no Update expectation
	guardErr := fault.Invalid("url", "http://localhost/", "must not resolve to a loopback address")
	d.guard.EXPECT().CheckURL(gomock.Any(), "http://localhost/").Return(guardErr)
	got, err := svc.Patch(context.Background(), "acc", "ep_1", webhook.Patch{URL: webhook.Value("http://localhost/"), Filter: webhook.Value("true")})
	assert.Nil(t, got)
	assert.Same(t, guardErr, err)

	svc, d = newService(t)
	filterErr := fault.Invalid("filter", "1 +", "does not compile")
	d.filter.EXPECT().Compile("1 +").Return(filterErr)
	got, err = svc.Patch(context.Background(), "acc", "ep_1", webhook.Patch{Filter: webhook.Value("1 +")})
	assert.Nil(t, got)
	assert.Same(t, filterErr, err)
}

func TestPatchWithAnInvalidValueLeavesTheEndpointUnchanged(t *testing.T) {
	svc, d := newService(t)
	e := existing(t)
	before := e.State()
	d.endpoints.EXPECT().Update(gomock.Any(), "acc", "ep_1", gomock.Any()).DoAndReturn(updateWith(e))
	got, err := svc.Patch(context.Background(), "acc", "ep_1", webhook.Patch{Description: webhook.Value("new"), RateLimit: webhook.Value[int64](-1)})
	assert.Nil(t, got)
	requireInvalid(t, err, "rateLimit")
	assert.Equal(t, before, e.State())
}

func TestPatchPassesStoreErrorsThrough(t *testing.T) {
	for name, storeErr := range storeErrors() {
		t.Run(name, func(t *testing.T) {
			svc, d := newService(t)
			d.endpoints.EXPECT().Update(gomock.Any(), "other", "ep_1", gomock.Any()).Return(nil, storeErr)
			got, err := svc.Patch(context.Background(), "other", "ep_1", webhook.Patch{Disabled: webhook.Value(true)})
			assert.Nil(t, got)
			assert.Same(t, storeErr, err)
		})
	}
}

func TestDeleteRemovesTheAccountsEndpoint(t *testing.T) {
	svc, d := newService(t)
	d.endpoints.EXPECT().Delete(gomock.Any(), "acc", "ep_1").Return(nil)
	require.NoError(t, svc.Delete(context.Background(), "acc", "ep_1"))

	for name, storeErr := range storeErrors() {
		t.Run(name, func(t *testing.T) {
			svc, d := newService(t)
			d.endpoints.EXPECT().Delete(gomock.Any(), "other", "ep_1").Return(storeErr)
			assert.Same(t, storeErr, svc.Delete(context.Background(), "other", "ep_1"))
		})
	}
}

func TestSecretRevealsTheCurrentSecretOfTheAccountsEndpoint(t *testing.T) {
	svc, d := newService(t)
	s := secretOf(t, 1)
	d.endpoints.EXPECT().Get(gomock.Any(), "acc", "ep_1").Return(existing(t, webhook.WithSecret(s)), nil)
	got, err := svc.Secret(context.Background(), "acc", "ep_1")
	require.NoError(t, err)
	assert.True(t, got.Equal(s))

	for name, storeErr := range storeErrors() {
		t.Run(name, func(t *testing.T) {
			svc, d := newService(t)
			d.endpoints.EXPECT().Get(gomock.Any(), "other", "ep_1").Return(nil, storeErr)
			got, err := svc.Secret(context.Background(), "other", "ep_1")
			assert.Same(t, storeErr, err)
			assert.True(t, got.IsZero())
		})
	}
}

func TestRotateReplacesTheSecretAndTheOldOneSignsForTheOverlap(t *testing.T) {
	svc, d := newService(t)
	old := secretOf(t, 1)
	e := existing(t, webhook.WithSecret(old))
	d.clock.Advance(10 * time.Minute)
	now := d.clock.Now()
	d.endpoints.EXPECT().Update(gomock.Any(), "acc", "ep_1", gomock.Any()).DoAndReturn(updateWith(e))

	require.NoError(t, svc.Rotate(context.Background(), "acc", "ep_1"))
	cur := e.Secret()
	assert.False(t, cur.IsZero())
	assert.False(t, cur.Equal(old))
	assert.Len(t, cur.Reveal(), len(webhook.SecretPrefix)+44, "a new secret has 32 random bytes")
	assert.True(t, e.Rotation().Previous.Equal(old))
	assert.Equal(t, now.Add(webhook.RotationOverlap), e.Rotation().Expires)
	assert.Equal(t, now, e.UpdatedAt())

	// The fake clock walks through the overlap: both secrets sign until it ends, then only the new one.
	d.clock.Advance(webhook.RotationOverlap - time.Nanosecond)
	signing := e.SigningSecrets(d.clock.Now())
	require.Len(t, signing, 2)
	assert.True(t, signing[0].Equal(cur))
	assert.True(t, signing[1].Equal(old))
	d.clock.Advance(time.Nanosecond)
	signing = e.SigningSecrets(d.clock.Now())
	require.Len(t, signing, 1)
	assert.True(t, signing[0].Equal(cur))
}

func TestRotateTwiceDrawsADifferentSecretAndDropsTheOldest(t *testing.T) {
	svc, d := newService(t)
	first := secretOf(t, 1)
	e := existing(t, webhook.WithSecret(first))
	d.endpoints.EXPECT().Update(gomock.Any(), "acc", "ep_1", gomock.Any()).DoAndReturn(updateWith(e)).Times(2)

	require.NoError(t, svc.Rotate(context.Background(), "acc", "ep_1"))
	second := e.Secret()
	d.clock.Advance(time.Hour)
	require.NoError(t, svc.Rotate(context.Background(), "acc", "ep_1"))
	third := e.Secret()
	assert.False(t, third.Equal(second))
	assert.False(t, third.Equal(first))
	assert.True(t, e.Rotation().Previous.Equal(second))
	assert.Equal(t, t0.Add(time.Hour+webhook.RotationOverlap), e.Rotation().Expires)
}

func TestRotatePassesStoreErrorsThrough(t *testing.T) {
	for name, storeErr := range storeErrors() {
		t.Run(name, func(t *testing.T) {
			svc, d := newService(t)
			d.endpoints.EXPECT().Update(gomock.Any(), "other", "ep_1", gomock.Any()).Return(nil, storeErr)
			assert.Same(t, storeErr, svc.Rotate(context.Background(), "other", "ep_1"))
		})
	}
}

func TestListAttemptsChecksOwnershipFirst(t *testing.T) {
	svc, d := newService(t)
	attempts := []webhook.Attempt{{EndpointID: "ep_1", EventID: "evt_2", Number: 1}, {EndpointID: "ep_1", EventID: "evt_1", Number: 2}}
	gomock.InOrder(
		d.endpoints.EXPECT().Get(gomock.Any(), "acc", "ep_1").Return(existing(t), nil),
		d.attempts.EXPECT().ListAttempts(gomock.Any(), "ep_1", int64(40), 20).Return(attempts, int64(20), nil),
	)
	got, next, err := svc.ListAttempts(context.Background(), "acc", "ep_1", 40, 20)
	require.NoError(t, err)
	assert.Equal(t, attempts, got)
	assert.Equal(t, int64(20), next)
}

func TestListAttemptsOfAnotherAccountsEndpointIsNotFoundAndReadsNoAttempts(t *testing.T) {
	for name, storeErr := range storeErrors() {
		t.Run(name, func(t *testing.T) {
			svc, d := newService(t) // no ListAttempts expectation
			d.endpoints.EXPECT().Get(gomock.Any(), "other", "ep_1").Return(nil, storeErr)
			got, next, err := svc.ListAttempts(context.Background(), "other", "ep_1", 0, 20)
			assert.Same(t, storeErr, err)
			assert.Nil(t, got)
			assert.Zero(t, next)
		})
	}

	svc, d := newService(t)
	down := fault.Unavailable("db down", time.Second, nil)
	d.endpoints.EXPECT().Get(gomock.Any(), "acc", "ep_1").Return(existing(t), nil)
	d.attempts.EXPECT().ListAttempts(gomock.Any(), "ep_1", int64(0), 20).Return(nil, int64(0), down)
	_, _, err := svc.ListAttempts(context.Background(), "acc", "ep_1", 0, 20)
	assert.Same(t, down, err)
}
