package config_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// layoutEntry is one directory README.md's layout names, with the text beside it.
type layoutEntry struct {
	path, about string
}

// readmeLayout reads the code block under "## Layout and the dependency rule": a line whose
// first word ends in "/" and starts at an even indent below the description column names a
// directory, nested under the entry two spaces to its left; deeper-indented lines continue the
// description above them.
func readmeLayout(t *testing.T) []layoutEntry {
	t.Helper()
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	_, after, ok := strings.Cut(string(readme), "## Layout and the dependency rule\n\n```\n")
	require.True(t, ok, "README.md has no layout block")
	block, _, ok := strings.Cut(after, "```\n")
	require.True(t, ok, "README.md's layout block is not closed")

	const descColumn = 24
	var entries []layoutEntry
	var stack []string // the directory at each depth
	sc := bufio.NewScanner(strings.NewReader(block))
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimLeft(line, " ")
		indent := len(line) - len(trimmed)
		if trimmed == "" {
			continue
		}
		if indent >= descColumn {
			require.NotEmpty(t, entries, "the layout starts with a continuation line: %q", line)
			entries[len(entries)-1].about += " " + trimmed
			continue
		}
		word, about, _ := strings.Cut(trimmed, " ")
		require.True(t, strings.HasSuffix(word, "/") && indent%2 == 0 && indent/2 <= len(stack),
			"README.md layout line is neither a directory at a known depth nor a continuation: %q", line)
		stack = append(stack[:indent/2], strings.TrimSuffix(word, "/"))
		entries = append(entries, layoutEntry{path: strings.Join(stack, "/"), about: strings.TrimSpace(about)})
	}
	return entries
}

// TestREADMELayoutListsEveryPackage keeps README.md's layout in step with the module: every
// package `go list ./...` reports is listed, every listed directory exists, the packages only
// other packages' tests use (the Makefile's TEST_SUPPORT, which `make deadcode` leaves out) are
// the ones marked "(tests only)", and the ports line names every ports file.
func TestREADMELayoutListsEveryPackage(t *testing.T) {
	entries := readmeLayout(t)
	listed := map[string]layoutEntry{}
	for _, e := range entries {
		_, dup := listed[e.path]
		assert.False(t, dup, "README.md's layout lists %s twice", e.path)
		listed[e.path] = e
	}

	cmd := exec.Command("go", "list", "-find", "-f", "{{.ImportPath}}", "./...") // -find: the packages, not their dependencies
	cmd.Dir = "../.."
	out, err := cmd.Output()
	require.NoError(t, err, "go list ./...")
	modPath, err := exec.Command("go", "list", "-m").Output()
	require.NoError(t, err, "go list -m")
	module := strings.TrimSpace(string(modPath))
	var packages []string
	for _, p := range strings.Fields(string(out)) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p, module), "/")
		if rel == "" {
			continue // the module root holds no package today; a root package would need a layout line of its own
		}
		packages = append(packages, rel)
		_, ok := listed[rel]
		assert.True(t, ok, "README.md's layout does not list package %s", rel)
	}
	require.NotEmpty(t, packages)

	for _, e := range entries {
		info, err := os.Stat(filepath.Join("../..", e.path))
		if assert.NoError(t, err, "README.md's layout lists %s, which does not exist", e.path) {
			assert.True(t, info.IsDir(), "README.md's layout lists %s as a directory", e.path)
		}
	}

	// The test-only packages: the Makefile's TEST_SUPPORT and the README's "(tests only)" marks.
	makefile, err := os.ReadFile("../../Makefile")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^TEST_SUPPORT\s*:=\s*(.+)$`).FindSubmatch(makefile)
	require.NotNil(t, m, "the Makefile has no TEST_SUPPORT line")
	support := strings.Fields(string(m[1]))
	var marked []string
	for _, e := range entries {
		if strings.HasPrefix(e.about, "(tests only)") {
			marked = append(marked, e.path)
		}
	}
	slices.Sort(support)
	slices.Sort(marked)
	assert.Equal(t, support, marked, "the Makefile's TEST_SUPPORT and README.md's \"(tests only)\" packages differ")

	// The ports line names the area of every file in ports/.
	files, err := filepath.Glob("../../ports/*.go")
	require.NoError(t, err)
	var areas []string
	for _, f := range files {
		name := filepath.Base(f)
		if name != "doc.go" && !strings.HasSuffix(name, "_test.go") {
			areas = append(areas, strings.TrimSuffix(name, ".go"))
		}
	}
	about := listed["ports"].about
	_, inParens, ok := strings.Cut(about, "(")
	require.True(t, ok, "README.md's ports line lists no areas in parentheses: %q", about)
	inParens, _, _ = strings.Cut(inParens, ")")
	var named []string
	for _, a := range strings.Split(inParens, ",") {
		named = append(named, strings.TrimSpace(a))
	}
	slices.Sort(named)
	assert.Equal(t, areas, named, "README.md's ports line and the files in ports/ differ")
}
