package httpapi

import (
	"encoding/json"
	"strings"
	"time"
	"unicode"

	"github.com/gofiber/fiber/v2"

	"github.com/tokenscope/tokenscope/app/compliance"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/kyt"
)

// kytTime is the timestamp form of KYT responses (RFC 3339, milliseconds, UTC).
const kytTime = "2006-01-02T15:04:05.000Z07:00"

func timeOrNil(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format(kytTime)
	return &s
}

func usdOrNil(r kyt.Registration) *string {
	if r.USDAmount == nil {
		return nil
	}
	s := r.USDAmount.String()
	return &s
}

// withdrawalDTO is the KytWithdrawalBaseResponse. updatedAt is required there, so a pending
// registration reports its acceptance time; the summary's processedAt tells the two apart.
// usdAmount is a required string there too: "" while no USD price is known (the caller sent
// none in USD, market data has none, the provider has not priced it), never null and never an
// invented "0".
type withdrawalDTO struct {
	Address           string  `json:"address"`
	Asset             string  `json:"asset"`
	AssetAmount       string  `json:"assetAmount"`
	AssetID           *string `json:"assetId"`
	AttemptIdentifier string  `json:"attemptIdentifier"`
	ExternalID        string  `json:"externalId"`
	Memo              *string `json:"memo"`
	Network           string  `json:"network"`
	UpdatedAt         string  `json:"updatedAt"`
	USDAmount         string  `json:"usdAmount"`
}

// transferDTO is the KytTransferBaseResponse: the fields the provider fills stay null until
// the registration is processed.
type transferDTO struct {
	Asset             string  `json:"asset"`
	AssetAmount       *string `json:"assetAmount"`
	AssetID           *string `json:"assetId"`
	ExternalID        string  `json:"externalId"`
	Idx               *int64  `json:"idx"`
	Memo              *string `json:"memo"`
	Network           string  `json:"network"`
	OutputAddress     *string `json:"outputAddress"`
	Timestamp         *string `json:"timestamp"`
	TransferReference string  `json:"transferReference"`
	Tx                *string `json:"tx"`
	UpdatedAt         *string `json:"updatedAt"`
	USDAmount         *string `json:"usdAmount"`
	Direction         string  `json:"direction"`
}

// screeningDTO is what a summary adds to the registration's own shape.
type screeningDTO struct {
	Status        kyt.Status  `json:"status"`
	Rating        *kyt.Rating `json:"rating"`
	Alerts        []kyt.Alert `json:"alerts"`
	FailureReason *string     `json:"failureReason"`
	CreatedAt     string      `json:"createdAt"`
	ProcessedAt   *string     `json:"processedAt"`
}

func withdrawalOf(r kyt.Registration) withdrawalDTO {
	w := r.Withdrawal
	updated := r.UpdatedAt
	if updated.IsZero() {
		updated = r.CreatedAt
	}
	d := withdrawalDTO{Address: w.Address, Asset: w.Asset, AssetAmount: w.AssetAmount, AssetID: w.AssetID,
		AttemptIdentifier: r.AttemptIdentifier, ExternalID: r.ExternalID, Memo: w.Memo, Network: string(w.Network),
		UpdatedAt: updated.UTC().Format(kytTime)}
	if r.USDAmount != nil {
		d.USDAmount = r.USDAmount.String()
	}
	return d
}

func transferOf(r kyt.Registration) transferDTO {
	t := r.Transfer
	d := transferDTO{Asset: t.Asset, ExternalID: r.ExternalID, Network: string(t.Network),
		TransferReference: t.TransferReference, Direction: string(t.Direction)}
	if r.Status != kyt.StatusPending {
		hash := t.Hash()
		d.Tx = &hash
		if cp := t.Counterparty(); cp != "" {
			d.OutputAddress = &cp
		}
		d.Timestamp = timeOrNil(r.UpdatedAt)
		d.UpdatedAt = timeOrNil(r.UpdatedAt)
		d.USDAmount = usdOrNil(r)
	}
	return d
}

// summaryOf merges the registration's shape with its screening into one flat object.
func summaryOf(r kyt.Registration) (map[string]any, error) {
	sc := screeningDTO{Status: r.Status, Alerts: r.Alerts, CreatedAt: r.CreatedAt.UTC().Format(kytTime),
		ProcessedAt: timeOrNil(r.UpdatedAt)}
	if sc.Alerts == nil {
		sc.Alerts = []kyt.Alert{}
	}
	if r.Rating != "" {
		sc.Rating = &r.Rating
	}
	if r.FailureReason != "" {
		sc.FailureReason = &r.FailureReason
	}
	var base any
	if r.Withdrawal != nil {
		base = withdrawalOf(r)
	} else {
		base = transferOf(r)
	}
	out := map[string]any{}
	for _, part := range []any{base, sc} {
		b, err := json.Marshal(part)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// idempotencyKey reads the optional Idempotency-Key header.
func idempotencyKey(c *fiber.Ctx) (string, error) {
	k := strings.TrimSpace(c.Get("Idempotency-Key"))
	if len(k) > compliance.MaxIdempotencyKeyLen || strings.IndexFunc(k, unicode.IsControl) >= 0 {
		return "", fault.Invalid("Idempotency-Key", k, "must be at most 255 printable characters")
	}
	return k, nil
}

func (h *handlers) registerWithdrawal(c *fiber.Ctx) error {
	key, err := idempotencyKey(c)
	if err != nil {
		return err
	}
	in, err := decodeWithdrawal(c.Body())
	if err != nil {
		return err
	}
	r, err := h.app.KYT.RegisterWithdrawal(c.UserContext(), principal(c).AccountID, key, in)
	if err != nil {
		return err
	}
	return c.JSON(withdrawalOf(r))
}

func (h *handlers) registerTransfer(c *fiber.Ctx) error {
	key, err := idempotencyKey(c)
	if err != nil {
		return err
	}
	in, err := decodeTransfer(c.Body())
	if err != nil {
		return err
	}
	r, err := h.app.KYT.RegisterTransfer(c.UserContext(), principal(c).AccountID, key, in)
	if err != nil {
		return err
	}
	return c.JSON(transferOf(r))
}

func (h *handlers) kytSummary(kind kyt.Kind) fiber.Handler {
	return func(c *fiber.Ctx) error {
		r, err := h.app.KYT.Summary(c.UserContext(), principal(c).AccountID, kind, c.Params("externalId"))
		if err != nil {
			return err
		}
		s, err := summaryOf(r)
		if err != nil {
			return err
		}
		return c.JSON(s)
	}
}
