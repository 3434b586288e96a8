package executor_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/plan"
	"github.com/dagent-dev/dagent/runner"
)

func TestResultJSON(t *testing.T) {
	p, err := plan.Parse([]byte(`{"mission": "m", "tasks": [{"id": "a", "agent": "echo"}, {"id": "b", "agent": "echo", "depends_on": ["a"]}]}`))
	require.NoError(t, err)
	res := executor.Result{
		Result: runner.Result{
			RunID: "r1", Status: runner.StatusFailed, Err: errors.New("task b: boom"),
			Tasks: map[string]*runner.TaskResult{
				"a": {ID: "a", Status: runner.TaskDone, Attempts: 1, Output: "x"},
				"b": {ID: "b", Status: runner.TaskFailed, Attempts: 1, Err: errors.New("boom"), Class: runner.ClassAgentError, Diagnosis: "boom"},
			},
			Duration: 2 * time.Second,
			Usage:    llm.Usage{PromptTokens: 10, CompletionTokens: 2},
		},
		Plan: p, ReplanCount: 1, ExecutionAttempts: 2,
		History: []executor.Trial{{Attempt: 1, TaskID: "b", Class: "agent_error", Diagnosis: "boom", NewTaskCount: 1}},
		Halt:    executor.HaltSameFailure,
	}
	b, err := json.Marshal(res)
	require.NoError(t, err)

	var keys []string
	dec := json.NewDecoder(bytes.NewReader(b))
	_, err = dec.Token()
	require.NoError(t, err)
	for dec.More() {
		k, err := dec.Token()
		require.NoError(t, err)
		keys = append(keys, k.(string))
		var skip json.RawMessage
		require.NoError(t, dec.Decode(&skip))
	}
	assert.Equal(t, []string{"version", "run_id", "status", "error", "duration_ms", "tasks", "pending_reviews", "replan",
		"replan_count", "execution_attempts", "usage", "replan_history", "halt", "plan"}, keys,
		"a run's form, then what replanning adds")

	var run runner.Result
	require.NoError(t, json.Unmarshal(b, &run), "a run's result reads the document too")
	assert.Equal(t, map[string]any{"a": "x"}, run.Outputs())

	var back executor.Result
	require.NoError(t, json.Unmarshal(b, &back))
	again, err := json.Marshal(back)
	require.NoError(t, err)
	assert.JSONEq(t, string(b), string(again))
	assert.Equal(t, executor.HaltSameFailure, back.Halt)
	assert.Equal(t, res.History, back.History)
	assert.Equal(t, res.Usage, back.Usage)
	assert.EqualError(t, back.Err, "task b: boom")
	require.NotNil(t, back.Plan)
	assert.Equal(t, p.Tasks[1].DependsOn, back.Plan.Tasks[1].DependsOn)

	none, err := json.Marshal(executor.Result{})
	require.NoError(t, err)
	assert.JSONEq(t, `{"version": 1, "run_id": "", "status": "", "error": null, "duration_ms": 0, "tasks": {},
		"pending_reviews": [], "replan": null, "replan_count": 0, "execution_attempts": 0,
		"usage": {"prompt_tokens": 0, "completion_tokens": 0}, "replan_history": [], "halt": null, "plan": null}`, string(none))
}
