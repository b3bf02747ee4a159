package main

import (
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runToolFails runs the CLI expecting a failure and returns its stderr.
func runToolFails(t *testing.T, dbURL string, args ...string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), runMainEnv+"=1", "DATABASE_URL="+dbURL, "LOG_LEVEL=warn")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.Error(t, err, "tokenscope %s should fail; it printed %q", strings.Join(args, " "), out)
	return stderr.String()
}

// TestAPIKeyCreateRefusesAnEmptyScopeList: `--scopes ""` (an unset shell variable) is an error
// naming the flag, and no key is created; before, it made a key with every scope.
func TestAPIKeyCreateRefusesAnEmptyScopeList(t *testing.T) {
	e := newEnv(t)
	dbURL := e.rt.Cfg.DatabaseURL
	for _, empty := range []string{"", " , "} {
		stderr := runToolFails(t, dbURL, "apikey", "create", "--account", "emptyscopes", "--scopes", empty)
		assert.Contains(t, stderr, `"scopes"`, "the error names the flag")
	}
	assert.NotContains(t, runTool(t, dbURL, "apikey", "list", "--account", "emptyscopes"), "tsk_", "no key was created")
	stderr := runToolFails(t, dbURL, "apikey", "create", "--account", "emptyscopes", "--expires", "yesterday")
	assert.Contains(t, stderr, `"expires"`)
}

// TestAPIKeyCreateGrantsReadByDefault: a key created without --scopes may read and nothing else
// (an ingest POST with it is 403); --scopes grants more.
func TestAPIKeyCreateGrantsReadByDefault(t *testing.T) {
	e := newEnv(t)
	dbURL := e.rt.Cfg.DatabaseURL
	key := strings.TrimSpace(runTool(t, dbURL, "apikey", "create", "--account", "defaultscopes"))
	require.Regexp(t, `^tsk_`, key)
	who := e.do(t, "GET", "/v2/whoami", nil, "X-API-KEY", key)
	require.Equal(t, http.StatusOK, who.Status, "%s", who.Body)
	assert.Equal(t, []any{"read"}, who.Object(t)["scopes"], "read only")
	requireErrorBody(t, e.do(t, "POST", "/v2/ingest", []byte("\n"), "X-API-KEY", key, "Content-Type", "application/x-ndjson"),
		http.StatusForbidden)
	all := strings.TrimSpace(runTool(t, dbURL, "apikey", "create", "--account", "defaultscopes", "--scopes", "read,ingest"))
	who = e.do(t, "GET", "/v2/whoami", nil, "X-API-KEY", all)
	require.Equal(t, http.StatusOK, who.Status, "%s", who.Body)
	assert.ElementsMatch(t, []any{"read", "ingest"}, who.Object(t)["scopes"])
}

// TestAPIKeyExpires: a key created with --expires answers until its end and 401 from then on;
// `apikey list` shows the end.
func TestAPIKeyExpires(t *testing.T) {
	e := newEnv(t)
	dbURL := e.rt.Cfg.DatabaseURL
	key := strings.TrimSpace(runTool(t, dbURL, "apikey", "create", "--account", "expiring", "--scopes", "read", "--expires", "4s"))
	created := time.Now()
	require.Regexp(t, `^tsk_`, key)
	assert.Contains(t, runTool(t, dbURL, "apikey", "list", "--account", "expiring"), "expires ")
	first := e.do(t, "GET", "/v2/whoami", nil, "X-API-KEY", key)
	if time.Since(created) < 3*time.Second { // a loaded machine may have taken the 4 s already
		require.Equal(t, http.StatusOK, first.Status, "%s", first.Body)
	}
	var last resp
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if last = e.do(t, "GET", "/v2/whoami", nil, "X-API-KEY", key); last.Status != http.StatusOK {
			break
		}
	}
	requireErrorBody(t, last, http.StatusUnauthorized)
	assert.Contains(t, runTool(t, dbURL, "apikey", "list", "--account", "expiring"), "expired ")
}
