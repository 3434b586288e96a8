package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCompletion: dagent completion prints each shell's script, and the
// scripts ask dagent __complete, which knows every command and flag.
func TestCompletion(t *testing.T) {
	for shell, want := range map[string]string{
		"bash": "complete -o default -F __start_dagent dagent",
		"zsh":  "#compdef dagent",
		"fish": "complete -c dagent",
	} {
		t.Run(shell, func(t *testing.T) {
			code, stdout, stderr := dagent(t, "", "completion", shell)
			require.Equal(t, exitOK, code, stderr)
			assert.Contains(t, stdout, want)
			assert.Contains(t, stdout, "__complete", "the script asks dagent for the words")
		})
	}

	code, stdout, _ := dagent(t, "", "__complete", "")
	require.Equal(t, exitOK, code)
	var commands []string
	for line := range strings.Lines(stdout) {
		if name, _, ok := strings.Cut(line, "\t"); ok {
			commands = append(commands, name)
		}
	}
	for _, c := range []string{"run", "resume", "runs", "show", "lint", "plan", "fmt", "graph", "verify", "schema", "replay", "version", "completion"} {
		assert.Contains(t, commands, c)
	}

	_, stdout, _ = dagent(t, "", "__complete", "run", "--sch")
	assert.Contains(t, stdout, "--schedule")
	_, stdout, _ = dagent(t, "", "__complete", "run", "--format", "")
	assert.Equal(t, []string{"text", "json"}, strings.Fields(strings.SplitN(stdout, ":", 2)[0]))
}
