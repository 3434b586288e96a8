package executor

import (
	"context"
	"errors"

	"github.com/dagent-dev/dagent/llm"
	"github.com/dagent-dev/dagent/llmagent"
	"github.com/dagent-dev/dagent/registry"
	"github.com/dagent-dev/dagent/runner"
)

// Class is the kind of a task failure, as the replan prompt and the
// result's history name it.
type Class string

// Failure classes.
const (
	ClassTimeout            Class = "timeout"
	ClassVerification       Class = "verification_failed"
	ClassInvalidOutput      Class = "invalid_output"
	ClassPrecondition       Class = "precondition_failed"
	ClassToolRefused        Class = "tool_refused"
	ClassBudget             Class = "budget_exceeded"
	ClassRejected           Class = "rejected"
	ClassPanic              Class = "panic"
	ClassUpstreamGateFailed Class = "gate_failed"
	ClassAgentError         Class = "agent_error"
)

// Classify names the kind of a task's failure.
func Classify(err error) Class {
	var panicked *runner.PanicError
	switch {
	case err == nil:
		return ""
	case errors.Is(err, llm.ErrBudgetExceeded):
		return ClassBudget
	case errors.Is(err, context.DeadlineExceeded):
		return ClassTimeout
	case errors.Is(err, runner.ErrVerification), errors.Is(err, runner.ErrGateOutput):
		return ClassVerification
	case errors.Is(err, runner.ErrMissingValue), errors.Is(err, runner.ErrOutputSchema), errors.Is(err, llmagent.ErrInvalidOutput):
		return ClassInvalidOutput
	case errors.Is(err, registry.ErrPrecondition):
		return ClassPrecondition
	case errors.Is(err, llmagent.ErrToolRefused):
		return ClassToolRefused
	case errors.Is(err, runner.ErrRejected):
		return ClassRejected
	case errors.Is(err, runner.ErrGateFailed):
		return ClassUpstreamGateFailed
	case errors.As(err, &panicked):
		return ClassPanic
	}
	return ClassAgentError
}
