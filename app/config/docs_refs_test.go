package config_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goFiles maps every .go file's base name in the repository to the paths that have it.
func goFiles(t *testing.T) map[string][]string {
	t.Helper()
	files := map[string][]string{}
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".go") {
			rel, _ := filepath.Rel("../..", path)
			files[d.Name()] = append(files[d.Name()], filepath.ToSlash(rel))
		}
		return nil
	})
	require.NoError(t, err)
	return files
}

// defines reports whether the Go file at path declares name: a function, a type, a var or
// const, or, with a receiver ("IngestStore.Apply"), that type's method.
func defines(t *testing.T, path, name string) bool {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("../..", path))
	require.NoError(t, err)
	var pattern string
	if recv, method, ok := strings.Cut(name, "."); ok {
		pattern = `(?m)^func \(\w+ \*?` + regexp.QuoteMeta(recv) + `(\[[^\]]*\])?\) ` + regexp.QuoteMeta(method) + `[\[(]`
	} else {
		q := regexp.QuoteMeta(name)
		pattern = `(?m)^(func (\([^)]*\) )?` + q + `[\[(]|type ` + q + `\b|(var|const) ` + q + `\b|\t` + q + `\b[^\n(]*=)`
	}
	return regexp.MustCompile(pattern).Match(src)
}

// definedIn reports whether some file called base (under dir, when dir is not empty) declares name.
func definedIn(t *testing.T, files map[string][]string, dir, base, name string) bool {
	for _, p := range files[base] {
		if (dir == "" || strings.HasPrefix(p, dir+"/")) && defines(t, p, name) {
			return true
		}
	}
	return false
}

var (
	// goFileRef is a Go file named in backticks: `adapters/postgres/version.go`, `copy.go`.
	goFileRef = regexp.MustCompile("`([A-Za-z0-9_./-]+\\.go)`")
	// tableRow is a docs table row about one file: | `copy.go` | … |.
	tableRow = regexp.MustCompile("(?m)^\\| `([a-z0-9_]+\\.go)` \\|(.*)$")
	// goIdent is a backticked Go name the row says the file holds: camelCase or PascalCase, or
	// Type.Method; snake_case names are tables and lower-case qualifiers are other packages.
	goIdent = regexp.MustCompile("`((?:[A-Z][A-Za-z0-9]*\\.)?[A-Za-z][A-Za-z0-9]*)`")
	// fileList is "`bucket.go` (Bucket, Mark, …)": a file followed by the names it holds, after a
	// backticked package directory earlier in the same paragraph.
	fileList = regexp.MustCompile("`([a-z0-9_]+\\.go)` \\(([A-Z][A-Za-z0-9]*(?:, [A-Z][A-Za-z0-9]*)*)\\)")
	dirRef   = regexp.MustCompile("`((?:domain|app|adapters|ports|workflows|cmd|internal|bench)(?:/[a-z0-9_-]+)*)`")
)

// TestDocsNameFilesThatExist: every Go file README.md and docs/ name in backticks exists (at
// its path when one is given, else somewhere in the tree), and the names the docs say a file
// holds, in a table row about the file or in a "`file.go` (Name, Name)" list, are declared
// there. A renamed file or a moved function fails it.
func TestDocsNameFilesThatExist(t *testing.T) {
	files := goFiles(t)
	docs, err := filepath.Glob("../../docs/*.md")
	require.NoError(t, err)
	docs = append(docs, "../../README.md")
	for _, doc := range docs {
		b, err := os.ReadFile(doc)
		require.NoError(t, err)
		text := string(b)
		name := filepath.Base(doc)

		for _, m := range goFileRef.FindAllStringSubmatch(text, -1) {
			ref := m[1]
			if strings.Contains(ref, "/") {
				_, err := os.Stat(filepath.Join("../..", ref))
				assert.NoError(t, err, "%s names %s, which does not exist", name, ref)
			} else if !strings.HasPrefix(ref, "_") && !strings.HasPrefix(ref, "*") {
				assert.NotEmpty(t, files[ref], "%s names %s: no such file in the tree", name, ref)
			}
		}

		for _, m := range tableRow.FindAllStringSubmatch(text, -1) {
			for _, id := range goIdent.FindAllStringSubmatch(m[2], -1) {
				if !strings.ContainsAny(id[1], "ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
					continue // a lower-case word: a table or column name, not a Go name
				}
				assert.True(t, definedIn(t, files, "", m[1], id[1]), "%s: %s declares no %s", name, m[1], id[1])
			}
		}

		for _, para := range strings.Split(text, "\n\n") {
			dir := ""
			for _, loc := range fileList.FindAllStringSubmatchIndex(para, -1) {
				if ds := dirRef.FindAllStringSubmatch(para[:loc[0]], -1); len(ds) > 0 {
					dir = ds[len(ds)-1][1]
				}
				base := para[loc[2]:loc[3]]
				for _, id := range strings.Split(para[loc[4]:loc[5]], ", ") {
					assert.True(t, definedIn(t, files, dir, base, id), "%s: %s/%s declares no %s", name, dir, base, id)
				}
			}
		}
	}
}
