package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// haltRegistry adds to shRegistry a worker that reports a structured
// failure and one whose precondition never holds.
const haltRegistry = shRegistry + `  limited:
    description: Calls a rate-limited API
    command: ["sh", "-c", "cat >/dev/null; echo 'calling the API' >&2; printf '{\"error\": {\"class\": \"rate_limited\", \"message\": \"429 from the API\", \"suggestion\": \"wait a minute, or use the cached copy\"}}'; exit 4"]
  guarded:
    description: Needs a URL
    command: ["sh", "-c", "cat >/dev/null; printf '{}'"]
    preconditions:
      - "(if (starts-with? data/input \"https://\") true \"the input is not a URL\")"
`

const (
	limitedPlan = `{"mission": "Fetch the page", "tasks": [
		{"id": "a", "agent": "echo", "input": "go"},
		{"id": "b", "agent": "limited", "depends_on": ["a"], "on_failure": "replan", "input": "fetch"}]}`
	guardedPlan = `{"mission": "Fetch the page", "tasks": [
		{"id": "a", "agent": "echo", "input": "go"},
		{"id": "b", "agent": "guarded", "depends_on": ["a"], "on_failure": "replan", "input": "example.org"}]}`
	echoRepair = `{"mission": "Fetch the page", "tasks": [
		{"id": "a", "agent": "echo", "input": "go"},
		{"id": "b_cached", "agent": "echo", "depends_on": ["a"], "input": "use the cached copy"}]}`
)

// TestRunHaltOn: a task whose failure is of a class that halts ends the
// run halted with the class, without a repair; --halt-on and --no-halt-on
// change which classes do. A worker's structured failure gives the class,
// and its suggestion reaches the repair prompt.
func TestRunHaltOn(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"registry.yaml": haltRegistry, "limited.json": limitedPlan, "guarded.json": guardedPlan,
	})
	reg := filepath.Join(dir, "registry.yaml")
	tests := []struct {
		name    string
		plan    string
		flags   []string
		class   string
		halt    string // "" when the failure is repaired
		repairs int
	}{
		{name: "worker report repaired", plan: "limited.json", class: "rate_limited", repairs: 1},
		{name: "worker report halts when asked", plan: "limited.json", flags: []string{"--halt-on", "rate_limited"}, class: "rate_limited", halt: "rate_limited"},
		{name: "precondition halts by default", plan: "guarded.json", class: "precondition_failed", halt: "precondition_failed"},
		{name: "precondition repaired when asked", plan: "guarded.json", flags: []string{"--no-halt-on", "precondition_failed"}, class: "precondition_failed", repairs: 1},
		{name: "comma-separated", plan: "limited.json", flags: []string{"--halt-on", "timeout,rate_limited"}, class: "rate_limited", halt: "rate_limited"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := startLLM(t, script{kindRepair: {route(echoRepair)}})
			args := append([]string{filepath.Join(dir, tt.plan), "--registry", reg, "--replan", "--no-journal"}, tt.flags...)
			code, doc, stderr := runJSON(t, args...)
			assert.Equal(t, tt.class, taskField(t, doc, "b", "class"))
			assert.Len(t, f.got(kindRepair), tt.repairs)
			if tt.halt != "" {
				require.Equal(t, exitInvalid, code, stderr)
				assert.Equal(t, "failed", doc["status"])
				assert.Equal(t, tt.halt, doc["halt"])
				assert.Contains(t, doc["error"], "replanning halted ("+tt.halt+"): task b failed with class "+tt.halt+", which halts the execution: ")
				return
			}
			require.Equal(t, exitOK, code, stderr)
			assert.Nil(t, doc["halt"])
			trial := doc["replan_history"].([]any)[0].(map[string]any)
			assert.Equal(t, tt.class, trial["class"])
			if tt.plan == "limited.json" {
				prompt := lastUser(t, f.got(kindRepair)[0])
				assert.Contains(t, prompt, `with failure class "rate_limited"`)
				assert.Contains(t, prompt, "<data source=\"suggestion\">\nwait a minute, or use the cached copy\n</data>")
				assert.Contains(t, prompt, "429 from the API")
			}
		})
	}

	// The text format says why the run halted.
	startLLM(t, script{kindRepair: {route(echoRepair)}})
	code, stdout, stderr := dagent(t, "", "run", filepath.Join(dir, "guarded.json"), "--registry", reg, "--replan", "--no-journal")
	require.Equal(t, exitInvalid, code, stderr)
	assert.Contains(t, stdout, "replanning halted (precondition_failed): a worker's precondition did not hold\n")
	assert.Contains(t, stdout, "task b failed with class precondition_failed, which halts the execution: ")
}

func TestRunHaltOnUsage(t *testing.T) {
	noLLM(t)
	dir := writeFiles(t, map[string]string{"registry.yaml": haltRegistry, "limited.json": limitedPlan})
	plan, reg := filepath.Join(dir, "limited.json"), filepath.Join(dir, "registry.yaml")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--halt-on", "rate_limited"}, "dagent: --halt-on needs --replan or --mission\n"},
		{[]string{"--no-halt-on", "tool_refused"}, "dagent: --no-halt-on needs --replan or --mission\n"},
		{[]string{"--replan", "--halt-on", "Rate-Limited"}, "dagent: bad class \"Rate-Limited\" for --halt-on or --no-halt-on: a class is a lower-case identifier, such as tool_refused, precondition_failed or agent_error\n"},
		{[]string{"--replan", "--halt-on", "timeout", "--no-halt-on", "timeout"}, "dagent: --halt-on and --no-halt-on both name \"timeout\"\n"},
	} {
		code, stdout, stderr := dagent(t, "", append([]string{"run", plan, "--registry", reg, "--no-journal"}, tc.args...)...)
		assert.Equal(t, exitUsage, code, tc.args)
		assert.Equal(t, tc.want, stderr, tc.args)
		assert.Empty(t, stdout)
	}
	_, err := os.Stat(filepath.Join(dir, ".dagent"))
	assert.True(t, os.IsNotExist(err))
}
