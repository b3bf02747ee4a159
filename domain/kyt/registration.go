package kyt

import (
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/domain/fault"
)

// Kind tells the two registration types apart.
type Kind string

const (
	KindWithdrawal Kind = "withdrawal"
	KindTransfer   Kind = "transfer"
)

// Status is where a registration is in its life: pending until the provider has processed
// it, then registered (screened, with a rating) or failed (the provider refused it for good).
type Status string

const (
	StatusPending    Status = "pending"
	StatusRegistered Status = "registered"
	StatusFailed     Status = "failed"
)

// Rating is the provider's overall risk rating of a registration, with Chainalysis KYT's
// vocabulary. unknown means the provider could not screen it (for example a transfer whose
// counterparty it could not identify).
type Rating string

const (
	LowRisk     Rating = "lowRisk"
	MediumRisk  Rating = "mediumRisk"
	HighRisk    Rating = "highRisk"
	SevereRisk  Rating = "severeRisk"
	UnknownRisk Rating = "unknown"
)

// Risk is an alert level, Chainalysis KYT's alertLevel. The integration guide maps them to
// actions: LOW release, MEDIUM flag, HIGH hold, SEVERE freeze.
type Risk string

const (
	RiskLow    Risk = "LOW"
	RiskMedium Risk = "MEDIUM"
	RiskHigh   Risk = "HIGH"
	RiskSevere Risk = "SEVERE"
)

// rank orders risks; 0 means "not a risk level".
func (r Risk) rank() int {
	switch r {
	case RiskLow:
		return 1
	case RiskMedium:
		return 2
	case RiskHigh:
		return 3
	case RiskSevere:
		return 4
	}
	return 0
}

// Rating maps an alert level onto the rating of the same severity (unknown for anything else).
func (r Risk) Rating() Rating {
	switch r {
	case RiskLow:
		return LowRisk
	case RiskMedium:
		return MediumRisk
	case RiskHigh:
		return HighRisk
	case RiskSevere:
		return SevereRisk
	}
	return UnknownRisk
}

// Alert is one finding of the provider about a registration.
type Alert struct {
	Level        Risk            `json:"alertLevel"`
	Category     string          `json:"category,omitempty"`
	Service      string          `json:"service,omitempty"`
	ExposureType string          `json:"exposureType,omitempty"` // DIRECT or INDIRECT
	AlertAmount  decimal.Decimal `json:"alertAmount"`
	ExternalID   string          `json:"externalId,omitempty"`
}

// RatingOf rates a screened registration by its most severe alert; no alert is lowRisk.
// Alerts with an unrecognised level are ignored.
func RatingOf(alerts []Alert) Rating {
	worst := Risk("")
	for _, a := range alerts {
		if a.Level.rank() > worst.rank() {
			worst = a.Level
		}
	}
	if worst == "" {
		return LowRisk
	}
	return worst.Rating()
}

// Registration is the stored record of one KYT registration. Exactly one of Withdrawal and
// Transfer is set, matching Kind; they hold the request as the caller sent it (for echoing).
// Change Status only through MarkRegistered and MarkFailed.
type Registration struct {
	Kind       Kind
	AccountID  string
	ExternalID string
	// AttemptIdentifier is the withdrawal-attempt id the response must carry; empty for transfers.
	AttemptIdentifier string
	Withdrawal        *WithdrawalRequest
	Transfer          *TransferRequest
	Fingerprint       string
	// USDAmount is nil until known: set at creation when the caller priced the asset in USD,
	// otherwise by the provider through SetUSDAmount.
	USDAmount     *decimal.Decimal
	Status        Status
	Rating        Rating
	Alerts        []Alert
	FailureReason string
	CreatedAt     time.Time
	// UpdatedAt stays zero while pending and is set by every transition, so "updatedAt is
	// null until processed" falls out of IsZero.
	UpdatedAt time.Time
}

// NewWithdrawal validates r and builds its pending registration. When idempotencyKey is
// empty the request's fingerprint is the key, so re-posting the same body is idempotent.
// The externalId is ExternalID(accountID, "withdrawal:"+key), the kind prefix keeping a
// withdrawal and a transfer registered under the same client key apart.
func NewWithdrawal(accountID, idempotencyKey string, r WithdrawalRequest, now time.Time) (Registration, error) {
	if strings.TrimSpace(accountID) == "" {
		return Registration{}, fault.Missing("accountId")
	}
	if err := r.Validate(); err != nil {
		return Registration{}, err
	}
	fp := r.Fingerprint()
	reg := Registration{
		Kind:        KindWithdrawal,
		AccountID:   accountID,
		ExternalID:  ExternalID(accountID, registrationKey(KindWithdrawal, idempotencyKey, fp)),
		Withdrawal:  &r,
		Fingerprint: fp,
		Status:      StatusPending,
		CreatedAt:   now.UTC(),
	}
	reg.AttemptIdentifier = "attempt_" + strings.ReplaceAll(reg.ExternalID, "-", "")
	if usd, ok := r.USDAmount(); ok {
		reg.USDAmount = &usd
	}
	return reg, nil
}

// NewTransfer validates r and builds its pending registration (see NewWithdrawal).
func NewTransfer(accountID, idempotencyKey string, r TransferRequest, now time.Time) (Registration, error) {
	if strings.TrimSpace(accountID) == "" {
		return Registration{}, fault.Missing("accountId")
	}
	if err := r.Validate(); err != nil {
		return Registration{}, err
	}
	fp := r.Fingerprint()
	return Registration{
		Kind:        KindTransfer,
		AccountID:   accountID,
		ExternalID:  ExternalID(accountID, registrationKey(KindTransfer, idempotencyKey, fp)),
		Transfer:    &r,
		Fingerprint: fp,
		Status:      StatusPending,
		CreatedAt:   now.UTC(),
	}, nil
}

func registrationKey(k Kind, idempotencyKey, fingerprint string) string {
	if idempotencyKey == "" {
		idempotencyKey = fingerprint
	}
	return string(k) + ":" + idempotencyKey
}

// CheckReplay is called when a registration with the same externalId already exists: the
// replay is fine when it carries the same request, and a conflict when the key was reused
// for a different one.
func (r Registration) CheckReplay(fingerprint string) error {
	if fingerprint != r.Fingerprint {
		return fault.Conflict("idempotency key already used for a different " + string(r.Kind) + " registration")
	}
	return nil
}

// MarkRegistered records the provider's screening. It is allowed while pending and again
// once registered, because the provider keeps re-screening and alerts may arrive later; a
// failed registration cannot become registered.
func (r *Registration) MarkRegistered(rating Rating, alerts []Alert, at time.Time) error {
	switch rating {
	case LowRisk, MediumRisk, HighRisk, SevereRisk, UnknownRisk:
	default:
		return fault.InvalidParam("rating", string(rating),
			string(LowRisk), string(MediumRisk), string(HighRisk), string(SevereRisk), string(UnknownRisk))
	}
	if r.Status != StatusPending && r.Status != StatusRegistered {
		return fault.Conflict("kyt registration " + r.ExternalID + " is " + string(r.Status) + " and cannot become registered")
	}
	r.Status = StatusRegistered
	r.Rating = rating
	r.Alerts = append([]Alert(nil), alerts...)
	r.FailureReason = ""
	r.UpdatedAt = at.UTC()
	return nil
}

// MarkFailed records a permanent refusal by the provider. Only a pending registration can
// fail; failing an already failed one just refreshes the reason (activity retries may report
// twice). A registered one stays registered.
func (r *Registration) MarkFailed(reason string, at time.Time) error {
	if r.Status != StatusPending && r.Status != StatusFailed {
		return fault.Conflict("kyt registration " + r.ExternalID + " is " + string(r.Status) + " and cannot fail")
	}
	if strings.TrimSpace(reason) == "" {
		reason = "rejected by the KYT provider"
	}
	r.Status = StatusFailed
	r.FailureReason = reason
	r.UpdatedAt = at.UTC()
	return nil
}

// SetUSDAmount records the provider's valuation when the caller did not price the asset.
func (r *Registration) SetUSDAmount(usd decimal.Decimal) { r.USDAmount = &usd }

// Screen is the built-in provider's rule. The screened address is looked up in flagged
// (address → alert level): a hit rates the registration with that level's rating, a miss is
// lowRisk, and an empty address (nothing to screen, e.g. a sent transfer without a
// counterparty) or a hit with an unrecognised level is unknown. EVM addresses ("0x…") match
// case-insensitively because their case only carries a checksum; every other encoding is
// case-sensitive (base58) or already normalised to lower case by Normalize.
func Screen(address string, flagged map[string]Risk) Rating {
	address = strings.TrimSpace(address)
	if address == "" {
		return UnknownRisk
	}
	if risk, ok := flagged[address]; ok {
		return risk.Rating()
	}
	if strings.HasPrefix(address, "0x") || strings.HasPrefix(address, "0X") {
		// Several spellings of one EVM address may be listed; the worst one wins so the
		// answer does not depend on map order.
		found, worst := false, Risk("")
		for k, risk := range flagged {
			if strings.EqualFold(k, address) {
				if !found || risk.rank() > worst.rank() {
					worst = risk
				}
				found = true
			}
		}
		if found {
			return worst.Rating()
		}
	}
	return LowRisk
}

// ScreenedAddress is the address the built-in provider screens: the withdrawal's destination,
// or the transfer's counterparty (the part after the colon of transferReference).
func (r Registration) ScreenedAddress() string {
	switch {
	case r.Withdrawal != nil:
		return r.Withdrawal.Normalize().Address
	case r.Transfer != nil:
		return r.Transfer.Normalize().Counterparty()
	}
	return ""
}
