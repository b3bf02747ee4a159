// Package account models who calls the API: accounts, their API keys and the scopes a key
// grants. Key material is generated from caller-supplied random bytes so the package stays
// pure; only a SHA-256 of a key is ever stored. Standard library, domain/fault, domain/text and
// domain/ratelimit only.
package account

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/ratelimit"
	"github.com/tokenscope/tokenscope/domain/text"
)

// Scope is a permission carried by an API key.
type Scope string

const (
	ScopeRead    Scope = "read"
	ScopeKYT     Scope = "kyt"
	ScopeWebhook Scope = "webhook"
	ScopeIngest  Scope = "ingest"
)

// AllScopes lists every scope, in the order shown to users.
var AllScopes = []Scope{ScopeRead, ScopeKYT, ScopeWebhook, ScopeIngest}

// ParseScopes parses a comma-separated list of at least one scope. An empty list is refused
// rather than read as "every scope": it is what an unset shell variable gives.
func ParseScopes(param, s string) ([]Scope, error) {
	var out []Scope
	seen := map[Scope]bool{}
	for _, part := range strings.Split(s, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		sc := Scope(strings.ToLower(strings.TrimSpace(part)))
		ok := false
		for _, a := range AllScopes {
			if a == sc {
				ok = true
			}
		}
		if !ok {
			return nil, fault.InvalidParam(param, part, scopeNames()...)
		}
		if !seen[sc] {
			seen[sc] = true
			out = append(out, sc)
		}
	}
	if len(out) == 0 {
		return nil, fault.Invalid(param, s, "name at least one scope: "+strings.Join(scopeNames(), ", "))
	}
	return out, nil
}

func scopeNames() []string {
	names := make([]string, len(AllScopes))
	for i, a := range AllScopes {
		names[i] = string(a)
	}
	return names
}

// ParseExpiry reads when a key ends: a duration from now (Go's form, such as 90s or 720h, or
// whole days such as 30d) or an RFC 3339 time; it must lie after now.
func ParseExpiry(param, s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	var end time.Time
	if days, ok := strings.CutSuffix(s, "d"); ok && days != "" && strings.Trim(days, "0123456789") == "" {
		n, err := strconv.Atoi(days)
		if err != nil || n > 100*366 {
			return time.Time{}, fault.Invalid(param, s, "too many days")
		}
		end = now.Add(time.Duration(n) * 24 * time.Hour)
	} else if d, err := time.ParseDuration(s); err == nil {
		end = now.Add(d)
	} else if t, err := time.Parse(time.RFC3339, s); err == nil {
		end = t
	} else {
		return time.Time{}, fault.Invalid(param, s, "use a duration (90s, 720h, 30d) or an RFC 3339 time")
	}
	if !end.After(now) {
		return time.Time{}, fault.Invalid(param, s, "the key would end before it starts: give a time in the future")
	}
	return end, nil
}

// KeyPrefix starts every key, so leaked keys are easy to recognise and scan for.
const KeyPrefix = "tsk_"

// MinRandomBytes is the least entropy a key carries (128 bits).
const MinRandomBytes = 16

// Principal is the authenticated caller of one request.
type Principal struct {
	AccountID string
	KeyID     string
	Scopes    []Scope
	// Limit is the key's own rate limit; zero means the process default.
	Limit ratelimit.Limit
	// ExpiresAt is when the key ends (nil: never).
	ExpiresAt *time.Time
}

// Has reports whether the principal holds scope s.
func (p Principal) Has(s Scope) bool {
	for _, have := range p.Scopes {
		if have == s {
			return true
		}
	}
	return false
}

// Require returns a Forbidden error naming the scope when the principal lacks it.
func (p Principal) Require(s Scope) error {
	if p.Has(s) {
		return nil
	}
	return fault.Forbidden("this API key lacks the " + string(s) + " scope")
}

// Key is a stored API key (never the secret itself).
type Key struct {
	ID         string
	AccountID  string
	Name       string
	Prefix     string // the visible lookup part, e.g. tsk_4f2a9c1e
	Hash       []byte // SHA-256 of the whole key
	Scopes     []Scope
	CreatedAt  time.Time
	RevokedAt  *time.Time
	LastUsedAt *time.Time
	Limit      ratelimit.Limit // zero: the process default
	ExpiresAt  *time.Time      // nil: the key never ends
}

// NewKey builds a key from id bytes (public, 4+ bytes) and secret bytes (MinRandomBytes+).
// It returns the full key to show once and the record to store.
func NewKey(idBytes, secretBytes []byte, accountID, name string, scopes []Scope, now time.Time) (string, Key, error) {
	if len(idBytes) < 4 {
		return "", Key{}, fault.Invalid("idBytes", "", "need at least 4 bytes")
	}
	if len(secretBytes) < MinRandomBytes {
		return "", Key{}, fault.Invalid("secretBytes", "", "need at least 16 random bytes")
	}
	id := hex.EncodeToString(idBytes)
	prefix := KeyPrefix + id
	full := prefix + "_" + base64.RawURLEncoding.EncodeToString(secretBytes)
	return full, Key{
		ID: id, AccountID: accountID, Name: name, Prefix: prefix,
		Hash: Hash(full), Scopes: scopes, CreatedAt: now,
	}, nil
}

// Hash is the stored digest of a presented key.
func Hash(full string) []byte {
	sum := sha256.Sum256([]byte(full))
	return sum[:]
}

// PrefixOf extracts the lookup prefix of a presented key, or "" when it is malformed, which
// includes a key that is not text (a header may carry any byte; the prefix is looked up).
func PrefixOf(full string) string {
	if !strings.HasPrefix(full, KeyPrefix) || !text.Storable(full) {
		return ""
	}
	rest := full[len(KeyPrefix):]
	i := strings.IndexByte(rest, '_')
	if i <= 0 || i == len(rest)-1 {
		return ""
	}
	return full[:len(KeyPrefix)+i]
}

// Matches compares a presented key with the stored hash in constant time.
func (k Key) Matches(full string) bool {
	return subtle.ConstantTimeCompare(Hash(full), k.Hash) == 1
}

// Active reports whether the key may be used at now: neither revoked nor past its end.
func (k Key) Active(now time.Time) bool {
	return k.RevokedAt == nil && (k.ExpiresAt == nil || now.Before(*k.ExpiresAt))
}

// Authenticate checks a presented key against its stored record at now.
func (k Key) Authenticate(full string, now time.Time) (Principal, error) {
	if !k.Active(now) || !k.Matches(full) {
		return Principal{}, fault.Unauthorized("invalid API key")
	}
	return Principal{AccountID: k.AccountID, KeyID: k.ID, Scopes: k.Scopes, Limit: k.Limit, ExpiresAt: k.ExpiresAt}, nil
}
