package main

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// liveRegistry has a worker that takes a while, one that answers at once
// and one that fails with an escape sequence on standard error.
const liveRegistry = `workers:
  slow:
    description: Takes two seconds
    command: ["sh", "-c", "cat >/dev/null; sleep 2; printf '{\"ok\": true}'"]
  quick:
    description: Answers at once
    command: ["sh", "-c", "cat >/dev/null; printf '{\"ok\": true}'"]
  clip:
    description: Fails with escape sequences
    command: ["sh", "-c", "cat >/dev/null; printf '\\033]52;c;ZXZpbA==\\007' >&2; exit 3"]
`

// TestLiveView runs dagent on a terminal, as a person would: in tmux,
// reading the screen. While the slow task runs, the screen shows it with
// its time so far under a line of counts; at the end the live view has
// left its last line of counts, and the summary follows. Colour is on,
// and off with NO_COLOR.
func TestLiveView(t *testing.T) {
	if testing.Short() {
		t.Skip("builds dagent and runs it in tmux; skipped with -short")
	}
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("no tmux to run dagent on a terminal")
	}
	dir := writeFiles(t, map[string]string{
		"registry.yaml": liveRegistry,
		"plan.json": `{"tasks": [
			{"id": "slow", "agent": "slow", "input": "x"},
			{"id": "quick", "agent": "quick", "input": "x"},
			{"id": "evil", "agent": "clip", "input": "x", "on_failure": "skip", "critical": false},
			{"id": "sum", "agent": "quick", "input": "x", "depends_on": ["slow", "quick"]}]}`,
	})
	bin := binary(t)

	for _, colour := range []bool{true, false} {
		t.Run(map[bool]string{true: "colour", false: "NO_COLOR"}[colour], func(t *testing.T) {
			socket := filepath.Join(t.TempDir(), "tmux")
			tm := func(args ...string) string {
				out, err := exec.Command(tmux, append([]string{"-S", socket}, args...)...).CombinedOutput()
				require.NoError(t, err, "tmux %v: %s", args, out)
				return string(out)
			}
			// The terminal's settings are the test's, not the caller's: a
			// NO_COLOR in the environment of go test must not turn colour
			// off. A CI runner's CI variable must not either, on a terminal.
			env := "-u NO_COLOR TERM=xterm-256color CI=true"
			if !colour {
				env += " NO_COLOR=1"
			}
			cmdline := "cd " + dir + " && env " + env + " " + bin + " run plan.json --registry registry.yaml --no-journal; echo EXIT=$?; sleep 60"
			tm("new-session", "-d", "-x", "120", "-y", "40", cmdline)
			t.Cleanup(func() { exec.Command(tmux, "-S", socket, "kill-server").Run() })
			screen := func() string { return tm("capture-pane", "-p", "-e", "-J") }

			// Once the quick tasks settled, the slow one runs alone.
			live := regexp.MustCompile(`run \S+ running · 1 done · 1 skipped · 1 running · \d+\.\ds *\n  ● slow \d+\.\ds *\n`)
			var during string
			require.Eventually(t, func() bool {
				during = screen()
				return live.MatchString(stripSGR(during))
			}, 20*time.Second, 50*time.Millisecond, "the counts, then the running task with its time so far")

			var end string
			require.Eventually(t, func() bool {
				end = screen()
				return strings.Contains(end, "EXIT=")
			}, 30*time.Second, 100*time.Millisecond, "the run ends: %s", end)
			plain := stripSGR(end)
			assert.Contains(t, plain, "EXIT=0")
			assert.Regexp(t, `run \S+ completed · 3 done · 1 skipped · `, plain, "the live view's last line stays")
			assert.NotContains(t, plain, "● ", "no task is shown running at the end")
			assert.Regexp(t, `(?s)sum: done in .*run completed`, plain, "the lines keep the events' order")
			assert.Regexp(t, `✓ slow: done in 2`, plain, "what happened scrolls by above the view")
			assert.Contains(t, plain, `evil: skipped: command "sh" exited with status 3: \u001b]52;c;ZXZpbA==\u0007`, "the worker's escape sequence shows, escaped")
			assert.Regexp(t, `(?s)TASK +STATUS.*== sum ==.*completed in `, plain, "the summary follows")
			if colour {
				assert.Contains(t, end, "\x1b[", "colour")
			} else {
				assert.NotContains(t, end, "\x1b[", "no colour with NO_COLOR")
			}
		})
	}
}

func stripSGR(s string) string {
	return regexp.MustCompile("\x1b\\[[0-9;:]*m").ReplaceAllString(s, "")
}
