package temporal

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/judge"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/runner"
)

// scripted is a model whose every answer costs 100 prompt and 20
// completion tokens: a judge's verdict passes, any other answer is
// "done".
var scripted = llm.ClientFunc(func(_ context.Context, req llm.Request) (llm.Response, error) {
	content := "done"
	if req.Schema != nil && req.Schema.Name == judge.VerdictSchemaName {
		content = `{"pass": true, "reason": "it says something"}`
	}
	return llm.Response{
		Message: llm.Message{Role: llm.RoleAssistant, Content: content},
		Usage:   llm.Usage{PromptTokens: 100, CompletionTokens: 20},
	}, nil
})

// TestWorkflowBudgetOfAPlainRun runs the same plan of LLM agents under
// each budget in process and on Temporal: the calls past the budget are
// refused alike, and the results are the same.
func TestWorkflowBudgetOfAPlainRun(t *testing.T) {
	p := mustPlan(t, `{"agents": {"writer": {"prompt": "You write."}},
		"tasks": [
		{"id": "a", "agent": "writer", "input": "one"},
		{"id": "b", "agent": "writer", "input": "two", "depends_on": ["a"], "rubric": "says something"},
		{"id": "c", "agent": "writer", "input": "three", "depends_on": ["b"], "rubric": "says something",
		 "on_failure": "retry", "max_retries": 1},
		{"id": "d", "agent": "writer", "input": "four", "depends_on": ["c"], "critical": false}]}`)
	tests := []struct {
		name   string
		budget executor.Budget
		judge  int
		// status of each task, in plan order.
		status []runner.TaskStatus
		// class of the task that failed, if one did.
		class runner.Class
		// unstarted is a task whose attempts, made past the budget, are
		// no activities on Temporal.
		unstarted string
	}{
		{name: "none", status: []runner.TaskStatus{runner.TaskDone, runner.TaskDone, runner.TaskDone, runner.TaskDone}},
		{name: "calls before a judgement", budget: executor.Budget{MaxCalls: 2},
			status: []runner.TaskStatus{runner.TaskDone, runner.TaskFailed, runner.TaskPending, runner.TaskPending}, class: runner.ClassBudget},
		{name: "calls before an attempt", budget: executor.Budget{MaxCalls: 3},
			status: []runner.TaskStatus{runner.TaskDone, runner.TaskDone, runner.TaskFailed, runner.TaskPending}, class: runner.ClassBudget, unstarted: "c"},
		{name: "tokens before an attempt", budget: executor.Budget{MaxTokens: 360},
			status: []runner.TaskStatus{runner.TaskDone, runner.TaskDone, runner.TaskFailed, runner.TaskPending}, class: runner.ClassBudget, unstarted: "c"},
		{name: "tokens of the last task", budget: executor.Budget{MaxTokens: 600},
			status: []runner.TaskStatus{runner.TaskDone, runner.TaskDone, runner.TaskDone, runner.TaskSkipped}},
		{name: "the judge's own calls", judge: 1,
			status: []runner.TaskStatus{runner.TaskDone, runner.TaskDone, runner.TaskFailed, runner.TaskPending}, class: runner.ClassBudget},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := durable.Spec{Plan: p, Budget: tt.budget, Judge: &durable.JudgeSpec{MaxCalls: tt.judge}}
			local, err := durable.Start(context.Background(), nil, spec, durable.WithRunID("budget"),
				durable.WithLLM(func(string, bool) (llm.Client, error) { return scripted, nil }))
			require.NoError(t, err)
			want := local.Result

			var served atomic.Int32
			model := llm.ClientFunc(func(ctx context.Context, req llm.Request) (llm.Response, error) {
				served.Add(1)
				return scripted(ctx, req)
			})
			e := env(t, nil, WithLLM(model))
			started := map[string]int{}
			e.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, args converter.EncodedValues) {
				if info.ActivityType.Name == ActivityAttempt {
					var in AttemptRequest
					require.NoError(t, args.Get(&in))
					started[in.Request.TaskID]++
				}
			})
			e.ExecuteWorkflow(WorkflowName, Input{RunID: "budget", Spec: spec, Backoff: &runner.Backoff{Initial: time.Millisecond}})
			got := outcome(t, e).Run

			for i, id := range []string{"a", "b", "c", "d"} {
				w, g := want.Tasks[id], got.Tasks[id]
				assert.Equal(t, tt.status[i], w.Status, "%s in process", id)
				assert.Equal(t, w.Status, g.Status, id)
				assert.Equal(t, w.Class, g.Class, id)
				assert.Equal(t, w.Attempts, g.Attempts, id)
				assert.Equal(t, w.Usage, g.Usage, id)
				assert.Equal(t, w.Output, g.Output, id)
				if w.Err != nil {
					require.Error(t, g.Err, id)
					assert.Equal(t, w.Err.Error(), g.Err.Error(), id)
				} else {
					assert.NoError(t, g.Err, id)
				}
			}
			if tt.unstarted != "" {
				assert.Equal(t, 2, got.Tasks[tt.unstarted].Attempts)
				assert.Zero(t, started[tt.unstarted], "no activity for an attempt past the budget")
			}
			if n := tt.budget.MaxCalls; n > 0 {
				assert.EqualValues(t, n, served.Load(), "no call past the budget reaches the model")
			}
			assert.Equal(t, want.Status, got.Status)
			assert.Equal(t, want.Usage, got.Usage)
			for id, g := range got.Tasks {
				if g.Status == runner.TaskFailed {
					assert.Equal(t, tt.class, g.Class, id)
				}
			}
		})
	}
}

// TestWorkflowBudgetOfARunThatReplans halts a run that replans on its
// budget, as in process: the LLM calls of its attempts count.
func TestWorkflowBudgetOfARunThatReplans(t *testing.T) {
	p := mustPlan(t, `{"mission": "m", "agents": {"writer": {"prompt": "You write."}},
		"tasks": [
		{"id": "a", "agent": "writer", "input": "one"},
		{"id": "b", "agent": "writer", "input": "two", "depends_on": ["a"]}]}`)
	spec := durable.Spec{Plan: p, Replan: durable.ReplanDefaults(), Budget: executor.Budget{MaxCalls: 1}}
	local, err := durable.Start(context.Background(), nil, spec, durable.WithRunID("replans"),
		durable.WithLLM(func(string, bool) (llm.Client, error) { return scripted, nil }))
	require.NoError(t, err)
	require.NotNil(t, local.Execution)

	e := env(t, nil, WithLLM(scripted))
	e.ExecuteWorkflow(WorkflowName, Input{RunID: "replans", Spec: spec})
	got := outcome(t, e)
	require.NotNil(t, got.Execution)
	assert.Equal(t, executor.HaltBudget, local.Execution.Halt)
	assert.Equal(t, local.Execution.Halt, got.Execution.Halt)
	assert.Equal(t, local.Execution.ReplanCount, got.Execution.ReplanCount)
	assert.Equal(t, local.Result.Status, got.Run.Status)
	assert.Equal(t, local.Result.Tasks["b"].Class, got.Run.Tasks["b"].Class)
	assert.Equal(t, local.Result.Tasks["b"].Err.Error(), got.Run.Tasks["b"].Err.Error())
}

// TestWorkflowBudgetOfARepair refuses the planner's repair past the
// budget, as in process.
func TestWorkflowBudgetOfARepair(t *testing.T) {
	p := mustPlan(t, `{"mission": "m", "agents": {"writer": {"prompt": "You write."}},
		"tasks": [
		{"id": "a", "agent": "writer", "input": "one"},
		{"id": "b", "agent": "broken", "input": "two", "depends_on": ["a"], "on_failure": "replan"}]}`)
	broken := agent.Func(func(context.Context, agent.Request) (agent.Result, error) {
		return agent.Result{}, errors.New("broken")
	})
	// The planner's first answer is no repair; the correction it asks
	// for is past the budget.
	spec := durable.Spec{Plan: p, Replan: durable.ReplanDefaults(), Budget: executor.Budget{MaxCalls: 2}, LLM: durable.LLMSpec{MaxCorrections: 2}}
	local, err := durable.Start(context.Background(), nil, spec, durable.WithRunID("repair"), durable.WithAgent("broken", broken),
		durable.WithLLM(func(string, bool) (llm.Client, error) { return scripted, nil }))
	require.NoError(t, err)
	require.NotNil(t, local.Execution)

	var served atomic.Int32
	model := llm.ClientFunc(func(ctx context.Context, req llm.Request) (llm.Response, error) {
		served.Add(1)
		return scripted(ctx, req)
	})
	e := env(t, nil, WithLLM(model), WithAgent("broken", broken))
	e.ExecuteWorkflow(WorkflowName, Input{RunID: "repair", Spec: spec})
	got := outcome(t, e)
	require.NotNil(t, got.Execution)
	assert.EqualValues(t, 2, served.Load(), "the repair's correction is refused")
	assert.Equal(t, local.Execution.Halt, got.Execution.Halt)
	assert.Equal(t, local.Execution.Status, got.Execution.Status)
	assert.Equal(t, local.Execution.Usage, got.Execution.Usage)
	require.Error(t, local.Execution.Err)
	require.Error(t, got.Execution.Err)
	assert.Equal(t, local.Execution.Err.Error(), got.Execution.Err.Error())
	assert.ErrorIs(t, local.Execution.Err, llm.ErrBudgetExceeded)
}
