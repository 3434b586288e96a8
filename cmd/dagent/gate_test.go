package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// widePlan runs eleven echo tasks at once: a plan that runs, of which the
// critic warns (parallel_explosion, missing_gate).
func widePlan() string {
	tasks := make([]string, 11)
	for i := range tasks {
		tasks[i] = fmt.Sprintf(`{"id": "t%d", "agent": "echo", "input": "part %d"}`, i, i)
	}
	return `{"mission": "count the parts", "tasks": [` + strings.Join(tasks, ", ") + `]}`
}

func TestRunGate(t *testing.T) {
	dir := writeFiles(t, map[string]string{"plan.json": widePlan(), "registry.yaml": shRegistry})
	// A configured LLM that is never called: replanning needs one to start.
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
	t.Setenv("DAGENT_MODEL", "unused")
	const header = "dagent: the critic refused the plan (score 8/10, 2 issues at --gate warning); nothing ran:\n"
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"default", nil, exitOK, ""},
		{"default, replanning", []string{"--replan"}, exitOK, ""},
		{"critical", []string{"--gate", "critical", "--replan"}, exitOK, ""},
		{"never", []string{"--gate", "never", "--replan"}, exitOK, ""},
		{"warning", []string{"--gate", "warning"}, exitInvalid, header},
		{"warning, replanning", []string{"--gate", "warning", "--replan"}, exitInvalid, header},
		{"unknown", []string{"--gate", "warnings"}, exitUsage, `dagent: unknown --gate "warnings": use critical, warning, info or never`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"run", "--no-journal", "--format", "json", filepath.Join(dir, "plan.json"), "--registry", filepath.Join(dir, "registry.yaml")}, tc.args...)
			code, stdout, stderr := dagent(t, "", args...)
			require.Equal(t, tc.code, code, stderr)
			if tc.code == exitOK {
				assert.Contains(t, stdout, `"status": "completed"`)
				return
			}
			// Nothing ran: standard output has the error document, not a result.
			var doc struct {
				Error    string `json:"error"`
				ExitCode int    `json:"exit_code"`
				Status   string `json:"status"`
			}
			require.NoError(t, json.Unmarshal([]byte(stdout), &doc), stdout)
			assert.Equal(t, tc.code, doc.ExitCode)
			assert.NotEmpty(t, doc.Error)
			assert.Empty(t, doc.Status, "no run result")
			assert.True(t, strings.HasPrefix(stderr, tc.stderr), stderr)
			if tc.code == exitInvalid {
				assert.Contains(t, stderr, "warning: task t0: phase 0 runs 11 tasks in parallel, more than 10 [parallel_explosion]")
			}
		})
	}
}

// A plan with a critical issue is never called acceptable, and the exit
// status follows --fail-on.
func TestLintSummaryAgreesWithSeverity(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"ghost.json": `{"tasks": [{"id": "a", "agent": "ghost", "input": "x"}]}`,
		"wide.json":  widePlan(),
		"review.json": `{"tasks": [
			{"id": "draft", "input": "Draft the notes"},
			{"id": "review", "type": "human_review", "input": "Approve {{results.draft}}?", "depends_on": ["draft"], "critical": false},
			{"id": "publish", "input": "Publish {{results.draft}}", "depends_on": ["draft", "review"]}]}`,
		"registry.yaml": shRegistry,
	})
	// With a registry, an agent it lacks is a fact, whatever lint makes of
	// agents without one.
	lint := func(args ...string) (int, string) {
		code, stdout, _ := dagent(t, "", append([]string{"lint", "--registry", filepath.Join(dir, "registry.yaml")}, args...)...)
		return code, stdout
	}
	code, stdout := lint(filepath.Join(dir, "ghost.json"))
	assert.Equal(t, exitInvalid, code)
	assert.Contains(t, stdout, "score 7/10. The plan cannot run as written; fix its critical issues first.")
	assert.NotContains(t, stdout, "acceptable")

	// Heuristics are warnings: the default --fail-on passes the plan,
	// --fail-on warning fails it.
	code, stdout = lint(filepath.Join(dir, "wide.json"))
	assert.Equal(t, exitOK, code, stdout)
	assert.Contains(t, stdout, "warning   parallel_explosion")
	code, _ = lint("--fail-on", "warning", filepath.Join(dir, "wide.json"))
	assert.Equal(t, exitInvalid, code)

	code, stdout = lint(filepath.Join(dir, "review.json"))
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "score 9/10. The plan is acceptable, with minor issues.")
	assert.Contains(t, stdout, "nonblocking_review")
	assert.Contains(t, stdout, "what depends on it (publish) runs anyway")
}
