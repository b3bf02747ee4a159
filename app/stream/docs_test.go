package stream

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestEveryKindIsInTheDocs keeps docs/api.md's channel table (the last step of README's "How to
// add a stream channel") in step with kinds: every kind's prefix is named by a row, and every
// channel a row names is a kind. A row may name several kinds at once: `dex-candle[-in-native]`
// (optional part) or `dex-ranking-*-list` (any run of characters).
func TestEveryKindIsInTheDocs(t *testing.T) {
	doc, err := os.ReadFile("../../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	cell := regexp.MustCompile("`(dex-[^`:]+):[^`]*`")
	var patterns []*regexp.Regexp
	var names []string
	for _, line := range strings.Split(string(doc), "\n") {
		if !strings.HasPrefix(line, "| `dex-") {
			continue
		}
		first, _, _ := strings.Cut(strings.TrimPrefix(line, "| "), " | ")
		for _, m := range cell.FindAllStringSubmatch(first, -1) {
			p := regexp.QuoteMeta(m[1])
			p = strings.ReplaceAll(p, `\[-in-native\]`, `(-in-native)?`)
			p = strings.ReplaceAll(p, `\*`, `.+`)
			patterns = append(patterns, regexp.MustCompile("^"+p+"$"))
			names = append(names, m[1])
		}
	}
	if len(patterns) == 0 {
		t.Fatal("docs/api.md has no channel table rows (| `dex-…:…` | …)")
	}
	for prefix := range kinds {
		found := false
		for _, p := range patterns {
			found = found || p.MatchString(prefix)
		}
		if !found {
			t.Errorf("docs/api.md's channel table has no row for %s", prefix)
		}
	}
	for i, p := range patterns {
		found := false
		for prefix := range kinds {
			found = found || p.MatchString(prefix)
		}
		if !found {
			t.Errorf("docs/api.md's channel table names %s, which is no channel kind", names[i])
		}
	}
}
