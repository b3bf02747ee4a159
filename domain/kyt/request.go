package kyt

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/tokenscope/tokenscope/domain/fault"
)

// Length bounds of the free-text fields, in characters. They are generous for every real
// address, symbol and memo and keep a hostile body from filling a row.
const (
	MaxAddressLen           = 128
	MaxAssetLen             = 64
	MaxAssetIDLen           = 128
	MaxDenominationLen      = 16
	MaxMemoLen              = 256
	MaxNumberLen            = 64
	MaxTimestampLen         = 64
	MaxTransferReferenceLen = 256
)

// WithdrawalRequest is what operation 10 registers, kept as the strings the caller sent so the
// response can echo them byte for byte. Call Validate before using the typed accessors; its
// errors name the API's members (assetAmount, attemptTimestamp, …).
type WithdrawalRequest struct {
	Address           string
	Asset             string
	AssetAmount       string
	AttemptTimestamp  string
	Network           Network
	AssetDenomination *string
	AssetID           *string
	AssetPrice        *string
	Memo              *string
}

// TransferRequest is what operation 11 registers.
type TransferRequest struct {
	Asset             string
	Direction         Direction
	Network           Network
	TransferReference string
}

// Validate checks every field. Required fields that are absent or blank give
// fault.Missing(field); the first problem found is reported, required fields first.
// Leading and trailing white space is tolerated (Normalize trims it).
func (r WithdrawalRequest) Validate() error {
	for _, f := range []struct{ name, v string }{{"address", r.Address}, {"asset", r.Asset},
		{"assetAmount", r.AssetAmount}, {"attemptTimestamp", r.AttemptTimestamp}, {"network", string(r.Network)}} {
		if strings.TrimSpace(f.v) == "" {
			return fault.Missing(f.name)
		}
	}
	n, err := ParseNetwork(string(r.Network))
	if err != nil {
		return err
	}
	addr := strings.TrimSpace(r.Address)
	if err := checkText("address", r.Address, MaxAddressLen); err != nil {
		return err
	}
	if !ValidAddress(n, addr) {
		return fault.Invalid("address", r.Address, "is not a "+string(n)+" address")
	}
	if err := checkText("asset", r.Asset, MaxAssetLen); err != nil {
		return err
	}
	if _, err := parseAmount("assetAmount", r.AssetAmount, true); err != nil {
		return err
	}
	if _, err := ParseTimestamp("attemptTimestamp", r.AttemptTimestamp); err != nil {
		return err
	}
	if r.AssetDenomination != nil && strings.TrimSpace(*r.AssetDenomination) != "" {
		d := strings.TrimSpace(*r.AssetDenomination)
		if len(d) > MaxDenominationLen || strings.IndexFunc(d, func(c rune) bool { return !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') }) >= 0 {
			return fault.Invalid("assetDenomination", *r.AssetDenomination, "must be a currency code of at most 16 letters")
		}
	}
	if r.AssetID != nil {
		if err := checkOptionalText("assetId", *r.AssetID, MaxAssetIDLen); err != nil {
			return err
		}
	}
	if r.AssetPrice != nil {
		if _, err := parseAmount("assetPrice", *r.AssetPrice, false); err != nil {
			return err
		}
	}
	if r.Memo != nil {
		if utf8.RuneCountInString(*r.Memo) > MaxMemoLen || !utf8.ValidString(*r.Memo) {
			return fault.Invalid("memo", *r.Memo, "must be valid text of at most 256 characters")
		}
	}
	return nil
}

// Validate checks every field of a transfer. transferReference is "<hash>" or
// "<hash>:<suffix>" where hash has the network's transaction-hash shape (see ValidHash) and
// suffix is an address on the same network (bitcoin also accepts an output index, "txid:vout",
// as UTXO integrations send). A received transfer must name the receiving address or output,
// as Chainalysis requires; for a sent one the suffix is optional.
func (r TransferRequest) Validate() error {
	for _, f := range []struct{ name, v string }{{"asset", r.Asset}, {"direction", string(r.Direction)},
		{"network", string(r.Network)}, {"transferReference", r.TransferReference}} {
		if strings.TrimSpace(f.v) == "" {
			return fault.Missing(f.name)
		}
	}
	if err := checkText("asset", r.Asset, MaxAssetLen); err != nil {
		return err
	}
	d, err := ParseDirection(string(r.Direction))
	if err != nil {
		return err
	}
	n, err := ParseNetwork(string(r.Network))
	if err != nil {
		return err
	}
	if err := checkText("transferReference", r.TransferReference, MaxTransferReferenceLen); err != nil {
		return err
	}
	hash, suffix, hasSuffix := strings.Cut(strings.TrimSpace(r.TransferReference), ":")
	if !ValidHash(n, hash) {
		return fault.Invalid("transferReference", r.TransferReference, "must start with a "+string(n)+" transaction hash")
	}
	if !hasSuffix {
		if d == Received {
			return fault.Invalid("transferReference", r.TransferReference, "a received transfer must be <hash>:<receiving address>")
		}
		return nil
	}
	if !ValidAddress(n, suffix) && !(n == Bitcoin && isOutputIndex(suffix)) {
		return fault.Invalid("transferReference", r.TransferReference, "the part after ':' must be a "+string(n)+" address")
	}
	return nil
}

func isOutputIndex(s string) bool {
	if s == "" || len(s) > 10 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Normalize returns the canonical form of a valid request: text trimmed, the asset symbol
// and denomination upper-cased, hex and bech32 lower-cased, decimals without insignificant
// zeros ("1.50" → "1.5"), the timestamp in UTC RFC 3339 with nanoseconds, and blank optional
// fields turned into null. The original is left untouched so responses can echo it.
func (r WithdrawalRequest) Normalize() WithdrawalRequest {
	out := WithdrawalRequest{
		Address:          normalizeHexish(r.Network, strings.TrimSpace(r.Address)),
		Asset:            strings.ToUpper(strings.TrimSpace(r.Asset)),
		AssetAmount:      canonicalDecimal(r.AssetAmount),
		AttemptTimestamp: r.AttemptTimestamp,
		Network:          r.Network,
		AssetID:          trimmedOrNil(r.AssetID),
		Memo:             trimmedOrNil(r.Memo),
	}
	if t, err := ParseTimestamp("attemptTimestamp", r.AttemptTimestamp); err == nil {
		out.AttemptTimestamp = t.Format(time.RFC3339Nano)
	}
	if d := trimmedOrNil(r.AssetDenomination); d != nil {
		up := strings.ToUpper(*d)
		out.AssetDenomination = &up
	}
	if r.AssetPrice != nil {
		p := canonicalDecimal(*r.AssetPrice)
		out.AssetPrice = &p
	}
	return out
}

// Normalize returns the canonical form of a valid transfer (see WithdrawalRequest.Normalize).
func (r TransferRequest) Normalize() TransferRequest {
	hash, suffix, ok := strings.Cut(strings.TrimSpace(r.TransferReference), ":")
	ref := normalizeHexish(r.Network, hash)
	if ok {
		ref += ":" + normalizeHexish(r.Network, suffix)
	}
	return TransferRequest{
		Asset:             strings.ToUpper(strings.TrimSpace(r.Asset)),
		Direction:         r.Direction,
		Network:           r.Network,
		TransferReference: ref,
	}
}

// Fingerprint is the sha256 (lower-case hex) of a canonical encoding of the normalized
// request: a JSON array whose first element is the kind, then every field in a fixed order,
// with null for absent optional fields. Equal registrations hash equal whatever the key
// order or decimal spelling of the body; withdrawals and transfers never collide.
func (r WithdrawalRequest) Fingerprint() string {
	n := r.Normalize()
	return fingerprint([]any{string(KindWithdrawal), n.Address, n.Asset, n.AssetAmount, n.AttemptTimestamp,
		string(n.Network), n.AssetDenomination, n.AssetID, n.AssetPrice, n.Memo})
}

// Fingerprint is the transfer's counterpart of WithdrawalRequest.Fingerprint.
func (r TransferRequest) Fingerprint() string {
	n := r.Normalize()
	return fingerprint([]any{string(KindTransfer), n.Asset, string(n.Direction), string(n.Network), n.TransferReference})
}

func fingerprint(fields []any) string {
	b, _ := json.Marshal(fields) // strings and *string only: cannot fail
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Amount is assetAmount as a decimal (zero if the request is invalid).
func (r WithdrawalRequest) Amount() decimal.Decimal {
	d, _ := parseAmount("assetAmount", r.AssetAmount, true)
	return d
}

// Price is assetPrice as a decimal; ok is false when the caller sent none.
func (r WithdrawalRequest) Price() (price decimal.Decimal, ok bool) {
	if r.AssetPrice == nil {
		return decimal.Decimal{}, false
	}
	d, err := parseAmount("assetPrice", *r.AssetPrice, false)
	return d, err == nil
}

// AttemptTime is attemptTimestamp as a UTC time (zero if the request is invalid).
func (r WithdrawalRequest) AttemptTime() time.Time {
	t, _ := ParseTimestamp("attemptTimestamp", r.AttemptTimestamp)
	return t
}

// USDAmount is assetAmount × assetPrice when the caller priced the asset in USD (an absent
// or blank denomination counts as USD, the provider's default). Otherwise ok is false and
// the provider's own pricing decides the amount later.
func (r WithdrawalRequest) USDAmount() (usd decimal.Decimal, ok bool) {
	price, ok := r.Price()
	if !ok {
		return decimal.Decimal{}, false
	}
	if r.AssetDenomination != nil {
		if d := strings.TrimSpace(*r.AssetDenomination); d != "" && !strings.EqualFold(d, "USD") {
			return decimal.Decimal{}, false
		}
	}
	return USDAmount(r.Amount(), price), true
}

// Hash is the transaction-hash part of transferReference.
func (r TransferRequest) Hash() string {
	h, _, _ := strings.Cut(strings.TrimSpace(r.TransferReference), ":")
	return h
}

// Counterparty is the part after the colon of transferReference ("" when there is none).
func (r TransferRequest) Counterparty() string {
	_, s, _ := strings.Cut(strings.TrimSpace(r.TransferReference), ":")
	return s
}

// USDAmount is amount × price, exact in decimal arithmetic.
func USDAmount(amount, price decimal.Decimal) decimal.Decimal { return amount.Mul(price) }

// ParseTimestamp accepts RFC 3339 / ISO 8601 date-times ("2024-01-15T10:30:00.000Z",
// "2024-01-15T10:30:00+02:00") and the space-separated form the public API itself emits
// ("2026-01-04 17:25:40.008307", "2021-11-16 18:33:33+00:00"). A time without a zone is UTC.
// The result is in UTC. Errors carry the invalid-timestamp business code.
func ParseTimestamp(param, s string) (time.Time, error) {
	v := strings.TrimSpace(s)
	if v != "" && len(v) <= MaxTimestampLen {
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999Z07:00",
			"2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999"} {
			if t, err := time.Parse(layout, v); err == nil {
				return t.UTC(), nil
			}
		}
	}
	return time.Time{}, fault.Invalid(param, s, "must be an ISO 8601 timestamp such as 2024-01-15T10:30:00.000Z").
		WithCode(fault.CodeInvalidTimestamp)
}

// parseAmount accepts plain decimal notation only (digits, optionally a point and more
// digits): no sign, exponent or separators, so "1e3" or "-1" never sneak through.
func parseAmount(param, s string, positive bool) (decimal.Decimal, error) {
	v := strings.TrimSpace(s)
	reason := "must be a non-negative decimal number"
	if positive {
		reason = "must be a positive decimal number"
	}
	bad := fault.Invalid(param, s, reason).WithCode(fault.CodeInvalidNumber)
	if v == "" || len(v) > MaxNumberLen {
		return decimal.Decimal{}, bad
	}
	intPart, frac, hasPoint := strings.Cut(v, ".")
	if intPart == "" || !allDigits(intPart) || hasPoint && (frac == "" || !allDigits(frac)) {
		return decimal.Decimal{}, bad
	}
	d, err := decimal.NewFromString(v)
	if err != nil || positive && !d.IsPositive() {
		return decimal.Decimal{}, bad
	}
	return d, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func canonicalDecimal(s string) string {
	d, err := decimal.NewFromString(strings.TrimSpace(s))
	if err != nil {
		return strings.TrimSpace(s)
	}
	return d.String()
}

func trimmedOrNil(p *string) *string {
	if p == nil {
		return nil
	}
	v := strings.TrimSpace(*p)
	if v == "" {
		return nil
	}
	return &v
}

// checkText bounds a required single-line field: valid UTF-8, no control or space characters
// inside, at most max characters after trimming.
func checkText(param, v string, max int) error {
	t := strings.TrimSpace(v)
	if !utf8.ValidString(t) || utf8.RuneCountInString(t) > max ||
		strings.IndexFunc(t, func(c rune) bool { return unicode.IsControl(c) || unicode.IsSpace(c) }) >= 0 {
		return fault.Invalid(param, v, "must be a single token of at most "+strconv.Itoa(max)+" characters")
	}
	return nil
}

func checkOptionalText(param, v string, max int) error {
	if strings.TrimSpace(v) == "" {
		return nil
	}
	return checkText(param, v, max)
}
