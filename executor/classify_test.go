package executor_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/dagent-dev/dagent/llmagent"
	"github.com/dagent-dev/dagent/registry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/runner"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want executor.Class
	}{
		{"nil", nil, ""},
		{"verification", fmt.Errorf("%w: the list is empty", runner.ErrVerification), executor.ClassVerification},
		{"verification in a task error", &runner.TaskError{TaskID: "x", Err: fmt.Errorf("%w: no items", runner.ErrVerification)}, executor.ClassVerification},
		{"gate output", fmt.Errorf("%w: the output is empty", runner.ErrGateOutput), executor.ClassVerification},
		{"deadline", context.DeadlineExceeded, executor.ClassTimeout},
		{"timed out attempt", fmt.Errorf("timed out after 30s: %w", context.DeadlineExceeded), executor.ClassTimeout},
		{"budget", fmt.Errorf("%w: 10 calls made of a budget of 10", llm.ErrBudgetExceeded), executor.ClassBudget},
		{"budget beats deadline", errors.Join(context.DeadlineExceeded, llm.ErrBudgetExceeded), executor.ClassBudget},
		{"invalid output", fmt.Errorf("%w: the answer is empty", llmagent.ErrInvalidOutput), executor.ClassInvalidOutput},
		{"output schema", fmt.Errorf("%w: missing property", runner.ErrOutputSchema), executor.ClassInvalidOutput},
		{"missing upstream value", fmt.Errorf("%w: results.a.items", runner.ErrMissingValue), executor.ClassInvalidOutput},
		{"precondition", fmt.Errorf("%w: the repo is not cloned", registry.ErrPrecondition), executor.ClassPrecondition},
		{"precondition error", &registry.PreconditionError{Worker: "git", Diagnosis: "no repo"}, executor.ClassPrecondition},
		{"tool refused", fmt.Errorf("%w: 3 calls of rm", llmagent.ErrToolRefused), executor.ClassToolRefused},
		{"rejected", fmt.Errorf("%w: too vague", runner.ErrRejected), executor.ClassRejected},
		{"panic", &runner.PanicError{Value: "nil map", Stack: []byte("goroutine 1")}, executor.ClassPanic},
		{"panic wrapped", fmt.Errorf("task x: %w", &runner.PanicError{Value: 1}), executor.ClassPanic},
		{"gate failed", fmt.Errorf("%w: %q", runner.ErrGateFailed, "synth"), executor.ClassUpstreamGateFailed},
		{"plain error", errors.New("connection refused"), executor.ClassAgentError},
		{"cancelled", fmt.Errorf("cancelled: %w", context.Canceled), executor.ClassAgentError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, executor.Classify(tt.err))
		})
	}
}

func TestClassNames(t *testing.T) {
	assert.Equal(t, []string{
		"timeout", "verification_failed", "invalid_output", "precondition_failed", "tool_refused",
		"budget_exceeded", "rejected", "panic", "gate_failed", "agent_error",
	}, []string{
		string(executor.ClassTimeout), string(executor.ClassVerification), string(executor.ClassInvalidOutput),
		string(executor.ClassPrecondition), string(executor.ClassToolRefused), string(executor.ClassBudget),
		string(executor.ClassRejected), string(executor.ClassPanic), string(executor.ClassUpstreamGateFailed),
		string(executor.ClassAgentError),
	})
}

// TestExecuteClassOfFailure: the class of real task failures, as the
// runner reports them, reaches the replanner and the history.
func TestExecuteClassOfFailure(t *testing.T) {
	tests := []struct {
		name  string
		task  string // the failing task x, as JSON
		agent behaviour
		want  executor.Class
	}{
		{
			name:  "agent error",
			task:  `{"id": "x", "input": "X", "on_failure": "replan"}`,
			agent: fail(errBoom),
			want:  executor.ClassAgentError,
		},
		{
			name:  "verification",
			task:  `{"id": "x", "input": "X", "verification": "(> (count data/result) 5)", "on_verification_failure": "replan"}`,
			agent: output("abc"),
			want:  executor.ClassVerification,
		},
		{
			name:  "timeout",
			task:  `{"id": "x", "input": "X", "timeout": "20ms", "on_failure": "replan"}`,
			agent: waitForEnd,
			want:  executor.ClassTimeout,
		},
		{
			name: "panic",
			task: `{"id": "x", "input": "X", "on_failure": "replan"}`,
			agent: func(context.Context, agent.Request) (agent.Result, error) {
				panic("nil map")
			},
			want: executor.ClassPanic,
		},
		{
			name:  "invalid output",
			task:  `{"id": "x", "input": "X", "on_failure": "replan"}`,
			agent: fail(fmt.Errorf("%w: the answer is empty", llmagent.ErrInvalidOutput)),
			want:  executor.ClassInvalidOutput,
		},
		{
			name:  "tool refused",
			task:  `{"id": "x", "input": "X", "on_failure": "stop"}`,
			agent: fail(fmt.Errorf("%w: rm", llmagent.ErrToolRefused)),
			want:  executor.ClassToolRefused,
		},
		{
			name:  "missing upstream value",
			task:  `{"id": "x", "input": "X {{results.a.items}}", "depends_on": ["a"], "on_failure": "replan"}`,
			agent: output("never"),
			want:  executor.ClassInvalidOutput,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustPlan(t, `{"tasks": [{"id": "a", "input": "A"}, `+tt.task+`]}`)
			w := newWorkers().set("x", tt.agent)
			rp := newReplanner(reply{plan: mustPlan(t, `{"tasks": [{"id": "a", "input": "A"}, {"id": "y", "input": "Y"}]}`)})

			res, err := executor.Execute(context.Background(), p, mission, w.options(executor.WithReplanner(rp))...)
			require.NoError(t, err)
			assert.Equal(t, runner.StatusCompleted, res.Status)
			got := rp.received()
			require.Len(t, got, 1)
			assert.Equal(t, string(tt.want), got[0].failure.Class)
			assert.Equal(t, "x", got[0].failure.TaskID)
			assert.NotEmpty(t, got[0].failure.Diagnosis)
			require.Len(t, res.History, 1)
			assert.Equal(t, string(tt.want), res.History[0].Class)
		})
	}
}
