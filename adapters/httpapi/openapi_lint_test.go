package httpapi

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// lintWarningsExplained are the linters' warnings /openapi.json keeps, each explained in
// README.md ("The API document"), which this test holds to naming them: the project states
// no licence and no contact, and the document does not invent them.
var lintWarningsExplained = []string{"info-license", "info-contact"}

// lintTools installs the linters pinned in openapilint/package-lock.json (npm ci, once per lock
// file, into the user cache directory) and returns their bin directory. npm is required: CI
// and development machines have it, and a missing npm fails the test rather than skipping it.
func lintTools(t *testing.T) string {
	t.Helper()
	lock, err := os.ReadFile(filepath.Join("openapilint", "package-lock.json"))
	require.NoError(t, err)
	manifest, err := os.ReadFile(filepath.Join("openapilint", "package.json"))
	require.NoError(t, err)
	sum := sha256.Sum256(append(slices.Clone(lock), manifest...))
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "tokenscope", "openapilint-"+hex.EncodeToString(sum[:6]))
	bin := filepath.Join(dir, "node_modules", ".bin")
	done := filepath.Join(dir, ".installed")
	if _, err := os.Stat(done); err == nil {
		return bin
	}
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "package.json"), manifest, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "package-lock.json"), lock, 0o644))
	cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "npm ci of the OpenAPI linters (npm is required): %s", out)
	require.NoError(t, os.WriteFile(done, nil, 0o644))
	return bin
}

// TestOpenAPILinters runs Redocly CLI with its recommended rules and Spectral with spectral:oas
// over the served document: no error, and no warning but the explained ones.
func TestOpenAPILinters(t *testing.T) {
	bin := lintTools(t)
	doc := filepath.Join(t.TempDir(), "openapi.json")
	require.NoError(t, os.WriteFile(doc, openAPIDoc(), 0o644))
	config, err := filepath.Abs("openapilint")
	require.NoError(t, err)

	type finding struct{ tool, rule, severity, where, message string }
	var found []finding

	// Redocly: exit status 1 on errors; the findings are the JSON on stdout either way.
	cmd := exec.Command(filepath.Join(bin, "redocly"), "lint", "--config", filepath.Join(config, "redocly.yaml"), "--format", "json", doc)
	cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true")
	out, err := cmd.Output()
	var redocly struct {
		Problems []struct {
			RuleID, Severity, Message string
			Location                  []struct{ Pointer string }
		}
	}
	require.NoError(t, json.Unmarshal(out, &redocly), "redocly: %v\n%s", err, out)
	for _, p := range redocly.Problems {
		where := ""
		if len(p.Location) > 0 {
			where = p.Location[0].Pointer
		}
		found = append(found, finding{"redocly", p.RuleID, p.Severity, where, p.Message})
	}

	// Spectral: severity 0 error, 1 warning, 2 info, 3 hint.
	cmd = exec.Command(filepath.Join(bin, "spectral"), "lint", "--ruleset", filepath.Join(config, "spectral.yaml"),
		"--format", "json", "--quiet", doc)
	out, err = cmd.Output()
	var spectral []struct {
		Code     string
		Message  string
		Severity int
		Path     []any
	}
	require.NoError(t, json.Unmarshal(out, &spectral), "spectral: %v\n%s", err, out)
	for _, p := range spectral {
		sev := []string{"error", "warn", "info", "hint"}[p.Severity]
		w, _ := json.Marshal(p.Path)
		found = append(found, finding{"spectral", p.Code, sev, string(w), p.Message})
	}

	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	var unexplained []finding
	for _, f := range found {
		if (f.severity == "warn" || f.severity == "warning") && slices.Contains(lintWarningsExplained, f.rule) {
			continue
		}
		if f.severity == "info" || f.severity == "hint" {
			continue
		}
		unexplained = append(unexplained, f)
	}
	require.Empty(t, unexplained, "linter findings on /openapi.json")
	for _, rule := range lintWarningsExplained {
		require.True(t, strings.Contains(string(readme), "`"+rule+"`"), "README.md explains the kept warning %s", rule)
	}
}
