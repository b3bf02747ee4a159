package webhook

import (
	"crypto/hmac"
	"encoding/base64"
	"strings"
	"time"

	"github.com/tokenscope/tokenscope/domain/fault"
)

// Functions only the tests use: nothing reachable from the binaries calls them (make deadcode).

// DefaultAutoDisable waits 5 days.
func DefaultAutoDisable() AutoDisable { return AutoDisable{After: 5 * 24 * time.Hour} }

// NewMessageID is "msg_" followed by a ULID: the webhook-id of a delivery, the same on every
// retry of one event to one endpoint. It contains no '.', which the signed content forbids.
func NewMessageID(now time.Time, random [10]byte) string { return "msg_" + ulid(now, random) }

// Verify checks a signature header the way a receiver should: ts must be within tolerance of
// now (either side), and at least one "v1," entry must equal the HMAC under secret, compared
// in constant time. Entries of other versions are skipped. Every failure is a
// fault.KindUnauthorized error.
func Verify(header string, secret Secret, msgID string, ts time.Time, body []byte, now time.Time, tolerance time.Duration) error {
	if secret.IsZero() {
		return fault.Unauthorized("webhook signature: no secret to verify with")
	}
	if strings.TrimSpace(header) == "" {
		return fault.Unauthorized("webhook signature: missing signature header")
	}
	if now.Sub(ts) > tolerance {
		return fault.Unauthorized("webhook signature: timestamp too old")
	}
	if ts.Sub(now) > tolerance {
		return fault.Unauthorized("webhook signature: timestamp too far in the future")
	}
	want := mac(secret, msgID, ts, body)
	for _, entry := range strings.Fields(header) {
		sig, ok := strings.CutPrefix(entry, signatureVersionComma)
		if !ok {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(sig)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return fault.Unauthorized("webhook signature: no matching signature")
}
