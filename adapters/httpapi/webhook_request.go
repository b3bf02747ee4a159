package httpapi

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/tokenscope/tokenscope/app/webhookendpoint"
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/webhook"
)

// patchMembers are the members an operation-13 body may carry besides endpointId; a create body
// takes them too (besides url and secret).
var patchMembers = []string{"url", "channels", "description", "disabled", "filter", "filterTypes", "metadata", "rateLimit"}

// decodePatch reads an operation-13 body. It tells an absent member from an explicit null,
// reports a member of the wrong JSON type under its own name, and refuses members it does not
// know (such as id, secret or createdAt) rather than silently ignoring an intended change.
// Values are only type-checked here; Endpoint.Apply enforces the rules.
func decodePatch(body []byte) (endpointID string, p webhook.Patch, err error) {
	obj, err := bodyObject(body)
	if err != nil {
		return "", webhook.Patch{}, err
	}
	raw, ok := obj["endpointId"]
	if !ok || isNull(raw) {
		return "", webhook.Patch{}, fault.Missing("endpointId")
	}
	if json.Unmarshal(raw, &endpointID) != nil {
		return "", webhook.Patch{}, fault.Invalid("endpointId", shownMember(raw), "must be a string")
	}
	if strings.TrimSpace(endpointID) == "" {
		return "", webhook.Patch{}, fault.Missing("endpointId")
	}
	delete(obj, "endpointId")
	p, err = patchOf(obj)
	return endpointID, p, err
}

// decodeCreate reads a create body: url (required), an optional secret, and every member of a
// PATCH but endpointId, which the server assigns.
func decodeCreate(body []byte) (webhookendpoint.Creation, error) {
	obj, err := bodyObject(body)
	if err != nil {
		return webhookendpoint.Creation{}, err
	}
	var c webhookendpoint.Creation
	raw, ok := obj["url"]
	if !ok || string(raw) == "null" {
		return webhookendpoint.Creation{}, fault.Missing("url")
	}
	if json.Unmarshal(raw, &c.URL) != nil {
		return webhookendpoint.Creation{}, fault.Invalid("url", string(raw), "must be a string")
	}
	if raw, ok := obj["secret"]; ok && string(raw) != "null" {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return webhookendpoint.Creation{}, fault.Invalid("secret", "…", "must be a string")
		}
		c.Secret = &s
	}
	delete(obj, "url")
	delete(obj, "secret")
	if _, ok := obj["endpointId"]; ok {
		return webhookendpoint.Creation{}, fault.Invalid("endpointId", "…", "is assigned by the server")
	}
	// A create error has always repeated a mistyped member in compact form (<, > and & escaped),
	// as json.Marshal writes it; kept so the 400s stay the same.
	for name, raw := range obj {
		obj[name], _ = json.Marshal(raw) // raw came out of json.Unmarshal: it is valid JSON
	}
	c.Fields, err = patchOf(obj)
	return c, err
}

// patchOf reads the optional members of a create or PATCH body (obj holds no others once the
// caller took its own out).
func patchOf(obj map[string]json.RawMessage) (p webhook.Patch, err error) {
	for name := range obj {
		if !slices.Contains(patchMembers, name) {
			return webhook.Patch{}, &fault.Error{Kind: fault.KindInvalid, Code: fault.CodeInvalidParameter,
				Message: "unknown field " + strconv.Quote(name) + "; allowed: endpointId, " + strings.Join(patchMembers, ", "),
				Param:   name, Allowed: append([]string{"endpointId"}, patchMembers...)}
		}
	}
	if p.URL, err = member[string](obj, "url", "must be a string"); err != nil {
		return webhook.Patch{}, err
	}
	if p.Channels, err = member[[]webhook.Channel](obj, "channels", "must be an array of strings"); err != nil {
		return webhook.Patch{}, err
	}
	if p.Description, err = member[string](obj, "description", "must be a string"); err != nil {
		return webhook.Patch{}, err
	}
	if p.Disabled, err = member[bool](obj, "disabled", "must be a boolean"); err != nil {
		return webhook.Patch{}, err
	}
	if p.Filter, err = member[string](obj, "filter", "must be a string"); err != nil {
		return webhook.Patch{}, err
	}
	if p.FilterTypes, err = member[[]string](obj, "filterTypes", "must be an array of strings"); err != nil {
		return webhook.Patch{}, err
	}
	if p.Metadata, err = member[map[string]string](obj, "metadata", "must be an object of string values"); err != nil {
		return webhook.Patch{}, err
	}
	// rateLimit is read as an int64 so that an out-of-range number reaches Apply and is
	// reported as such.
	if raw, ok := obj["rateLimit"]; ok {
		if isNull(raw) {
			p.RateLimit = webhook.Null[int64]()
		} else {
			n, perr := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
			if perr != nil {
				return webhook.Patch{}, fault.Invalid("rateLimit", shownMember(raw), "must be an integer between 0 and 2147483647")
			}
			p.RateLimit = webhook.Value(n)
		}
	}
	return p, nil
}

// member reads one optional, nullable member: absent, null, or a value of type T.
func member[T any](obj map[string]json.RawMessage, name, reason string) (webhook.Field[T], error) {
	raw, ok := obj[name]
	if !ok {
		return webhook.Field[T]{}, nil
	}
	if isNull(raw) {
		return webhook.Null[T](), nil
	}
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		return webhook.Field[T]{}, fault.Invalid(name, shownMember(raw), reason)
	}
	return webhook.Value(v), nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }
