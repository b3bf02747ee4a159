package ports

import (
	"context"

	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/domain/kyt"
)

// KYTScreening is what a KYT provider concluded about one registration.
type KYTScreening struct {
	Rating kyt.Rating
	Alerts []kyt.Alert
	// USDAmount is the provider's valuation; nil when it gave none.
	USDAmount *decimal.Decimal
}

// KYTProvider registers a transfer or withdrawal attempt with a KYT service and returns its
// screening. A refusal that no retry can fix is a fault of kind Invalid, Unauthorized,
// Forbidden or NotFound; any other error is transient (a fault.Unavailable may carry a
// Retry-After hint) and the caller retries. Calls must be idempotent per externalId.
type KYTProvider interface {
	Screen(ctx context.Context, reg kyt.Registration) (KYTScreening, error)
}

// KYTStore keeps registrations.
type KYTStore interface {
	// Insert stores reg unless its externalId is already stored. started is called first (no
	// database connection held while it runs) and a new row is written only when it succeeded,
	// so no registration is ever stored without its workflow; a workflow whose row then fails to
	// be written ends itself (workflows.KYTActivities.ConfirmRegistration). Concurrent inserts of
	// one externalId may each call started (it is idempotent); one row wins. It returns what is
	// stored and whether this call created it.
	Insert(ctx context.Context, reg kyt.Registration, started func(context.Context) error) (kyt.Registration, bool, error)
	// Get returns the account's registration of that kind; another account's is NotFound.
	Get(ctx context.Context, accountID string, kind kyt.Kind, externalID string) (kyt.Registration, error)
	// Update changes a registration under a row lock.
	Update(ctx context.Context, externalID string, fn func(*kyt.Registration) error) (kyt.Registration, error)
}

// KYTStarter starts (or finds) the durable workflow of a registration.
type KYTStarter interface {
	StartRegistration(ctx context.Context, reg kyt.Registration) error
}

// AssetPricer prices an asset from our own market data.
type AssetPricer interface {
	// PriceUSD is the asset's current USD price; ok is false when the market data has none.
	PriceUSD(ctx context.Context, network kyt.Network, asset string) (price decimal.Decimal, ok bool, err error)
}
