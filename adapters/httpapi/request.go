package httpapi

import (
	"encoding/json"

	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/text"
)

// Request bodies are decoded here, in the adapter: their JSON members become the domain's typed
// inputs (kyt.WithdrawalRequest, webhook.Patch, …), and a member of the wrong JSON type is a
// 400 naming it. What the values may be is the domain's to say (Validate, Apply); the member
// names, which errors report as the parameter, are the API's and do not change.

// bodyObject reads a body that must be a JSON object into its members.
func bodyObject(body []byte) (map[string]json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) != nil || obj == nil {
		return nil, &fault.Error{Kind: fault.KindInvalid, Code: fault.CodeValidation,
			Message: "request body must be a JSON object"}
	}
	return obj, nil
}

// shownMember is a mistyped member as an error repeats it (webhook and KYT bodies alike): at
// most 64 bytes, cut on a rune boundary.
func shownMember(raw json.RawMessage) string { return text.Cut(string(raw)) }
