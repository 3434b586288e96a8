package temporal

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/durable"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/metaplanner"
	"github.com/dagent-dev/dagent/runner"
)

// roundPlanner is a model whose round planner answers answers in turn
// (the last one again after them) and whose agents and judge answer as
// scripted does.
func roundPlanner(answers ...string) llm.Client {
	var n atomic.Int32
	return llm.ClientFunc(func(ctx context.Context, req llm.Request) (llm.Response, error) {
		if req.Schema != nil && req.Schema.Name == metaplanner.RoundSchemaName {
			i := min(int(n.Add(1)), len(answers)) - 1
			return llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: answers[i]}, Usage: llm.Usage{PromptTokens: 100, CompletionTokens: 20}}, nil
		}
		return scripted(ctx, req)
	})
}

// TestWorkflowRounds plans a mission in rounds in process and on
// Temporal, alike.
func TestWorkflowRounds(t *testing.T) {
	first := `{"action": "continue", "agents": {"writer": {"prompt": "You write."}},
		"tasks": [{"id": "one", "agent": "writer", "input": "one"}]}`
	second := `{"action": "continue", "tasks": [{"id": "two", "agent": "writer", "input": "two {{results.one}}", "depends_on": ["one"]}]}`
	done := `{"action": "done", "deliverable": ["two"]}`
	failed := `{"action": "failed", "reason": "no way"}`
	tests := []struct {
		name    string
		answers []string
		spec    durable.Spec
		status  runner.Status
		halt    string
	}{
		{name: "done", answers: []string{first, second, done}, spec: durable.Spec{Mission: "write twice", Rounds: 3}, status: runner.StatusCompleted},
		{name: "from a plan", answers: []string{second, done}, spec: durable.Spec{Mission: "write twice", Rounds: 3, Plan: mustPlan(t, `{"mission": "write twice",
			"agents": {"writer": {"prompt": "You write."}}, "tasks": [{"id": "one", "agent": "writer", "input": "one"}]}`)}, status: runner.StatusCompleted},
		{name: "gives up", answers: []string{first, failed}, spec: durable.Spec{Mission: "write twice", Rounds: 3}, status: runner.StatusFailed, halt: executor.HaltGaveUp},
		{name: "past the rounds", answers: []string{first, second}, spec: durable.Spec{Mission: "write twice", Rounds: 1}, status: runner.StatusFailed, halt: executor.HaltMaxRounds},
		{name: "budget", answers: []string{first, second, done}, spec: durable.Spec{Mission: "write twice", Rounds: 3, Budget: executor.Budget{MaxCalls: 3}},
			status: runner.StatusFailed, halt: executor.HaltBudget},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lm := roundPlanner(tt.answers...)
			local, err := durable.Start(context.Background(), nil, tt.spec, durable.WithRunID("rounds"),
				durable.WithLLM(func(string, bool) (llm.Client, error) { return lm, nil }))
			require.NoError(t, err)
			want := local.Execution
			require.NotNil(t, want)

			e := env(t, nil, WithLLM(roundPlanner(tt.answers...)))
			e.ExecuteWorkflow(WorkflowName, Input{RunID: "rounds", Spec: tt.spec})
			got := outcome(t, e).Execution
			require.NotNil(t, got)

			assert.Equal(t, tt.status, want.Status)
			assert.Equal(t, tt.halt, want.Halt)
			assert.Equal(t, want.Status, got.Status)
			assert.Equal(t, want.Halt, got.Halt)
			assert.Positive(t, want.Rounds)
			assert.Equal(t, want.Rounds, got.Rounds)
			assert.Equal(t, want.Deliverable, got.Deliverable)
			assert.Equal(t, want.RunID, got.RunID)
			assert.Equal(t, want.Usage, got.Usage)
			assert.Len(t, got.History, len(want.History))
			for id, w := range want.Tasks {
				g := got.Tasks[id]
				require.NotNil(t, g, id)
				assert.Equal(t, w.Status, g.Status, id)
				assert.Equal(t, w.Output, g.Output, id)
			}
		})
	}
}
