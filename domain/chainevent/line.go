package chainevent

import (
	"fmt"

	"github.com/tokenscope/tokenscope/domain/fault"
)

// LineError wraps err, found at a line of an event stream (or a position in a list of events),
// into an Invalid fault naming the line and field. The ingest codec and the use case report every
// bad event with it, so a client sees one error shape whichever caught the problem.
func LineError(line int, field string, err error) *fault.Error {
	reason := err.Error()
	out := &fault.Error{Kind: fault.KindInvalid, Code: fault.CodeInvalidParameter, Param: field, Err: nil,
		Details: map[string]any{"line": line}}
	if fe, ok := fault.As(err); ok {
		reason = fe.Message
		if field == "" {
			field = fe.Param
		}
		out.Code, out.Param, out.Value, out.Allowed = fe.Code, field, fe.Value, fe.Allowed
	}
	if field != "" {
		out.Details["field"] = field
		out.Message = fmt.Sprintf("line %d: field %q: %s", line, field, reason)
	} else {
		out.Message = fmt.Sprintf("line %d: %s", line, reason)
	}
	return out
}
