package webhook

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/tokenscope/tokenscope/domain/fault"
)

// Field is one optional, nullable member of a PATCH body. The zero value is "absent";
// Set with Null is an explicit null; Set without Null carries Value.
type Field[T any] struct {
	Set   bool
	Null  bool
	Value T
}

// Value is a present field holding v.
func Value[T any](v T) Field[T] { return Field[T]{Set: true, Value: v} }

// Null is a field sent as JSON null.
func Null[T any]() Field[T] { return Field[T]{Set: true, Null: true} }

// Absent reports whether the field was not sent.
func (f Field[T]) Absent() bool { return !f.Set }

// Get returns the value and whether there is one (false for absent and null).
func (f Field[T]) Get() (T, bool) { return f.Value, f.Set && !f.Null }

// Patch is a partial update of an endpoint (operation 13). RateLimit is wider than int32 so
// that an out-of-range number reaches Apply and is reported as such.
type Patch struct {
	URL         Field[string]
	Channels    Field[[]Channel]
	Description Field[string]
	Disabled    Field[bool]
	Filter      Field[string]
	FilterTypes Field[[]string]
	Metadata    Field[map[string]string]
	RateLimit   Field[int64]
}

// IsEmpty reports whether the patch changes nothing.
func (p Patch) IsEmpty() bool {
	return !p.URL.Set && !p.Channels.Set && !p.Description.Set && !p.Disabled.Set && !p.Filter.Set &&
		!p.FilterTypes.Set && !p.Metadata.Set && !p.RateLimit.Set
}

// PatchFields are the members DecodePatch accepts besides endpointId.
var PatchFields = []string{"url", "channels", "description", "disabled", "filter", "filterTypes", "metadata", "rateLimit"}

// DecodePatch reads an operation-13 body. It tells an absent member from an explicit null,
// reports a member of the wrong JSON type under its own name, and refuses members it does not
// know (such as id, secret or createdAt) rather than silently ignoring an intended change.
// Values are only type-checked here; Endpoint.Apply enforces the rules.
func DecodePatch(body []byte) (endpointID string, p Patch, err error) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) != nil || obj == nil {
		return "", Patch{}, &fault.Error{Kind: fault.KindInvalid, Code: fault.CodeValidation,
			Message: "request body must be a JSON object"}
	}
	raw, ok := obj["endpointId"]
	if !ok || isNull(raw) {
		return "", Patch{}, fault.Missing("endpointId")
	}
	if json.Unmarshal(raw, &endpointID) != nil {
		return "", Patch{}, fault.Invalid("endpointId", short(raw), "must be a string")
	}
	if strings.TrimSpace(endpointID) == "" {
		return "", Patch{}, fault.Missing("endpointId")
	}
	for name := range obj {
		if name != "endpointId" && !containsString(PatchFields, name) {
			return "", Patch{}, &fault.Error{Kind: fault.KindInvalid, Code: fault.CodeInvalidParameter,
				Message: "unknown field " + strconv.Quote(name) + "; allowed: endpointId, " + strings.Join(PatchFields, ", "),
				Param:   name, Allowed: append([]string{"endpointId"}, PatchFields...)}
		}
	}
	if p.URL, err = decodeField[string](obj, "url", "must be a string"); err != nil {
		return "", Patch{}, err
	}
	if p.Channels, err = decodeField[[]Channel](obj, "channels", "must be an array of strings"); err != nil {
		return "", Patch{}, err
	}
	if p.Description, err = decodeField[string](obj, "description", "must be a string"); err != nil {
		return "", Patch{}, err
	}
	if p.Disabled, err = decodeField[bool](obj, "disabled", "must be a boolean"); err != nil {
		return "", Patch{}, err
	}
	if p.Filter, err = decodeField[string](obj, "filter", "must be a string"); err != nil {
		return "", Patch{}, err
	}
	if p.FilterTypes, err = decodeField[[]string](obj, "filterTypes", "must be an array of strings"); err != nil {
		return "", Patch{}, err
	}
	if p.Metadata, err = decodeField[map[string]string](obj, "metadata", "must be an object of string values"); err != nil {
		return "", Patch{}, err
	}
	if raw, ok := obj["rateLimit"]; ok {
		if isNull(raw) {
			p.RateLimit = Null[int64]()
		} else {
			n, perr := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
			if perr != nil {
				return "", Patch{}, fault.Invalid("rateLimit", short(raw), "must be an integer between 0 and 2147483647")
			}
			p.RateLimit = Value(n)
		}
	}
	return endpointID, p, nil
}

func decodeField[T any](obj map[string]json.RawMessage, name, reason string) (Field[T], error) {
	raw, ok := obj[name]
	if !ok {
		return Field[T]{}, nil
	}
	if isNull(raw) {
		return Null[T](), nil
	}
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		return Field[T]{}, fault.Invalid(name, short(raw), reason)
	}
	return Value(v), nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

func short(raw json.RawMessage) string { return truncate(string(raw)) }

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
