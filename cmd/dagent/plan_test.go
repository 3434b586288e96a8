package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Answers of the scripted planner.
const (
	// helloPlan is a plan of one task on the default agent, with a
	// warning-free review.
	helloPlan = `{"mission": "Greet the user", "tasks": [{"id": "greet", "input": "Say hello to the user"}]}`
	// badPlan names an agent that exists nowhere.
	badPlan = `{"mission": "Greet the user", "tasks": [{"id": "greet", "agent": "nope", "input": "Say hello"}]}`
)

// route wraps a plan in the planner's answer envelope.
func route(plan string) string { return `{"route": "plan", "plan": ` + plan + `}` }

func TestPlanPrintsThePlan(t *testing.T) {
	f := startLLM(t, script{kindPlan: {route(helloPlan)}})
	code, stdout, stderr := dagent(t, "", "plan", "Greet the user")
	require.Equal(t, exitOK, code, stderr)
	_, want, _ := dagent(t, helloPlan, "fmt", "-")
	assert.Equal(t, want, stdout, "the plan's canonical JSON")
	assert.Empty(t, stderr)

	require.Len(t, f.got(kindPlan), 1)
	body := f.got(kindPlan)[0]
	assert.Equal(t, "test-model", body["model"], "the model comes from DAGENT_MODEL")
	assert.Contains(t, lastUser(t, body), "Greet the user")
}

func TestPlanWritesTheFile(t *testing.T) {
	startLLM(t, script{kindPlan: {route(helloPlan)}})
	path := filepath.Join(t.TempDir(), "plan.json")
	code, stdout, stderr := dagent(t, "", "plan", "-o", path, "--model", "other-model", "Greet the user")
	require.Equal(t, exitOK, code, stderr)
	assert.Empty(t, stdout)
	written, err := os.ReadFile(path)
	require.NoError(t, err)
	_, want, _ := dagent(t, helloPlan, "fmt", "-")
	assert.Equal(t, want, string(written))

	// The file runs as it is.
	code, _, stderr = dagent(t, "", "lint", path)
	assert.Equal(t, exitOK, code, stderr)
}

func TestPlanModelFlag(t *testing.T) {
	f := startLLM(t, script{kindPlan: {route(helloPlan)}})
	code, _, stderr := dagent(t, "", "plan", "--model", "other-model", "Greet the user")
	require.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "other-model", f.got(kindPlan)[0]["model"], "--model wins over DAGENT_MODEL")
}

func TestPlanMissionFromStdin(t *testing.T) {
	f := startLLM(t, script{kindPlan: {route(helloPlan)}})
	code, _, stderr := dagent(t, "Greet the user\nin French", "plan", "-")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, lastUser(t, f.got(kindPlan)[0]), "in French")
}

func TestPlanJSON(t *testing.T) {
	startLLM(t, script{kindPlan: {route(helloPlan)}})
	code, stdout, stderr := dagent(t, "", "plan", "--format", "json", "Greet the user")
	require.Equal(t, exitOK, code, stderr)
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc), stdout)
	assert.Equal(t, "plan", doc["route"])
	assert.Nil(t, doc["answer"])
	assert.Nil(t, doc["question"])
	assert.Equal(t, 1.0, doc["attempts"])
	assert.Equal(t, map[string]any{"prompt_tokens": 100.0, "completion_tokens": 20.0}, doc["usage"])
	report := doc["report"].(map[string]any)
	assert.Equal(t, 10.0, report["score"])
	assert.Equal(t, []any{}, report["issues"])
	p := doc["plan"].(map[string]any)
	assert.Equal(t, "Greet the user", p["mission"])
	tasks := p["tasks"].([]any)
	require.Len(t, tasks, 1)
	assert.Equal(t, "greet", tasks[0].(map[string]any)["id"])
}

func TestPlanRoutes(t *testing.T) {
	tests := []struct {
		name   string
		answer string
		code   int
		stdout string
		json   map[string]any
	}{
		{
			name:   "a direct answer",
			answer: `{"route": "synthesis", "answer": "Bonjour means hello."}`,
			code:   exitAnswered,
			stdout: "Bonjour means hello.\n",
			json:   map[string]any{"route": "synthesis", "answer": "Bonjour means hello.", "question": nil, "plan": nil},
		},
		{
			name:   "a clarifying question",
			answer: `{"route": "clarify", "question": "Which of your two repositories?"}`,
			code:   exitClarify,
			stdout: "Which of your two repositories?\n",
			json:   map[string]any{"route": "clarify", "answer": nil, "question": "Which of your two repositories?", "plan": nil},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			startLLM(t, script{kindPlan: {tt.answer}})
			code, stdout, stderr := dagent(t, "", "plan", "Check my repository")
			assert.Equal(t, tt.code, code, stderr)
			assert.Equal(t, tt.stdout, stdout)
			assert.Empty(t, stderr)

			code, stdout, stderr = dagent(t, "", "plan", "-f", "json", "Check my repository")
			assert.Equal(t, tt.code, code, stderr)
			var doc map[string]any
			require.NoError(t, json.Unmarshal([]byte(stdout), &doc), stdout)
			for k, v := range tt.json {
				assert.Equal(t, v, doc[k], k)
			}

			// dagent run --mission stops at the answer the same way.
			code, stdout, stderr = dagent(t, "", "run", "--mission", "Check my repository")
			assert.Equal(t, tt.code, code, stderr)
			assert.Equal(t, tt.stdout, stdout)
		})
	}
}

func TestPlanCorrectsAnInvalidPlan(t *testing.T) {
	f := startLLM(t, script{kindPlan: {route(badPlan), route(helloPlan)}})
	code, stdout, stderr := dagent(t, "", "plan", "--format", "json", "Greet the user")
	require.Equal(t, exitOK, code, stderr)
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc), stdout)
	assert.Equal(t, 2.0, doc["attempts"])
	assert.Equal(t, map[string]any{"prompt_tokens": 200.0, "completion_tokens": 40.0}, doc["usage"])
	tasks := doc["plan"].(map[string]any)["tasks"].([]any)
	assert.Equal(t, "default", tasks[0].(map[string]any)["agent"], "the corrected plan")

	requests := f.got(kindPlan)
	require.Len(t, requests, 2)
	assert.Contains(t, lastUser(t, requests[1]), `"nope"`, "the findings went back to the model")
}

func TestPlanNoValidPlan(t *testing.T) {
	f := startLLM(t, script{kindPlan: {route(badPlan)}})
	code, stdout, stderr := dagent(t, "", "plan", "Greet the user")
	assert.Equal(t, exitInvalid, code)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "dagent: no valid plan after 3 attempts; the findings of the last answer:\n")
	assert.Contains(t, stderr, `critical: task greet: agent: agent "nope" is not defined`)
	assert.Contains(t, stderr, "\n  fix: ")
	assert.Len(t, f.got(kindPlan), 3, "the first answer and two corrections")

	code, stdout, _ = dagent(t, "", "plan", "--format", "json", "Greet the user")
	assert.Equal(t, exitInvalid, code)
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc), stdout)
	assert.Nil(t, doc["plan"], "a plan that is not valid is not printed")
	assert.Contains(t, doc["error"], "no valid plan")
	report := doc["report"].(map[string]any)
	issues := report["issues"].([]any)
	require.NotEmpty(t, issues)
	assert.Equal(t, "critical", issues[0].(map[string]any)["severity"])
	assert.Equal(t, "greet", issues[0].(map[string]any)["task_id"])

	// dagent run --mission neither.
	code, stdout, stderr = dagent(t, "", "run", "--mission", "Greet the user")
	assert.Equal(t, exitInvalid, code)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "no valid plan after 3 attempts")
}

func TestPlanBadInput(t *testing.T) {
	startLLM(t, script{kindPlan: {route(helloPlan)}})
	tests := []struct {
		name   string
		args   []string
		stderr string
	}{
		{"no mission", []string{"plan"}, "accepts 1 arg(s), received 0"},
		{"an empty mission", []string{"plan", "  "}, "the mission is empty"},
		{"an unknown format", []string{"plan", "-f", "yaml", "x"}, `unknown format "yaml"`},
		{"record and replay", []string{"plan", "--record", "a", "--replay", "b", "x"}, "[record replay] were all set"},
		{"a replay that does not exist", []string{"plan", "--replay", "/nonexistent/rec.jsonl", "x"}, "llm: replay:"},
		{"a registry that does not exist", []string{"plan", "--registry", "/nonexistent/r.yaml", "x"}, "read registry"},
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

func TestPlanNoModel(t *testing.T) {
	startLLM(t, script{kindPlan: {route(helloPlan)}})
	t.Setenv("DAGENT_MODEL", "")
	code, _, stderr := dagent(t, "", "plan", "Greet the user")
	assert.Equal(t, exitUsage, code)
	assert.Equal(t, "dagent: this command needs a model: set DAGENT_MODEL or pass --model NAME\n", stderr)
}

// --brief gives the planner short prompts and --max-corrections bounds its
// corrections: what a model with a small context needs.
func TestPlanBriefAndMaxCorrections(t *testing.T) {
	f := startLLM(t, script{kindPlan: {route(badPlan)}})
	code, _, stderr := dagent(t, "", "plan", "--brief", "--max-corrections", "0", "Greet the user")
	assert.Equal(t, exitInvalid, code)
	assert.Contains(t, stderr, "no valid plan after 1 attempt;")
	requests := f.got(kindPlan)
	require.Len(t, requests, 1, "no correction asked for")
	system := requests[0]["messages"].([]any)[0].(map[string]any)["content"].(string)
	assert.Less(t, len(system), 1200, "the brief system prompt")

	f = startLLM(t, script{kindPlan: {route(badPlan)}})
	dagent(t, "", "plan", "Greet the user")
	system = f.got(kindPlan)[0]["messages"].([]any)[0].(map[string]any)["content"].(string)
	assert.Greater(t, len(system), 4000, "the full system prompt")
}
