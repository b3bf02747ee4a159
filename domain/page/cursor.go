package page

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"hash/crc32"
	"strconv"

	"github.com/tokenscope/tokenscope/domain/fault"
)

const (
	cursorVersion = 1
	// maxCursorLen bounds the work a hostile cursor can cause; real ones are a few hundred bytes.
	maxCursorLen = 4096
)

// envelope is the JSON inside a cursor. The kind stops a trade cursor from being replayed
// against the snapshot list; the checksum catches hand-edited cursors. It is not a signature:
// a cursor only positions a read the caller is already allowed to make.
type envelope struct {
	V int      `json:"v"`
	K string   `json:"k"`
	P []string `json:"p"`
	C uint32   `json:"c"`
}

func checksum(kind string, values []string) uint32 {
	h := crc32.NewIEEE()
	h.Write([]byte(kind))
	for _, v := range values {
		// The length prefix keeps ["ab","c"] and ["a","bc"] apart.
		h.Write([]byte{0})
		h.Write([]byte(strconv.Itoa(len(v))))
		h.Write([]byte{0})
		h.Write([]byte(v))
	}
	return h.Sum32()
}

// Encode renders the keyset values of a row as an opaque, URL-safe cursor of the given kind
// (one kind per list, e.g. "trade").
func Encode(kind string, values ...string) string {
	if values == nil {
		values = []string{}
	}
	b, err := json.Marshal(envelope{V: cursorVersion, K: kind, P: values, C: checksum(kind, values)})
	if err != nil {
		// Marshalling strings cannot fail; a panic here means the envelope type was broken.
		panic("page: encode cursor: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// Decode returns the keyset values of a cursor made by Encode with the same kind. Anything else
// (not base64, not our JSON, another version or kind, edited values, no values) is an Invalid
// error on parameter "cursor" with code fault.CodeInvalidCursor.
func Decode(kind, s string) ([]string, error) {
	bad := func(reason string) error {
		shown := s
		if len(shown) > 64 {
			shown = shown[:64] + "…"
		}
		return fault.Invalid("cursor", shown, reason).WithCode(fault.CodeInvalidCursor)
	}
	if len(s) > maxCursorLen {
		return nil, bad("cursor too long")
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, bad("not a cursor issued by this service")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var e envelope
	if err := dec.Decode(&e); err != nil || dec.More() {
		return nil, bad("not a cursor issued by this service")
	}
	switch {
	case e.V != cursorVersion:
		return nil, bad("cursor version not supported")
	case e.K != kind:
		return nil, bad("cursor belongs to another list")
	case len(e.P) == 0:
		return nil, bad("cursor carries no position")
	case e.C != checksum(e.K, e.P):
		return nil, bad("cursor was altered")
	}
	return e.P, nil
}
