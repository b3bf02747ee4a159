//go:build !cel

package webhooksender

import (
	"github.com/tokenscope/tokenscope/domain/fault"
	"github.com/tokenscope/tokenscope/domain/webhook"
	"github.com/tokenscope/tokenscope/ports"
)

// Filter is the stand-in used until go.mod carries cel-go's parser dependency
// (github.com/antlr4-go/antlr/v4 v4.13.1): cel-go cannot be compiled without it, so this
// build refuses every filter at write time rather than storing one it could not evaluate.
// Build with -tags cel (and that module) for the real evaluator in filter.go.
type Filter struct{}

var _ ports.FilterCompiler = (*Filter)(nil)

// NewFilter builds the stand-in.
func NewFilter() (*Filter, error) { return &Filter{}, nil }

// Compile refuses every expression.
func (f *Filter) Compile(expr string) error {
	return fault.Invalid("filter", expr, "CEL filters are not available in this build")
}

// Match never matches: no endpoint can hold a filter in this build.
func (f *Filter) Match(string, webhook.Event) bool { return false }
