package domain_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/tokenscope/tokenscope/"

// rule says which imports a layer's non-test code may not use.
type rule struct {
	layer  string // folder below the repository root
	denied func(imp string) bool
	why    string
}

func stdlib(imp string) bool { return !strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") }

// doesIO reports an import that reaches a reader, writer, file, network or context: that is an
// adapter's business, the domain takes values.
func doesIO(imp string) bool {
	switch imp {
	case "bufio", "context", "database/sql", "io", "io/fs", "log", "log/slog", "net", "net/http", "os", "os/exec":
		return true
	}
	return false
}

var rules = []rule{
	{"domain", func(imp string) bool {
		return !(stdlib(imp) || imp == "github.com/shopspring/decimal" || strings.HasPrefix(imp, module+"domain")) || doesIO(imp)
	}, "domain/ may import only the standard library (no I/O, no context), shopspring/decimal and domain/"},
	// The events' wire format is adapters/ndjson; the domain keeps the events and their rules.
	{"domain/chainevent", func(imp string) bool { return imp == "encoding/json" },
		"domain/chainevent may not import encoding/json: decoding and encoding events is adapters/ndjson's"},
	{"ports", func(imp string) bool {
		return !(stdlib(imp) || imp == "github.com/shopspring/decimal" || strings.HasPrefix(imp, module+"domain"))
	}, "ports/ may import only the standard library, shopspring/decimal and domain/"},
	{"app", adapterOrDriver, "app/ may not import an adapter, pgx or Fiber"},
	{"workflows", func(imp string) bool {
		return adapterOrDriver(imp) || strings.HasPrefix(imp, module+"app")
	}, "workflows/ may import domain, ports and the Temporal SDK only"},
}

func adapterOrDriver(imp string) bool {
	return strings.HasPrefix(imp, module+"adapters") ||
		strings.HasPrefix(imp, "github.com/jackc/") ||
		strings.HasPrefix(imp, "github.com/gofiber/") ||
		strings.HasPrefix(imp, "github.com/valyala/") ||
		strings.HasPrefix(imp, "go.temporal.io/server") ||
		strings.HasPrefix(imp, module+"cmd")
}

// TestLayerImports fails the build when a layer imports what the dependency rule forbids.
// ports/portsmock (generated gomock doubles) may also import go.uber.org/mock.
func TestLayerImports(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, r := range rules {
		dir := filepath.Join(root, r.layer)
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			mock := strings.HasPrefix(rel, filepath.Join("ports", "portsmock"))
			for _, spec := range f.Imports {
				imp, _ := strconv.Unquote(spec.Path.Value)
				if mock && (imp == "go.uber.org/mock/gomock" || imp == module+"ports") {
					continue
				}
				if r.denied(imp) {
					t.Errorf("%s imports %s: %s", rel, imp, r.why)
				}
			}
			checked++
			return nil
		})
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	if checked < 10 {
		t.Fatalf("checked only %d files: is the test looking at the right folder?", checked)
	}
}

// TestRuleCatchesForbiddenImports proves the predicates reject what they must, so the walk
// above cannot pass vacuously.
func TestRuleCatchesForbiddenImports(t *testing.T) {
	forbidden := map[string][]string{
		"domain":            {"github.com/jackc/pgx/v5", "github.com/gofiber/fiber/v2", "go.temporal.io/sdk/workflow", module + "ports", module + "adapters/postgres", "io", "bufio", "context", "os"},
		"domain/chainevent": {"encoding/json"},
		"ports":             {"github.com/jackc/pgx/v5", module + "adapters/httpapi"},
		"app":               {"github.com/jackc/pgx/v5/pgxpool", "github.com/gofiber/fiber/v2", module + "adapters/postgres"},
		"workflows":         {"github.com/jackc/pgx/v5", "github.com/gofiber/fiber/v2", module + "adapters/temporal", module + "app/ingest"},
	}
	allowed := map[string][]string{
		"domain":            {"time", "encoding/json", "net/url", "net/netip", "github.com/shopspring/decimal", module + "domain/fault"},
		"domain/chainevent": {"fmt", module + "domain/fault"},
		"app":               {"context", module + "ports", module + "domain/token", "go.temporal.io/sdk/client"},
		"workflows":         {"go.temporal.io/sdk/workflow", module + "ports", module + "domain/job"},
	}
	for _, r := range rules {
		for _, imp := range forbidden[r.layer] {
			if !r.denied(imp) {
				t.Errorf("rule for %s lets %s through", r.layer, imp)
			}
		}
		for _, imp := range allowed[r.layer] {
			if r.denied(imp) {
				t.Errorf("rule for %s wrongly rejects %s", r.layer, imp)
			}
		}
	}
}
