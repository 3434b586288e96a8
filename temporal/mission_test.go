package temporal

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/metaplanner"
	"github.com/dagent-dev/dagent/runner"
)

// planner is a model that answers the planner with answer, a judge with a
// pass and an agent with "done", each answer costing 120 tokens.
func planner(answer string) llm.Client {
	return llm.ClientFunc(func(ctx context.Context, req llm.Request) (llm.Response, error) {
		if req.Schema != nil && req.Schema.Name == metaplanner.SchemaName {
			return llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: answer}, Usage: llm.Usage{PromptTokens: 100, CompletionTokens: 20}}, nil
		}
		return scripted(ctx, req)
	})
}

const twoTasks = `{"route": "plan", "reason": "write twice", "plan": {"mission": "ship", "agents": {"writer": {"prompt": "You write."}},
	"tasks": [{"id": "a", "agent": "writer", "input": "one"}, {"id": "b", "agent": "writer", "input": "two", "depends_on": ["a"]}]}}`

// TestWorkflowPlansTheMission runs a spec with a mission and no plan in
// process and on Temporal: the planner's plan runs alike, and a mission
// the planner answers itself runs nothing.
func TestWorkflowPlansTheMission(t *testing.T) {
	tests := []struct {
		name   string
		answer string
		spec   durable.Spec
		status runner.Status
	}{
		{name: "plain run", answer: twoTasks, spec: durable.Spec{Mission: "ship"}, status: runner.StatusCompleted},
		{name: "replanning", answer: twoTasks, spec: durable.Spec{Mission: "ship", Replan: durable.ReplanDefaults()}, status: runner.StatusCompleted},
		{name: "budget", answer: twoTasks, spec: durable.Spec{Mission: "ship", Budget: executor.Budget{MaxCalls: 2}}, status: runner.StatusFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := planner(tt.answer)
			local, err := durable.Start(context.Background(), nil, tt.spec, durable.WithRunID("mission"),
				durable.WithLLM(func(string, bool) (llm.Client, error) { return model, nil }))
			require.NoError(t, err)
			require.NotNil(t, local.Result)

			e := env(t, nil, WithLLM(model))
			e.ExecuteWorkflow(WorkflowName, Input{RunID: "mission", Spec: tt.spec})
			got := outcome(t, e)
			assert.Equal(t, tt.status, local.Result.Status)
			assert.Equal(t, local.Result.Status, got.Run.Status)
			for _, id := range []string{"a", "b"} {
				w, g := local.Result.Tasks[id], got.Run.Tasks[id]
				assert.Equal(t, w.Status, g.Status, id)
				assert.Equal(t, w.Class, g.Class, id)
				assert.Equal(t, w.Output, g.Output, id)
			}
			assert.Equal(t, local.Execution != nil, got.Execution != nil)
			if local.Execution != nil {
				assert.Equal(t, local.Execution.Usage, got.Execution.Usage)
			}
		})
	}
}

func TestWorkflowMissionAnswered(t *testing.T) {
	e := env(t, nil, WithLLM(planner(`{"route": "synthesis", "reason": "it is short", "answer": "42"}`)))
	e.ExecuteWorkflow(WorkflowName, Input{RunID: "answered", Spec: durable.Spec{Mission: "what is six times seven?"}})
	require.True(t, e.IsWorkflowCompleted())
	require.NoError(t, e.GetWorkflowError())
	var o Outcome
	require.NoError(t, e.GetWorkflowResult(&o))
	assert.Nil(t, o.Run)
	require.NotNil(t, o.Planned)
	assert.Equal(t, metaplanner.RouteSynthesis, o.Planned.Route)
	assert.Equal(t, "42", o.Planned.Answer)
	assert.Empty(t, o.PlanError)

	raw, err := json.Marshal(o)
	require.NoError(t, err)
	assert.JSONEq(t, `{"version": 1, "route": "synthesis", "plan": null, "answer": "42", "question": null, "reason": "it is short",
		"report": {"score": 0, "summary": "", "issues": []}, "attempts": 1, "usage": {"prompt_tokens": 100, "completion_tokens": 20}}`, string(raw))
}

func TestWorkflowMissionWithoutLLM(t *testing.T) {
	e := env(t, nil)
	e.ExecuteWorkflow(WorkflowName, Input{RunID: "nollm", Spec: durable.Spec{Mission: "ship"}})
	require.True(t, e.IsWorkflowCompleted())
	require.NoError(t, e.GetWorkflowError())
	var o Outcome
	require.NoError(t, e.GetWorkflowResult(&o))
	assert.Nil(t, o.Run)
	require.NotNil(t, o.Planned)
	assert.Contains(t, o.PlanError, ErrNoLLM.Error())
}

func TestWorkflowMissionWithoutValidPlan(t *testing.T) {
	cycle := `{"route": "plan", "plan": {"mission": "ship", "agents": {"writer": {"prompt": "You write."}}, "tasks": [
		{"id": "a", "agent": "writer", "input": "x", "depends_on": ["b"]}, {"id": "b", "agent": "writer", "input": "y", "depends_on": ["a"]}]}}`
	model := planner(cycle)
	spec := durable.Spec{Mission: "ship"}
	local, err := durable.Start(context.Background(), nil, spec, durable.WithLLM(func(string, bool) (llm.Client, error) { return model, nil }))
	require.ErrorIs(t, err, metaplanner.ErrNoValidPlan)
	require.NotNil(t, local.Planned)

	e := env(t, nil, WithLLM(model))
	e.ExecuteWorkflow(WorkflowName, Input{RunID: "cycle", Spec: spec})
	require.True(t, e.IsWorkflowCompleted())
	require.NoError(t, e.GetWorkflowError())
	var o Outcome
	require.NoError(t, e.GetWorkflowResult(&o))
	assert.Nil(t, o.Run)
	assert.Equal(t, err.Error(), o.PlanError)
	require.NotNil(t, o.Planned)
	assert.Nil(t, o.Planned.Plan, "a plan that is not valid is left out")
	require.Len(t, o.Planned.Report.Issues, len(local.Planned.Report.Issues))
	for i, is := range local.Planned.Report.Issues {
		assert.Equal(t, is.String(), o.Planned.Report.Issues[i].String())
	}
	assert.Equal(t, local.Planned.Attempts, o.Planned.Attempts)
}
