package ndjson

import (
	"encoding/json"

	"github.com/tokenscope/tokenscope/domain/chainevent"
)

// Functions only the tests use: nothing reachable from the binaries calls them (make deadcode).

// Line is the number (1-based) of the line the last event came from.
func (d *Decoder) Line() int { return d.line }

// UnmarshalGeneral is Unmarshal without its one-pass path for lines that begin with "type": what
// every line went through before that path existed.
func UnmarshalGeneral(b []byte) (chainevent.Event, string, error) {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, jsonField(err), jsonReason(err)
	}
	return unmarshalAs(b, head.Type)
}
