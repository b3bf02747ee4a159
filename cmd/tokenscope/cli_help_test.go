package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHelpExitsZero: `tokenscope --help` and every command's -h (apikey's subcommands included)
// exit 0 and say what the command does, its arguments and its flags; no argument at all is a
// usage error (2).
func TestHelpExitsZero(t *testing.T) {
	run := func(args ...string) (string, int) {
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), runMainEnv+"=1")
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return string(out), ee.ExitCode()
		}
		require.NoError(t, err)
		return string(out), 0
	}
	out, code := run("--help")
	assert.Equal(t, 0, code, out)
	for name := range commands {
		assert.Contains(t, out, name, "--help lists every command")
	}
	for _, c := range []struct {
		args []string
		says []string
	}{
		{[]string{"import", "-h"}, []string{"usage: tokenscope import [flags] FILE", "standard input", "-batch", "-flush-every"}},
		{[]string{"simulate", "-h"}, []string{"usage: tokenscope simulate", "-seed", "-ndjson"}},
		{[]string{"migrate", "-h"}, []string{"usage: tokenscope migrate", "DATABASE_URL"}},
		{[]string{"serve", "-h"}, []string{"usage: tokenscope serve", "HTTP_ADDR"}},
		{[]string{"worker", "-h"}, []string{"usage: tokenscope worker", "TEMPORAL_ADDRESS"}},
		{[]string{"healthcheck", "-h"}, []string{"usage: tokenscope healthcheck [URL]"}},
		{[]string{"chain-resume", "-h"}, []string{"usage: tokenscope chain-resume", "-from"}},
		{[]string{"apikey", "-h"}, []string{"create", "list", "revoke", "--scopes"}},
		{[]string{"apikey", "create", "-h"}, []string{"-scopes", "-expires", "default read only"}},
		{[]string{"apikey", "list", "-h"}, []string{"-account"}},
		{[]string{"apikey", "revoke", "-h"}, []string{"Usage of apikey revoke"}},
	} {
		out, code := run(c.args...)
		assert.Equal(t, 0, code, "%s: %s", strings.Join(c.args, " "), out)
		for _, s := range c.says {
			assert.Contains(t, out, s, strings.Join(c.args, " "))
		}
	}
	out, code = run()
	assert.Equal(t, 2, code, "no command is a usage error: %s", out)
}

// TestSimulateReportsWhatItWrote: simulate --ndjson ends with a line saying how many events of
// each type it wrote, and the count is the file's.
func TestSimulateReportsWhatItWrote(t *testing.T) {
	file := t.TempDir() + "/market.ndjson"
	cmd := exec.Command(os.Args[0], "simulate", "--seed", "3", "--tokens", "3", "--wallets", "5", "--trades", "40", "--ndjson", file)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	body, err := os.ReadFile(file)
	require.NoError(t, err)
	lines := strings.Count(string(body), "\n")
	trades := strings.Count(string(body), `"type":"trade"`)
	assert.Contains(t, string(out), fmt.Sprintf("wrote %d events (", lines))
	assert.Contains(t, string(out), fmt.Sprintf("%d trade", trades))
	assert.Contains(t, string(out), "to "+file)
}
