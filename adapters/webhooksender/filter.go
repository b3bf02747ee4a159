package webhooksender

import (
	"encoding/json"
	"sync"

	"cel.dev/cel-go/cel"

	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/webhook"
	"github.com/tokenscope/tokenscope/ports"
)

// costLimit bounds one evaluation, so a filter cannot burn the dispatcher's CPU.
const costLimit = 10_000

// Filter compiles and evaluates endpoint filters: CEL expressions over the variables
// channel (string), timestamp (int, Unix ms) and data (the event's data object), e.g.
// `data.symbol == "USDC"` or `channel == "sol.token.created" && data.decimals == 9`.
type Filter struct {
	env   *cel.Env
	mu    sync.Mutex
	progs map[string]cel.Program

	// The decoded data of the last event matched: the dispatcher matches one event against
	// every subscriber's filter in a row, and decodes it once.
	lastMu   sync.Mutex
	lastID   string
	lastData any
	lastOK   bool
}

var _ ports.FilterCompiler = (*Filter)(nil)

// NewFilter builds the CEL environment.
func NewFilter() (*Filter, error) {
	env, err := cel.NewEnv(
		cel.Variable("channel", cel.StringType),
		cel.Variable("timestamp", cel.IntType),
		cel.Variable("data", cel.DynType),
	)
	if err != nil {
		return nil, err
	}
	return &Filter{env: env, progs: map[string]cel.Program{}}, nil
}

func (f *Filter) program(expr string) (cel.Program, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p, ok := f.progs[expr]; ok {
		return p, nil
	}
	ast, iss := f.env.Compile(expr)
	if iss != nil && iss.Err() != nil {
		return nil, fault.Invalid("filter", expr, "is not a valid CEL expression: "+iss.Err().Error())
	}
	if t := ast.OutputType(); !t.IsExactType(cel.BoolType) && !t.IsExactType(cel.DynType) {
		return nil, fault.Invalid("filter", expr, "must evaluate to a boolean, not "+t.String())
	}
	p, err := f.env.Program(ast, cel.CostLimit(costLimit))
	if err != nil {
		return nil, fault.Invalid("filter", expr, "cannot be evaluated: "+err.Error())
	}
	if len(f.progs) > 4096 { // endpoints are few; this only stops unbounded growth
		clear(f.progs)
	}
	f.progs[expr] = p
	return p, nil
}

// Compile checks expr.
func (f *Filter) Compile(expr string) error {
	_, err := f.program(expr)
	return err
}

// decode returns the event's data as CEL reads it (shared, never modified: CEL does not
// write to its input).
func (f *Filter) decode(ev webhook.Event) (any, bool) {
	f.lastMu.Lock()
	defer f.lastMu.Unlock()
	if ev.ID != "" && ev.ID == f.lastID {
		return f.lastData, f.lastOK
	}
	var data any
	err := json.Unmarshal(ev.Data, &data)
	f.lastID, f.lastData, f.lastOK = ev.ID, data, err == nil
	return data, err == nil
}

// Match evaluates expr over the event; anything but a true result is no match.
func (f *Filter) Match(expr string, ev webhook.Event) bool {
	p, err := f.program(expr)
	if err != nil {
		return false
	}
	data, ok := f.decode(ev)
	if !ok {
		return false
	}
	out, _, err := p.Eval(map[string]any{"channel": string(ev.Channel), "timestamp": ev.Timestamp, "data": data})
	if err != nil {
		return false
	}
	b, ok := out.Value().(bool)
	return ok && b
}
