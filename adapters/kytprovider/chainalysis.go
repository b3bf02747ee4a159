package kytprovider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/kyt"
	"github.com/tokenscope/tokenscope/ports"
)

// HTTP talks to a vendor with Chainalysis KYT v2's registration API: register the withdrawal
// attempt or transfer under the account as userId, read the summary until the vendor has
// processed it, then read its alerts.
type HTTP struct {
	BaseURL string
	APIKey  string
	Client  *http.Client
}

var _ ports.KYTProvider = (*HTTP)(nil)

// NewHTTP builds the adapter with a bounded client.
func NewHTTP(baseURL, apiKey string) *HTTP {
	return &HTTP{BaseURL: strings.TrimRight(baseURL, "/"), APIKey: apiKey, Client: &http.Client{Timeout: 10 * time.Second}}
}

// maxResponse bounds what is read of a vendor answer: it is untrusted input.
const maxResponse = 1 << 20

type registered struct {
	ExternalID string `json:"externalId"`
}

type summary struct {
	UpdatedAt *string          `json:"updatedAt"`
	USDAmount *decimal.Decimal `json:"usdAmount"`
}

type alertList struct {
	Alerts []kyt.Alert `json:"alerts"`
}

// Screen registers (the vendor keys repeats on attemptIdentifier / transferReference, so a
// retried call registers once), then polls once per attempt: an unprocessed registration is a
// transient fault, which the workflow's retry policy turns into polling with backoff.
func (h *HTTP) Screen(ctx context.Context, reg kyt.Registration) (ports.KYTScreening, error) {
	user := url.PathEscape(reg.AccountID)
	var path, follow string
	var body any
	switch {
	case reg.Withdrawal != nil:
		w := reg.Withdrawal
		path, follow = "/api/kyt/v2/users/"+user+"/withdrawal-attempts", "/api/kyt/v2/withdrawal-attempts/"
		body = map[string]any{"network": w.Network, "asset": w.Asset, "address": w.Address,
			"attemptIdentifier": reg.AttemptIdentifier, "assetAmount": w.AssetAmount, "attemptTimestamp": w.AttemptTimestamp,
			"assetPrice": w.AssetPrice, "assetDenomination": w.AssetDenomination, "assetId": w.AssetID, "memo": w.Memo}
	case reg.Transfer != nil:
		t := reg.Transfer
		path, follow = "/api/kyt/v2/users/"+user+"/transfers", "/api/kyt/v2/transfers/"
		body = map[string]any{"network": t.Network, "asset": t.Asset, "transferReference": t.TransferReference, "direction": t.Direction}
	default:
		return ports.KYTScreening{}, fault.Invalid("registration", reg.ExternalID, "has no request")
	}
	var r registered
	if err := h.call(ctx, http.MethodPost, path, body, &r); err != nil {
		return ports.KYTScreening{}, err
	}
	if r.ExternalID == "" {
		return ports.KYTScreening{}, fmt.Errorf("kyt vendor: registration answer without externalId")
	}
	var s summary
	if err := h.call(ctx, http.MethodGet, follow+url.PathEscape(r.ExternalID), nil, &s); err != nil {
		return ports.KYTScreening{}, err
	}
	if s.UpdatedAt == nil {
		return ports.KYTScreening{}, fault.Unavailable("kyt vendor has not processed the registration yet", time.Second, nil)
	}
	var a alertList
	if err := h.call(ctx, http.MethodGet, follow+url.PathEscape(r.ExternalID)+"/alerts", nil, &a); err != nil {
		return ports.KYTScreening{}, err
	}
	return ports.KYTScreening{Rating: kyt.RatingOf(a.Alerts), Alerts: a.Alerts, USDAmount: s.USDAmount}, nil
}

func (h *HTTP) call(ctx context.Context, method, path string, in, out any) error {
	var rd io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, h.BaseURL+path, rd)
	if err != nil {
		return fault.Invalid("KYT_PROVIDER_URL", h.BaseURL, "is not a URL")
	}
	req.Header.Set("Token", h.APIKey)
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := h.Client.Do(req)
	if err != nil {
		return fmt.Errorf("kyt vendor %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return fmt.Errorf("kyt vendor %s %s: read: %w", method, path, err)
	}
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("kyt vendor %s %s: decode: %w", method, path, err)
		}
		return nil
	}
	return statusError(resp, b)
}

// statusError classifies a vendor refusal. 400/404/409/422 and an AccessDenied 403 are
// permanent; 401 is a configuration fault, permanent too; 429 and a quota 403 are retried no
// sooner than Retry-After (at least 2 s so a quota refusal never turns into a hot loop); 5xx
// and anything else is transient.
func statusError(resp *http.Response, body []byte) error {
	msg := fmt.Sprintf("kyt vendor answered %d", resp.StatusCode)
	var vendor struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &vendor) == nil && vendor.Message != "" {
		msg += ": " + vendor.Message
	}
	switch resp.StatusCode {
	case http.StatusBadRequest, http.StatusNotFound, http.StatusConflict, http.StatusUnprocessableEntity:
		return &fault.Error{Kind: fault.KindInvalid, Message: msg}
	case http.StatusUnauthorized:
		return fault.Unauthorized(msg)
	case http.StatusForbidden:
		if strings.Contains(vendor.Message, "AccessDenied") {
			return fault.Forbidden(msg)
		}
		return fault.Unavailable(msg, retryAfter(resp, 2*time.Second), nil)
	case http.StatusTooManyRequests:
		return fault.Unavailable(msg, retryAfter(resp, 2*time.Second), nil)
	}
	return fmt.Errorf("%s", msg)
}

func retryAfter(resp *http.Response, floor time.Duration) time.Duration {
	d := floor
	if v := strings.TrimSpace(resp.Header.Get("Retry-After")); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n >= 0 {
			d = max(d, time.Duration(n)*time.Second)
		} else if t, err := http.ParseTime(v); err == nil {
			d = max(d, time.Until(t))
		}
	}
	return min(d, 10*time.Minute)
}
