// Package fault defines tokenscope's single error type. Every layer returns *fault.Error (or
// wraps one) for anything a caller could have done differently; the HTTP adapter maps the Kind
// to a status code in one place. It may import only the standard library.
package fault

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Kind classifies an error for the outside world.
type Kind int

const (
	// KindInternal is the zero value: an unexpected fault that is not the caller's doing.
	KindInternal Kind = iota
	KindInvalid
	KindNotFound
	KindConflict
	KindUnauthorized
	KindForbidden
	KindUnavailable
	KindTooLarge
	KindRateLimited
)

func (k Kind) String() string {
	switch k {
	case KindInvalid:
		return "invalid"
	case KindNotFound:
		return "not_found"
	case KindConflict:
		return "conflict"
	case KindUnauthorized:
		return "unauthorized"
	case KindForbidden:
		return "forbidden"
	case KindUnavailable:
		return "unavailable"
	case KindTooLarge:
		return "too_large"
	case KindRateLimited:
		return "rate_limited"
	default:
		return "internal"
	}
}

// Business codes, compatible with the public API's documented error codes.
const (
	CodeValidation        = 40001
	CodeInvalidParameter  = 40002
	CodeMissingParameter  = 40004
	CodeInvalidCursor     = 40027
	CodeAddressesExceeded = 40028
	CodeInvalidTimestamp  = 40031
	CodeInvalidNumber     = 40033
	CodeInsufficientScope = 40301
	CodeEndpointLimit     = 52001
)

// Error is the one error type of the domain.
type Error struct {
	Kind    Kind
	Code    int    // business code; 0 means "the HTTP status"
	Message string // human readable, safe to show to the caller
	// Param, Value and Allowed name the offending input when Kind is KindInvalid.
	Param   string
	Value   string
	Allowed []string
	// Details carries extra machine-readable facts (merged into the error body).
	Details map[string]any
	// RetryAfter is a hint for KindUnavailable and KindRateLimited.
	RetryAfter time.Duration
	Err        error
}

func (e *Error) Error() string {
	if e.Err != nil && e.Message == "" {
		return e.Err.Error()
	}
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// As returns the *Error in err's chain, if any.
func As(err error) (*Error, bool) {
	var fe *Error
	if errors.As(err, &fe) {
		return fe, true
	}
	return nil, false
}

// KindOf returns the Kind of err, KindInternal when err carries none.
func KindOf(err error) Kind {
	if fe, ok := As(err); ok {
		return fe.Kind
	}
	return KindInternal
}

// Is reports whether err carries a *Error of kind k.
func Is(err error, k Kind) bool { return err != nil && KindOf(err) == k }

// InvalidParam reports a parameter whose value is not one of the allowed ones.
func InvalidParam(param, value string, allowed ...string) *Error {
	msg := fmt.Sprintf("invalid value %q for parameter %q", value, param)
	if len(allowed) > 0 {
		msg += "; allowed: " + strings.Join(allowed, ", ")
	}
	return &Error{Kind: KindInvalid, Code: CodeInvalidParameter, Message: msg, Param: param, Value: value, Allowed: allowed}
}

// Invalid reports a parameter that breaks a rule described by reason, e.g. "must be between 1 and 100".
func Invalid(param, value, reason string) *Error {
	return &Error{Kind: KindInvalid, Code: CodeInvalidParameter,
		Message: fmt.Sprintf("invalid value %q for parameter %q: %s", value, param, reason), Param: param, Value: value}
}

// Missing reports a required parameter that was not sent.
func Missing(param string) *Error {
	return &Error{Kind: KindInvalid, Code: CodeMissingParameter,
		Message: fmt.Sprintf("missing required parameter %q", param), Param: param}
}

// WithCode returns e with its business code replaced.
func (e *Error) WithCode(code int) *Error { e.Code = code; return e }

// NotFound reports an unknown resource (or one owned by someone else).
func NotFound(what, id string) *Error {
	return &Error{Kind: KindNotFound, Message: fmt.Sprintf("%s %q not found", what, id)}
}

// Conflict reports a write that collides with existing state.
func Conflict(msg string) *Error { return &Error{Kind: KindConflict, Message: msg} }

// Unauthorized reports missing or unknown credentials.
func Unauthorized(msg string) *Error { return &Error{Kind: KindUnauthorized, Message: msg} }

// Forbidden reports credentials that lack a scope.
func Forbidden(msg string) *Error {
	return &Error{Kind: KindForbidden, Code: CodeInsufficientScope, Message: msg}
}

// Unavailable reports a dependency that is down; the caller may retry after the hint.
func Unavailable(msg string, retryAfter time.Duration, err error) *Error {
	return &Error{Kind: KindUnavailable, Message: msg, RetryAfter: retryAfter, Err: err}
}

// RateLimited reports a request refused because the caller already uses its share; it may
// retry after the hint.
func RateLimited(msg string, retryAfter time.Duration) *Error {
	return &Error{Kind: KindRateLimited, Message: msg, RetryAfter: retryAfter}
}

// TooLarge reports a request body or list above its limit.
func TooLarge(msg string) *Error { return &Error{Kind: KindTooLarge, Message: msg} }
