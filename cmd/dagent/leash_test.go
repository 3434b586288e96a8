package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// requestSchema is the JSON Schema a request's structured output asks for.
func requestSchema(t *testing.T, body map[string]any) map[string]any {
	t.Helper()
	format, _ := body["response_format"].(map[string]any)
	js, _ := format["json_schema"].(map[string]any)
	s, ok := js["schema"].(map[string]any)
	require.True(t, ok, "no schema in %v", body)
	return s
}

func routeEnum(t *testing.T, body map[string]any) []any {
	t.Helper()
	props := requestSchema(t, body)["properties"].(map[string]any)
	return props["route"].(map[string]any)["enum"].([]any)
}

// TestPlanSchemaHeldToRegistry: with a registry, the schema sent restricts
// the tasks' agents to its workers and "default", and the agents' tools to
// its tools.
func TestPlanSchemaHeldToRegistry(t *testing.T) {
	f := startLLM(t, script{kindPlan: {route(`{"tasks": [{"id": "hi", "agent": "echo", "input": "hi"}]}`)}})
	dir := t.TempDir()
	reg := filepath.Join(dir, "registry.yaml")
	require.NoError(t, os.WriteFile(reg, []byte(shRegistry), 0o600))
	code, _, stderr := dagent(t, "", "plan", "--registry", reg, "Say hi")
	require.Equal(t, exitOK, code, stderr)

	s := requestSchema(t, f.got(kindPlan)[0])
	defs := s["$defs"].(map[string]any)
	agent := defs["CatalogTask"].(map[string]any)["properties"].(map[string]any)["agent"].(map[string]any)
	assert.Contains(t, agent["enum"], "default")
	assert.Contains(t, agent["enum"], "echo")
	tools := defs["Agent"].(map[string]any)["properties"].(map[string]any)["tools"].(map[string]any)
	assert.Equal(t, 0.0, tools["maxItems"], "the registry has no tools")
	assert.Equal(t, []any{"plan", "synthesis", "clarify"}, routeEnum(t, f.got(kindPlan)[0]))
}

func TestPlanReasonJSON(t *testing.T) {
	startLLM(t, script{kindPlan: {`{"route": "plan", "reason": "One greeting does it.", "plan": ` + helloPlan + `}`}})
	code, stdout, stderr := dagent(t, "", "plan", "--format", "json", "Greet the user")
	require.Equal(t, exitOK, code, stderr)
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc), stdout)
	assert.Equal(t, "One greeting does it.", doc["reason"])
}

func TestPlanOnly(t *testing.T) {
	answer := `{"route": "synthesis", "answer": "Hello!"}`
	question := `{"route": "clarify", "question": "Whom?"}`
	t.Run("corrected", func(t *testing.T) {
		f := startLLM(t, script{kindPlan: {answer, route(helloPlan)}})
		code, stdout, stderr := dagent(t, "", "plan", "--plan-only", "--format", "json", "Greet the user")
		require.Equal(t, exitOK, code, stderr)
		var doc map[string]any
		require.NoError(t, json.Unmarshal([]byte(stdout), &doc), stdout)
		assert.Equal(t, "plan", doc["route"])
		assert.Equal(t, 2.0, doc["attempts"])
		reqs := f.got(kindPlan)
		require.Len(t, reqs, 2)
		assert.Equal(t, []any{"plan"}, routeEnum(t, reqs[0]))
		assert.Contains(t, lastUser(t, reqs[1]), "[forbidden_route]")
	})
	t.Run("refused", func(t *testing.T) {
		startLLM(t, script{kindPlan: {question}})
		code, stdout, stderr := dagent(t, "", "plan", "--plan-only", "Greet the user")
		assert.Equal(t, exitInvalid, code, "a question is no valid answer")
		assert.Empty(t, stdout)
		assert.Contains(t, stderr, `route "clarify" is not allowed here: the host accepts only plan [forbidden_route]`)
	})
	t.Run("run", func(t *testing.T) {
		f := startLLM(t, script{kindPlan: {answer, route(helloPlan)}, kindAgent: {"Hello!"}})
		code, doc, stderr := runJSON(t, "--mission", "Greet the user", "--plan-only")
		require.Equal(t, exitOK, code, stderr)
		assert.Equal(t, "completed", doc["status"])
		assert.Equal(t, []any{"plan"}, routeEnum(t, f.got(kindPlan)[0]))
	})
}

// TestRunReplanGivesUp: the planner's repair gives up with a reason, which
// halts the run cleanly.
func TestRunReplanGivesUp(t *testing.T) {
	f := startLLM(t, script{kindRepair: {`{"route": "give_up", "reason": "The service is gone; no worker can reach it."}`}})
	dir := t.TempDir()
	reg := flakyRegistry(t, dir)
	planPath := filepath.Join(dir, "plan.json")
	require.NoError(t, os.WriteFile(planPath, []byte(flakyPlan), 0o600))

	code, doc, stderr := runJSON(t, planPath, "--registry", reg, "--replan")
	require.Equal(t, exitInvalid, code, stderr)
	assert.Equal(t, "failed", doc["status"])
	assert.Equal(t, "gave_up", doc["halt"])
	assert.Equal(t, "replanning halted (gave_up): the planner gave up after task b failed: The service is gone; no worker can reach it.", doc["error"])
	assert.Equal(t, []any{"plan", "give_up"}, routeEnum(t, f.got(kindRepair)[0]))

	require.NoError(t, os.Remove(filepath.Join(dir, "flaky-ran")))
	code, stdout, stderr := dagent(t, "", "run", planPath, "--registry", reg, "--replan")
	require.Equal(t, exitInvalid, code, stderr)
	assert.Contains(t, stdout, "replanning halted (gave_up): the planner gave up\n")
}
