package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dagent-dev/dagent/agent"
	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/registry"
	"github.com/dagent-dev/dagent/runner"
)

// TestRemoteErrorClassifies sends an error of every class through its
// Failure, as JSON, and checks that the rebuilt error has the class, the
// text and the sentinels of the original.
func TestRemoteErrorClassifies(t *testing.T) {
	report := &agent.FailureReport{Class: "rate_limited", Message: "slow down", Suggestion: "wait"}
	tests := []struct {
		name string
		err  error
		want runner.Class
		is   []error
	}{
		{"condition not met", fmt.Errorf("x: %w", runner.ErrConditionNotMet), runner.ClassConditionNotMet, []error{runner.ErrConditionNotMet}},
		{"condition", fmt.Errorf("x: %w", runner.ErrCondition), runner.ClassCondition, []error{runner.ErrCondition}},
		{"timeout", fmt.Errorf("call: %w", context.DeadlineExceeded), runner.ClassTimeout, []error{context.DeadlineExceeded}},
		{"verification", fmt.Errorf("%w: no", runner.ErrVerification), runner.ClassVerification, []error{runner.ErrVerification}},
		{"rubric", fmt.Errorf("%w: meh", runner.ErrRubric), runner.ClassVerification, nil},
		{"gate output", fmt.Errorf("%w: empty", runner.ErrGateOutput), runner.ClassVerification, nil},
		{"invalid output", fmt.Errorf("%w: not JSON", agent.ErrInvalidOutput), runner.ClassInvalidOutput, []error{agent.ErrInvalidOutput}},
		{"schema", fmt.Errorf("%w: type", runner.ErrOutputSchema), runner.ClassInvalidOutput, nil},
		{"missing value", fmt.Errorf("%w: a.b", runner.ErrMissingValue), runner.ClassInvalidOutput, nil},
		{"precondition", fmt.Errorf("%w: disk", registry.ErrPrecondition), runner.ClassPrecondition, []error{registry.ErrPrecondition}},
		{"tool refused", fmt.Errorf("%w: rm", agent.ErrToolRefused), runner.ClassToolRefused, []error{agent.ErrToolRefused}},
		{"budget", fmt.Errorf("%w: tokens", llm.ErrBudgetExceeded), runner.ClassBudget, []error{llm.ErrBudgetExceeded}},
		{"rejected", fmt.Errorf("%w: no", runner.ErrRejected), runner.ClassRejected, []error{runner.ErrRejected}},
		{"panic", &runner.PanicError{Value: "boom"}, runner.ClassPanic, nil},
		{"gate failed", fmt.Errorf("%w: g", runner.ErrGateFailed), runner.ClassGateFailed, []error{runner.ErrGateFailed}},
		{"agent error", errors.New("exit 1"), runner.ClassAgentError, nil},
		{"cannot start", fmt.Errorf("%w: no such file", agent.ErrCannotStart), runner.ClassAgentError, []error{agent.ErrCannotStart}},
		{"worker report", fmt.Errorf("worker: %w", report), "rate_limited", nil},
		{"budget beats report", fmt.Errorf("%w: %w", llm.ErrBudgetExceeded, report), runner.ClassBudget, []error{llm.ErrBudgetExceeded}},
		{"runner-only report class", &agent.FailureReport{Class: string(runner.ClassRejected), Message: "m"}, runner.ClassAgentError, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, runner.Classify(tt.err), "the original's class")
			raw, err := json.Marshal(failureOf(tt.err, false))
			require.NoError(t, err)
			var f Failure
			require.NoError(t, json.Unmarshal(raw, &f))
			got := f.Err()
			assert.Equal(t, tt.want, runner.Classify(got))
			assert.Equal(t, tt.err.Error(), got.Error())
			for _, s := range tt.is {
				assert.ErrorIs(t, got, s)
			}
			assert.Equal(t, errors.Is(tt.err, agent.ErrCannotStart), errors.Is(got, agent.ErrCannotStart))
			var rep *agent.FailureReport
			if errors.As(tt.err, &rep) {
				var back *agent.FailureReport
				require.ErrorAs(t, got, &back)
				assert.Equal(t, *rep, *back)
			}
		})
	}
}

func TestFailureErrOfNil(t *testing.T) {
	var f *Failure
	assert.NoError(t, f.Err())
}
