package httpapi

import (
	"encoding/json"

	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/kyt"
)

// decodeWithdrawal reads an operation-10 body, every member a JSON string (or null, or absent,
// for the optional ones). A member of the wrong JSON type is reported under its own name;
// unknown members are ignored, as the public API does. kyt.NewWithdrawal validates the values.
func decodeWithdrawal(body []byte) (kyt.WithdrawalRequest, error) {
	obj, err := bodyObject(body)
	if err != nil {
		return kyt.WithdrawalRequest{}, err
	}
	var r kyt.WithdrawalRequest
	var network string
	for _, f := range []struct {
		name string
		dst  *string
	}{{"address", &r.Address}, {"asset", &r.Asset}, {"assetAmount", &r.AssetAmount},
		{"attemptTimestamp", &r.AttemptTimestamp}, {"network", &network}} {
		p, err := stringMember(obj, f.name)
		if err != nil {
			return kyt.WithdrawalRequest{}, err
		}
		if p != nil {
			*f.dst = *p
		}
	}
	r.Network = kyt.Network(network)
	for _, f := range []struct {
		name string
		dst  **string
	}{{"assetDenomination", &r.AssetDenomination}, {"assetId", &r.AssetID},
		{"assetPrice", &r.AssetPrice}, {"memo", &r.Memo}} {
		if *f.dst, err = stringMember(obj, f.name); err != nil {
			return kyt.WithdrawalRequest{}, err
		}
	}
	return r, nil
}

// decodeTransfer reads an operation-11 body (see decodeWithdrawal); kyt.NewTransfer validates it.
func decodeTransfer(body []byte) (kyt.TransferRequest, error) {
	obj, err := bodyObject(body)
	if err != nil {
		return kyt.TransferRequest{}, err
	}
	var v [4]string
	for i, name := range []string{"asset", "direction", "network", "transferReference"} {
		p, err := stringMember(obj, name)
		if err != nil {
			return kyt.TransferRequest{}, err
		}
		if p != nil {
			v[i] = *p
		}
	}
	return kyt.TransferRequest{Asset: v[0], Direction: kyt.Direction(v[1]), Network: kyt.Network(v[2]), TransferReference: v[3]}, nil
}

// stringMember reads an optional string member: absent or null give nil.
func stringMember(obj map[string]json.RawMessage, name string) (*string, error) {
	raw, ok := obj[name]
	if !ok || string(raw) == "null" {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fault.Invalid(name, shownMember(raw), "must be a JSON string")
	}
	return &s, nil
}
