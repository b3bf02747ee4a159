package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/adapters/postgres/internal/dbsqlc"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/kyt"
	"github.com/tokenscope/tokenscope/ports"
)

// KYTStore implements ports.KYTStore and ports.AssetPricer.
type KYTStore struct {
	pool *pgxpool.Pool
	q    *dbsqlc.Queries
}

var (
	_ ports.KYTStore    = (*KYTStore)(nil)
	_ ports.AssetPricer = (*KYTStore)(nil)
)

// NewKYTStore builds the store over pool.
func NewKYTStore(pool *pgxpool.Pool) *KYTStore { return &KYTStore{pool: pool, q: dbsqlc.New()} }

// KYTInsertTimeout bounds the row's insert after its workflow started. The workflow waits for
// the row until the request's deadline plus workflows.KYTCommitMargin (10 s), which this must
// stay below.
const KYTInsertTimeout = 5 * time.Second

// Insert returns the stored registration when its externalId is stored; else it calls started
// and then writes the row, so no row is ever stored without its workflow. No connection is held
// while started runs: holding one across the workflow start (a round trip to Temporal) capped
// concurrent registrations at the pool's size, and a burst queued for connections until its
// deadline ran out (503s, and workflows started by requests whose commit then failed). A
// workflow whose row is never written (the insert failed after the start) finds that out itself
// (workflows.KYTActivities.ConfirmRegistration). Two concurrent inserts of one externalId may
// both start (the start is idempotent: one workflow); the first row wins and the other reads it.
func (s *KYTStore) Insert(ctx context.Context, reg kyt.Registration, started func(context.Context) error) (kyt.Registration, bool, error) {
	req, err := kytRequestJSON(reg)
	if err != nil {
		return kyt.Registration{}, false, err
	}
	stored, err := s.Get(ctx, reg.AccountID, reg.Kind, reg.ExternalID)
	if err == nil {
		return stored, false, nil
	}
	if !fault.Is(err, fault.KindNotFound) {
		return kyt.Registration{}, false, err
	}
	if err := started(ctx); err != nil {
		return kyt.Registration{}, false, err
	}
	// The workflow exists now: its row is written even if the caller's deadline passes
	// meanwhile, with a bound of its own. A commit cut off by the deadline could have been
	// applied by the server while the caller answered 503 (a registration the client was told
	// had failed); this way the outcome of the insert is known and answered.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), KYTInsertTimeout)
	defer cancel()
	var out kyt.Registration
	created := false
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		n, err := s.q.InsertKYTRegistration(ctx, tx, dbsqlc.InsertKYTRegistrationParams{
			ExternalID: reg.ExternalID, AccountID: reg.AccountID, Kind: string(reg.Kind),
			DedupKey: reg.ExternalID, Fingerprint: reg.Fingerprint, Request: req,
			UsdAmount: kytNullDecimal(reg.USDAmount), Status: string(reg.Status), CreatedAt: reg.CreatedAt,
		})
		if err != nil {
			return err
		}
		if n == 0 {
			row, err := s.q.GetKYTRegistration(ctx, tx, dbsqlc.GetKYTRegistrationParams{
				ExternalID: reg.ExternalID, AccountID: reg.AccountID, Kind: string(reg.Kind)})
			if err != nil {
				return err
			}
			out, err = registrationFromRow(row)
			return err
		}
		out, created = reg, true
		return nil
	})
	if err != nil {
		if _, ok := fault.As(err); ok {
			return kyt.Registration{}, false, err
		}
		return kyt.Registration{}, false, interpretError(err, "kyt registration", reg.ExternalID)
	}
	return out, created, nil
}

// Get reads the account's registration.
func (s *KYTStore) Get(ctx context.Context, accountID string, kind kyt.Kind, externalID string) (kyt.Registration, error) {
	row, err := s.q.GetKYTRegistration(ctx, s.pool, dbsqlc.GetKYTRegistrationParams{
		ExternalID: externalID, AccountID: accountID, Kind: string(kind)})
	if err != nil {
		return kyt.Registration{}, interpretError(err, "kyt "+string(kind), externalID)
	}
	return registrationFromRow(row)
}

// Update changes a registration under FOR UPDATE.
func (s *KYTStore) Update(ctx context.Context, externalID string, fn func(*kyt.Registration) error) (kyt.Registration, error) {
	var out kyt.Registration
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		row, err := s.q.GetKYTRegistrationForUpdate(ctx, tx, externalID)
		if err != nil {
			return err
		}
		reg, err := registrationFromRow(row)
		if err != nil {
			return err
		}
		if err := fn(&reg); err != nil {
			return err
		}
		alerts, err := json.Marshal(reg.Alerts)
		if err != nil {
			return err
		}
		if reg.Alerts == nil {
			alerts = []byte("[]")
		}
		p := dbsqlc.UpdateKYTRegistrationParams{ExternalID: externalID, UsdAmount: kytNullDecimal(reg.USDAmount),
			Status: string(reg.Status), Alerts: alerts, UpdatedAt: reg.UpdatedAt}
		if reg.Rating != "" {
			r := string(reg.Rating)
			p.Rating = &r
		}
		if reg.FailureReason != "" {
			p.Failure = &reg.FailureReason
		}
		if reg.UpdatedAt.IsZero() {
			p.UpdatedAt = reg.CreatedAt
		}
		out = reg
		return s.q.UpdateKYTRegistration(ctx, tx, p)
	})
	if err != nil {
		if _, ok := fault.As(err); ok {
			return kyt.Registration{}, err
		}
		return kyt.Registration{}, interpretError(err, "kyt registration", externalID)
	}
	return out, nil
}

// kytChains maps a KYT network to the chain whose market data prices its assets.
var kytChains = map[kyt.Network]string{kyt.Solana: "sol", kyt.Ethereum: "eth"}

// nativeAssets are the symbols priced by the side token of the chain's newest trade.
var nativeAssets = map[kyt.Network]string{kyt.Solana: "SOL", kyt.Ethereum: "ETH"}

// PriceUSD looks the asset up by symbol among the network's tokens (the largest market cap
// wins), and prices the native coin from the newest trade. Bitcoin has no market data here.
func (s *KYTStore) PriceUSD(ctx context.Context, network kyt.Network, asset string) (decimal.Decimal, bool, error) {
	c, ok := kytChains[network]
	if !ok {
		return decimal.Decimal{}, false, nil
	}
	var (
		price decimal.Decimal
		err   error
	)
	if nativeAssets[network] == asset {
		price, err = s.q.NativePriceUSD(ctx, s.pool, c)
	} else {
		price, err = s.q.MarketPriceBySymbol(ctx, s.pool, dbsqlc.MarketPriceBySymbolParams{Chain: c, Symbol: asset})
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return decimal.Decimal{}, false, nil
	}
	if err != nil {
		return decimal.Decimal{}, false, interpretError(err, "asset price", asset)
	}
	return price, price.IsPositive(), nil
}

// storedRequest is the request column: the caller's request as sent, under the API's member
// names. The domain types carry no JSON names, so the column's shape is spelled out here; the
// conversions below stop compiling when a domain field is added and this shape is not.
type storedRequest struct {
	AttemptIdentifier string            `json:"attemptIdentifier,omitempty"`
	Withdrawal        *storedWithdrawal `json:"withdrawal,omitempty"`
	Transfer          *storedTransfer   `json:"transfer,omitempty"`
}

type storedWithdrawal struct {
	Address           string      `json:"address"`
	Asset             string      `json:"asset"`
	AssetAmount       string      `json:"assetAmount"`
	AttemptTimestamp  string      `json:"attemptTimestamp"`
	Network           kyt.Network `json:"network"`
	AssetDenomination *string     `json:"assetDenomination"`
	AssetID           *string     `json:"assetId"`
	AssetPrice        *string     `json:"assetPrice"`
	Memo              *string     `json:"memo"`
}

type storedTransfer struct {
	Asset             string        `json:"asset"`
	Direction         kyt.Direction `json:"direction"`
	Network           kyt.Network   `json:"network"`
	TransferReference string        `json:"transferReference"`
}

func kytRequestJSON(reg kyt.Registration) ([]byte, error) {
	b, err := json.Marshal(storedRequest{AttemptIdentifier: reg.AttemptIdentifier,
		Withdrawal: (*storedWithdrawal)(reg.Withdrawal), Transfer: (*storedTransfer)(reg.Transfer)})
	if err != nil {
		return nil, fmt.Errorf("encode kyt request: %w", err)
	}
	return b, nil
}

func registrationFromRow(r dbsqlc.KytRegistration) (kyt.Registration, error) {
	var req storedRequest
	if err := json.Unmarshal(r.Request, &req); err != nil {
		return kyt.Registration{}, fmt.Errorf("decode kyt request %s: %w", r.ExternalID, err)
	}
	reg := kyt.Registration{Kind: kyt.Kind(r.Kind), AccountID: r.AccountID, ExternalID: r.ExternalID,
		AttemptIdentifier: req.AttemptIdentifier,
		Withdrawal:        (*kyt.WithdrawalRequest)(req.Withdrawal), Transfer: (*kyt.TransferRequest)(req.Transfer),
		Fingerprint: r.Fingerprint, Status: kyt.Status(r.Status), CreatedAt: r.CreatedAt.UTC()}
	if r.UsdAmount.Valid {
		d := r.UsdAmount.Decimal
		reg.USDAmount = &d
	}
	if r.Rating != nil {
		reg.Rating = kyt.Rating(*r.Rating)
	}
	if r.Failure != nil {
		reg.FailureReason = *r.Failure
	}
	if len(r.Alerts) > 0 {
		if err := json.Unmarshal(r.Alerts, &reg.Alerts); err != nil {
			return kyt.Registration{}, fmt.Errorf("decode kyt alerts %s: %w", r.ExternalID, err)
		}
	}
	if reg.Status != kyt.StatusPending { // a pending row's updated_at is only its creation
		reg.UpdatedAt = r.UpdatedAt.UTC()
	}
	return reg, nil
}

func kytNullDecimal(d *decimal.Decimal) decimal.NullDecimal {
	if d == nil {
		return decimal.NullDecimal{}
	}
	return decimal.NullDecimal{Decimal: *d, Valid: true}
}
