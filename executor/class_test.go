package executor_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/executor"
	"github.com/dagent-dev/dagent/runner"
)

// TestExecuteClassOfFailure: the class of real task failures, as the
// runner reports them, reaches the replanner and the history, when no
// class halts.
func TestExecuteClassOfFailure(t *testing.T) {
	tests := []struct {
		name  string
		task  string // the failing task x, as JSON
		agent behaviour
		want  runner.Class
	}{
		{
			name:  "agent error",
			task:  `{"id": "x", "input": "X", "on_failure": "replan"}`,
			agent: fail(errBoom),
			want:  runner.ClassAgentError,
		},
		{
			name:  "verification",
			task:  `{"id": "x", "input": "X", "verification": "(> (count data/result) 5)", "on_verification_failure": "replan"}`,
			agent: output("abc"),
			want:  runner.ClassVerification,
		},
		{
			name:  "timeout",
			task:  `{"id": "x", "input": "X", "timeout": "20ms", "on_failure": "replan"}`,
			agent: waitForEnd,
			want:  runner.ClassTimeout,
		},
		{
			name: "panic",
			task: `{"id": "x", "input": "X", "on_failure": "replan"}`,
			agent: func(context.Context, agent.Request) (agent.Result, error) {
				panic("nil map")
			},
			want: runner.ClassPanic,
		},
		{
			name:  "invalid output",
			task:  `{"id": "x", "input": "X", "on_failure": "replan"}`,
			agent: fail(fmt.Errorf("%w: the answer is empty", agent.ErrInvalidOutput)),
			want:  runner.ClassInvalidOutput,
		},
		{
			name:  "tool refused",
			task:  `{"id": "x", "input": "X", "on_failure": "stop"}`,
			agent: fail(fmt.Errorf("%w: rm", agent.ErrToolRefused)),
			want:  runner.ClassToolRefused,
		},
		{
			name:  "worker report",
			task:  `{"id": "x", "input": "X", "on_failure": "replan"}`,
			agent: fail(fmt.Errorf("api: %w", &agent.FailureReport{Class: "rate_limited", Message: "429", Suggestion: "wait a minute"})),
			want:  "rate_limited",
		},
		{
			name:  "missing upstream value",
			task:  `{"id": "x", "input": "X {{results.a.items}}", "depends_on": ["a"], "on_failure": "replan"}`,
			agent: output("never"),
			want:  runner.ClassInvalidOutput,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustPlan(t, `{"tasks": [{"id": "a", "input": "A"}, `+tt.task+`]}`)
			w := newWorkers().set("x", tt.agent)
			rp := newReplanner(reply{plan: mustPlan(t, `{"tasks": [{"id": "a", "input": "A"}, {"id": "y", "input": "Y"}]}`)})

			res, err := executor.Execute(context.Background(), p, mission,
				w.options(executor.WithReplanner(rp), executor.WithoutHaltOn(executor.DefaultHaltClasses()...))...)
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
