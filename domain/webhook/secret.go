package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/tokenscope/tokenscope/domain/fault"
)

// SecretPrefix starts every endpoint secret, as in Standard Webhooks and Svix.
const SecretPrefix = "whsec_"

// Key sizes: new secrets carry 24 to 32 random bytes; ParseSecret also accepts up to 64, the
// Standard Webhooks upper bound, so secrets minted elsewhere can be imported.
const (
	MinSecretBytes    = 24
	MaxNewSecretBytes = 32
	MaxSecretBytes    = 64
)

// RotationOverlap is how long the previous secret keeps signing after a rotation, so
// receivers can switch without dropping a delivery.
const RotationOverlap = 24 * time.Hour

// DefaultTolerance is how far a signed timestamp may be from the verifier's clock.
const DefaultTolerance = 5 * time.Minute

// Header names. The Svix names are what the API's own integrations verify; the Standard
// Webhooks names are the same values under the vendor-neutral spelling. Senders set both.
const (
	HeaderID              = "webhook-id"
	HeaderTimestamp       = "webhook-timestamp"
	HeaderSignature       = "webhook-signature"
	SvixHeaderID          = "svix-id"
	SvixHeaderTimestamp   = "svix-timestamp"
	SvixHeaderSignature   = "svix-signature"
	signatureVersion      = "v1"
	signatureVersionComma = signatureVersion + ","
)

// Secret is an endpoint's signing key. The zero value is "no secret". String redacts the key
// so a secret printed by accident does not leak; Reveal gives the whsec_ form to show once
// and to store.
type Secret struct{ key []byte }

// NewSecret wraps random bytes the caller drew from crypto/rand (so the domain stays pure).
// It panics unless len(random) is between 24 and 32: that is a programming error, never a
// user's.
func NewSecret(random []byte) Secret {
	if len(random) < MinSecretBytes || len(random) > MaxNewSecretBytes {
		panic("webhook.NewSecret: need 24 to 32 random bytes, got " + strconv.Itoa(len(random)))
	}
	return Secret{key: append([]byte(nil), random...)}
}

// ParseSecret reads a "whsec_<base64>" secret holding 24 to 64 bytes.
func ParseSecret(s string) (Secret, error) {
	rest, ok := strings.CutPrefix(s, SecretPrefix)
	if !ok {
		return Secret{}, fault.Invalid("secret", redact(s), "must start with "+SecretPrefix)
	}
	key, err := base64.StdEncoding.DecodeString(rest)
	if err != nil || len(key) < MinSecretBytes || len(key) > MaxSecretBytes {
		return Secret{}, fault.Invalid("secret", redact(s), "must be "+SecretPrefix+" followed by base64 of 24 to 64 bytes")
	}
	return Secret{key: key}, nil
}

func redact(s string) string {
	if len(s) > len(SecretPrefix)+4 {
		return s[:len(SecretPrefix)+4] + "…"
	}
	return "…"
}

// Reveal is the secret in its "whsec_" + base64 form.
func (s Secret) Reveal() string {
	if s.IsZero() {
		return ""
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(s.key)
}

// String redacts the key.
func (s Secret) String() string {
	if s.IsZero() {
		return ""
	}
	return SecretPrefix + "[redacted]"
}

// IsZero reports whether s holds no key.
func (s Secret) IsZero() bool { return len(s.key) == 0 }

// Equal compares two secrets in constant time.
func (s Secret) Equal(o Secret) bool { return hmac.Equal(s.key, o.key) }

// Sign is one Standard Webhooks signature: "v1," + base64(HMAC-SHA256(key, msgID + "." +
// unix seconds of ts + "." + body)). body must be exactly the bytes sent.
func Sign(secret Secret, msgID string, ts time.Time, body []byte) string {
	return signatureVersionComma + base64.StdEncoding.EncodeToString(mac(secret, msgID, ts, body))
}

func mac(secret Secret, msgID string, ts time.Time, body []byte) []byte {
	h := hmac.New(sha256.New, secret.key)
	h.Write([]byte(msgID))
	h.Write([]byte("."))
	h.Write([]byte(strconv.FormatInt(ts.Unix(), 10)))
	h.Write([]byte("."))
	h.Write(body)
	return h.Sum(nil)
}

// SignatureHeader signs with every secret (zero secrets skipped) and joins the signatures with
// spaces: during a rotation the header carries the new and the old signature, and a receiver
// accepts a delivery when any of them matches.
func SignatureHeader(secrets []Secret, msgID string, ts time.Time, body []byte) string {
	parts := make([]string, 0, len(secrets))
	for _, s := range secrets {
		if !s.IsZero() {
			parts = append(parts, Sign(s, msgID, ts, body))
		}
	}
	return strings.Join(parts, " ")
}

// Headers are the request headers of one delivery attempt, under both the Svix and the
// Standard Webhooks names, plus the JSON content type.
func Headers(secrets []Secret, msgID string, ts time.Time, body []byte) map[string]string {
	sig := SignatureHeader(secrets, msgID, ts, body)
	unix := strconv.FormatInt(ts.Unix(), 10)
	return map[string]string{
		"Content-Type":      "application/json",
		HeaderID:            msgID,
		HeaderTimestamp:     unix,
		HeaderSignature:     sig,
		SvixHeaderID:        msgID,
		SvixHeaderTimestamp: unix,
		SvixHeaderSignature: sig,
	}
}

// Rotation remembers the secret replaced by the last rotation and until when it still signs.
type Rotation struct {
	Previous Secret
	Expires  time.Time
}

// Active reports whether the previous secret still signs at now.
func (r Rotation) Active(now time.Time) bool { return !r.Previous.IsZero() && now.Before(r.Expires) }
