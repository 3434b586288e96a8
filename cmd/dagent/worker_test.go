package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A worker that declares outputs and prints text fails its task, with a
// diagnosis that names the worker, its slots and what it printed, escaped.
func TestRunWorkerWithOutputsPrintsText(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"plan.json": `{"tasks": [{"id": "a", "agent": "summary", "input": "x"}]}`,
		"registry.yaml": `workers:
  summary:
    description: Declares outputs, prints text
    command: ["sh", "-c", "cat >/dev/null; printf 'a plain summary\n\x1b[31mred\n'"]
    outputs: [files, count]
`,
	})
	code, doc, stderr := runJSON(t, filepath.Join(dir, "plan.json"), "--registry", filepath.Join(dir, "registry.yaml"), "--no-journal")
	require.Equal(t, 1, code, stderr)
	assert.Equal(t, "failed", taskField(t, doc, "a", "status"))
	assert.Equal(t, "invalid_output", taskField(t, doc, "a", "class"))
	assert.Equal(t, `invalid output: worker "summary" declares outputs files, count and must print one JSON object on standard output; it printed text: "a plain summary\n\x1b[31mred"`,
		taskField(t, doc, "a", "diagnosis"))
}

// A registry whose worker names a missing program is refused by run before
// any task starts, naming the worker and the program; lint, graph and fmt
// load it, lint with a missing_program warning.
func TestRegistryProgramsResolvedForARun(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"plan.json": `{"tasks": [{"id": "a", "agent": "touch", "input": "x"}, {"id": "b", "agent": "vet", "input": "x", "depends_on": ["a"]}]}`,
		"registry.yaml": `workers:
  touch:
    command: ["sh", "-c", "cat >/dev/null; touch side-effect; echo '{}'"]
  vet:
    command: ["dagent-vet-tool", "--json"]
`,
	})
	planPath, reg := filepath.Join(dir, "plan.json"), filepath.Join(dir, "registry.yaml")
	code, stdout, stderr := dagent(t, "", "run", planPath, "--registry", reg, "--db", filepath.Join(dir, "j.db"))
	assert.Equal(t, 1, code)
	assert.Empty(t, stdout, "no run started")
	assert.Equal(t, reg+`: worker "vet": program not found: exec: "dagent-vet-tool": executable file not found in $PATH
dagent: a run needs the program of every worker of its registry: install it, or fix the worker's command
`, stderr)
	assert.NoFileExists(t, filepath.Join(dir, "side-effect"))

	code, stdout, _ = dagent(t, "", "lint", planPath, "--registry", reg)
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "missing_program")
	for _, verb := range []string{"graph", "fmt"} {
		code, _, stderr = dagent(t, "", verb, planPath, "--registry", reg)
		assert.Equal(t, 0, code, "%s: %s", verb, stderr)
	}
}

// max_output bounds a worker's standard output, and the error names it.
func TestRunMaxOutput(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"plan.json": `{"tasks": [{"id": "a", "agent": "big", "input": "x"}]}`,
		"registry.yaml": `workers:
  big:
    command: ["sh", "-c", "cat >/dev/null; head -c 2048 /dev/zero"]
    max_output: 1KiB
`,
	})
	code, doc, stderr := runJSON(t, filepath.Join(dir, "plan.json"), "--registry", filepath.Join(dir, "registry.yaml"), "--no-journal")
	require.Equal(t, 1, code, stderr)
	assert.Equal(t, `command "sh": output too large: more than 1024 bytes on standard output; if that is expected, raise the worker's max_output in the registry file (Command.MaxOutput in Go)`,
		taskField(t, doc, "a", "diagnosis"))
}

// A run whose failures were all skipped completes, and its last line says
// how many tasks produced output; a run whose tasks all did says nothing
// more.
func TestRunSummaryCountsOutputs(t *testing.T) {
	tests := []struct {
		name, plan, want string
	}{
		{"none", `{"tasks": [{"id": "a", "agent": "fail", "on_failure": "skip"}, {"id": "b", "agent": "fail", "on_failure": "skip", "depends_on": ["a"]}]}`, ": 0 of 2 tasks produced output\n"},
		{"some", `{"tasks": [{"id": "a", "agent": "echo"}, {"id": "b", "agent": "fail", "on_failure": "skip"}, {"id": "c", "agent": "echo"}]}`, ": 2 of 3 tasks produced output\n"},
		{"all", `{"tasks": [{"id": "a", "agent": "echo"}]}`, "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{"plan.json": tt.plan, "registry.yaml": shRegistry})
			code, stdout, stderr := dagent(t, "", "run", filepath.Join(dir, "plan.json"), "--registry", filepath.Join(dir, "registry.yaml"), "--no-journal")
			require.Equal(t, exitOK, code, stderr)
			lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
			last := lines[len(lines)-1] + "\n"
			assert.Regexp(t, `^completed in [0-9.]+m?s`+regexp.QuoteMeta(tt.want)+`$`, last)
		})
	}
}
