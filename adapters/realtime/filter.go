package realtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"cel.dev/cel-go/cel"
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
	"github.com/centrifugal/centrifuge"
)

// The public client sends its filter as a `filter` string inside the subscribe command (a
// field of its protocol fork, reference section 3). The library's decoder skips keys it does not
// know, so the filter never reaches OnSubscribe: the tap (filterTap, on the connection itself)
// reads it from the frames the client sends, before the library decodes them, and keeps it per
// connection until OnSubscribe takes it. OnSubscribe then compiles it into the library's
// server tags filter, which the hub applies to each publication's tags (the message's
// abbreviated keys, flattened: app/stream).

// filters are the filters a connection's subscribe commands carried, by channel.
type filters struct {
	mu sync.Mutex
	m  map[string]string
}

type filtersKey struct{}

func filtersOf(ctx context.Context) *filters {
	f, _ := ctx.Value(filtersKey{}).(*filters)
	return f
}

func (f *filters) put(channel, expr string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[string]string{}
	}
	if len(f.m) < 1000 { // more than the channel limit is not a real client
		f.m[channel] = expr
	}
}

func (f *filters) take(channel string) string {
	if f == nil {
		return ""
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	expr := f.m[channel]
	delete(f.m, channel)
	return expr
}

// command reads one JSON command line for a subscribe with a filter.
func (f *filters) command(line []byte) {
	if !strings.Contains(string(line), `"filter"`) {
		return
	}
	var cmd struct {
		Subscribe *struct {
			Channel string `json:"channel"`
			Filter  string `json:"filter"`
		} `json:"subscribe"`
	}
	if json.Unmarshal(line, &cmd) == nil && cmd.Subscribe != nil && cmd.Subscribe.Filter != "" {
		f.put(cmd.Subscribe.Channel, cmd.Subscribe.Filter)
	}
}

// maxFilterLen bounds an expression.
const maxFilterLen = 2048

var celEnv = func() *cel.Env {
	env, err := cel.NewEnv()
	if err != nil {
		panic(err)
	}
	return env
}()

// CompileFilter turns a filter expression into the library's tags filter. The expression is the
// CEL subset a tags filter can express: comparisons (==, !=, <, <=, >, >=) of a field with a
// literal, `field in [literals]`, `field.startsWith/endsWith/contains("text")`,
// `has(field)`, combined with &&, || and !. A field is `meta.<key>` (the SDK's rewriting), or
// a bare abbreviated key; nested keys are dotted (`meta.sm.tw`). Numbers compare numerically.
func CompileFilter(expr string) (*centrifuge.FilterNode, error) {
	if len(expr) > maxFilterLen {
		return nil, fmt.Errorf("longer than %d characters", maxFilterLen)
	}
	a, iss := celEnv.Parse(expr)
	if iss != nil && iss.Err() != nil {
		return nil, fmt.Errorf("not a CEL expression: %v", iss.Err())
	}
	return node(a.NativeRep().Expr())
}

var errUnsupported = errors.New("only comparisons of a field with a literal, in, startsWith, endsWith, contains and has, combined with &&, || and !, are supported")

var flipped = map[string]string{"_<_": "_>_", "_<=_": "_>=_", "_>_": "_<_", "_>=_": "_<=_", "_==_": "_==_", "_!=_": "_!=_"}

var numericCmp = map[string]string{"_<_": "lt", "_<=_": "lte", "_>_": "gt", "_>=_": "gte"}

func node(e celast.Expr) (*centrifuge.FilterNode, error) {
	switch e.Kind() {
	case celast.SelectKind:
		if sel := e.AsSelect(); sel.IsTestOnly() { // has(field)
			key, ok := fieldKey(e)
			if !ok {
				return nil, errUnsupported
			}
			return &centrifuge.FilterNode{Key: key, Cmp: "ex"}, nil
		}
	case celast.CallKind:
	default:
		return nil, errUnsupported
	}
	call := e.AsCall()
	fn, args := call.FunctionName(), call.Args()
	switch fn {
	case "_&&_", "_||_":
		op := map[string]string{"_&&_": "and", "_||_": "or"}[fn]
		out := &centrifuge.FilterNode{Op: op}
		for _, a := range args {
			n, err := node(a)
			if err != nil {
				return nil, err
			}
			if n.Op == op {
				out.Nodes = append(out.Nodes, n.Nodes...)
			} else {
				out.Nodes = append(out.Nodes, n)
			}
		}
		return out, nil
	case "!_":
		n, err := node(args[0])
		if err != nil {
			return nil, err
		}
		return &centrifuge.FilterNode{Op: "not", Nodes: []*centrifuge.FilterNode{n}}, nil
	case "startsWith", "endsWith", "contains":
		if !call.IsMemberFunction() || len(args) != 1 {
			return nil, errUnsupported
		}
		key, ok := fieldKey(call.Target())
		lit, isStr, ok2 := literal(args[0])
		if !ok || !ok2 || !isStr {
			return nil, errUnsupported
		}
		return &centrifuge.FilterNode{Key: key, Cmp: map[string]string{"startsWith": "sw", "endsWith": "ew", "contains": "ct"}[fn], Val: lit}, nil
	case "@in":
		key, ok := fieldKey(args[0])
		if !ok || args[1].Kind() != celast.ListKind {
			return nil, errUnsupported
		}
		var vals []string
		for _, el := range args[1].AsList().Elements() {
			v, _, ok := literal(el)
			if !ok {
				return nil, errUnsupported
			}
			vals = append(vals, v)
		}
		if len(vals) == 0 {
			return nil, errors.New("in needs at least one value")
		}
		return &centrifuge.FilterNode{Key: key, Cmp: "in", Vals: vals}, nil
	}
	if _, ok := flipped[fn]; !ok || len(args) != 2 {
		return nil, errUnsupported
	}
	key, ok := fieldKey(args[0])
	lit, isStr, okLit := literal(args[1])
	if !ok || !okLit {
		key, ok = fieldKey(args[1])
		lit, isStr, okLit = literal(args[0])
		fn = flipped[fn]
		if !ok || !okLit {
			return nil, errUnsupported
		}
	}
	if cmp, ok := numericCmp[fn]; ok {
		if isStr {
			return nil, fmt.Errorf("%s compares numbers, not text", strings.Trim(fn, "_"))
		}
		return &centrifuge.FilterNode{Key: key, Cmp: cmp, Val: lit}, nil
	}
	var eq *centrifuge.FilterNode
	if isStr {
		eq = &centrifuge.FilterNode{Key: key, Cmp: "eq", Val: lit}
	} else { // numeric equality: 1000 matches "1000.0"
		eq = &centrifuge.FilterNode{Op: "and", Nodes: []*centrifuge.FilterNode{{Key: key, Cmp: "gte", Val: lit}, {Key: key, Cmp: "lte", Val: lit}}}
	}
	if fn == "_!=_" {
		return &centrifuge.FilterNode{Op: "not", Nodes: []*centrifuge.FilterNode{eq}}, nil
	}
	return eq, nil
}

// fieldKey reads `meta.a.b` (or a bare `a.b`) as the tag key `a.b`.
func fieldKey(e celast.Expr) (string, bool) {
	var parts []string
	for {
		switch e.Kind() {
		case celast.SelectKind:
			parts = append([]string{e.AsSelect().FieldName()}, parts...)
			e = e.AsSelect().Operand()
			continue
		case celast.IdentKind:
			if name := e.AsIdent(); name != "meta" || len(parts) == 0 {
				parts = append([]string{name}, parts...)
			}
			return strings.Join(parts, "."), true
		}
		return "", false
	}
}

// literal renders a literal as tag text; isStr tells text from numbers and booleans.
func literal(e celast.Expr) (text string, isStr, ok bool) {
	if e.Kind() != celast.LiteralKind {
		return "", false, false
	}
	switch v := e.AsLiteral().(type) {
	case types.String:
		return string(v), true, true
	case types.Int:
		return strconv.FormatInt(int64(v), 10), false, true
	case types.Uint:
		return strconv.FormatUint(uint64(v), 10), false, true
	case types.Double:
		return strconv.FormatFloat(float64(v), 'f', -1, 64), false, true
	case types.Bool:
		return strconv.FormatBool(bool(v)), true, true
	}
	return "", false, false
}
