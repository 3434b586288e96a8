package runner_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/registry"
	"github.com/dagent-dev/dagent/runner"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want runner.Class
	}{
		{"nil", nil, ""},
		{"verification", fmt.Errorf("%w: the list is empty", runner.ErrVerification), runner.ClassVerification},
		{"verification in a task error", &runner.TaskError{TaskID: "x", Err: fmt.Errorf("%w: no items", runner.ErrVerification)}, runner.ClassVerification},
		{"gate output", fmt.Errorf("%w: the output is empty", runner.ErrGateOutput), runner.ClassVerification},
		{"deadline", context.DeadlineExceeded, runner.ClassTimeout},
		{"timed out attempt", fmt.Errorf("timed out after 30s: %w", context.DeadlineExceeded), runner.ClassTimeout},
		{"budget", fmt.Errorf("%w: 10 calls made of a budget of 10", llm.ErrBudgetExceeded), runner.ClassBudget},
		{"budget beats deadline", errors.Join(context.DeadlineExceeded, llm.ErrBudgetExceeded), runner.ClassBudget},
		{"invalid output", fmt.Errorf("%w: the answer is empty", agent.ErrInvalidOutput), runner.ClassInvalidOutput},
		{"output schema", fmt.Errorf("%w: missing property", runner.ErrOutputSchema), runner.ClassInvalidOutput},
		{"missing upstream value", fmt.Errorf("%w: results.a.items", runner.ErrMissingValue), runner.ClassInvalidOutput},
		{"precondition", fmt.Errorf("%w: the repo is not cloned", registry.ErrPrecondition), runner.ClassPrecondition},
		{"precondition error", &registry.PreconditionError{Worker: "git", Diagnosis: "no repo"}, runner.ClassPrecondition},
		{"tool refused", fmt.Errorf("%w: 3 calls of rm", agent.ErrToolRefused), runner.ClassToolRefused},
		{"rejected", fmt.Errorf("%w: too vague", runner.ErrRejected), runner.ClassRejected},
		{"panic", &runner.PanicError{Value: "nil map", Stack: []byte("goroutine 1")}, runner.ClassPanic},
		{"panic wrapped", fmt.Errorf("task x: %w", &runner.PanicError{Value: 1}), runner.ClassPanic},
		{"gate failed", fmt.Errorf("%w: %q", runner.ErrGateFailed, "synth"), runner.ClassGateFailed},
		{"worker report", fmt.Errorf("worker: %w", &agent.FailureReport{Class: "rate_limited", Message: "429"}), "rate_limited"},
		{"worker report of a runner class", &agent.ExitError{Code: 1, Report: &agent.FailureReport{Class: "precondition_failed"}}, runner.ClassPrecondition},
		{"worker report without a class", &agent.FailureReport{Message: "it broke"}, runner.ClassAgentError},
		{"worker report of a class only the runner gives", &agent.FailureReport{Class: "condition_not_met"}, runner.ClassAgentError},
		{"worker report of a review's class", &agent.FailureReport{Class: "rejected"}, runner.ClassAgentError},
		{"worker report beaten by a timeout", fmt.Errorf("%w: %w", context.DeadlineExceeded, &agent.FailureReport{Class: "rate_limited"}), runner.ClassTimeout},
		{"plain error", errors.New("connection refused"), runner.ClassAgentError},
		{"cancelled", fmt.Errorf("cancelled: %w", context.Canceled), runner.ClassAgentError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, runner.Classify(tt.err))
		})
	}
}

func TestClassValid(t *testing.T) {
	for _, c := range []runner.Class{runner.ClassTimeout, runner.ClassAgentError, "rate_limited", "x1"} {
		assert.True(t, c.Valid(), c)
	}
	for _, c := range []runner.Class{"", "Timeout", "1x", "rate-limited", "a b"} {
		assert.False(t, c.Valid(), c)
	}
}

func TestClassNames(t *testing.T) {
	assert.Equal(t, []string{
		"timeout", "verification_failed", "invalid_output", "precondition_failed", "tool_refused",
		"budget_exceeded", "rejected", "panic", "gate_failed", "agent_error",
	}, []string{
		string(runner.ClassTimeout), string(runner.ClassVerification), string(runner.ClassInvalidOutput),
		string(runner.ClassPrecondition), string(runner.ClassToolRefused), string(runner.ClassBudget),
		string(runner.ClassRejected), string(runner.ClassPanic), string(runner.ClassGateFailed),
		string(runner.ClassAgentError),
	})
}
