package webhook

import (
	"maps"
	"math"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/text"
)

// Bounds of an endpoint's fields. They keep one tenant from storing unbounded data and match
// the limits the security checklist asks for.
const (
	MaxURLLen              = 2048
	MaxDescriptionLen      = 1024 // characters
	MaxFilterLen           = 4096 // bytes of CEL source
	MaxListItems           = 10   // channels, filterTypes (before duplicates are dropped)
	MaxMetadataKeys        = 16
	MaxMetadataKeyLen      = 64  // characters
	MaxMetadataValueLen    = 512 // characters
	MaxMetadataBytes       = 4096
	MaxIDLen               = 64
	MaxEndpointsPerAccount = 10 // the public API's 52001 WEBHOOKS_ENDPOINT_LIMIT_REACHED reports max_allowed 10
)

// Endpoint is one webhook destination of an account. Its fields change only through Apply,
// RotateSecret, the failure bookkeeping and Disable/Enable, which keep it valid.
type Endpoint struct {
	id, accountID, url string
	channels           []Channel // nil: every channel
	description        *string
	disabled           bool
	filter             *string
	filterTypes        []string // nil: every event type
	metadata           map[string]string
	rateLimit          *int32
	secret             Secret
	rotation           Rotation
	firstFailureAt     time.Time
	createdAt          time.Time
	updatedAt          time.Time
}

// Option sets an optional part of a new endpoint.
type Option func(*Endpoint) error

// WithPatch applies the fields of p (e.g. the rest of a create request) to the new endpoint,
// with the same rules as a PATCH.
func WithPatch(p Patch) Option {
	return func(e *Endpoint) error {
		p.URL = Field[string]{} // the url is NewEndpoint's argument
		return e.apply(p)
	}
}

// WithSecret sets the signing secret.
func WithSecret(s Secret) Option {
	return func(e *Endpoint) error { e.secret = s; return nil }
}

// CreatedAt stamps the endpoint's creation (and first update) time.
func CreatedAt(t time.Time) Option {
	return func(e *Endpoint) error { e.createdAt, e.updatedAt = t.UTC(), t.UTC(); return nil }
}

// NewEndpoint builds a valid endpoint. id must be 1–64 characters of [A-Za-z0-9_-]
// (NewEndpointID makes "ep_" + a ULID); accountID must not be blank; url must pass
// ValidateURLSyntax.
func NewEndpoint(id, accountID, rawURL string, opts ...Option) (*Endpoint, error) {
	if err := validateID("id", id); err != nil {
		return nil, err
	}
	if strings.TrimSpace(accountID) == "" {
		return nil, fault.Missing("accountId")
	}
	if err := ValidateURLSyntax(rawURL); err != nil {
		return nil, err
	}
	e := &Endpoint{id: id, accountID: accountID, url: rawURL, metadata: map[string]string{}}
	for _, o := range opts {
		if err := o(e); err != nil {
			return nil, err
		}
	}
	return e, nil
}

func validateID(param, id string) error {
	if id == "" {
		return fault.Missing(param)
	}
	if len(id) > MaxIDLen || strings.IndexFunc(id, func(c rune) bool {
		return !(c == '_' || c == '-' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z')
	}) >= 0 {
		return fault.Invalid(param, id, "must be 1 to 64 characters of letters, digits, '_' and '-'")
	}
	return nil
}

// ValidateURLSyntax checks the shape of a destination URL only: absolute http or https, a
// host, no user info, no fragment, a numeric port if any, at most 2048 characters, no spaces
// or control characters. Whether plain http is allowed and which addresses may be reached
// (SSRF) depend on deployment configuration and DNS, so the caller decides them.
func ValidateURLSyntax(raw string) error {
	bad := func(reason string) error { return fault.Invalid("url", raw, reason) }
	if raw == "" {
		return fault.Missing("url")
	}
	if len(raw) > MaxURLLen {
		return bad("must be at most 2048 characters")
	}
	if strings.IndexFunc(raw, func(c rune) bool { return unicode.IsSpace(c) || unicode.IsControl(c) }) >= 0 {
		return bad("must not contain spaces or control characters")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return bad("is not a URL")
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	default:
		return bad("must be an absolute http or https URL")
	}
	if u.Opaque != "" || u.Hostname() == "" {
		return bad("must name a host")
	}
	if u.User != nil {
		return bad("must not contain user info")
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return bad("must not contain a fragment")
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return bad("port must be between 1 and 65535")
		}
	} else if strings.HasSuffix(u.Host, ":") {
		return bad("port must be between 1 and 65535")
	}
	if strings.HasPrefix(u.Host, "[") {
		if _, err := netip.ParseAddr(u.Hostname()); err != nil {
			return bad("has an invalid IPv6 address")
		}
	}
	return nil
}

// ID is the endpoint id.
func (e *Endpoint) ID() string { return e.id }

// AccountID is the owning account.
func (e *Endpoint) AccountID() string { return e.accountID }

// URL is the destination.
func (e *Endpoint) URL() string { return e.url }

// Channels are the subscribed channels; nil means no channel filter.
func (e *Endpoint) Channels() []Channel { return slices.Clone(e.channels) }

// Description is nil when unset.
func (e *Endpoint) Description() *string { return clonePtr(e.description) }

// Disabled reports whether deliveries are paused.
func (e *Endpoint) Disabled() bool { return e.disabled }

// Filter is the CEL filter source, nil when unset.
func (e *Endpoint) Filter() *string { return clonePtr(e.filter) }

// FilterTypes are the accepted event types; nil means no type filter.
func (e *Endpoint) FilterTypes() []string { return slices.Clone(e.filterTypes) }

// Metadata is a copy of the free-form key/value map (never nil).
func (e *Endpoint) Metadata() map[string]string {
	m := maps.Clone(e.metadata)
	if m == nil {
		m = map[string]string{}
	}
	return m
}

// RateLimit is the delivery throttle in messages per second, nil when unset.
func (e *Endpoint) RateLimit() *int32 { return clonePtr(e.rateLimit) }

// Throttle is the rate limit to enforce; limited is false for null and for 0, both of which
// mean "unthrottled" (0 is accepted by the API's minimum-0 rule and would otherwise block
// every delivery).
func (e *Endpoint) Throttle() (perSecond int32, limited bool) {
	if e.rateLimit == nil || *e.rateLimit == 0 {
		return 0, false
	}
	return *e.rateLimit, true
}

// Secret is the current signing secret.
func (e *Endpoint) Secret() Secret { return e.secret }

// Rotation is the previous secret and its expiry.
func (e *Endpoint) Rotation() Rotation { return e.rotation }

// FirstFailureAt is when the current run of failures began (zero if none).
func (e *Endpoint) FirstFailureAt() time.Time { return e.firstFailureAt }

// CreatedAt is the creation time.
func (e *Endpoint) CreatedAt() time.Time { return e.createdAt }

// UpdatedAt is the time of the last change.
func (e *Endpoint) UpdatedAt() time.Time { return e.updatedAt }

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// Wants reports whether an event on ch should be delivered here before the CEL filter is
// consulted: the endpoint is enabled, ch is among its channels (or it has none) and ch's
// event type is among its filterTypes (or it has none).
func (e *Endpoint) Wants(ch Channel) bool {
	if e.disabled {
		return false
	}
	if e.channels != nil && !slices.Contains(e.channels, ch) {
		return false
	}
	return e.filterTypes == nil || slices.Contains(e.filterTypes, ch.EventType())
}

// Apply changes the endpoint as p says: absent fields stay, explicit nulls clear, values
// replace (metadata is replaced as a whole, not merged). Either every field is applied or,
// on the first invalid one, none is. updatedAt moves to now when p sets anything.
// Re-enabling a disabled endpoint (disabled false or null) forgets its failure history, so
// the auto-disable clock starts afresh.
func (e *Endpoint) Apply(p Patch, now time.Time) error {
	if p.IsEmpty() {
		return nil
	}
	if err := e.apply(p); err != nil {
		return err
	}
	e.updatedAt = now.UTC()
	return nil
}

func (e *Endpoint) apply(p Patch) error {
	next := *e
	if p.URL.Set {
		if p.URL.Null {
			return fault.Invalid("url", "null", "cannot be cleared: an endpoint needs a destination")
		}
		if err := ValidateURLSyntax(p.URL.Value); err != nil {
			return err
		}
		next.url = p.URL.Value
	}
	if p.Channels.Set {
		next.channels = nil
		if !p.Channels.Null {
			cs, err := uniqueValid("channels", p.Channels.Value, func(c Channel) error {
				_, err := ParseChannel("channels", string(c))
				return err
			})
			if err != nil {
				return err
			}
			next.channels = cs
		}
	}
	if p.Description.Set {
		next.description = nil
		if !p.Description.Null {
			d := p.Description.Value
			if !utf8.ValidString(d) || utf8.RuneCountInString(d) > MaxDescriptionLen {
				return fault.Invalid("description", text.Cut(d), "must be text of at most 1024 characters")
			}
			next.description = &d
		}
	}
	if p.Disabled.Set {
		next.disabled = !p.Disabled.Null && p.Disabled.Value
		if e.disabled && !next.disabled {
			// Only a real re-enable restarts the clock; echoing disabled:false on an
			// enabled endpoint must not let a failing one dodge the auto-disable rule.
			next.firstFailureAt = time.Time{}
		}
	}
	if p.Filter.Set {
		next.filter = nil
		if !p.Filter.Null && strings.TrimSpace(p.Filter.Value) != "" {
			f := p.Filter.Value
			if !utf8.ValidString(f) || len(f) > MaxFilterLen {
				return fault.Invalid("filter", text.Cut(f), "must be text of at most 4096 bytes")
			}
			next.filter = &f
		}
	}
	if p.FilterTypes.Set {
		next.filterTypes = nil
		if !p.FilterTypes.Null {
			ts, err := uniqueValid("filterTypes", p.FilterTypes.Value, func(s string) error {
				_, err := ParseEventType("filterTypes", s)
				return err
			})
			if err != nil {
				return err
			}
			next.filterTypes = ts
		}
	}
	if p.Metadata.Set {
		next.metadata = map[string]string{}
		if !p.Metadata.Null {
			if err := ValidateMetadata(p.Metadata.Value); err != nil {
				return err
			}
			next.metadata = maps.Clone(p.Metadata.Value)
			if next.metadata == nil {
				next.metadata = map[string]string{}
			}
		}
	}
	if p.RateLimit.Set {
		next.rateLimit = nil
		if !p.RateLimit.Null {
			v := p.RateLimit.Value
			if v < 0 || v > math.MaxInt32 {
				return fault.Invalid("rateLimit", strconv.FormatInt(v, 10), "must be an integer between 0 and 2147483647")
			}
			r := int32(v)
			next.rateLimit = &r
		}
	}
	*e = next
	return nil
}

// uniqueValid checks a list's length, validates each item and drops repeats, keeping the
// first occurrence's position. An empty list means the same as null (no filter) and yields nil.
func uniqueValid[T comparable](param string, items []T, valid func(T) error) ([]T, error) {
	if len(items) > MaxListItems {
		return nil, fault.Invalid(param, strconv.Itoa(len(items))+" items", "must hold at most 10 items")
	}
	var out []T
	for _, it := range items {
		if err := valid(it); err != nil {
			return nil, err
		}
		if !slices.Contains(out, it) {
			out = append(out, it)
		}
	}
	return out, nil
}

// ValidateMetadata bounds the free-form map: at most 16 keys of 1–64 characters, values of at
// most 512 characters, 4096 bytes of keys and values together, all valid UTF-8.
func ValidateMetadata(m map[string]string) error {
	if len(m) > MaxMetadataKeys {
		return fault.Invalid("metadata", strconv.Itoa(len(m))+" keys", "must hold at most 16 keys")
	}
	total := 0
	for _, k := range slices.Sorted(maps.Keys(m)) { // sorted: the reported key must not depend on map order
		v := m[k]
		if k == "" || !utf8.ValidString(k) || utf8.RuneCountInString(k) > MaxMetadataKeyLen {
			return fault.Invalid("metadata", text.Cut(k), "keys must be 1 to 64 characters")
		}
		if !utf8.ValidString(v) || utf8.RuneCountInString(v) > MaxMetadataValueLen {
			return fault.Invalid("metadata."+k, text.Cut(v), "values must be at most 512 characters")
		}
		total += len(k) + len(v)
	}
	if total > MaxMetadataBytes {
		return fault.Invalid("metadata", strconv.Itoa(total)+" bytes", "keys and values must total at most 4096 bytes")
	}
	return nil
}

// RotateSecret makes next the signing secret; the old one keeps signing for overlap
// (RotationOverlap in production). A rotation during an overlap drops the oldest secret.
func (e *Endpoint) RotateSecret(next Secret, now time.Time, overlap time.Duration) {
	if !e.secret.IsZero() {
		e.rotation = Rotation{Previous: e.secret, Expires: now.Add(overlap).UTC()}
	}
	e.secret = next
	e.updatedAt = now.UTC()
}

// SigningSecrets are the secrets a delivery at now is signed with: the current one, then the
// previous one while its overlap lasts.
func (e *Endpoint) SigningSecrets(now time.Time) []Secret {
	out := []Secret{e.secret}
	if e.rotation.Active(now) {
		out = append(out, e.rotation.Previous)
	}
	return out
}

// Disable pauses deliveries (a 410 Gone answer or the auto-disable rule).
func (e *Endpoint) Disable(now time.Time) {
	if !e.disabled {
		e.disabled = true
		e.updatedAt = now.UTC()
	}
}

// RecordSuccess forgets the failure history: any 2xx resets the auto-disable clock.
func (e *Endpoint) RecordSuccess() { e.firstFailureAt = time.Time{} }

// RecordFailure notes that a message exhausted its retries at at. The first such failure
// starts the clock; when rule says the failures have lasted too long the endpoint is
// disabled and disabled is true (only on the call that disabled it).
func (e *Endpoint) RecordFailure(at time.Time, rule AutoDisable) (disabled bool) {
	if e.firstFailureAt.IsZero() {
		e.firstFailureAt = at.UTC()
	}
	if e.disabled || !rule.Due(e.firstFailureAt, at) {
		return false
	}
	e.Disable(at)
	return true
}

// CheckEndpointLimit refuses a new endpoint when the account already has current of them.
func CheckEndpointLimit(current int) error {
	if current < MaxEndpointsPerAccount {
		return nil
	}
	return &fault.Error{Kind: fault.KindConflict, Code: fault.CodeEndpointLimit,
		Message: "webhook endpoint limit reached",
		Details: map[string]any{"current_count": current, "max_allowed": MaxEndpointsPerAccount}}
}

// EndpointState is the full content of an endpoint, for storage adapters only: State reads it
// and RestoreEndpoint rebuilds the entity from a stored row without re-validating it.
type EndpointState struct {
	ID, AccountID, URL string
	Channels           []Channel
	Description        *string
	Disabled           bool
	Filter             *string
	FilterTypes        []string
	Metadata           map[string]string
	RateLimit          *int32
	Secret             Secret
	Rotation           Rotation
	FirstFailureAt     time.Time
	CreatedAt          time.Time
	UpdatedAt          time.Time
}

// State copies the endpoint out.
func (e *Endpoint) State() EndpointState {
	return EndpointState{ID: e.id, AccountID: e.accountID, URL: e.url, Channels: e.Channels(),
		Description: e.Description(), Disabled: e.disabled, Filter: e.Filter(), FilterTypes: e.FilterTypes(),
		Metadata: e.Metadata(), RateLimit: e.RateLimit(), Secret: e.secret, Rotation: e.rotation,
		FirstFailureAt: e.firstFailureAt, CreatedAt: e.createdAt, UpdatedAt: e.updatedAt}
}

// RestoreEndpoint rebuilds a stored endpoint.
func RestoreEndpoint(s EndpointState) *Endpoint {
	e := &Endpoint{id: s.ID, accountID: s.AccountID, url: s.URL, channels: slices.Clone(s.Channels),
		description: clonePtr(s.Description), disabled: s.Disabled, filter: clonePtr(s.Filter),
		filterTypes: slices.Clone(s.FilterTypes), metadata: maps.Clone(s.Metadata), rateLimit: clonePtr(s.RateLimit),
		secret: s.Secret, rotation: s.Rotation, firstFailureAt: s.FirstFailureAt, createdAt: s.CreatedAt, updatedAt: s.UpdatedAt}
	if e.metadata == nil {
		e.metadata = map[string]string{}
	}
	return e
}
