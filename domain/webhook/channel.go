// Package webhook is the pure model of webhook endpoints and deliveries: the endpoint entity
// and its PATCH (operation 13) with absent/null/value fields, the channel and event-type
// vocabulary, Standard Webhooks / Svix signing and verification with secret rotation, the
// delivered payload, the retry schedule, attempt outcomes and the auto-disable rule.
// It may import only the standard library and other domain packages. Sending, storing,
// clock and randomness are the caller's: every function takes the time and random bytes
// it needs.
//
// The endpoint's filter is a CEL expression over the event data. Compiling it needs cel-go,
// which the domain may not import, so the domain keeps it as a string and the application
// layer checks it before calling Endpoint.Apply or NewEndpoint, through a port shaped like
//
//	type FilterCompiler interface {
//		// Compile reports a fault.Invalid("filter", expr, reason) for a bad expression.
//		Compile(expr string) error
//		// Match evaluates expr over the event's decoded data.
//		Match(expr string, data map[string]any) (bool, error)
//	}
package webhook

import "github.com/tokenscope/tokenscope/domain/fault"

// Channel is an event channel an endpoint can subscribe to.
type Channel string

const (
	TokenMigrated Channel = "sol.token.migrated"
	TokenCreated  Channel = "sol.token.created"
)

// Channels lists the channels in the spec's order.
var Channels = []Channel{TokenMigrated, TokenCreated}

// EventTypes is the vocabulary of filterTypes. In the Svix model the API follows, an event has
// a type and may carry channels; here every event's type is the name of its channel, so the
// two vocabularies coincide: "sol.token.migrated" and "sol.token.created".
var EventTypes = []string{string(TokenMigrated), string(TokenCreated)}

// ParseChannel accepts exactly one of Channels; the error names param.
func ParseChannel(param, s string) (Channel, error) {
	for _, c := range Channels {
		if string(c) == s {
			return c, nil
		}
	}
	return "", fault.InvalidParam(param, s, EventTypes...)
}

// ParseEventType accepts exactly one of EventTypes; the error names param.
func ParseEventType(param, s string) (string, error) {
	c, err := ParseChannel(param, s)
	return string(c), err
}

// EventType is the type of the events published on c.
func (c Channel) EventType() string { return string(c) }
