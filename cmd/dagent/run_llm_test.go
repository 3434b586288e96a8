package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCommandsThatNeedAnLLMSaySo(t *testing.T) {
	noLLM(t)
	const want = "dagent: this command needs an LLM: set OPENAI_API_KEY (or OPENAI_BASE_URL for another OpenAI-compatible server), or replay a recording with --replay FILE\n"
	dir := writeFiles(t, map[string]string{
		"agent.json":   `{"agents": {"w": {"prompt": "You write."}}, "tasks": [{"id": "a", "agent": "echo"}, {"id": "b", "agent": "w", "depends_on": ["a"]}]}`,
		"default.json": `{"tasks": [{"id": "a", "input": "Say hello"}]}`,
		"workers.json": `{"mission": "Echo", "tasks": [{"id": "a", "agent": "echo"}]}`,
		"reg.yaml":     shRegistry,
	})
	reg := filepath.Join(dir, "reg.yaml")
	for _, args := range [][]string{
		{"plan", "Greet the user"},
		{"plan", "--registry", reg, "--format", "json", "Greet the user"},
		{"run", "--mission", "Greet the user"},
		{"run", filepath.Join(dir, "agent.json"), "--registry", reg},
		{"run", filepath.Join(dir, "default.json"), "--format", "json"},
		{"run", filepath.Join(dir, "workers.json"), "--registry", reg, "--replan"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, stdout, stderr := dagent(t, "", args...)
			assert.Equal(t, exitUsage, code)
			assert.Equal(t, want, stderr)
			if !slices.Contains(args, "json") {
				assert.Empty(t, stdout, "nothing runs")
				return
			}
			// Nothing runs; the JSON asked for is the error's.
			var doc errorDoc
			require.NoError(t, json.Unmarshal([]byte(stdout), &doc), stdout)
			assert.Equal(t, errorDoc{Version: docVersion, Error: strings.TrimSuffix(strings.TrimPrefix(want, "dagent: "), "\n"), ExitCode: exitUsage}, doc)
		})
	}

	// Commands that need no LLM never ask for one.
	for _, args := range [][]string{
		{"fmt", filepath.Join(dir, "agent.json"), "--registry", reg},
		{"graph", filepath.Join(dir, "default.json")},
		{"lint", filepath.Join(dir, "agent.json"), "--registry", reg},
		{"run", filepath.Join(dir, "workers.json"), "--registry", reg},
		{"run", filepath.Join(dir, "workers.json"), "--registry", reg, "--format", "json", "--model", "m", "--max-llm-calls", "1"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, _, stderr := dagent(t, "", args...)
			assert.Equal(t, exitOK, code, stderr)
			assert.NotContains(t, stderr, "LLM")
		})
	}
}

func TestRunLLMAgents(t *testing.T) {
	f := startLLM(t, script{kindAgent: {"Hello, user!"}})
	dir := writeFiles(t, map[string]string{
		"plan.json": `{"agents": {"writer": {"prompt": "You write greetings."}},
			"tasks": [{"id": "a", "agent": "echo"},
			          {"id": "greet", "input": "Greet the user", "verification": "(string? data/result)"},
			          {"id": "poem", "agent": "writer", "depends_on": ["a"], "input": "Write about {{results.a.n}}"}]}`,
		"registry.yaml": shRegistry,
	})
	code, doc, stderr := runJSON(t, filepath.Join(dir, "plan.json"), "--registry", filepath.Join(dir, "registry.yaml"))
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "completed", doc["status"])
	assert.Equal(t, "Hello, user!", taskField(t, doc, "greet", "output"), "the default agent's answer")
	assert.Equal(t, "Hello, user!", taskField(t, doc, "poem", "output"))
	assert.Equal(t, map[string]any{"ok": true, "n": 3.0}, taskField(t, doc, "a", "output"), "the worker ran as before")
	assert.NotContains(t, doc, "usage", "a run that does not replan prints the runner's document")

	agents := f.got(kindAgent)
	require.Len(t, agents, 2)
	var prompts, inputs []string
	for _, body := range agents {
		assert.Equal(t, "test-model", body["model"])
		prompts = append(prompts, body["messages"].([]any)[0].(map[string]any)["content"].(string))
		inputs = append(inputs, lastUser(t, body))
	}
	assert.True(t, strings.Contains(prompts[0], "You write greetings.") != strings.Contains(prompts[1], "You write greetings."),
		"only the writer has the plan's prompt: %q", prompts)
	assert.Contains(t, strings.Join(inputs, "\n"), "<data source=\"results.a.n\">\n3\n</data>", "the writer's upstream data")
}

func TestRunLLMAgentJSONAnswer(t *testing.T) {
	startLLM(t, script{kindAgent: {"```json\n{\"greeting\": \"hi\", \"n\": 2}\n```"}})
	dir := writeFiles(t, map[string]string{
		"plan.json": `{"tasks": [{"id": "greet", "input": "Greet", "verification": "(= (get data/result \"n\") 2)"}]}`,
	})
	code, doc, stderr := runJSON(t, filepath.Join(dir, "plan.json"))
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, map[string]any{"greeting": "hi", "n": 2.0}, taskField(t, doc, "greet", "output"))
}

func TestRecordThenReplay(t *testing.T) {
	f := startLLM(t, script{kindPlan: {route(helloPlan)}, kindAgent: {"Hello from the model"}})
	dir := t.TempDir()
	rec := filepath.Join(dir, "session.jsonl")
	planPath := filepath.Join(dir, "plan.json")
	require.NoError(t, os.WriteFile(planPath, []byte(helloPlan), 0o600))

	code, planned, stderr := dagent(t, "", "plan", "--format", "json", "--record", rec, "Greet the user")
	require.Equal(t, exitOK, code, stderr)
	code, ran, stderr := dagent(t, "", "run", planPath, "--format", "json", "--record", rec)
	require.Equal(t, exitOK, code, stderr)
	code, executed, stderr := dagent(t, "", "run", "--mission", "Greet the user", "--format", "json", "--record", rec)
	require.Equal(t, exitOK, code, stderr)
	assert.Len(t, f.got(kindPlan), 2)
	assert.Len(t, f.got(kindAgent), 2)

	data, err := os.ReadFile(rec)
	require.NoError(t, err)
	assert.Equal(t, 4, strings.Count(string(data), "\n"), "one line per exchange")

	// Without the server, a key or a model, the replay gives the same
	// answers.
	f.srv.Close()
	noLLM(t)
	code, stdout, stderr := dagent(t, "", "plan", "--format", "json", "--replay", rec, "Greet the user")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, planned, stdout)

	code, stdout, stderr = dagent(t, "", "run", planPath, "--format", "json", "--replay", rec)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, withoutTimes(t, ran), withoutTimes(t, stdout))

	code, stdout, stderr = dagent(t, "", "run", "--mission", "Greet the user", "--format", "json", "--replay", rec)
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, withoutTimes(t, executed), withoutTimes(t, stdout))
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc))
	assert.Equal(t, "Hello from the model", taskField(t, doc, "greet", "output"))

	// A request the recording does not have fails; nothing goes out.
	code, _, stderr = dagent(t, "", "plan", "--replay", rec, "Another mission")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "llm: request not recorded in "+rec)
}

// withoutTimes is a JSON result without what differs from run to run: run
// ids and durations.
func withoutTimes(t *testing.T, doc string) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(doc), &m), doc)
	delete(m, "run_id")
	delete(m, "duration_ms")
	if tasks, ok := m["tasks"].(map[string]any); ok {
		for _, task := range tasks {
			delete(task.(map[string]any), "duration_ms")
		}
	}
	return m
}

// flakyRegistry is shRegistry plus flaky, a worker that fails the first
// time it runs and prints {"fixed": true} after.
func flakyRegistry(t *testing.T, dir string) string {
	t.Helper()
	flag := filepath.Join(dir, "flaky-ran")
	reg := shRegistry + `  flaky:
    description: Fails the first time, then works
    command: ["sh", "-c", "cat >/dev/null; if [ -e '` + flag + `' ]; then printf '{\"fixed\": true}'; else touch '` + flag + `'; echo 'flaky failure' >&2; exit 3; fi"]
`
	path := filepath.Join(dir, "registry.yaml")
	require.NoError(t, os.WriteFile(path, []byte(reg), 0o600))
	return path
}

const (
	// flakyPlan fails at b, whose policy asks for a new plan.
	flakyPlan = `{"mission": "Check the flaky service", "tasks": [
		{"id": "a", "agent": "echo", "input": "go"},
		{"id": "b", "agent": "flaky", "depends_on": ["a"], "on_failure": "replan", "input": "n is {{results.a.n}}"}]}`
	// repairPlan keeps a and tries the service again as b_again.
	repairPlan = `{"mission": "Check the flaky service", "tasks": [
		{"id": "a", "agent": "echo", "input": "go"},
		{"id": "b_again", "agent": "flaky", "depends_on": ["a"], "input": "try again with n {{results.a.n}}"}]}`
)

func TestRunReplan(t *testing.T) {
	f := startLLM(t, script{kindRepair: {route(repairPlan)}})
	dir := t.TempDir()
	reg := flakyRegistry(t, dir)
	planPath := filepath.Join(dir, "plan.json")
	require.NoError(t, os.WriteFile(planPath, []byte(flakyPlan), 0o600))

	code, doc, stderr := runJSON(t, planPath, "--registry", reg, "--replan")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "completed", doc["status"])
	assert.Nil(t, doc["error"])
	assert.Equal(t, 1.0, doc["replan_count"])
	assert.Equal(t, 2.0, doc["execution_attempts"])
	assert.Nil(t, doc["halt"])
	assert.Equal(t, map[string]any{"prompt_tokens": 100.0, "completion_tokens": 20.0}, doc["usage"], "the one planner call")
	history := doc["replan_history"].([]any)
	require.Len(t, history, 1)
	trial := history[0].(map[string]any)
	assert.Equal(t, 1.0, trial["attempt"])
	assert.Equal(t, "b", trial["task_id"])
	assert.Equal(t, "agent_error", trial["class"])
	assert.Contains(t, trial["diagnosis"], "flaky failure")
	assert.Equal(t, 1.0, trial["new_task_count"])
	assert.Contains(t, trial, "output")

	assert.Equal(t, "failed", taskField(t, doc, "b", "status"), "the failed task of the first plan")
	assert.Equal(t, map[string]any{"fixed": true}, taskField(t, doc, "b_again", "output"))
	assert.Equal(t, 1.0, taskField(t, doc, "a", "attempts"), "a ran once, in the first plan")
	assert.NotEmpty(t, doc["run_id"])
	tasks := doc["plan"].(map[string]any)["tasks"].([]any)
	assert.Equal(t, "b_again", tasks[1].(map[string]any)["id"], "the plan that ran last")

	repairs := f.got(kindRepair)
	require.Len(t, repairs, 1)
	prompt := lastUser(t, repairs[0])
	assert.Contains(t, prompt, "Check the flaky service")
	assert.Contains(t, prompt, "flaky failure")
	assert.Empty(t, f.got(kindPlan), "the plan was given")
}

func TestRunReplanText(t *testing.T) {
	startLLM(t, script{kindRepair: {route(repairPlan)}})
	dir := t.TempDir()
	reg := flakyRegistry(t, dir)
	planPath := filepath.Join(dir, "plan.json")
	require.NoError(t, os.WriteFile(planPath, []byte(flakyPlan), 0o600))

	code, stdout, stderr := dagent(t, "", "run", planPath, "--registry", reg, "--replan")
	require.Equal(t, exitOK, code, stderr)
	for _, want := range []string{
		"b: failed: ",
		"replan requested after b failed (agent_error: ",
		"replan 1 after b failed (agent_error: ",
		"flaky failure",
		"): 1 task added\n",
		"b_again: done in",
	} {
		assert.Contains(t, stderr, want, "the progress is on standard error")
	}
	for _, want := range []string{
		"b (replaced)  failed",
		"== b_again ==\n{\n  \"fixed\": true\n}",
		"completed in ",
		" after 1 replan\n",
	} {
		assert.Contains(t, stdout, want)
	}
	assert.Len(t, regexp.MustCompile(`(?m)  run \S+ started$`).FindAllString(stderr, -1), 2, "two runs: %s", stderr)
}

func TestRunReplanHalts(t *testing.T) {
	f := startLLM(t, script{kindRepair: {route(repairPlan)}})
	dir := t.TempDir()
	reg := flakyRegistry(t, dir)
	planPath := filepath.Join(dir, "plan.json")
	require.NoError(t, os.WriteFile(planPath, []byte(flakyPlan), 0o600))

	// Replanning was asked for and refused: the run failed, with the halt
	// as its error.
	code, doc, stderr := runJSON(t, planPath, "--registry", reg, "--replan", "--max-replans", "0")
	require.Equal(t, exitInvalid, code, stderr)
	assert.Equal(t, "failed", doc["status"])
	assert.Equal(t, "max_replans", doc["halt"])
	assert.Contains(t, doc["error"], "replanning halted (max_replans): task b failed and no replan is left: ")
	assert.Equal(t, 0.0, doc["replan_count"])
	assert.Equal(t, []any{}, doc["replan_history"])
	assert.Empty(t, f.got(kindRepair))

	require.NoError(t, os.Remove(filepath.Join(dir, "flaky-ran")))
	code, stdout, stderr := dagent(t, "", "run", planPath, "--registry", reg, "--replan", "--max-replans", "0")
	require.Equal(t, exitInvalid, code, stderr)
	assert.Regexp(t, `replanning halted \(max_replans\): the replans reached --max-replans\nfailed after \S+: replanning halted \(max_replans\): task b failed and no replan is left: `, stdout)
}

// TestRunReplanFails: the planner's answer drops the completed task every
// time, so there is no repair plan: the progress says so, and the run
// fails halted.
func TestRunReplanFails(t *testing.T) {
	dropA := `{"tasks": [{"id": "b_again", "agent": "flaky", "input": "try again"}]}`
	startLLM(t, script{kindRepair: {route(dropA)}})
	dir := t.TempDir()
	reg := flakyRegistry(t, dir)
	planPath := filepath.Join(dir, "plan.json")
	require.NoError(t, os.WriteFile(planPath, []byte(flakyPlan), 0o600))

	code, stdout, stderr := dagent(t, "", "run", planPath, "--registry", reg, "--replan")
	require.Equal(t, exitInvalid, code, stderr)
	assert.Regexp(t, `(?m)^ +\S+  replan after b failed \(agent_error: .*flaky failure\): no repair plan: metaplanner: no valid plan after 2 attempts: .*\[dropped_completed\]$`, stderr)
	assert.Contains(t, stdout, "replanning halted (replan_failed): the planner gave no repair plan\nfailed after ")
	assert.Contains(t, stdout, ": replanning halted (replan_failed): no repair plan after task b failed: ")
}

func TestRunMission(t *testing.T) {
	f := startLLM(t, script{kindPlan: {route(helloPlan)}, kindAgent: {"Hello!"}})
	code, doc, stderr := runJSON(t, "--mission", "Greet the user")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "completed", doc["status"])
	assert.Equal(t, "Hello!", taskField(t, doc, "greet", "output"))
	assert.Equal(t, 0.0, doc["replan_count"])
	assert.Equal(t, 1.0, doc["execution_attempts"])
	assert.Equal(t, map[string]any{"prompt_tokens": 200.0, "completion_tokens": 40.0}, doc["usage"], "the planner's call and the agent's")
	assert.Equal(t, "Greet the user", doc["plan"].(map[string]any)["mission"])
	assert.Contains(t, lastUser(t, f.got(kindPlan)[0]), "Greet the user")

	// The mission again, in the same journal: its plan is cached, and the
	// second run plans only with --no-cache.
	code, stdout, stderr := dagent(t, "", "run", "--mission", "Greet the user", "--no-cache")
	require.Equal(t, exitOK, code, stderr)
	assert.Regexp(t, `^run \S+\n\nTASK`, stdout, "the run's id first, then the result")
	assert.Regexp(t, `^planned 1 task in 1 attempt\n`, stderr, "the plan first, on standard error")
	assert.Contains(t, stdout, "== greet ==\nHello!")
	assert.Len(t, f.got(kindPlan), 2)
}

// A mission run again costs no planning call: its plan comes from the
// journal's cache, keyed by the normalised mission and the registry's
// digest, unless --no-cache; a changed registry plans again.
func TestRunMissionCache(t *testing.T) {
	f := startLLM(t, script{kindPlan: {route(`{"tasks": [{"id": "count", "agent": "wc", "input": "one two"}]}`)}})
	dir := t.TempDir()
	reg := filepath.Join(dir, "registry.yaml")
	writeReg := func(description string) {
		t.Helper()
		require.NoError(t, os.WriteFile(reg, []byte(`workers:
  wc:
    description: `+description+`
    outputs: [words]
    command: [sh, -c, 'echo "{\"words\": 2}"']
`), 0o600))
	}
	writeReg("counts words")
	run := func(mission string, flags ...string) (int, string) {
		t.Helper()
		code, stdout, stderr := dagent(t, "", append([]string{"run", "--mission", mission, "--registry", reg}, flags...)...)
		require.Equal(t, exitOK, code, stderr)
		assert.Contains(t, stdout, "== count ==")
		return len(f.got(kindPlan)), stderr
	}

	calls, stderr := run("Count the words")
	assert.Equal(t, 1, calls)
	assert.Regexp(t, `^planned 1 task in 1 attempt\n`, stderr)

	calls, stderr = run("  Count the   words")
	assert.Equal(t, 1, calls, "the second run makes no LLM call")
	assert.Regexp(t, `^reused the cached plan of 1 task \(--no-cache plans again\)\n`, stderr)

	calls, _ = run("Count the words", "--no-cache")
	assert.Equal(t, 2, calls, "--no-cache plans")

	writeReg("counts the words of its input")
	calls, _ = run("Count the words")
	assert.Equal(t, 3, calls, "the registry changed: its digest is another")
	calls, _ = run("Count the words")
	assert.Equal(t, 3, calls, "and the new plan is cached")

	calls, _ = run("Count the words", "--no-journal")
	assert.Equal(t, 4, calls, "without a journal, there is no cache")

	code, _, stderr := dagent(t, "", "run", "--mission", "Count the words", "--registry", reg, "--memory", "5")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, 4, len(f.got(kindPlan)), "memory does not bypass the cache")
	code, _, stderr = dagent(t, "", "run", "--mission", "Count the words", "--registry", reg, "--memory", "5", "--no-cache")
	require.Equal(t, exitOK, code, stderr)
	plans := f.got(kindPlan)
	require.Len(t, plans, 5)
	assert.Contains(t, lastUser(t, plans[4]), "- agent wc: ", "the planner sees how wc fared")
}

func TestRunMemoryFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"run", "--mission", "m", "--memory", "-1"}, "--memory must not be negative"},
		{[]string{"run", "plan.json", "--memory", "3"}, "--memory needs --mission without a PLAN"},
		{[]string{"run", "--mission", "m", "--memory", "3", "--no-journal"}, "cannot be combined with --no-journal"},
	}
	for _, tc := range tests {
		code, _, stderr := dagent(t, "", tc.args...)
		assert.Equal(t, exitUsage, code, tc.args)
		assert.Contains(t, stderr, tc.want, tc.args)
	}
}

func TestRunBudget(t *testing.T) {
	f := startLLM(t, script{kindPlan: {route(helloPlan)}, kindAgent: {"Hello!"}})
	code, doc, stderr := runJSON(t, "--mission", "Greet the user", "--max-llm-calls", "1")
	require.Equal(t, exitInvalid, code, stderr)
	assert.Equal(t, "failed", doc["status"])
	assert.Contains(t, taskField(t, doc, "greet", "error"), "llm: budget exceeded: 1 calls made of a budget of 1")
	assert.Equal(t, "budget_exceeded", doc["halt"])
	assert.Equal(t, 0.0, doc["replan_count"])
	assert.Empty(t, f.got(kindAgent), "the call over the budget never left")
}

func TestRunRefusedPlan(t *testing.T) {
	startLLM(t, script{})
	dir := writeFiles(t, map[string]string{
		"plan.json":     `{"mission": "Search", "agents": {"s": {"prompt": "You search.", "tools": ["web_search"]}}, "tasks": [{"id": "a", "agent": "s"}]}`,
		"registry.yaml": shRegistry,
	})
	code, stdout, stderr := dagent(t, "", "run", filepath.Join(dir, "plan.json"), "--registry", filepath.Join(dir, "registry.yaml"), "--replan")
	assert.Equal(t, exitInvalid, code)
	assert.Empty(t, stdout)
	// The registry is the catalog the plan is checked against as it is
	// loaded: a tool it lacks is a problem of the plan, as an unknown
	// worker is.
	assert.Contains(t, stderr, `plan: agents.s.tools: agent "s" uses tool "web_search", which the host's catalog does not have [unknown_tool]`)
}

func TestRunReplanBadInput(t *testing.T) {
	startLLM(t, script{})
	dir := writeFiles(t, map[string]string{
		"plan.json":     `{"tasks": [{"id": "a", "agent": "echo"}]}`,
		"registry.yaml": shRegistry,
		"initial.json":  `{"a": 1}`,
	})
	planPath, reg := filepath.Join(dir, "plan.json"), filepath.Join(dir, "registry.yaml")
	tests := []struct {
		name   string
		args   []string
		stderr string
	}{
		{"neither a plan nor a mission", []string{"run"}, "run needs a PLAN, or --mission MISSION to plan one first"},
		{"a replan flag without replanning", []string{"run", planPath, "--registry", reg, "--max-replans", "2"}, "--max-replans needs --replan or --mission"},
		{"no mission to replan toward", []string{"run", planPath, "--registry", reg, "--replan"}, "--replan needs a mission: the plan has none"},
		{"initial results", []string{"run", planPath, "--registry", reg, "--mission", "m", "--initial-results", filepath.Join(dir, "initial.json")}, "--initial-results cannot be combined"},
		{"a negative budget", []string{"run", planPath, "--registry", reg, "--max-tokens", "-1"}, "must not be negative"},
		{"two plans", []string{"run", planPath, planPath}, "accepts at most 1 arg(s)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := dagent(t, "", tt.args...)
			assert.Equal(t, exitUsage, code)
			assert.Empty(t, stdout)
			assert.Contains(t, stderr, tt.stderr)
		})
	}
}
