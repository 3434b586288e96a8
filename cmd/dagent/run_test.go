package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// shRegistry is a registry of sh workers for CLI tests: echo prints its
// input's word count as JSON, fail exits 3 with a message on stderr, and
// half prints a report that fails the plans' predicates.
const shRegistry = `workers:
  echo:
    description: Echoes the request's task id as JSON
    command: ["sh", "-c", "cat >/dev/null; printf '{\"ok\": true, \"n\": 3}'"]
    outputs: [ok, n]
  fail:
    description: Always fails
    command: ["sh", "-c", "cat >/dev/null; echo 'disk on fire' >&2; exit 3"]
  text:
    description: Prints text that is not JSON
    command: ["sh", "-c", "cat >/dev/null; echo 'a plain summary of everything'"]
`

// writeFiles writes name → content into a temporary directory and returns
// the directory.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600))
	}
	return dir
}

func runJSON(t *testing.T, args ...string) (int, map[string]any, string) {
	t.Helper()
	code, stdout, stderr := dagent(t, "", append([]string{"run", "--format", "json"}, args...)...)
	var doc map[string]any
	if stdout != "" {
		require.NoError(t, json.Unmarshal([]byte(stdout), &doc), stdout)
	}
	return code, doc, stderr
}

func taskField(t *testing.T, doc map[string]any, id, field string) any {
	t.Helper()
	tasks, ok := doc["tasks"].(map[string]any)
	require.True(t, ok, "tasks in %v", doc)
	task, ok := tasks[id].(map[string]any)
	require.True(t, ok, "task %s in %v", id, tasks)
	return task[field]
}

func TestRunExitCodes(t *testing.T) {
	tests := []struct {
		name   string
		plan   string
		code   int
		status string
		check  func(t *testing.T, doc map[string]any)
	}{
		{
			name:   "completed",
			plan:   `{"tasks": [{"id": "a", "agent": "echo", "input": "go", "verification": "(= (get data/result \"n\") 3)"}, {"id": "b", "agent": "text", "depends_on": ["a"], "input": "n is {{results.a.n}}"}]}`,
			code:   exitOK,
			status: "completed",
			check: func(t *testing.T, doc map[string]any) {
				assert.Equal(t, map[string]any{"ok": true, "n": 3.0}, taskField(t, doc, "a", "output"))
				assert.Equal(t, "a plain summary of everything", taskField(t, doc, "b", "output"))
				assert.Equal(t, 1.0, taskField(t, doc, "a", "attempts"))
				assert.Nil(t, taskField(t, doc, "a", "error"))
				assert.Equal(t, []any{}, doc["pending_reviews"])
				assert.Nil(t, doc["replan"])
				assert.Equal(t, 1.0, doc["version"], "the result form's version")
				assert.Nil(t, taskField(t, doc, "a", "class"), "a task that is done has no class")
			},
		},
		{
			name:   "a critical task fails",
			plan:   `{"tasks": [{"id": "a", "agent": "fail", "on_failure": "stop"}, {"id": "b", "agent": "echo", "depends_on": ["a"]}]}`,
			code:   exitInvalid,
			status: "failed",
			check: func(t *testing.T, doc map[string]any) {
				assert.Equal(t, "failed", taskField(t, doc, "a", "status"))
				assert.Contains(t, taskField(t, doc, "a", "error"), "exited with status 3: disk on fire")
				assert.Equal(t, "agent_error", taskField(t, doc, "a", "class"))
				assert.Equal(t, "pending", taskField(t, doc, "b", "status"))
				assert.Contains(t, doc["error"], "task a:")
			},
		},
		{
			name:   "a skipped task lets its dependents run",
			plan:   `{"tasks": [{"id": "a", "agent": "fail", "on_failure": "skip"}, {"id": "b", "agent": "echo", "depends_on": ["a"]}]}`,
			code:   exitOK,
			status: "completed",
			check: func(t *testing.T, doc map[string]any) {
				assert.Equal(t, "skipped", taskField(t, doc, "a", "status"))
				assert.Equal(t, "done", taskField(t, doc, "b", "status"))
			},
		},
		{
			name:   "retries then halts",
			plan:   `{"tasks": [{"id": "a", "agent": "echo", "max_retries": 1, "verification": "(= (get data/result \"n\") 4)"}]}`,
			code:   exitInvalid,
			status: "failed",
			check: func(t *testing.T, doc map[string]any) {
				assert.Equal(t, 2.0, taskField(t, doc, "a", "attempts"))
				assert.Equal(t, "failed", taskField(t, doc, "a", "status"))
			},
		},
		{
			name:   "replan",
			plan:   `{"tasks": [{"id": "a", "agent": "echo"}, {"id": "b", "agent": "fail", "depends_on": ["a"], "on_failure": "replan"}]}`,
			code:   exitReplan,
			status: "replan_required",
			check: func(t *testing.T, doc map[string]any) {
				replan, ok := doc["replan"].(map[string]any)
				require.True(t, ok, "replan in %v", doc)
				assert.Equal(t, "b", replan["task_id"])
				assert.Equal(t, []any{"a"}, replan["completed"])
				assert.Contains(t, replan["diagnosis"], "disk on fire")
			},
		},
		{
			name:   "waiting for review",
			plan:   `{"tasks": [{"id": "a", "agent": "echo"}, {"id": "ok", "type": "human_review", "depends_on": ["a"], "input": "Is {{results.a.n}} right?"}, {"id": "c", "agent": "echo", "depends_on": ["ok"]}]}`,
			code:   exitWaiting,
			status: "waiting",
			check: func(t *testing.T, doc map[string]any) {
				reviews, ok := doc["pending_reviews"].([]any)
				require.True(t, ok)
				require.Len(t, reviews, 1)
				assert.Equal(t, map[string]any{"task_id": "ok", "prompt": "Is 3 right?", "upstream": map[string]any{"a": map[string]any{"ok": true, "n": 3.0}}}, reviews[0])
				assert.Equal(t, "pending", taskField(t, doc, "c", "status"))
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{"plan.json": tt.plan, "registry.yaml": shRegistry})
			code, doc, stderr := runJSON(t, filepath.Join(dir, "plan.json"), "--registry", filepath.Join(dir, "registry.yaml"))
			require.Equal(t, tt.code, code, stderr)
			assert.Equal(t, tt.status, doc["status"])
			tt.check(t, doc)
		})
	}
}

func TestRunResumesAReview(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"plan.json":     `{"tasks": [{"id": "a", "agent": "echo"}, {"id": "ok", "type": "human_review", "depends_on": ["a"], "input": "Approve?"}, {"id": "c", "agent": "text", "depends_on": ["ok"], "input": "{{results.ok}}"}]}`,
		"registry.yaml": shRegistry,
		"approve.json":  `{"ok": {"approved": true, "comment": "fine", "output": "go ahead"}}`,
		"reject.json":   `{"ok": "reject"}`,
	})
	planPath, reg := filepath.Join(dir, "plan.json"), filepath.Join(dir, "registry.yaml")
	code, stdout, stderr := dagent(t, "", "run", "--format", "json", planPath, "--registry", reg)
	require.Equal(t, exitWaiting, code, stderr)
	first := filepath.Join(dir, "first.json")
	require.NoError(t, os.WriteFile(first, []byte(stdout), 0o600))

	var waiting map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &waiting))

	code, doc, stderr := runJSON(t, planPath, "--registry", reg, "--initial-results", first, "--reviews", filepath.Join(dir, "approve.json"))
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, waiting["run_id"], doc["run_id"], "resuming from a result keeps its run id")
	assert.Equal(t, 0.0, taskField(t, doc, "a", "attempts"), "a finished in the first run and is not run again")
	assert.Equal(t, "go ahead", taskField(t, doc, "ok", "output"))
	assert.Equal(t, "done", taskField(t, doc, "c", "status"))

	// The run under that id is completed now: run again, it goes on as
	// dagent resume does, and keeps what it committed.
	code, doc, stderr = runJSON(t, planPath, "--registry", reg, "--initial-results", first, "--reviews", filepath.Join(dir, "reject.json"))
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "go ahead", taskField(t, doc, "ok", "output"))

	// A rejection of another run waiting for the review fails it.
	code, stdout, stderr = dagent(t, "", "run", "--format", "json", planPath, "--registry", reg)
	require.Equal(t, exitWaiting, code, stderr)
	second := filepath.Join(dir, "second.json")
	require.NoError(t, os.WriteFile(second, []byte(stdout), 0o600))
	code, doc, stderr = runJSON(t, planPath, "--registry", reg, "--initial-results", second, "--reviews", filepath.Join(dir, "reject.json"))
	require.Equal(t, exitInvalid, code, stderr)
	assert.Equal(t, "failed", taskField(t, doc, "ok", "status"))
	assert.Contains(t, taskField(t, doc, "ok", "error"), "rejected by the reviewer")
}

func TestRunInitialResultsObject(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"plan.json":     `{"tasks": [{"id": "a", "agent": "fail"}, {"id": "b", "agent": "text", "depends_on": ["a"], "input": "{{results.a.n}}"}]}`,
		"registry.yaml": shRegistry,
		"initial.json":  `{"a": {"n": 12345678901234567890}}`,
	})
	code, doc, stderr := runJSON(t, filepath.Join(dir, "plan.json"), "--registry", filepath.Join(dir, "registry.yaml"), "--initial-results", filepath.Join(dir, "initial.json"))
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "done", taskField(t, doc, "a", "status"))
	assert.Equal(t, 0.0, taskField(t, doc, "a", "attempts"))
}

func TestRunRejectsBadInput(t *testing.T) {
	noLLM(t)
	tests := []struct {
		name   string
		files  map[string]string
		args   []string
		code   int
		stderr string
	}{
		{
			name:   "a worker that is not in the registry",
			files:  map[string]string{"plan.json": `{"tasks": [{"id": "a", "agent": "nope"}]}`},
			code:   exitInvalid,
			stderr: `task a: agent: agent "nope" is not defined in the plan's agents and is not a registry worker [unknown_agent]`,
		},
		{
			name:   "an invalid registry",
			files:  map[string]string{"plan.json": `{"tasks": [{"id": "a", "agent": "echo"}]}`, "registry.yaml": "workers:\n  echo:\n    comand: [sh]\n"},
			code:   exitInvalid,
			stderr: `unknown key "comand"`,
		},
		{
			name:   "a predicate that does not compile",
			files:  map[string]string{"plan.json": `{"tasks": [{"id": "a", "agent": "echo", "verification": "(= 1"}]}`},
			code:   exitInvalid,
			stderr: "task a: verification:",
		},
		{
			name:   "an undeclared slot",
			files:  map[string]string{"plan.json": `{"tasks": [{"id": "a", "agent": "echo"}, {"id": "b", "agent": "echo", "depends_on": ["a"], "inputs": {"x": {"from": "a", "slot": "missing"}}}]}`},
			code:   exitInvalid,
			stderr: `[undeclared_slot]`,
		},
		{
			name:   "an LLM agent without an LLM",
			files:  map[string]string{"plan.json": `{"agents": {"w": {"prompt": "You write."}}, "tasks": [{"id": "a", "agent": "w"}]}`},
			code:   exitUsage,
			stderr: `dagent: this command needs an LLM: set OPENAI_API_KEY`,
		},
		{
			name:   "a bad review decision",
			files:  map[string]string{"plan.json": `{"tasks": [{"id": "r", "type": "human_review"}]}`, "reviews.json": `{"r": "maybe"}`},
			args:   []string{"--reviews", "reviews.json"},
			code:   exitUsage,
			stderr: `reviews: `,
		},
		{
			name:   "a review for a task that is not a review",
			files:  map[string]string{"plan.json": `{"tasks": [{"id": "a", "agent": "echo"}]}`, "reviews.json": `{"a": "approve"}`},
			args:   []string{"--reviews", "reviews.json"},
			code:   exitUsage,
			stderr: `review decision for "a", which is a task, not a human_review`,
		},
		{
			name:   "a registry file that does not exist",
			files:  map[string]string{"plan.json": `{"tasks": [{"id": "a", "agent": "echo"}]}`, "registry.yaml": shRegistry},
			args:   []string{"--registry", "/nonexistent/registry.yaml"},
			code:   exitUsage,
			stderr: `read registry`,
		},
		{
			name:   "a reviews file that does not exist",
			files:  map[string]string{"plan.json": `{"tasks": [{"id": "a", "agent": "echo"}]}`},
			args:   []string{"--reviews", "missing.json"},
			code:   exitUsage,
			stderr: `read reviews: `,
		},
		{
			name:   "an unknown schedule",
			files:  map[string]string{"plan.json": `{"tasks": [{"id": "a", "agent": "echo"}]}`},
			args:   []string{"--schedule", "sometimes"},
			code:   exitUsage,
			stderr: `unknown schedule "sometimes"`,
		},
		{
			name:   "malformed initial results",
			files:  map[string]string{"plan.json": `{"tasks": [{"id": "a", "agent": "echo"}]}`, "initial.json": `{"a": `},
			args:   []string{"--initial-results", "initial.json"},
			code:   exitUsage,
			stderr: `initial results: `,
		},
		{
			name:   "initial results of a newer version",
			files:  map[string]string{"plan.json": `{"tasks": [{"id": "a", "agent": "echo"}]}`, "initial.json": `{"version": 2, "status": "completed", "tasks": {}}`},
			args:   []string{"--initial-results", "initial.json"},
			code:   exitUsage,
			stderr: `unsupported result version 2`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, ok := tt.files["registry.yaml"]; !ok {
				tt.files["registry.yaml"] = shRegistry
			}
			dir := writeFiles(t, tt.files)
			args := []string{"run", filepath.Join(dir, "plan.json"), "--registry", filepath.Join(dir, "registry.yaml")}
			for _, a := range tt.args {
				if strings.HasSuffix(a, ".json") {
					a = filepath.Join(dir, a)
				}
				args = append(args, a)
			}
			code, stdout, stderr := dagent(t, "", args...)
			assert.Equal(t, tt.code, code)
			assert.Contains(t, stderr, tt.stderr)
			assert.Empty(t, stdout, "nothing runs")
		})
	}
}

func TestRunTextOutput(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"plan.json":     `{"tasks": [{"id": "a", "agent": "echo"}, {"id": "flaky", "agent": "fail", "on_failure": "skip"}, {"id": "sum", "agent": "text", "depends_on": ["a", "flaky"]}]}`,
		"registry.yaml": shRegistry,
	})
	code, stdout, stderr := dagent(t, "", "run", filepath.Join(dir, "plan.json"), "--registry", filepath.Join(dir, "registry.yaml"))
	require.Equal(t, exitOK, code, stderr)
	for _, want := range []string{
		"started", "phase 0 started", "a: done in", "flaky: skipped: command", "sum: started", "run completed",
	} {
		assert.Contains(t, stderr, want, "the progress is on standard error")
		assert.NotContains(t, stdout, want, "standard output holds only the result")
	}
	for _, want := range []string{
		"TASK", "STATUS", "ATTEMPTS", "flaky  skipped",
		"== sum ==\na plain summary of everything",
		"completed in",
	} {
		assert.Contains(t, stdout, want)
	}
	assert.NotContains(t, stdout, "== a ==", "only the final tasks' outputs are printed")
}

// TestRunExamples runs the examples the README points to, on their real
// command workers.
func TestRunExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("the examples build and run their Go workers; skipped with -short")
	}
	code, doc, stderr := runJSON(t, "../../examples/health/plan.json", "--registry", "../../examples/health/registry.yaml")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "completed", doc["status"])
	for _, id := range []string{"vet", "test", "gofmt", "report"} {
		assert.Equal(t, "done", taskField(t, doc, id, "status"), id)
	}
	assert.Contains(t, taskField(t, doc, "report", "output"), "# ")

	const pipeline, registry = "../../examples/pipeline/plan.json", "../../examples/pipeline/registry.yaml"
	code, stdout, stderr := dagent(t, "", "run", "--format", "json", pipeline, "--registry", registry)
	require.Equal(t, exitWaiting, code, stderr)
	first := filepath.Join(t.TempDir(), "run.json")
	require.NoError(t, os.WriteFile(first, []byte(stdout), 0o600))
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc))
	assert.Equal(t, "waiting", taskField(t, doc, "review", "status"))
	assert.Equal(t, "pending", taskField(t, doc, "publish", "status"))

	code, doc, stderr = runJSON(t, pipeline, "--registry", registry, "--initial-results", first, "--reviews", "../../examples/pipeline/reviews.json")
	require.Equal(t, exitOK, code, stderr)
	for _, id := range []string{"extract", "clean", "totals", "anomalies"} {
		assert.Equal(t, 0.0, taskField(t, doc, id, "attempts"), "%s finished in the first run and is not run again", id)
	}
	assert.Equal(t, "done", taskField(t, doc, "publish", "status"))
}

// condTask is what TestRunConditions expects of a task.
type condTask struct {
	status, class, diagnosis string
	attempts                 float64
}

// A task's when condition decides, from its dependencies' results, whether
// it runs: one that does not hold skips it (condition_not_met) and lets the
// run go on; one that cannot be evaluated fails it by on_failure
// (condition_error); one that does not compile refuses the run.
func TestRunConditions(t *testing.T) {
	tests := []struct {
		name   string
		tasks  string
		code   int
		status string
		want   map[string]condTask
		stderr string
	}{
		{
			name: "true runs, false skips, dependents run",
			tasks: `{"id": "a", "agent": "echo"},
				{"id": "yes", "agent": "echo", "depends_on": ["a"], "when": "(= (get-in data/depends [\"a\" \"n\"]) 3)"},
				{"id": "no", "agent": "fail", "depends_on": ["a"], "when": "(if (> (get-in data/depends [\"a\" \"n\"]) 5) true \"n is small\")"},
				{"id": "after", "agent": "echo", "depends_on": ["no"]}`,
			code: exitOK, status: "completed",
			want: map[string]condTask{"yes": {"done", "", "", 1}, "no": {"skipped", "condition_not_met", "n is small", 0}, "after": {"done", "", "", 1}},
		},
		{
			name:  "an error fails a critical task",
			tasks: `{"id": "a", "agent": "echo"}, {"id": "b", "agent": "echo", "depends_on": ["a"], "when": "(> (get data/depends \"a\") 1)"}`,
			code:  exitInvalid, status: "failed",
			want: map[string]condTask{"b": {"failed", "condition_error", "cannot compare", 1}},
		},
		{
			name:   "a condition that does not compile refuses the run",
			tasks:  `{"id": "a", "agent": "echo"}, {"id": "b", "agent": "echo", "depends_on": ["a"], "when": "(= 1"}`,
			code:   exitInvalid,
			stderr: `task b: when: 1:1: unclosed "("`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{"plan.json": `{"tasks": [` + tt.tasks + `]}`, "registry.yaml": shRegistry})
			code, doc, stderr := runJSON(t, filepath.Join(dir, "plan.json"), "--registry", filepath.Join(dir, "registry.yaml"))
			require.Equal(t, tt.code, code, stderr)
			if tt.stderr != "" {
				assert.Contains(t, stderr, tt.stderr)
				return
			}
			assert.Equal(t, tt.status, doc["status"])
			for id, w := range tt.want {
				assert.Equal(t, w.status, taskField(t, doc, id, "status"), id)
				assert.Equal(t, w.attempts, taskField(t, doc, id, "attempts"), id)
				if w.class == "" {
					assert.Nil(t, taskField(t, doc, id, "class"), id)
					continue
				}
				assert.Equal(t, w.class, taskField(t, doc, id, "class"), id)
				assert.Contains(t, taskField(t, doc, id, "diagnosis"), w.diagnosis, id)
			}
		})
	}
}

// dagent lint checks a condition like a verification, with its position;
// dagent fmt writes it under its canonical key.
func TestLintAndFmtConditions(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"bad.json":  "{\"tasks\": [\n  {\"id\": \"a\"},\n  {\"id\": \"b\", \"depends_on\": [\"a\"], \"input\": \"{{results.a}}\", \"when\": \"(equals 1 1)\"}\n]}",
		"good.json": `{"tasks": [{"id": "a"}, {"id": "b", "after": "a", "input": "{{results.a}}", "condition": " (some? (get data/depends \"a\")) "}]}`,
	})
	code, stdout, stderr := dagent(t, "", "lint", filepath.Join(dir, "bad.json"))
	assert.Equal(t, exitInvalid, code, stderr)
	assert.Regexp(t, `3:3\s+critical\s+invalid_predicate\s+when: the condition does not compile: 1:2: unknown function equals`, stdout)

	code, stdout, stderr = dagent(t, "", "fmt", filepath.Join(dir, "good.json"))
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, `"when": "(some? (get data/depends \"a\"))",`)
	assert.NotContains(t, stdout, "condition")
}
