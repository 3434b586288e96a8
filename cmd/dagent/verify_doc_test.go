package main

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestVerifyReference runs the `dagent verify` sessions of the predicate
// language reference: each `$ dagent verify ...` line, its exit code (the
// trailing `# exit N`, 0 without one) and the lines it prints, standard
// output and standard error together as a terminal shows them. Arguments
// are split as a shell splits them; the page quotes them with '...' only.
func TestVerifyReference(t *testing.T) {
	const page = "../../docs/predicates.md"
	b, err := os.ReadFile(page)
	require.NoError(t, err)
	type session struct {
		line int
		args []string
		code int
		out  strings.Builder
	}
	var sessions []*session
	inConsole := false
	for i, l := range strings.Split(string(b), "\n") {
		switch {
		case l == "```console":
			inConsole = true
		case inConsole && l == "```":
			inConsole = false
		case inConsole && strings.HasPrefix(l, "$ "):
			cmdline, exit, _ := strings.Cut(strings.TrimPrefix(l, "$ "), "   # exit ")
			s := &session{line: i + 1, args: shellWords(t, cmdline)}
			if exit != "" {
				s.code, err = strconv.Atoi(exit)
				require.NoError(t, err, "%s:%d", page, i+1)
			}
			sessions = append(sessions, s)
		case inConsole:
			require.NotEmpty(t, sessions, "%s:%d: output before a command", page, i+1)
			s := sessions[len(sessions)-1]
			s.out.WriteString(l + "\n")
		}
	}
	require.NotEmpty(t, sessions, "no console session found in %s", page)
	for _, s := range sessions {
		t.Run(strconv.Itoa(s.line)+" "+strings.Join(s.args, " "), func(t *testing.T) {
			require.Equal(t, "dagent", s.args[0])
			code, stdout, stderr := dagent(t, "", s.args[1:]...)
			assert.Equal(t, s.code, code, "%s:%d", page, s.line)
			assert.Equal(t, s.out.String(), stdout+stderr, "%s:%d", page, s.line)
		})
	}
}

// shellWords splits a command line on spaces, keeping '...' together.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	inWord, quoted := false, false
	for _, r := range line {
		switch {
		case quoted && r == '\'':
			quoted = false
		case quoted:
			cur.WriteRune(r)
		case r == '\'':
			quoted, inWord = true, true
		case r == ' ':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	require.False(t, quoted, "unclosed quote in %q", line)
	if inWord {
		words = append(words, cur.String())
	}
	return words
}
