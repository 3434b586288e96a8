package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostileRegistry's workers write escape sequences: pwn a window title
// and a clear screen on standard output, a clipboard write on standard
// error before failing.
const hostileRegistry = `workers:
  pwn:
    description: Prints escape sequences
    command: ["sh", "-c", "cat >/dev/null; printf '\\033]0;pwned\\007\\033[2J'"]
  clip:
    description: Fails with escape sequences
    command: ["sh", "-c", "cat >/dev/null; printf '\\033]52;c;ZXZpbA==\\007' >&2; exit 3"]
`

// TestTextOutputIsTerminalSafe runs a plan whose mission, worker output
// and worker errors hold escape sequences and bidirectional overrides, and
// checks that no text output of the run, runs and show holds an escape
// byte, while the JSON output keeps the output exactly.
func TestTextOutputIsTerminalSafe(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"registry.yaml": hostileRegistry,
		"plan.json": `{"mission": "m\u001b]8;;http://evil\u001b\\link\u202e", "tasks": [
			{"id": "a", "agent": "pwn", "input": "x"},
			{"id": "b", "agent": "clip", "input": "x", "on_failure": "skip", "critical": false}]}`,
	})
	planPath, reg, db := filepath.Join(dir, "plan.json"), filepath.Join(dir, "registry.yaml"), filepath.Join(dir, "j.db")
	hidden := regexp.MustCompile("[\x1b\x07\u202e]")

	code, stdout, stderr := dagent(t, "", "run", planPath, "--registry", reg, "--db", db)
	require.Equal(t, exitOK, code, stderr)
	assert.NotRegexp(t, hidden, stdout)
	assert.NotRegexp(t, hidden, stderr)
	assert.Contains(t, stdout+stderr, `\u001b]0;pwned\u0007\u001b[2J`, "the output is shown, visibly")

	code, stdout, stderr = dagent(t, "", "runs", "--db", db)
	require.Equal(t, exitOK, code, stderr)
	assert.NotRegexp(t, hidden, stdout)
	id := regexp.MustCompile(`\d{8}T\d{6}-[0-9a-f]{8}`).FindString(stdout)
	require.NotEmpty(t, id, stdout)

	code, stdout, stderr = dagent(t, "", "show", id, "--db", db)
	require.Equal(t, exitOK, code, stderr)
	assert.NotRegexp(t, hidden, stdout+stderr)
	assert.Contains(t, stdout, `\u001b]0;pwned\u0007\u001b[2J`)
	assert.Contains(t, stdout, `\u001b]52;c;ZXZpbA==\u0007`, "the worker's error is shown, visibly")

	code, stdout, stderr = dagent(t, "", "show", id, "--db", db, "--format", "json")
	require.Equal(t, exitOK, code, stderr)
	assert.NotRegexp(t, hidden, stdout)
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc), stdout)
	assert.Equal(t, "\x1b]0;pwned\a\x1b[2J", taskField(t, doc, "a", "output"), "JSON keeps the output exactly")
	assert.Equal(t, "m\x1b]8;;http://evil\x1b\\link\u202e", doc["mission"], "JSON keeps the mission exactly")
}

func TestRunRefusesAnUnsafeRunID(t *testing.T) {
	dir := writeFiles(t, map[string]string{"registry.yaml": shRegistry, "plan.json": `{"tasks": [{"id": "a", "agent": "echo"}]}`})
	planPath, reg, db := filepath.Join(dir, "plan.json"), filepath.Join(dir, "registry.yaml"), filepath.Join(dir, "j.db")
	for _, id := range []string{"x\x1b]0;pwned\x07", "run\u202e1", "a b", strings.Repeat("a", 129)} {
		code, stdout, stderr := dagent(t, "", "run", planPath, "--registry", reg, "--db", db, "--run-id", id)
		assert.Equal(t, exitUsage, code, "%q", id)
		assert.Empty(t, stdout)
		assert.Contains(t, stderr, "dagent: --run-id: invalid run id: ", "%q", id)
		assert.NotContains(t, stderr, "\x1b")
	}
	assert.NoFileExists(t, db, "nothing was journaled")
}
